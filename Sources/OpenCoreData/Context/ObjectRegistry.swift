/// The objects a context has registered, by ID.
///
/// Core Data Programming Guide, "Managed Objects and References": "by default, the references
/// between a managed object and its context are weak" — an unchanged object goes away when the app
/// drops it — while changed objects are kept until they are saved or discarded (the context's
/// change sets hold those), and `retainsRegisteredObjects` makes the context keep every object.
///
/// Apple's objects go away when the autorelease pool drains, at the end of the event. Here the
/// registry holds its objects and lets go, at the end of an event (`processPendingChanges()`), of
/// each one nothing else references any more (``sweep(namingIDs:)``). Swift weak references would give the
/// same answer at once but put every retain and release of every object on the runtime's slow
/// path (a weakly referenced object's count lives in a side table), which cost a third of fetch
/// time when measured.
///
/// - Complexity: lookups and registrations are O(1); a sweep is O(n), a few nanoseconds per
///   object, and runs when a small registry (up to 1,024 objects) may have something to let go
///   of, or once a larger one has had a quarter of its size in candidates (registrations, objects
///   leaving the change sets): amortized O(1) per candidate.
struct ObjectRegistry {
    /// The objects, each filed under its ID in its key space's table (one word and a control
    /// byte a bucket).
    private let table = ObjectTables()
    /// Objects registered, or released from the change sets, since the last sweep.
    private var candidates = 0

    /// Whether the registry keeps every object (`retainsRegisteredObjects`) instead of letting go
    /// of those only it references.
    var retainsObjects = false

    /// The object registered under `id`. Setting files the object under its own ID, which must
    /// be `id`.
    subscript(id: NSManagedObjectID) -> NSManagedObject? {
        get { table[id.value] }
        set {
            if let newValue {
                assert(newValue.tableKey.isSame(as: id.value), "an object is registered under its own ID")
                register(newValue)
            } else {
                table.remove(id.value)
            }
        }
    }

    /// The object registered under the ID `id` holds.
    subscript(id: IDValue) -> NSManagedObject? { table[id] }

    /// Files `object` under its own ID (``NSManagedObject/tableKey``), in place of an object filed
    /// there before.
    /// Asks the processor for the registry's lines a probe for `id` reads first
    /// (``IDTable/prefetch(_:)``).
    @inline(__always)
    func prefetch(_ id: IDValue) { table.prefetch(id) }

    mutating func register(_ object: NSManagedObject) {
        candidates += 1
        table.insert(object)
    }

    /// Unregisters `id`, returning its object.
    @discardableResult
    func removeValue(forKey id: NSManagedObjectID) -> NSManagedObject? {
        table.remove(id.value)
    }

    /// Unregisters the ID `id` holds, returning its object.
    @discardableResult
    func removeValue(forKey id: IDValue) -> NSManagedObject? {
        table.remove(id)
    }

    /// The registered objects, copied out: the registry may change while a caller goes through them.
    var values: [NSManagedObject] { table.entries }

    /// How many objects are registered.
    var count: Int { table.count }

    /// Makes room for `capacity` objects of `id`'s key space.
    func reserveCapacity(_ capacity: Int, for id: IDValue) { table.reserveCapacity(capacity, for: id) }

    /// Makes room for objects about to be filed under `ids`.
    func reserveCapacity(adding ids: [NSManagedObjectID]) { table.reserveCapacity(adding: ids) }

    /// Counts objects that may have lost their last outside reference: they left the change
    /// sets, or were turned into faults.
    mutating func noteCandidates(_ count: Int) { candidates += count }

    /// Whether a sweep may let go of something and is worth its O(n) now.
    var wantsSweep: Bool { candidates > 0 && (table.count <= 1024 || candidates * 4 >= table.count) }

    /// Lets go of every object nothing but the registry references (objects with unsaved changes
    /// are referenced by the change sets), returning their IDs when `namingIDs` (ID instances, made
    /// before the objects go: a value's unretained store part may go with its object). Objects that
    /// only such objects referenced are let go of in the next pass. Nothing is let go of while the
    /// registry retains its objects.
    mutating func sweep(namingIDs: Bool) -> [NSManagedObjectID] {
        candidates = 0
        guard !retainsObjects else { return [] }
        var released: [NSManagedObjectID] = []
        var releasedCount = 0
        var pass = 0
        repeat {
            // The removed objects are let go of here, after the table is consistent again.
            let unreferenced = table.removeAll { isKnownUniquelyReferenced(&$0) }
            guard !unreferenced.isEmpty else { break }
            if namingIDs { released += unreferenced.map(\.objectID) }
            releasedCount += unreferenced.count
            pass += 1
        } while pass < 8
        FreedMemory.released(objects: releasedCount)
        return released
    }

    /// The tables the objects are filed in: the same for the registry's life.
    ///
    /// - A caller that registers many objects in a loop holds it in a local, so it is not
    ///   retained and released around each lookup and insert, as reaching it through the
    ///   context's stored registry is; it counts its registrations with
    ///   ``noteCandidates(_:)``.
    /// - A context going away or reset empties it with
    ///   ``ObjectTables/drainInMemoryOrder(chunkSize:_:)``. Each chunk's work may register objects (an
    ///   app's `didTurnIntoFault()` that fetches, during a `reset()`): they go into the emptied
    ///   table. Follow it with ``removeAll()`` where the registry lives on.
    var objectTable: ObjectTables { table }

    /// Empties the registry.
    mutating func removeAll() {
        table.removeAll()
        candidates = 0
    }
}
