/// The objects a context has registered, by ID.
///
/// Core Data Programming Guide, "Managed Objects and References": "by default, the references
/// between a managed object and its context are weak" — an unchanged object goes away when the app
/// drops it — while changed objects are kept until they are saved or discarded (the context's
/// change sets hold those), and `retainsRegisteredObjects` makes the context keep every object.
///
/// - Complexity: lookups and registrations are O(1); dead entries are swept in amortized O(1).
struct ObjectRegistry {
    private struct Entry {
        weak var object: NSManagedObject?
        /// Set only while the registry retains its objects.
        var strong: NSManagedObject?
    }

    private var entries: [NSManagedObjectID: Entry] = [:]
    /// Registrations since dead entries were last swept.
    private var registrationsSinceSweep = 0

    /// Whether the registry keeps its objects alive (`retainsRegisteredObjects`).
    var retainsObjects = false {
        didSet {
            guard retainsObjects != oldValue else { return }
            for (id, entry) in entries {
                entries[id]?.strong = retainsObjects ? entry.object : nil
            }
        }
    }

    /// The live object registered under `id`.
    subscript(id: NSManagedObjectID) -> NSManagedObject? {
        get { entries[id]?.object }
        set {
            guard let newValue else {
                entries.removeValue(forKey: id)
                return
            }
            entries[id] = Entry(object: newValue, strong: retainsObjects ? newValue : nil)
            registrationsSinceSweep += 1
        }
    }

    /// Unregisters `id`, returning its object if it was still alive.
    @discardableResult
    mutating func removeValue(forKey id: NSManagedObjectID) -> NSManagedObject? {
        entries.removeValue(forKey: id)?.object
    }

    /// The live objects.
    var values: [NSManagedObject] { entries.values.compactMap(\.object) }

    /// How many entries (live or not yet swept) the registry has.
    var count: Int { entries.count }

    mutating func reserveCapacity(_ capacity: Int) { entries.reserveCapacity(capacity) }

    /// Whether enough objects were registered since the last sweep that dead entries may be
    /// taking room: as many as the registry holds, and at least 1,024.
    var wantsSweep: Bool { registrationsSinceSweep >= max(1024, entries.count) }

    /// Drops the entries of objects that have gone away, returning their IDs.
    mutating func sweep() -> [NSManagedObjectID] {
        registrationsSinceSweep = 0
        let dead = entries.compactMap { $0.value.object == nil ? $0.key : nil }
        for id in dead { entries.removeValue(forKey: id) }
        return dead
    }

    /// Empties the registry, returning the IDs of entries whose objects had already gone away.
    mutating func removeAll() -> [NSManagedObjectID] {
        let dead = entries.compactMap { $0.value.object == nil ? $0.key : nil }
        entries = [:]
        registrationsSinceSweep = 0
        return dead
    }
}
