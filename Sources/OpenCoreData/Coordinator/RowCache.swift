/// The coordinator's cache of row snapshots, keyed by object ID and shared by every context of
/// the coordinator (DESIGN.md, "Snapshots are shared").
///
/// - Complexity: lookups and updates are O(1); each takes the cache's lock.
final class RowCache: @unchecked Sendable {
    private let lock = NSLock()
    private struct Entry {
        let snapshot: Snapshot
        /// When the row was read or written (`ProcessInfo.systemUptime`), for staleness.
        let time: TimeInterval
    }
    private var snapshots: [NSManagedObjectID: Entry] = [:]

    subscript(id: NSManagedObjectID) -> Snapshot? {
        get {
            lock.lock()
            defer { lock.unlock() }
            return snapshots[id]?.snapshot
        }
        set {
            let now = ProcessInfo.processInfo.systemUptime
            lock.lock()
            defer { lock.unlock() }
            snapshots[id] = newValue.map { Entry(snapshot: $0, time: now) }
        }
    }

    /// The cached snapshot if it is at most `maxAge` seconds old; any age when `maxAge` is negative
    /// (`stalenessInterval`'s "infinite").
    func snapshot(for id: NSManagedObjectID, maxAge: TimeInterval) -> Snapshot? {
        let now = maxAge < 0 ? 0 : ProcessInfo.processInfo.systemUptime
        lock.lock()
        defer { lock.unlock() }
        guard let entry = snapshots[id] else { return nil }
        if maxAge >= 0, now - entry.time > maxAge { return nil }
        return entry.snapshot
    }

    /// Stores many snapshots and drops others under one lock, as a save does.
    func update(_ updates: [NSManagedObjectID: Snapshot], removing removed: [NSManagedObjectID]) {
        let now = ProcessInfo.processInfo.systemUptime
        lock.lock()
        defer { lock.unlock() }
        snapshots.reserveCapacity(snapshots.count + updates.count)
        for (id, snapshot) in updates { snapshots[id] = Entry(snapshot: snapshot, time: now) }
        for id in removed { snapshots.removeValue(forKey: id) }
    }

    func removeAll(where shouldRemove: (NSManagedObjectID) -> Bool) {
        lock.lock()
        defer { lock.unlock() }
        snapshots = snapshots.filter { !shouldRemove($0.key) }
    }

    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return snapshots.count
    }
}
