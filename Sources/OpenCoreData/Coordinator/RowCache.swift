/// The coordinator's cache of row snapshots, keyed by object ID and shared by every context of
/// the coordinator (DESIGN.md, "Snapshots are shared").
///
/// - Complexity: lookups and updates are O(1); each takes the cache's lock.
final class RowCache: @unchecked Sendable {
    private let lock = NSLock()
    private var snapshots: [NSManagedObjectID: Snapshot] = [:]

    subscript(id: NSManagedObjectID) -> Snapshot? {
        get {
            lock.lock()
            defer { lock.unlock() }
            return snapshots[id]
        }
        set {
            lock.lock()
            defer { lock.unlock() }
            snapshots[id] = newValue
        }
    }

    /// Stores many snapshots and drops others under one lock, as a save does.
    func update(_ updates: [NSManagedObjectID: Snapshot], removing removed: [NSManagedObjectID]) {
        lock.lock()
        defer { lock.unlock() }
        snapshots.merge(updates) { _, new in new }
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
