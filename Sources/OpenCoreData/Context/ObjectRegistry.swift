/// The objects a context has registered, by ID.
///
/// Core Data Programming Guide, "Managed Objects and References": "by default, the references
/// between a managed object and its context are weak" — an unchanged object goes away when the app
/// drops it — while changed objects are kept until they are saved or discarded (the context's
/// change sets hold those), and `retainsRegisteredObjects` makes the context keep every object.
///
/// Apple's objects go away when the autorelease pool drains, at the end of the event. Here the
/// registry holds its objects and lets go, at the end of an event (`processPendingChanges()`), of
/// each one nothing else references any more (``sweep()``). Swift weak references would give the
/// same answer at once but put every retain and release of every object on the runtime's slow
/// path (a weakly referenced object's count lives in a side table), which cost a third of fetch
/// time when measured.
///
/// - Complexity: lookups and registrations are O(1); a sweep is O(n), a few nanoseconds per
///   object, and runs when a small registry (up to 1,024 objects) may have something to let go
///   of, or once a larger one has had a quarter of its size in candidates (registrations, objects
///   leaving the change sets): amortized O(1) per candidate.
struct ObjectRegistry {
    private var entries: [IDKey: NSManagedObject] = [:]
    /// Objects registered, or released from the change sets, since the last sweep.
    private var candidates = 0

    /// Whether the registry keeps every object (`retainsRegisteredObjects`) instead of letting go
    /// of those only it references.
    var retainsObjects = false

    /// The object registered under `id`.
    subscript(id: NSManagedObjectID) -> NSManagedObject? {
        get { entries[IDKey(id)] }
        set {
            if newValue != nil { candidates += 1 }
            entries[IDKey(id)] = newValue
        }
    }

    /// Unregisters `id`, returning its object.
    @discardableResult
    mutating func removeValue(forKey id: NSManagedObjectID) -> NSManagedObject? {
        entries.removeValue(forKey: IDKey(id))
    }

    /// The registered objects.
    var values: Dictionary<IDKey, NSManagedObject>.Values { entries.values }

    /// How many objects are registered.
    var count: Int { entries.count }

    mutating func reserveCapacity(_ capacity: Int) { entries.reserveCapacity(capacity) }

    /// Counts objects that may have lost their last outside reference: they left the change
    /// sets, or were turned into faults.
    mutating func noteCandidates(_ count: Int) { candidates += count }

    /// Whether a sweep may let go of something and is worth its O(n) now.
    var wantsSweep: Bool { candidates > 0 && (entries.count <= 1024 || candidates * 4 >= entries.count) }

    /// Lets go of every object nothing but the registry references (objects with unsaved changes
    /// are referenced by the change sets), returning their IDs. Objects that only such objects
    /// referenced are let go of in the next pass. Nothing is let go of while the registry retains
    /// its objects.
    mutating func sweep() -> [NSManagedObjectID] {
        candidates = 0
        guard !retainsObjects else { return [] }
        var released: [NSManagedObjectID] = []
        var pass = 0
        repeat {
            let before = released.count
            var unreferenced: [NSManagedObjectID] = []
            var index = entries.values.startIndex
            while index != entries.values.endIndex {
                if isKnownUniquelyReferenced(&entries.values[index]) {
                    unreferenced.append(entries.keys[index].id)
                }
                entries.values.formIndex(after: &index)
            }
            for id in unreferenced { entries.removeValue(forKey: IDKey(id)) }
            released += unreferenced
            pass += 1
            if released.count == before { break }
        } while pass < 8
        return released
    }

    /// Empties the registry.
    mutating func removeAll() {
        entries = [:]
        candidates = 0
    }
}
