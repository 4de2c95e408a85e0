/// The coordinator's cache of row snapshots, keyed by object ID and shared by every context of
/// the coordinator (ARCHITECTURE.md, "Values and snapshots").
///
/// Snapshots are reference counted: a context's registered object holds its row's snapshot
/// (``retain(_:)``) until the object goes away, is turned into a fault or the context forgets it
/// (``release(_:)``), and a snapshot no object holds any more is dropped: Core Data's snapshot
/// reference counting, which keeps the row data of the objects contexts use (Core Data
/// Programming Guide, "Change Management": the snapshot taken at fetch) and no more.
///
/// - Complexity: lookups and updates are O(1); each takes the cache's lock.
final class RowCache: SnapshotHolder, @unchecked Sendable {
    private let lock = NSLock()
    private struct Entry {
        /// The row's values; `nil` once invalidated while objects still hold the entry.
        var snapshot: Snapshot?
        /// When the row was read or written (`ProcessInfo.systemUptime`), for staleness.
        var time: TimeInterval
        /// How many registered objects (at most one per context) hold the snapshot.
        var uses: Int
    }
    private var entries: [IDKey: Entry] = [:]

    subscript(id: NSManagedObjectID) -> Snapshot? {
        get {
            lock.lock()
            defer { lock.unlock() }
            return entries[IDKey(id)]?.snapshot
        }
        set {
            let now = ProcessInfo.processInfo.systemUptime
            lock.lock()
            defer { lock.unlock() }
            if let newValue { store(newValue, for: id, at: now) } else { invalidate(id) }
        }
    }

    /// The cached snapshot if it is at most `maxAge` seconds old; any age when `maxAge` is negative
    /// (`stalenessInterval`'s "infinite").
    func snapshot(for id: NSManagedObjectID, maxAge: TimeInterval) -> Snapshot? {
        let now = maxAge < 0 ? 0 : ProcessInfo.processInfo.systemUptime
        lock.lock()
        defer { lock.unlock() }
        guard let entry = entries[IDKey(id)] else { return nil }
        if maxAge >= 0, now - entry.time > maxAge { return nil }
        return entry.snapshot
    }

    /// The snapshots of `ids` at most `maxAge` seconds old (any age when negative), under one
    /// lock, as a fetch realizing its objects asks; `nil` for a row not cached or too old.
    func snapshots(for ids: [NSManagedObjectID], maxAge: TimeInterval) -> [Snapshot?] {
        let now = maxAge < 0 ? 0 : ProcessInfo.processInfo.systemUptime
        lock.lock()
        defer { lock.unlock() }
        return ids.map { id in
            guard let index = entries.index(forKey: IDKey(id)) else { return nil }
            let entry = entries.values[index]
            if maxAge >= 0, now - entry.time > maxAge { return nil }
            return entry.snapshot
        }
    }

    /// Stores many snapshots and invalidates others under one lock, as a save does.
    func update(_ updates: [NSManagedObjectID: Snapshot], removing removed: [NSManagedObjectID]) {
        let now = ProcessInfo.processInfo.systemUptime
        lock.lock()
        defer { lock.unlock() }
        entries.reserveCapacity(entries.count + updates.count)
        for (id, snapshot) in updates { store(snapshot, for: id, at: now) }
        for id in removed { invalidate(id) }
    }

    /// Caches rows a store read, under one lock: a row newer than the cached one replaces it; a
    /// row of the cached version only marks it read now (the cached snapshot stays, shared); an
    /// older row — read before a save that cached its successor committed — is dropped.
    func updateIfNewer(_ rows: [NSManagedObjectID: Snapshot]) {
        let now = ProcessInfo.processInfo.systemUptime
        lock.lock()
        defer { lock.unlock() }
        for (id, snapshot) in rows { updateIfNewer(id, snapshot, at: now) }
    }

    /// ``updateIfNewer(_:)`` for rows given as two arrays of the same length, IDs and their rows.
    func updateIfNewer(_ ids: [NSManagedObjectID], _ rows: [Snapshot]) {
        let now = ProcessInfo.processInfo.systemUptime
        lock.lock()
        defer { lock.unlock() }
        entries.reserveCapacity(entries.count + ids.count)
        for (id, snapshot) in zip(ids, rows) { updateIfNewer(id, snapshot, at: now) }
    }

    /// Caches one row a store read unless the cached one is as new. Call with the lock held.
    ///
    /// One hash probe per row: the entry is found, or made, in place (`subscript(_:default:)`).
    private func updateIfNewer(_ id: NSManagedObjectID, _ snapshot: Snapshot, at now: TimeInterval) {
        Self.updateIfNewer(&entries[IDKey(id), default: Entry(snapshot: nil, time: now, uses: 0)], snapshot, at: now)
    }

    @inline(__always)
    private static func updateIfNewer(_ entry: inout Entry, _ snapshot: Snapshot, at now: TimeInterval) {
        if let cached = entry.snapshot {
            if cached.version > snapshot.version { return }
            entry.time = now
            if cached.version == snapshot.version { return }
        }
        entry.snapshot = snapshot
        entry.time = now
    }

    /// Invalidates the snapshots of the IDs `shouldRemove` picks.
    func removeAll(where shouldRemove: (NSManagedObjectID) -> Bool) {
        lock.lock()
        defer { lock.unlock() }
        for key in entries.keys where shouldRemove(key.id) { invalidate(key.id) }
    }

    /// Counts one more holder of `id`'s snapshot; false (nothing counted) when none is cached.
    func retain(_ id: NSManagedObjectID) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard let index = entries.index(forKey: IDKey(id)), entries.values[index].snapshot != nil else { return false }
        entries.values[index].uses += 1
        return true
    }

    /// ``retain(_:)`` for many IDs under one lock, as a fetch registering its objects does.
    func retain(_ ids: [NSManagedObjectID]) -> [Bool] {
        lock.lock()
        defer { lock.unlock() }
        return ids.map { id in
            guard let index = entries.index(forKey: IDKey(id)), entries.values[index].snapshot != nil else {
                return false
            }
            entries.values[index].uses += 1
            return true
        }
    }

    /// Counts one holder of `id`'s snapshot less, dropping the snapshot when none is left.
    func release(_ id: NSManagedObjectID) {
        lock.lock()
        defer { lock.unlock() }
        guard let index = entries.index(forKey: IDKey(id)) else { return }
        if entries.values[index].uses <= 1 {
            entries.remove(at: index)
        } else {
            entries.values[index].uses -= 1
        }
    }

    /// Counts one holder less for each of `ids` under one lock, as a context does when it lets go
    /// of all its objects.
    func release(_ ids: [NSManagedObjectID]) {
        lock.lock()
        defer { lock.unlock() }
        for id in ids {
            guard let index = entries.index(forKey: IDKey(id)) else { continue }
            if entries.values[index].uses <= 1 {
                entries.remove(at: index)
            } else {
                entries.values[index].uses -= 1
            }
        }
    }

    /// How many holders `id`'s snapshot has.
    func uses(of id: NSManagedObjectID) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return entries[IDKey(id)]?.uses ?? 0
    }

    /// How many snapshots the cache holds.
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return entries.values.reduce(0) { $0 + ($1.snapshot == nil ? 0 : 1) }
    }

    /// Caches `snapshot`, keeping the entry's holders. Call with the lock held.
    private func store(_ snapshot: Snapshot, for id: NSManagedObjectID, at time: TimeInterval) {
        if let index = entries.index(forKey: IDKey(id)) {
            entries.values[index].snapshot = snapshot
            entries.values[index].time = time
        } else {
            entries[IDKey(id)] = Entry(snapshot: snapshot, time: time, uses: 0)
        }
    }

    /// Forgets `id`'s values; an entry still held stays, empty, so its count stays right.
    /// Call with the lock held.
    private func invalidate(_ id: NSManagedObjectID) {
        guard let index = entries.index(forKey: IDKey(id)) else { return }
        if entries.values[index].uses > 0 { entries.values[index].snapshot = nil } else { entries.remove(at: index) }
    }
}
