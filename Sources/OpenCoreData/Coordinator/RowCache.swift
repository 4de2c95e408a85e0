internal import CPrefetch

/// The coordinator's cache of row snapshots, keyed by object ID and shared by every context of
/// the coordinator (ARCHITECTURE.md, "Values and snapshots").
///
/// Snapshots are reference counted: a context's registered object holds its row's snapshot
/// (``retain(_:)``) until the object goes away, is turned into a fault or the context forgets it
/// (``release(_:)``), and a snapshot no object holds any more is dropped: Core Data's snapshot
/// reference counting, which keeps the row data of the objects contexts use (Core Data
/// Programming Guide, "Change Management": the snapshot taken at fetch) and no more.
///
/// Each row is a ``CachedRow`` that the objects holding it keep, so firing a fault
/// (``snapshot(of:maxAge:)``), counting a fetched object's hold and letting it go reach the row
/// without looking up its ID (those lookups were a third of a fetch and of a context's
/// teardown). A row is its snapshot's own storage, taken as the row when cached (a storage another
/// cache took already is copied first); a newer version of the row supersedes it and takes over its
/// holders' count, and a holder of a superseded row is sent to the current one by its ID. A row
/// whose last holder lets go is marked dropped and taken out of the table at once, while the
/// release has its header in the processor's caches (a sweep of dropped rows later, in the
/// table's hash order, read every row from memory again).
///
/// - Complexity: lookups, updates and releases are O(1) on average; each takes the cache's lock.
///   A table left mostly empty by releases is rebuilt smaller, O(n) amortized over them.
final class RowCache: SnapshotHolder, @unchecked Sendable {
    private let lock = NSLock()
    /// The rows, each filed under its ID (one word and a control byte a bucket).
    private let rows = IDTable<CachedRow>()
    /// Whether every snapshot cached is copied rather than taken as the row: a query
    /// generation's cache, whose rows a store may share with the coordinator's cache, which takes
    /// rows under another lock.
    private let copiesSnapshots: Bool

    /// A cache that takes the storage of the snapshots it caches as its rows, or (`copiesSnapshots`)
    /// copies them.
    init(copiesSnapshots: Bool = false) {
        self.copiesSnapshots = copiesSnapshots
    }

    subscript(id: NSManagedObjectID) -> Snapshot? {
        get {
            lock.lock()
            defer { lock.unlock() }
            return rows[id.value]?.snapshot
        }
        set {
            let now = ProcessInfo.processInfo.systemUptime
            lock.lock()
            defer { lock.unlock() }
            if let newValue { store(newValue, for: id.value, at: now) } else { invalidate(id.value) }
        }
    }

    /// Whether each of `ids` has a cached snapshot (as the subscript would answer one), under one
    /// lock.
    func hasSnapshots(for ids: [IDValue]) -> [Bool] {
        lock.lock()
        defer { lock.unlock() }
        return ids.map { rows[$0]?.rowState == 0 }
    }

    /// The cached snapshot if it is at most `maxAge` seconds old; any age when `maxAge` is negative
    /// (`stalenessInterval`'s "infinite").
    func snapshot(for id: NSManagedObjectID, maxAge: TimeInterval) -> Snapshot? {
        let now = maxAge < 0 ? 0 : ProcessInfo.processInfo.systemUptime
        lock.lock()
        defer { lock.unlock() }
        guard let row = rows[id.value] else { return nil }
        return Self.fresh(row, maxAge: maxAge, now: now)
    }

    /// The snapshot of a row an object holds, as ``snapshot(for:maxAge:)`` would find it, with the
    /// row that superseded `row` and now counts the hold, if one did (the holder keeps that one
    /// instead, and lets the older version go); `nil` when invalidated or older than `maxAge`
    /// (any age when negative).
    override func snapshot(of row: CachedRow, maxAge: TimeInterval) -> (successor: CachedRow?, snapshot: Snapshot)? {
        let now = maxAge < 0 ? 0 : ProcessInfo.processInfo.systemUptime
        lock.lock()
        defer { lock.unlock() }
        // The row the object holds is answered without a reference of its own (the object has
        // one); only a successor is handed back, for the object to hold instead.
        if !row.isSuperseded {
            guard let snapshot = Self.fresh(row, maxAge: maxAge, now: now) else { return nil }
            Self.prefetchNextRow(of: row)
            return (nil, snapshot)
        }
        guard let successor = rows[row.rowKey], let snapshot = Self.fresh(successor, maxAge: maxAge, now: now) else {
            return nil
        }
        Self.prefetchNextRow(of: successor)
        return (successor, snapshot)
    }

    /// `body` applied to the row that counts the holders of `row`: `row` itself, borrowed, or
    /// for a superseded row the object's row now in the table (there is one while anybody holds
    /// a row of the object); `nil` without one. Call with the lock held. A borrowed row, not one
    /// answered: answering the row took and gave back a count of it each time, on every row a
    /// fetch's faults hold and a context lets go of.
    @inline(__always) @discardableResult
    private func withCurrent<Result>(_ row: CachedRow, _ body: (CachedRow) -> Result) -> Result? {
        guard row.isSuperseded else { return body(row) }
        guard let successor = rows[row.rowKey] else { return nil }
        return body(successor)
    }

    /// Asks the processor for the first lines of the row read a few rows after `row` by the same
    /// statement (``SlotHeader/nextRow``), as `row`'s fault fires: the app's next faults are
    /// usually the next results of the same fetch, and each one's row was a cache miss when it
    /// fired. Its
    /// header first (a holder counts itself there), then the cells after it. A hint only.
    @inline(__always)
    private static func prefetchNextRow(of row: CachedRow) {
        guard let next = UnsafeRawPointer(bitPattern: row.nextRow) else { return }
        ocd_prefetch_for_write(next)
        ocd_prefetch_for_read(next + 64)
        ocd_prefetch_for_read(next + 128)
    }

    @inline(__always)
    private static func fresh(_ row: CachedRow, maxAge: TimeInterval, now: TimeInterval) -> Snapshot? {
        if maxAge >= 0, now - row.time > maxAge { return nil }
        return row.snapshot
    }

    /// The snapshots of `ids` at most `maxAge` seconds old (any age when negative), under one
    /// lock, as a fetch realizing its objects asks; `nil` for a row not cached or too old.
    func snapshots(for ids: [NSManagedObjectID], maxAge: TimeInterval) -> [Snapshot?] {
        let now = maxAge < 0 ? 0 : ProcessInfo.processInfo.systemUptime
        lock.lock()
        defer { lock.unlock() }
        return ids.map { id in rows[id.value].flatMap { Self.fresh($0, maxAge: maxAge, now: now) } }
    }

    /// Stores many snapshots and invalidates others under one lock, as a save does.
    func update(_ updates: [IDKey: Snapshot], removing removed: [NSManagedObjectID]) {
        let now = ProcessInfo.processInfo.systemUptime
        lock.lock()
        defer { lock.unlock() }
        rows.reserveCapacity(rows.count + updates.count)
        for (key, snapshot) in updates { store(snapshot, for: key.id.value, at: now) }
        for id in removed { invalidate(id.value) }
    }

    /// Caches rows a store read, under one lock: a row newer than the cached one replaces it; a
    /// row of the cached version only marks it read now (the cached snapshot stays, shared); an
    /// older row — read before a save that cached its successor committed — is dropped.
    func updateIfNewer(_ snapshots: RowsByID) {
        let now = ProcessInfo.processInfo.systemUptime
        lock.lock()
        defer { lock.unlock() }
        for (key, snapshot) in snapshots { _ = updateIfNewer(key.id.value, snapshot, at: now) }
    }

    /// Makes room for `count` more rows at once, as a fetch about to cache its rows a chunk at a
    /// time does: the table grows once rather than at each chunk that fills it.
    func reserveCapacity(adding count: Int) {
        lock.lock()
        defer { lock.unlock() }
        rows.reserveCapacity(rows.count + count)
    }

    /// ``updateIfNewer(_:)`` for rows given as two arrays of the same length, IDs and their rows;
    /// answers the cache's row of each, for ``retain(_:)-(CachedRow)`` to count its holders
    /// without looking it up again.
    @discardableResult
    func updateIfNewer(_ ids: ArraySlice<NSManagedObjectID>, _ snapshots: ArraySlice<Snapshot>) -> [CachedRow] {
        withExtendedLifetime(ids) { updateIfNewer(ids.map(\.value)[...], snapshots) }
    }

    /// ``updateIfNewer(_:_:)-(ArraySlice<NSManagedObjectID>,_)`` for IDs given as values.
    @discardableResult
    func updateIfNewer(_ ids: ArraySlice<IDValue>, _ snapshots: ArraySlice<Snapshot>) -> [CachedRow] {
        let now = ProcessInfo.processInfo.systemUptime
        lock.lock()
        defer { lock.unlock() }
        rows.reserveCapacity(rows.count + ids.count)
        var cached: [CachedRow] = []
        cached.reserveCapacity(ids.count)
        // The table's lines and the storage of a row a few rows ahead are asked for before this
        // row is filed, so their cache misses overlap (`IDTable.prefetch`).
        let ahead = Prefetching.distance
        for (offset, (id, snapshot)) in zip(ids, snapshots).enumerated() {
            if offset + ahead < ids.count {
                rows.prefetch(ids[ids.startIndex + offset + ahead])
                snapshots[snapshots.startIndex + offset + ahead].values.prefetchStorage()
            }
            cached.append(updateIfNewer(id, snapshot, at: now))
        }
        // Each row names the one read `ahead` rows after it, for its fault to ask for as it fires.
        if cached.count > ahead {
            for index in 0..<(cached.count - ahead) {
                cached[index].nextRow = UInt(bitPattern: Unmanaged.passUnretained(cached[index + ahead]).toOpaque())
            }
        }
        return cached
    }

    /// Caches one row a store read unless the cached one is as new, with one hash probe: the row
    /// is found, or made, in place. Call with the lock held.
    private func updateIfNewer(_ id: IDValue, _ snapshot: Snapshot, at now: TimeInterval) -> CachedRow {
        row(of: id, snapshot, at: now) { row in
            // A current row as new is kept (marked read now), a newer one as it is. An invalidated
            // row (left in the table while it has holders) is not brought back: what the read
            // says (a relationship left to fetch later, say) is what the cache now holds.
            guard row.rowState == 0, row.version >= snapshot.version else { return false }
            if row.version == snapshot.version { row.time = now }
            return true
        }
    }

    /// The row of `id` in the table if `keep` accepts it; otherwise `snapshot` taken as the row,
    /// filed in the place of the one found, which it supersedes. One probe either way. Call with
    /// the lock held.
    @inline(__always)
    private func row(
        of id: IDValue, _ snapshot: Snapshot, at now: TimeInterval, keeping keep: (CachedRow) -> Bool
    ) -> CachedRow {
        var replaced: CachedRow?
        let row = rows.entry(
            for: id,
            keeping: { row in
                if keep(row) { return true }
                replaced = row
                return false
            },
            make: { newRow(snapshot, of: id, at: now) })
        if let replaced { supersede(replaced, by: row) }
        return row
    }

    /// `snapshot`'s storage taken as the row of `id` (a copy of it when another row already is
    /// that storage, or this cache copies every snapshot). Call with the lock held.
    private func newRow(_ snapshot: Snapshot, of id: IDValue, at now: TimeInterval) -> CachedRow {
        var row = snapshot.values.sharedStorage ?? SlotStorage.make(shape: .wide(count: 0))
        if copiesSnapshots || row.isRow { row = row.copy() }
        row.takeAsRow(of: id, version: snapshot.version, time: now)
        return row
    }

    /// Gives `new`, the row that took `old`'s place in the table, `old`'s holders. Call with the
    /// lock held.
    private func supersede(_ old: CachedRow, by new: CachedRow) {
        if !old.isDropped { new.uses = old.uses }
        old.uses = 0
        old.rowState = CachedRow.RowState.superseded | CachedRow.RowState.dropped
    }

    /// Invalidates the snapshots of the IDs `shouldRemove` picks (an ID made for each row: the
    /// rows keep none).
    func removeAll(where shouldRemove: (NSManagedObjectID) -> Bool) {
        lock.lock()
        defer { lock.unlock() }
        var picked: [IDValue] = []
        rows.forEach { row in if shouldRemove(NSManagedObjectID(value: row.rowKey)) { picked.append(row.rowKey) } }
        for id in picked { invalidate(id) }
    }

    /// Counts one more holder of the snapshot of the ID `id` holds, answering the row the holder
    /// keeps; `nil` (nothing counted) when none is cached.
    func retain(_ id: IDValue) -> CachedRow? {
        lock.lock()
        defer { lock.unlock() }
        return retainLocked(id)
    }

    /// Counts one more holder of `id`'s current row, answering it. Call with the lock held.
    @inline(__always)
    private func retainLocked(_ id: IDValue) -> CachedRow? {
        guard let row = rows[id], row.rowState == 0 else { return nil }
        row.uses += 1
        return row
    }

    /// ``snapshot(for:maxAge:)`` and ``retain(_:)-(IDValue)`` at once, with one lock and one
    /// lookup, as a fault that holds no row fires: `id`'s row, counted one more holder, and its
    /// snapshot, when the row is cached and at most `maxAge` seconds old (any age when negative);
    /// `nil`, nothing counted, otherwise.
    func retainSnapshot(for id: IDValue, maxAge: TimeInterval) -> (row: CachedRow, snapshot: Snapshot)? {
        let now = maxAge < 0 ? 0 : ProcessInfo.processInfo.systemUptime
        lock.lock()
        defer { lock.unlock() }
        guard let row = rows[id], let snapshot = Self.fresh(row, maxAge: maxAge, now: now) else { return nil }
        row.uses += 1
        Self.prefetchNextRow(of: row)
        return (row, snapshot)
    }

    /// ``retain(_:)-(IDValue)`` for many IDs under one lock, as a fetch registering its objects
    /// does.
    func retain(_ ids: [IDValue]) -> [CachedRow?] {
        lock.lock()
        defer { lock.unlock() }
        return ids.map(retainLocked)
    }

    /// Counts one more holder of each of `rows` (rows this cache answered) under one lock,
    /// answering each row's snapshot; `nil` for a row emptied since (nothing counted).
    func retain(rows held: [CachedRow]) -> [Snapshot?] {
        lock.lock()
        defer { lock.unlock() }
        return held.map { row in
            withCurrent(row) { row -> Snapshot? in
                guard let snapshot = row.snapshot else { return nil }
                row.uses += 1
                return snapshot
            } ?? nil
        }
    }

    /// ``retain(rows:)`` for the rows at `indices` of `rows`, answering only whether each was
    /// counted (`false` for a row emptied since): a fetch's new faults hold their rows without a
    /// copy of each snapshot taken and dropped (reference counting).
    func retain(rows: [CachedRow], at indices: [Int]) -> [Bool] {
        lock.lock()
        defer { lock.unlock() }
        return indices.map { index in
            withCurrent(rows[index]) { row in
                guard row.rowState == 0 else { return false }
                row.uses += 1
                return true
            } ?? false
        }
    }

    /// The snapshots of many objects at most `maxAge` seconds old (any age when negative), under
    /// one lock: from the row each holds (`rows[i]`), else by its ID (`ids[i]`).
    func snapshots(of rows: [CachedRow?], ids: [NSManagedObjectID], maxAge: TimeInterval) -> [Snapshot?] {
        let now = maxAge < 0 ? 0 : ProcessInfo.processInfo.systemUptime
        lock.lock()
        defer { lock.unlock() }
        return zip(rows, ids).map { row, id in
            if let row { return withCurrent(row) { Self.fresh($0, maxAge: maxAge, now: now) } ?? nil }
            guard let row = self.rows[id.value] else { return nil }
            return Self.fresh(row, maxAge: maxAge, now: now)
        }
    }

    /// Counts one holder of `row`'s snapshot less, dropping the snapshot when none is left.
    override func release(_ row: CachedRow) {
        lock.lock()
        defer { lock.unlock() }
        releaseLocked(row)
        rows.shrinkIfSparse()
    }

    /// Counts one holder less for each of `rows` under one lock, as a context does when it lets
    /// go of its objects.
    override func release(_ held: [CachedRow]) {
        lock.lock()
        defer { lock.unlock() }
        // The table's lines of a row a few ahead are asked for first: a last holder's release
        // takes its row out of the table.
        let ahead = Prefetching.distance
        // Each row is read unretained: `held` keeps it until the caller lets go.
        held.withUnsafeBufferPointer { held in
            for index in held.indices {
                if index + ahead < held.count { rows.prefetch(held[index + ahead].rowKey) }
                Unmanaged.passUnretained(held[index])._withUnsafeGuaranteedRef { releaseLocked($0) }
            }
        }
        rows.shrinkIfSparse()
    }

    /// Counts one holder of `row` less; the last one's release takes the row out of the table.
    /// Call with the lock held.
    @inline(__always)
    private func releaseLocked(_ row: CachedRow) {
        withCurrent(row) { row in
            if row.uses > 1 {
                row.uses -= 1
                return
            }
            row.uses = 0
            guard !row.isDropped else { return }
            row.rowState |= CachedRow.RowState.dropped
            // A row not dropped is in the table (an invalidated row stays there while it has
            // holders); the table's reference goes here, the holder's with the caller's.
            rows.remove(row)
        }
    }

    /// How many holders `id`'s snapshot has.
    func uses(of id: NSManagedObjectID) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return Int(rows[id.value]?.uses ?? 0)
    }

    /// How many buckets the cache's table has: it grows with the rows held and shrinks as their
    /// last holders let go.
    var bucketCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return rows.bucketCount
    }

    /// How many snapshots the cache holds.
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        var count = 0
        rows.forEach { if $0.rowState == 0 { count += 1 } }
        return count
    }

    /// Caches `snapshot`, keeping the row's holders. Call with the lock held.
    private func store(_ snapshot: Snapshot, for id: IDValue, at time: TimeInterval) {
        _ = row(of: id, snapshot, at: time) { _ in false }
    }

    /// Forgets `id`'s values; a row still held stays, empty, so its count stays right.
    /// Call with the lock held.
    private func invalidate(_ id: IDValue) {
        rows.remove(id) { row in
            row.rowState |= CachedRow.RowState.invalid
            if row.uses > 0 { return false }
            row.rowState |= CachedRow.RowState.dropped
            return true
        }
    }
}
