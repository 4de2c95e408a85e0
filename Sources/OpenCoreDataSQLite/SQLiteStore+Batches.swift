import OpenCoreData
import OpenCoreDataSQL

/// Reading rows in groups: `fetchBatchSize` batches, batch faulting and
/// `relationshipKeyPathsForPrefetching`.
///
/// Related documentation: NSFetchRequest, `fetchBatchSize` ("the identities of all matching
/// objects [are] recorded, but only data for objects up to the batchSize will be fetched from the
/// persistent store at a time") and `relationshipKeyPathsForPrefetching` ("prefetching allows
/// Core Data to obtain [related] objects in a single fetch … rather than incurring subsequent
/// access to the store for each individual record as their faults are tripped").
extension SQLiteStore {
    /// Object IDs a batched fetch returned whose rows are not read yet.
    final class PendingBatch {
        let ids: [NSManagedObjectID]
        /// The fetch's entity and prefetching key paths, applied when the batch is read.
        let entity: NSEntityDescription
        let prefetching: [String]
        /// For the members of one to-many: the statement reading the rows of the owner's members
        /// by the owner's key, and that key. `nil` for a fetch's batch, read by its keys.
        let owner: (sql: String, key: Int64)?
        /// Whether the batch was read. Its IDs' entries stay in ``SQLiteStore/pendingBatches``,
        /// counting as absent, until no batch is left unread (taking each out was a hash and a
        /// probe per object, 7.7 % of a `fetchBatchSize` walk; issue 21). Read and written under
        /// the store's state lock.
        var isRead = false

        init(
            ids: [NSManagedObjectID], entity: NSEntityDescription, prefetching: [String],
            owner: (sql: String, key: Int64)? = nil
        ) {
            self.ids = ids
            self.entity = entity
            self.prefetching = prefetching
            self.owner = owner
        }
    }

    /// The rows read so far while answering one request, with the coordinator's as a fallback.
    struct RowsRead {
        let cachedRow: (NSManagedObjectID) -> Snapshot?
        var rows: RowsByID = [:]

        subscript(id: NSManagedObjectID) -> Snapshot? { rows[IDKey(id)] ?? cachedRow(id) }
    }

    /// A to-many relationship of one object.
    struct RelationshipKey: Hashable {
        let object: NSManagedObjectID
        let slot: Int
    }

    /// The largest `IN (…)` list one statement binds; lists are padded up to one of a few sizes
    /// so the statement cache holds a handful of statements, not one per length.
    static let listSizes = [1, 8, 64, 500]

    // MARK: Batches

    /// A fetch with `fetchBatchSize`: the matching objects' keys in one query, returned as faults;
    /// their rows are read a batch at a time when a fault of the batch fires.
    func fetchInBatches(_ query: SQLQuery, fetch: StoreFetch) throws -> StoreFetchResult {
        let request = fetch.request
        let statement = try connection.statement(query.identifiers.sql)
        try statement.bind(query.identifiers.parameters)
        let fallback = schema[request.entity!]
        let ids = try objectIDs(statement, fallback: fallback)
        statement.reset()
        let unread = ids.filter { fetch.cachedRow($0) == nil }
        addBatches(
            of: unread, size: max(1, request.fetchBatchSize), entity: fallback.entity,
            prefetching: request.relationshipKeyPathsForPrefetching ?? [])
        return StoreFetchResult(objectIDs: ids)
    }

    /// Records `ids` (not waiting already) in batches of `size`: the first fault of a batch to
    /// fire reads every row of it (``readBatch(of:cachedRow:)``).
    func addBatches(
        of ids: [NSManagedObjectID], size: Int, entity: NSEntityDescription, prefetching: [String],
        owner: (sql: String, key: Int64)? = nil
    ) {
        stateLock.lock()
        defer { stateLock.unlock() }
        if pendingBatches.count + ids.count > maximumWaitingInBatches {
            pendingBatches = [:]
            waitingInBatches = 0
        }
        let unread = ids.filter { pendingBatches[IDKey($0)]?.isRead ?? true }
        pendingBatches.reserveCapacity(pendingBatches.count + unread.count)
        waitingInBatches += unread.count
        // An owner's statement reads all its members: only for a batch that is all of them.
        let owner = unread.count == ids.count && ids.count <= size ? owner : nil
        for start in stride(from: 0, to: unread.count, by: size) {
            let batch = PendingBatch(
                ids: Array(unread[start..<min(start + size, unread.count)]), entity: entity, prefetching: prefetching,
                owner: owner)
            for id in batch.ids { pendingBatches[IDKey(id)] = batch }
        }
    }

    /// Reads the batch `objectID` waits in: the row of `objectID` (`nil` when the batch's
    /// statement did not find it: gone, or no longer a member of the owner the batch reads),
    /// with every row of the batch (and what its prefetching reaches); `nil` when `objectID`
    /// waits in no batch.
    func readBatch(
        of objectID: NSManagedObjectID, cachedRow: @escaping (NSManagedObjectID) -> Snapshot?
    ) throws -> (snapshot: Snapshot?, rows: RowsByID)? {
        stateLock.lock()
        var batch = pendingBatches[IDKey(objectID)]
        if batch?.isRead == true { batch = nil }
        // The batches' entries, emptied once none is left unread, and let go after the lock.
        var emptied: [IDKey: PendingBatch] = [:]
        if let batch {
            batch.isRead = true
            waitingInBatches -= batch.ids.count
            if waitingInBatches <= 0 {
                swap(&emptied, &pendingBatches)
                waitingInBatches = 0
            }
        }
        stateLock.unlock()
        withExtendedLifetime(emptied) {}
        guard let batch else { return nil }
        let read =
            if let owner = batch.owner {
                try readMembers(batch.ids, owner: owner, entity: batch.entity)
            } else {
                try readRows(batch.ids)
            }
        var rows = RowsRead(cachedRow: cachedRow, rows: read)
        if !batch.prefetching.isEmpty {
            let loaded = batch.ids.filter { rows.rows[IDKey($0)] != nil }
            try prefetch(batch.prefetching, from: loaded, entity: batch.entity, rows: &rows)
        }
        return (rows.rows[IDKey(objectID)], rows.rows)
    }

    /// A to-many's members, recorded as batches: touching one member reads the rows of all of
    /// them (up to ``membersPerBatch``) in one statement, instead of one statement per member —
    /// the walk over a to-many users write everywhere. When the first member's row is cached the
    /// members are taken to be cached together (a walk done before, objects another context
    /// holds) and fire from the cache as before, with no batch to record; a member that misses
    /// the cache then reads its own row.
    ///
    /// The batch of a to-many's members is read by its owner's key (`owner`: the statement of
    /// ``SQLSchema/memberRowsSelect(_:destination:owners:)`` for one owner, and the key), which
    /// the relationship's own index answers, rather than by an `IN` list of the members' keys:
    /// the list bound a value per member (padded to the next of ``listSizes``) for SQLite to sort
    /// into a temporary index before it looked each one up (issue 21). A member that left the
    /// owner since its ID was read is not among the rows and reads its own when it fires.
    func membersInBatches(
        _ ids: [NSManagedObjectID], of destination: SQLSchema.Entity,
        owner: (sql: String, key: Int64), cachedRow: (NSManagedObjectID) -> Snapshot?
    ) -> [NSManagedObjectID] {
        if ids.count > 1, cachedRow(ids[0]) == nil {
            addBatches(
                of: ids, size: Self.membersPerBatch, entity: destination.entity, prefetching: [], owner: owner)
        }
        return ids
    }

    /// The most members of a to-many one batch reads.
    static let membersPerBatch = 1000

    /// Object IDs made while reading a batch of rows, so each (entity, key) is made once: a batch
    /// reading the rows of objects whose IDs exist reuses them (issue 21: fresh IDs were 8 % of
    /// walking a to-many), and its rows' to-ones naming one destination share its ID. Used by
    /// one read on one thread. A fetch's own rows share their to-one destinations' IDs through
    /// ``DestinationIDs``, which gives up when the destinations are mostly distinct.
    final class IDInterner {
        /// Keyed by layout: the store's model is immutable, so each entity has one.
        private var ids = KeyedIDs()
        /// When the IDs known at the start are of one entity and their keys fill most of a range
        /// (``SQLiteStore/denseRange(_:)``: a `fetchBatchSize` batch of rows saved together), they
        /// are kept here by `key - denseKeys.lowerBound` instead, found without hashing (issue 21:
        /// filing a batch's IDs and looking each row's up in the dictionary were about 1,000
        /// instructions a row, measured with `callgrind`).
        private var dense: [NSManagedObjectID?] = []
        private var denseLayout: ObjectIdentifier?
        private var denseKeys: ClosedRange<Int64> = 0...0

        /// An interner that already knows `existing`.
        init(_ existing: [NSManagedObjectID]) {
            if existing.count >= 64, let layout = existing.first?.layout {
                var keys: [Int64] = []
                keys.reserveCapacity(existing.count)
                for id in existing {
                    guard id.layout === layout, let pk = SQLiteStore.primaryKey(id) else { break }
                    keys.append(pk)
                }
                if keys.count == existing.count, let range = SQLiteStore.denseRange(keys) {
                    denseLayout = ObjectIdentifier(layout)
                    denseKeys = range
                    // `denseRange` bounds the span by the count, so the offsets fit.
                    dense = Array(repeating: nil, count: Int(range.upperBound - range.lowerBound) + 1)
                    for (id, pk) in zip(existing, keys) { dense[Int(pk - range.lowerBound)] = id }
                    return
                }
            }
            ids = KeyedIDs(capacity: existing.count)
            for id in existing {
                if let pk = SQLiteStore.primaryKey(id) { ids.insert(id, id.layout, pk) }
            }
        }

        /// Whether the IDs known at the start were filed by key offset: then
        /// ``knowsDenseKey(_:)`` answers which keys they have.
        var isDense: Bool { denseLayout != nil }

        /// Whether one of the IDs known at the start, filed by key offset, has key `pk`.
        func knowsDenseKey(_ pk: Int64) -> Bool {
            denseKeys.contains(pk) && dense[Int(pk - denseKeys.lowerBound)] != nil
        }

        /// The ID of `layout`'s entity's row `pk`: the one made or known before, else a new one.
        func id(_ layout: EntityLayout, _ pk: Int64, space: ObjectIDSpace) -> NSManagedObjectID {
            if ObjectIdentifier(layout) == denseLayout, denseKeys.contains(pk),
                let id = dense[Int(pk - denseKeys.lowerBound)]
            {
                return id
            }
            if let id = ids.id(layout, pk) { return id }
            let id = NSManagedObjectID(layout: layout, integer: pk, space: space)
            ids.insert(id, layout, pk)
            return id
        }
    }

    /// The rows of `ids` (which may belong to several tables), read with `Z_PK IN (…)` lists.
    func readRows(_ ids: [NSManagedObjectID]) throws -> RowsByID {
        let interner = IDInterner(ids)
        var byTable: [String: (SQLSchema.Entity, [Int64])] = [:]
        // A batch is mostly of one entity: its keys are gathered while the entity stays the same
        // and filed under their table when it changes, not looked up by table name for each ID.
        var lastLayout: EntityLayout?
        var run: (table: String, root: SQLSchema.Entity)?
        var keys: [Int64] = []
        func file() {
            guard let run, !keys.isEmpty else { return }
            byTable[run.table, default: (run.root, [])].1 += keys
            keys = []
        }
        for id in ids {
            guard let pk = Self.primaryKey(id) else { continue }
            if id.layout !== lastLayout {
                file()
                lastLayout = id.layout
                let mapping = schema[id.entity]
                run = (mapping.table.name, schema[mapping.table.root])
            }
            keys.append(pk)
        }
        file()
        var rows: RowsByID = [:]
        rows.reserveCapacity(ids.count)
        for (_, (root, keys)) in byTable.sorted(by: { $0.key < $1.key }) {
            let reader = reader(for: root)
            let decoder = RowDecoder(store: self, fallback: root, interner: interner)
            if let range = Self.denseRange(keys) {
                let statement = try connection.statement(reader.rangeSQL)
                try statement.bind([.integer(range.lowerBound), .integer(range.upperBound)])
                // Rows in the range that are not the batch's (other results, other entities of
                // the table, rows the fetch did not match) are not decoded. A dense interner knows
                // the batch's keys (it has every ID, all of this table); else they are hashed.
                if interner.isDense {
                    try decodeRows(statement, decoder, into: &rows, keeping: { interner.knowsDenseKey($0) })
                } else {
                    let wanted = Set(keys)
                    try decodeRows(statement, decoder, into: &rows, keeping: { wanted.contains($0) })
                }
                continue
            }
            try forEachList(of: keys) { size, values in
                let text = reader.listSQL[size] ?? SQLiteDialect.text(.select(schema.rowSelect(root.table, keys: size)))
                let statement = try connection.statement(text)
                try statement.bind(values)
                try decodeRows(statement, decoder, into: &rows)
            }
        }
        return rows
    }

    /// Steps `statement` (bound already) through its rows, decoding each into `rows` — only those
    /// whose key (`Z_PK`, the first column) `keep` accepts, when given — then resets it.
    private func decodeRows(
        _ statement: SQLiteStatement, _ decoder: RowDecoder, into rows: inout RowsByID,
        keeping keep: ((Int64) -> Bool)? = nil
    ) throws {
        while try statement.step() {
            if let keep, !keep(statement.int64(at: 0)) { continue }
            let (id, snapshot) = try decoder.read(statement)
            rows[IDKey(id)] = snapshot
        }
        statement.reset()
    }

    /// The range of `keys` when they fill most of it — at least 64 keys, at most one in five of
    /// the range's keys not among them — so one range read (a walk along the table) takes the
    /// place of `IN` lists, whose every key SQLite sorts and then looks up (issue 21: a
    /// `fetchBatchSize` fetch of rows in the order they were saved has batches of consecutive
    /// keys); `nil` otherwise.
    static func denseRange(_ keys: [Int64]) -> ClosedRange<Int64>? {
        guard keys.count >= 64, let low = keys.min(), let high = keys.max() else { return nil }
        let (span, overflow) = high.subtractingReportingOverflow(low)
        guard !overflow, span < Int64(keys.count) + Int64(keys.count) / 4 else { return nil }
        return low...high
    }

    /// The rows of the members of one owner's to-many, read by the owner's key (`owner`, from
    /// ``membersInBatches(_:of:owner:cachedRow:)``), reusing the IDs of `ids`, the members as the
    /// relationship was last read.
    func readMembers(
        _ ids: [NSManagedObjectID], owner: (sql: String, key: Int64), entity: NSEntityDescription
    ) throws -> RowsByID {
        let statement = try connection.statement(owner.sql)
        try statement.bind(.integer(owner.key), at: 1)
        var rows: RowsByID = [:]
        rows.reserveCapacity(ids.count)
        try decodeRows(
            statement, RowDecoder(store: self, fallback: schema[entity], interner: IDInterner(ids)), into: &rows)
        return rows
    }

    /// Calls `body` with the sizes of `IN` lists and their values for `keys`, padded with the
    /// last key (a few sizes, so a few prepared statements serve every count).
    private func forEachList(of keys: [Int64], _ body: (Int, [SQLiteValue]) throws -> Void) rethrows {
        let largest = Self.listSizes.last!
        for start in stride(from: 0, to: keys.count, by: largest) {
            let chunk = keys[start..<min(start + largest, keys.count)]
            let size = Self.listSizes.first { $0 >= chunk.count } ?? largest
            var values = chunk.map { SQLiteValue.integer($0) }
            values += repeatElement(values.last!, count: size - values.count)
            try body(size, values)
        }
    }

    // MARK: Prefetching

    /// Loads the destinations of each key path from `sources` (objects of `entity` or its
    /// sub-entities): one query per relationship step, rows into `rows`, to-many members kept for
    /// ``newValue(forRelationship:forObjectWith:with:)``.
    func prefetch(
        _ keyPaths: [String], from sources: [NSManagedObjectID], entity: NSEntityDescription, rows: inout RowsRead
    ) throws {
        for keyPath in keyPaths {
            try prefetch(
                keyPath.split(separator: ".").map(String.init)[...], from: sources, entity: entity, rows: &rows)
        }
    }

    private func prefetch(
        _ path: ArraySlice<String>, from sources: [NSManagedObjectID], entity: NSEntityDescription,
        rows: inout RowsRead
    ) throws {
        guard let name = path.first, !sources.isEmpty,
            let relationship = entity.relationshipsByName[name], let destinationEntity = relationship.destinationEntity,
            let slot = entity.layout.slotByName[name]
        else { return }
        let destination = schema[destinationEntity]
        var targets: [NSManagedObjectID] = []
        switch schema[entity].storage[slot] {
        case .toOne:
            var seen: Set<NSManagedObjectID> = []
            for source in sources {
                guard let target = rows[source]?.values[slot] as? NSManagedObjectID, seen.insert(target).inserted
                else { continue }
                targets.append(target)
            }
            let unread = targets.filter { rows[$0] == nil }
            if !unread.isEmpty { rows.rows.merge(try readRows(unread)) { _, new in new } }
        case .toManyByInverse, .join:
            targets = try readMembers(
                of: sources, slot: slot, destination: destination, rows: &rows,
                select: { owners in
                    self.schema.memberRowsSelect(
                        self.schema[entity].storage[slot], destination: destination, owners: owners)
                })
        default:
            return
        }
        try prefetch(path.dropFirst(), from: targets, entity: destinationEntity, rows: &rows)
    }

    /// Reads the members of a to-many for every source with one statement per `IN` list; the
    /// statement selects the destination's row followed by the owning source's key.
    private func readMembers(
        of sources: [NSManagedObjectID], slot: Int, destination: SQLSchema.Entity, rows read: inout RowsRead,
        select: (Int) -> SQLSelect?
    ) throws -> [NSManagedObjectID] {
        var sourceByKey: [Int64: NSManagedObjectID] = [:]
        for source in sources { if let pk = Self.primaryKey(source) { sourceByKey[pk] = source } }
        var members: [Int64: [NSManagedObjectID]] = [:]
        var rows: RowsByID = [:]
        let ownerColumn = Int32(3 + destination.table.columns.count)
        try forEachList(of: sourceByKey.keys.sorted()) { size, values in
            guard let select = select(size) else { return }
            let statement = try connection.statement(.select(select))
            try statement.bind(values)
            let decoder = RowDecoder(store: self, fallback: destination)
            while try statement.step() {
                let (id, snapshot) = try decoder.read(statement)
                rows[IDKey(id)] = snapshot
                // `IN` is set membership, so a padded list's repeated key adds no rows.
                members[statement.int64(at: ownerColumn), default: []].append(id)
            }
            statement.reset()
        }
        read.rows.merge(rows) { _, new in new }
        stateLock.lock()
        for (pk, source) in sourceByKey {
            prefetchedToMany[RelationshipKey(object: source, slot: slot)] = members[pk] ?? []
        }
        stateLock.unlock()
        return rows.keys.map(\.id)
    }
}
