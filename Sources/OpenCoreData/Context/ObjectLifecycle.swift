import Synchronization

/// The one owner of an object's change state: whether it is inserted, updated or deleted in its
/// context, and the context's three change sets that list the same objects. Both are changed only
/// by the methods in this file (their setters are `fileprivate`), which keep them in step; debug
/// builds check the invariants after each change (``NSManagedObjectContext/checkChangeState()``).
///
/// The invariants (NSManagedObject reference, `isInserted`, `isUpdated`, `isDeleted`;
/// NSManagedObjectContext reference, `insertedObjects`, `updatedObjects`, `deletedObjects`):
/// an object is in `inserted` exactly when it says it is inserted, in `updated` exactly when it
/// says it is updated; an object in `deleted` says it is deleted; no object is in two sets; an
/// inserted object deleted before a save is in none (a discarded insert).

/// An object's place in its context's change sets, and the object's other flags, packed into
/// one word (nine separate flags and the index took the object to a larger heap block).
struct ObjectChangeState {
    /// One bit a flag (``Bit``).
    private var bits: UInt8 = 0
    /// Which of its context's event sets (``EventSet``) the object is in, one bit each.
    var eventMembership: UInt8 = 0
    /// The object's place in the one ``ChangeList`` it is in, if any.
    fileprivate var listIndex: Int32 = -1

    private enum Bit: UInt8 {
        case inserted = 1, updated = 2, deleted = 4, discardedInsert = 8
        case fault = 16, inEventChanged = 32, owesAwakeFromFetch = 64, hasID = 128
    }

    @inline(__always)
    private func has(_ bit: Bit) -> Bool { bits & bit.rawValue != 0 }

    @inline(__always)
    private mutating func set(_ bit: Bit, _ on: Bool) {
        bits = on ? bits | bit.rawValue : bits & ~bit.rawValue
    }

    fileprivate(set) var isInserted: Bool {
        get { has(.inserted) }
        set { set(.inserted, newValue) }
    }
    fileprivate(set) var isUpdated: Bool {
        get { has(.updated) }
        set { set(.updated, newValue) }
    }
    fileprivate(set) var isDeleted: Bool {
        get { has(.deleted) }
        set { set(.deleted, newValue) }
    }
    /// Inserted and then deleted before a save: in no change set, forgotten at the end of the event.
    fileprivate(set) var isDiscardedInsert: Bool {
        get { has(.discardedInsert) }
        set { set(.discardedInsert, newValue) }
    }
    /// The object has been given an ID (its key bits and tail are set; see
    /// ``NSManagedObject/tableKey``).
    var hasID: Bool {
        @inline(__always) get { has(.hasID) }
        @inline(__always) set { set(.hasID, newValue) }
    }
    /// The object is a fault: its values are not loaded.
    var isFault: Bool {
        get { has(.fault) }
        set { set(.fault, newValue) }
    }
    /// Listed in the context's changes of the current event.
    var isInEventChanged: Bool {
        get { has(.inEventChanged) }
        set { set(.inEventChanged, newValue) }
    }
    /// `awakeFromFetch` is owed when the fault fires for the first time.
    var owesAwakeFromFetch: Bool {
        get { has(.owesAwakeFromFetch) }
        set { set(.owesAwakeFromFetch, newValue) }
    }
}

/// The objects in one kind of change, each knowing its own place in the list
/// (`ObjectChangeState.listIndex`): adding, removing and testing membership are O(1) with no
/// hashing. (A `Set<NSManagedObject>` hashed and compared every object through its dynamically
/// dispatched `hash` and `isEqual(_:)`, reading each object's memory on every insert, probe and
/// resize.) An object is in at most one list, which
/// is why one index per object suffices. Order is not kept: a removal moves the last object into
/// the hole.
struct ChangeList: RandomAccessCollection {
    private(set) var objects: ContiguousArray<NSManagedObject> = []

    var startIndex: Int { 0 }
    var endIndex: Int { objects.count }
    subscript(position: Int) -> NSManagedObject { objects[position] }

    /// Whether `object` is in the list, in O(1).
    func contains(_ object: NSManagedObject) -> Bool {
        let index = Int(object.changeState.listIndex)
        return index >= 0 && index < objects.count && objects[index] === object
    }

    /// The list as the `Set` Apple's API hands out.
    var set: Set<NSManagedObject> {
        var result = Set<NSManagedObject>(minimumCapacity: objects.count)
        for object in objects { result.insert(object) }
        return result
    }

    fileprivate mutating func insert(_ object: NSManagedObject) {
        guard !contains(object) else { return }
        object.changeState.listIndex = Int32(truncatingIfNeeded: objects.count)
        objects.append(object)
    }

    fileprivate mutating func remove(_ object: NSManagedObject) {
        guard contains(object) else { return }
        let index = Int(object.changeState.listIndex)
        let last = objects.removeLast()
        if index < objects.count {
            objects[index] = last
            last.changeState.listIndex = Int32(truncatingIfNeeded: index)
        }
        object.changeState.listIndex = -1
    }
}

/// Deleted objects whose delete rules have not run yet, first deleted first: the queue
/// `processPendingChanges()` works through, to which cascades add the objects they delete.
///
/// Taking the first object is O(1): the queue was an array whose `removeFirst()` moved every
/// object behind it, O(n²) over a delete of n objects.
struct DeleteQueue {
    private var objects: [NSManagedObject] = []
    /// The index of the first object not yet taken.
    private var head = 0

    /// Queues `object` behind the others.
    mutating func append(_ object: NSManagedObject) { objects.append(object) }

    /// Takes the first object queued; `nil` when none is left. The queue lets go of its objects
    /// when its last one is taken.
    mutating func popFirst() -> NSManagedObject? {
        guard head < objects.count else { return nil }
        let object = objects[head]
        head += 1
        if head == objects.count { removeAll() }
        return object
    }

    /// Forgets every queued object (a rollback or reset discards the deletes).
    mutating func removeAll() {
        objects = []
        head = 0
    }
}

/// The objects inserted, updated or deleted during the current event, for
/// `NSManagedObjectContextObjectsDidChange`: each object keeps its membership as a bit of its own
/// (`NSManagedObject.eventMembership`), so adding, removing and testing are O(1) with no hashing
/// (a `Set<NSManagedObject>` hashes every object). Removing only
/// clears the bit; the list is filtered when read.
struct EventSet {
    private let bit: UInt8
    /// Every object added since the last ``removeAll()``, possibly twice, possibly removed since.
    private var candidates: [NSManagedObject] = []

    init(bit: UInt8) { self.bit = bit }

    func contains(_ object: NSManagedObject) -> Bool { object.eventMembership & bit != 0 }

    /// Whether anything was added since the last ``removeAll()`` (and so the set may have members).
    var hasCandidates: Bool { !candidates.isEmpty }

    mutating func insert(_ object: NSManagedObject) {
        guard !contains(object) else { return }
        object.eventMembership |= bit
        candidates.append(object)
    }

    /// Removes `object`; answers it when it was a member, as `Set.remove(_:)` does.
    @discardableResult
    mutating func remove(_ object: NSManagedObject) -> NSManagedObject? {
        guard contains(object) else { return nil }
        object.eventMembership &= ~bit
        return object
    }

    /// The members, each once.
    var members: [NSManagedObject] {
        var result: [NSManagedObject] = []
        // A member is taken once: its bit is cleared while collecting, then set again.
        for object in candidates where contains(object) {
            object.eventMembership &= ~bit
            result.append(object)
        }
        for object in result { object.eventMembership |= bit }
        return result
    }

    /// The members as the `Set` Apple's notification carries.
    var set: Set<NSManagedObject> {
        // Nothing added: the empty set, which allocates nothing.
        guard hasCandidates else { return [] }
        let members = members
        var result = Set<NSManagedObject>(minimumCapacity: members.count)
        for object in members { result.insert(object) }
        return result
    }

    /// Empties the set, clearing its members' bits.
    mutating func removeAll() {
        for object in candidates { object.eventMembership &= ~bit }
        candidates = []
    }
}

/// A weak reference to a context, one per context and coordinator, shared by all its objects: an
/// object's own `weak var` would give each of 100,000 objects a side table (an allocation of its
/// own). The link also names the row cache the objects hold their rows of, so an object keeps
/// no reference of its own to it (one word less an object); a context given another
/// coordinator makes a new link, and its objects holding rows of the old cache keep the old one.
///
/// An object reaches what firing its fault and following a to-one need through the link, without
/// loading its context from the weak reference: a context is weakly referenced, so every retain
/// and release of it takes the runtime's slow path, and firing each fault of a fetch and
/// following its to-one loaded it twice (a sixth of following the to-one of a fetched
/// object). The context keeps ``firesFromRows`` and ``maxAge`` in step with what its own
/// fulfilling of a fault reads (``NSManagedObjectContext/updateLink()``).
final class ContextLink: @unchecked Sendable {
    /// Set once, when the link is made; `nil` once the context is gone.
    weak var context: NSManagedObjectContext?
    /// The row cache of the context's coordinator when the link was made.
    let rowHolder: SnapshotHolder?
    /// The context's registered objects: its registry's tables, the same for the context's life,
    /// emptied as the context goes away. `nil` on the link of a context without a coordinator.
    let objects: ObjectTables?
    private let direct = Atomic<Bool>(false)
    private let staleness = Atomic<UInt64>((-1.0 as TimeInterval).bitPattern)

    init(context: NSManagedObjectContext?, rowHolder: SnapshotHolder?, objects: ObjectTables?) {
        self.context = context
        self.rowHolder = rowHolder
        self.objects = objects
    }

    /// Whether a fault of an object on this link that holds its row fires from that row without
    /// its context, as the context itself would fire it (``NSManagedObject/fire(fromHeldRowIn:maxAge:)``):
    /// while the link is its context's current one and the context is alive and reads the latest
    /// data (no parent context, no pinned query generation).
    var firesFromRows: Bool { direct.load(ordering: .relaxed) }

    /// The context's `stalenessInterval`, for faults fired from their rows.
    var maxAge: TimeInterval { TimeInterval(bitPattern: staleness.load(ordering: .relaxed)) }

    /// Sets ``firesFromRows`` and ``maxAge``; the context calls it whenever what they mirror changes.
    func route(firesFromRows: Bool, maxAge: TimeInterval) {
        staleness.store(maxAge.bitPattern, ordering: .relaxed)
        direct.store(firesFromRows, ordering: .relaxed)
    }
}

/// A context's unsaved changes, by kind.
struct ContextChangeSets {
    fileprivate(set) var inserted = ChangeList()
    fileprivate(set) var updated = ChangeList()
    fileprivate(set) var deleted = ChangeList()
}

extension NSManagedObjectContext {
    /// `object` becomes a pending insert.
    func enterInserted(_ object: NSManagedObject) {
        object.changeState.isInserted = true
        object.changeState.isDiscardedInsert = false
        changeSets.inserted.insert(object)
        checkChangeState(of: object)
    }

    /// An inserted object deleted before a save: it leaves every change set and is forgotten at
    /// the end of the event.
    func discardInsert(_ object: NSManagedObject) {
        object.changeState.isInserted = false
        object.changeState.isDiscardedInsert = true
        changeSets.inserted.remove(object)
        checkChangeState(of: object)
    }

    /// `object` becomes a pending delete (no longer a pending update).
    func enterDeleted(_ object: NSManagedObject) {
        object.changeState.isDeleted = true
        object.changeState.isUpdated = false
        changeSets.updated.remove(object)
        changeSets.deleted.insert(object)
        checkChangeState(of: object)
    }

    /// A pending delete is undone.
    func leaveDeleted(_ object: NSManagedObject) {
        object.changeState.isDeleted = false
        changeSets.deleted.remove(object)
        checkChangeState(of: object)
    }

    /// `object` becomes a pending update; `true` when it was not one before.
    @discardableResult
    func enterUpdated(_ object: NSManagedObject) -> Bool {
        guard !object.changeState.isUpdated else { return false }
        object.changeState.isUpdated = true
        changeSets.updated.insert(object)
        checkChangeState(of: object)
        return true
    }

    /// `object` is no longer a pending update (its changes were undone, merged or refreshed away).
    func leaveUpdated(_ object: NSManagedObject) {
        object.changeState.isUpdated = false
        changeSets.updated.remove(object)
        checkChangeState(of: object)
    }

    /// The object's row is gone from the store (deleted by another context or process, or found
    /// missing when its fault fired): it reports `isDeleted` without being a pending delete here.
    /// A forgotten object also stops being inserted or updated.
    func markGone(_ object: NSManagedObject) {
        if object.context == nil {
            object.changeState.isInserted = false
            object.changeState.isUpdated = false
        }
        object.changeState.isDeleted = true
    }

    /// Clears `object`'s change flags: its changes were saved, rolled back or reset. The change
    /// sets are emptied separately (``removeAllChanges()``) or the object forgotten.
    func clearChangeFlags(_ object: NSManagedObject) {
        object.changeState.isInserted = false
        object.changeState.isUpdated = false
        object.changeState.isDeleted = false
    }

    /// Empties the three change sets; their objects' flags are cleared by the caller.
    func removeAllChanges() {
        changeSets = ContextChangeSets()
    }

    /// Takes `object` out of every change set: it is being forgotten.
    func removeFromChangeSets(_ object: NSManagedObject) {
        changeSets.inserted.remove(object)
        changeSets.updated.remove(object)
        changeSets.deleted.remove(object)
    }

    /// Checks the invariants for `object` (debug builds only).
    func checkChangeState(of object: NSManagedObject) {
        #if DEBUG
            let state = object.changeState
            assert(
                state.isInserted == changeSets.inserted.contains(object), "isInserted disagrees with insertedObjects")
            assert(state.isUpdated == changeSets.updated.contains(object), "isUpdated disagrees with updatedObjects")
            assert(!changeSets.deleted.contains(object) || state.isDeleted, "a pending delete must report isDeleted")
            assert(
                [state.isInserted, state.isUpdated, changeSets.deleted.contains(object)].filter { $0 }.count <= 1,
                "an object is in at most one change set")
            assert(!(state.isDiscardedInsert && state.isInserted), "a discarded insert is not inserted")
        #endif
    }

    /// Checks the invariants for every object of the change sets (debug builds only): at the
    /// end of each event and after each save.
    func checkChangeState() {
        #if DEBUG
            for object in changeSets.inserted { checkChangeState(of: object) }
            for object in changeSets.updated { checkChangeState(of: object) }
            for object in changeSets.deleted { checkChangeState(of: object) }
        #endif
    }
}
