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
        /// The batch's IDs as values, so a `fetchBatchSize` fetch makes no ID instance for each
        /// of its objects to file it here: made by this store, whose ID space and model
        /// keep them valid.
        let ids: [IDValue]
        /// What keeps the values' references valid while the batch waits: the store's ID space
        /// they were made in (a store makes a new one when its identifier or metadata change; the
        /// values hold it unretained, and the table's keys are hashed again whenever it grows).
        let keptAlive: ObjectIDSpace?
        /// The fetch's entity and prefetching key paths, applied when the batch is read.
        let entity: NSEntityDescription
        let prefetching: [String]
        /// Whether the batch was read. Its IDs' entries stay in ``SQLiteStore/pendingBatches``,
        /// counting as absent, until no batch is left unread (taking each out would be a hash
        /// and a probe per object). Read and written under
        /// the store's state lock.
        var isRead = false

        init(ids: [IDValue], keptAlive: ObjectIDSpace?, entity: NSEntityDescription, prefetching: [String]) {
            self.ids = ids
            self.keptAlive = keptAlive
            self.entity = entity
            self.prefetching = prefetching
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
        let identifiers = query.identifiers
        let statement = try connection.statement(identifiers.sql)
        try statement.bind(identifiers.parameters)
        let fallback = schema[request.entity!]
        // The IDs as values: the coordinator makes faults holding them, no ID instance each.
        let ids = try objectValues(statement, fallback: fallback)
        statement.reset()
        let unread = zip(ids, fetch.cachedRows(ids)).compactMap { id, isCached in isCached ? nil : id }
        addBatches(
            of: unread, keptAlive: ids.first?.space, size: max(1, request.fetchBatchSize),
            entity: fallback.entity,
            prefetching: request.relationshipKeyPathsForPrefetching ?? [])
        var result = StoreFetchResult()
        result.objectValues = ids
        result.valuesKeptAlive = ids.first?.space
        return result
    }

    /// Records `ids` (not waiting already) in batches of `size`: the first fault of a batch to
    /// fire reads every row of it (``readBatch(of:cachedRow:)``). `keptAlive` keeps the values'
    /// references valid while they wait (``PendingBatch/keptAlive``).
    func addBatches(
        of ids: [IDValue], keptAlive: ObjectIDSpace?, size: Int, entity: NSEntityDescription, prefetching: [String]
    ) {
        stateLock.lock()
        defer { stateLock.unlock() }
        if pendingBatches.count + ids.count > maximumWaitingInBatches {
            pendingBatches = [:]
            batches = []
            waitingInBatches = 0
        }
        // The table is worked on moved out of the store: each read or write of the stored
        // property is checked for exclusive access at run time, once an ID.
        var table: [IDValueKey: Int] = [:]
        swap(&table, &pendingBatches)
        defer { swap(&table, &pendingBatches) }
        // With no batch waiting (the table is empty then), no ID waits: none is looked up.
        let unread =
            waitingInBatches == 0 ? ids : ids.filter { table[IDValueKey($0)].map { batches[$0].isRead } ?? true }
        table.reserveCapacity(table.count + unread.count)
        waitingInBatches += unread.count
        for start in stride(from: 0, to: unread.count, by: size) {
            let batch = PendingBatch(
                ids: Array(unread[start..<min(start + size, unread.count)]), keptAlive: keptAlive, entity: entity,
                prefetching: prefetching)
            let index = batches.count
            batches.append(batch)
            for id in batch.ids { table[IDValueKey(id)] = index }
        }
    }

    /// What reading a batch gave: the row of the object asked for (`nil` when the batch's
    /// statement did not find it: gone since the batch's keys were read), every
    /// row of the batch in order, IDs as values, and the rows its prefetching reached (then the
    /// batch's rows are among those, by ID instance).
    struct BatchRead {
        var snapshot: Snapshot?
        /// The store's ID space `values` were made in, which they hold unretained.
        var space: ObjectIDSpace?
        var values: [IDValue] = []
        var snapshots: [Snapshot] = []
        var rows: RowsByID = [:]
    }

    /// Reads the batch `objectID` waits in (``BatchRead``); `nil` when `objectID` waits in no batch.
    func readBatch(
        of objectID: NSManagedObjectID, cachedRow: @escaping (NSManagedObjectID) -> Snapshot?
    ) throws -> BatchRead? {
        let target = objectID.value
        stateLock.lock()
        var batch = pendingBatches[IDValueKey(target)].map { batches[$0] }
        if batch?.isRead == true { batch = nil }
        // The batches and their entries, emptied once none is left unread, and let go after
        // the lock.
        var emptied: [IDValueKey: Int] = [:]
        var emptiedBatches: [PendingBatch] = []
        if let batch {
            batch.isRead = true
            waitingInBatches -= batch.ids.count
            if waitingInBatches <= 0 {
                swap(&emptied, &pendingBatches)
                swap(&emptiedBatches, &batches)
                waitingInBatches = 0
            }
        }
        stateLock.unlock()
        withExtendedLifetime((emptied, emptiedBatches)) {}
        guard let batch else { return nil }
        // The batch keeps its values' references valid while they are read.
        return try withExtendedLifetime(batch) {
            let (values, snapshots) = try readRowValues(batch.ids)
            let snapshot = values.firstIndex { $0.isSame(as: target) }.map { snapshots[$0] }
            guard !batch.prefetching.isEmpty else {
                return BatchRead(snapshot: snapshot, space: values.first?.space, values: values, snapshots: snapshots)
            }
            // Prefetching finds the key paths' rows from the batch's by ID instance.
            var read: RowsByID = [:]
            read.reserveCapacity(values.count)
            var loaded: [NSManagedObjectID] = []
            loaded.reserveCapacity(values.count)
            for (value, snapshot) in zip(values, snapshots) {
                let id = NSManagedObjectID(value: value)
                read[IDKey(id)] = snapshot
                loaded.append(id)
            }
            var rows = RowsRead(cachedRow: cachedRow, rows: read)
            try prefetch(batch.prefetching, from: loaded, entity: batch.entity, rows: &rows)
            return BatchRead(snapshot: snapshot, rows: rows.rows)
        }
    }

    /// Object IDs made while reading rows by ID instance (``readRows(_:)``: prefetching), so each
    /// (entity, key) is made once: the rows of objects whose IDs exist reuse them, and rows whose
    /// to-ones name one destination share its ID. Used by one read on one thread. A fetch's own
    /// rows share their to-one destinations' IDs through ``DestinationIDs``, which gives up when
    /// the destinations are mostly distinct.
    final class IDInterner {
        /// Keyed by layout: the store's model is immutable, so each entity has one.
        private var ids = KeyedIDs()
        /// When the IDs known at the start are of one entity and their keys fill most of a range
        /// (``SQLiteStore/denseRange(_:)``: a batch of rows saved together), they are kept here by
        /// `key - denseKeys.lowerBound` instead, found without hashing: filing a batch's IDs in a
        /// dictionary and looking each row's up there cost more than reading the row.
        private var dense: [NSManagedObjectID?] = []
        private var denseLayout: ObjectIdentifier?
        private var denseKeys: ClosedRange<Int64> = 0...0

        /// An interner that already knows `existing`.
        init(_ existing: [NSManagedObjectID]) {
            if existing.count >= 64, let layout = existing.first?.layout {
                var keys: [Int64] = []
                keys.reserveCapacity(existing.count)
                for id in existing {
                    guard id.layout === layout, let pk = id.sqlKey else { break }
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
                if let pk = id.sqlKey { ids.insert(id, id.layout, pk) }
            }
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

    /// The rows of `ids` (which may belong to several tables), keyed by the very IDs asked for
    /// (``IDInterner``): the rows prefetching reads.
    func readRows(_ ids: [NSManagedObjectID]) throws -> RowsByID {
        let interner = IDInterner(ids)
        var rows: RowsByID = [:]
        rows.reserveCapacity(ids.count)
        try forEachRow(of: ids.lazy.map { ($0.layout, $0.sqlKey) }, interner: interner) {
            statement, decoder in
            let (id, snapshot) = try decoder.read(statement)
            rows[IDKey(id)] = snapshot
        }
        return rows
    }

    /// The rows of `ids` (which may belong to several tables) with their IDs as values, in the
    /// order read: a batch's rows, which the coordinator caches from the two arrays, rather than
    /// a dictionary keyed by ID instances, each made or found for its row, then hashed again into
    /// the row cache.
    func readRowValues(_ ids: [IDValue]) throws -> (values: [IDValue], snapshots: [Snapshot]) {
        var values: [IDValue] = []
        var snapshots: [Snapshot] = []
        values.reserveCapacity(ids.count)
        snapshots.reserveCapacity(ids.count)
        try forEachRow(of: ids.lazy.map { ($0.layout, $0.sqlKey) }, interner: nil) { statement, decoder in
            let (value, snapshot) = try decoder.readValue(statement)
            values.append(value)
            snapshots.append(snapshot)
        }
        return (values, snapshots)
    }

    /// Steps through the rows of the keys `keys` names (entity and primary key; keys that are
    /// not integers have no row), calling `body` on each with the statement on the row and the
    /// decoder of its table: one range read for a table whose keys fill most of their range,
    /// else `Z_PK IN (…)` lists.
    private func forEachRow(
        of keys: some Sequence<(EntityLayout, Int64?)>, interner: IDInterner?,
        _ body: (SQLiteStatement, RowDecoder) throws -> Void
    ) throws {
        var byTable: [String: (SQLSchema.Entity, [Int64])] = [:]
        // A batch is mostly of one entity: its keys are gathered while the entity stays the same
        // and filed under their table when it changes, not looked up by table name for each ID.
        var lastLayout: EntityLayout?
        var run: (table: String, root: SQLSchema.Entity)?
        var gathered: [Int64] = []
        func file() {
            guard let run, !gathered.isEmpty else { return }
            byTable[run.table, default: (run.root, [])].1 += gathered
            gathered = []
        }
        for (layout, pk) in keys {
            guard let pk else { continue }
            if layout !== lastLayout {
                file()
                lastLayout = layout
                let mapping = schema[layout.entity]
                run = (mapping.table.name, schema[mapping.table.root])
            }
            gathered.append(pk)
        }
        file()
        for (_, (root, keys)) in byTable.sorted(by: { $0.key < $1.key }) {
            let reader = reader(for: root)
            let decoder = RowDecoder(store: self, fallback: root, interner: interner)
            if let range = Self.denseRange(keys) {
                let statement = try connection.statement(reader.rangeSQL)
                try statement.bind([.integer(range.lowerBound), .integer(range.upperBound)])
                // Rows in the range that are not asked for (other results, other entities of the
                // table, rows the fetch did not match) are not decoded: the keys asked for are
                // marked by offset (`denseRange` bounds the span by the count).
                var wanted = [Bool](repeating: false, count: Int(range.upperBound - range.lowerBound) + 1)
                for key in keys { wanted[Int(key - range.lowerBound)] = true }
                while try statement.step() {
                    let key = statement.int64(at: 0)
                    guard range.contains(key), wanted[Int(key - range.lowerBound)] else { continue }
                    try body(statement, decoder)
                }
                statement.reset()
                continue
            }
            try forEachList(of: keys) { size, values in
                let text = reader.listSQL[size] ?? SQLiteDialect.text(.select(schema.rowSelect(root.table, keys: size)))
                let statement = try connection.statement(text)
                try statement.bind(values)
                while try statement.step() { try body(statement, decoder) }
                statement.reset()
            }
        }
    }

    /// The range of `keys` when they fill most of it — at least 64 keys, at most one in five of
    /// the range's keys not among them — so one range read (a walk along the table) takes the
    /// place of `IN` lists, whose every key SQLite sorts and then looks up (a `fetchBatchSize`
    /// fetch of rows in the order they were saved has batches of consecutive keys); `nil`
    /// otherwise.
    static func denseRange(_ keys: [Int64]) -> ClosedRange<Int64>? {
        guard keys.count >= 64, let low = keys.min(), let high = keys.max() else { return nil }
        let (span, overflow) = high.subtractingReportingOverflow(low)
        guard !overflow, span < Int64(keys.count) + Int64(keys.count) / 4 else { return nil }
        return low...high
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
        for source in sources { if let pk = source.sqlKey { sourceByKey[pk] = source } }
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
