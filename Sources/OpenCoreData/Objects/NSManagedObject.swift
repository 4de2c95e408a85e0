import Synchronization

/// An object of a Core Data object graph: an instance of an entity, owned by a context, whose
/// values are read and written by key and saved to persistent stores.
///
/// Values live in one array indexed by the entity's property slots, shared copy-on-write with the
/// store's snapshot until the object changes (ARCHITECTURE.md, "Values and snapshots"). Typed properties are
/// written as accessors over ``value(forKey:)`` and ``setValue(_:forKey:)``:
///
/// ```swift
/// final class Employee: NSManagedObject {
///     var name: String? {
///         get { value(forKey: "name") as? String }
///         set { setValue(newValue, forKey: "name") }
///     }
/// }
/// let ada = Employee(context: context)
/// ada.name = "Ada"
/// ```
///
/// > Note: Differs from Apple Core Data: `init(entity:insertInto:)` is `required` (Core Data creates
/// > your subclass from its metatype without the Objective-C runtime), and `@NSManaged` is not
/// > available on Linux.
open class NSManagedObject: NSObject, KeyValueCoding, NSFetchRequestResult {
    let layout: EntityLayout
    /// The object's ID as its key bits and tail (``IDValue``, with the object's `layout`): what
    /// its context's registry files it under, set once ``ObjectChangeState/hasID`` says so. A
    /// temporary one is made when the object is first registered or asked for its ID; a fault a
    /// fetch makes is given its permanent one at once. Written only by the owning context (and
    /// the first read of an inserted object's key), as `values` is. Two words, not an ID
    /// instance a row.
    @exclusivity(unchecked) private var idBits: UInt64 = 0
    /// The ID's tail (its store's ``ObjectIDSpace``, the temporary marker, or an ``IDExtras``),
    /// kept alive here: the ``IDValue`` made from it holds it unretained.
    @exclusivity(unchecked) private var idTail: IDTail?
    /// The ``NSManagedObjectID`` instance ``objectID`` answers, made from its key bits and tail the first
    /// time it is asked for and kept (retained through the `Unmanaged`), so every read answers the
    /// same instance. Atomic: `objectID` may be read from other threads, as Apple's may, and the
    /// first reads of two threads must agree on one instance. A fetched object keeps no instance
    /// until asked (one was a third of the heap blocks of each fetched object).
    private let madeID = Atomic<Unmanaged<NSManagedObjectID>?>(nil)
    /// The owning context. Weak, as Apple's is not retained by its objects: read through the
    /// context's one shared ``ContextLink``, so an object holds no weak reference of its own
    /// (each object's weak reference allocated a side table for it).
    var context: NSManagedObjectContext? {
        get { contextLink?.context }
        set { setLink(newValue?.link) }
    }
    private var contextLink: ContextLink?

    /// The link to the owning context, without loading the context from its weak reference.
    var currentLink: ContextLink? { contextLink }

    /// Makes `link`'s context the owner, as setting ``context`` does, given the link itself: a
    /// context giving its objects its own link need not pass itself, whose every retain and
    /// release takes the runtime's slow path (a weakly referenced object's count lives in a side
    /// table).
    func attach(to link: ContextLink) { setLink(link) }

    private func setLink(_ link: ContextLink?) {
        // The link names the cache of the row the object holds: a row of another goes back.
        if heldRow != nil, link?.rowHolder !== contextLink?.rowHolder { releaseHeldRow() }
        contextLink = link
    }

    // `values`, `changeState` and `heldRow` are read and written for every object a fetch makes
    // and every value read, and each access was checked for exclusivity at run time (a
    // `swift_beginAccess` call with its thread-local lookup, a large share of a to-one walk).
    // Every access to them is a short read or write inside
    // this library, none held across a call that could reach the same object, so the checks are
    // turned off for these three.

    /// Current values by slot; empty while the object is a fault.
    @exclusivity(unchecked) var values: SlotValues
    /// The last fetched or saved values; `nil` for an object never saved. Written only by the
    /// transitions of `ObjectState.swift`, as the fault and awake flags and `changedSlots` are.
    var committed: Snapshot?
    /// Whether the object is a fault (kept in ``changeState``, as the flags below are).
    var isFaultFlag: Bool { @inline(__always) get { changeState.isFault } }
    /// Inserted, updated, deleted: changed only through the context (`ObjectLifecycle.swift`);
    /// the object's other flags share its word.
    @exclusivity(unchecked) var changeState = ObjectChangeState()
    var isInsertedFlag: Bool { changeState.isInserted }
    var isUpdatedFlag: Bool { changeState.isUpdated }
    var isDeletedFlag: Bool { changeState.isDeleted }
    /// Inserted and then deleted before a save: in no change set, forgotten at the end of the event.
    var isDiscardedInsert: Bool { changeState.isDiscardedInsert }
    /// Listed in the context's changes of the current event.
    var isInEventChanged: Bool {
        @inline(__always) get { changeState.isInEventChanged }
        @inline(__always) set { changeState.isInEventChanged = newValue }
    }
    /// Which of its context's event sets (``EventSet``) the object is in, one bit each.
    var eventMembership: UInt8 {
        @inline(__always) get { changeState.eventMembership }
        @inline(__always) set { changeState.eventMembership = newValue }
    }
    /// `awakeFromFetch` is owed when the fault fires for the first time.
    var owesAwakeFromFetch: Bool { @inline(__always) get { changeState.owesAwakeFromFetch } }
    /// The row of the coordinator's row cache whose snapshot the object holds, while it does; the
    /// cache is the context link's ``ContextLink/rowHolder``.
    @exclusivity(unchecked) var heldRow: CachedRow?
    /// The fields most objects leave empty (``ObjectExtras``), or the one to-one destination
    /// resolved over shared values alone (``resolvedDestination``); `.none` while all are empty.
    /// Short reads and writes in this file only, unchecked for exclusivity as the fields above:
    /// following a to-one reads it.
    @exclusivity(unchecked) private var side: ObjectSide = .none

    /// The fields most objects leave empty; `nil` while all are. Making the box moves the
    /// resolved destination into it; dropping it keeps the destination.
    private var extras: ObjectExtras? {
        get {
            if case .extras(let box) = side { return box }
            return nil
        }
        set {
            let destination = resolvedDestination
            if let newValue {
                newValue.destination = destination
                side = .extras(newValue)
            } else {
                side = destination.map { .destination($0) } ?? .none
            }
        }
    }

    /// A to-one's destination, resolved while the object's values were shared with its snapshot
    /// (the row cache's row), whose cell still holds the destination's ID.
    ///
    /// Writing the object into the cell would copy every value of the row first: one more heap
    /// block and a copy of the row for each object whose to-one was followed. The destination is
    /// kept here instead, at most one an object, held strongly
    /// as the cell held it: the source keeps its destination alive, as Apple's relationships do.
    /// The cell is the truth: ``NSManagedObject/toOneObject(slot:)`` answers this object only
    /// while the cell's ID names it and it is in the same context, so a write, undo, refresh or
    /// merge that changes the cell needs no step here.
    var resolvedDestination: NSManagedObject? {
        get {
            switch side {
            case .none: return nil
            case .destination(let destination): return destination
            case .extras(let box): return box.destination
            }
        }
        set {
            if case .extras(let box) = side {
                box.destination = newValue
            } else {
                side = newValue.map { .destination($0) } ?? .none
            }
        }
    }

    /// Forgets ``resolvedDestination`` when the object has one or extras, leaving an empty side as
    /// it is.
    @inline(__always)
    func forgetResolvedDestination() {
        if case .none = side {} else { resolvedDestination = nil }
    }

    /// Slots set since the last save, fetch or rollback.
    var changedSlots: SlotSet {
        get { extras?.changedSlots ?? SlotSet() }
        set { changeExtras(clearing: newValue.isEmpty) { $0.changedSlots = newValue } }
    }

    /// Slots changed since the last `processPendingChanges`, with their values before the change.
    var eventOldValues: OldValues {
        get { extras?.eventOldValues ?? OldValues() }
        set { changeExtras(clearing: newValue.isEmpty) { $0.eventOldValues = newValue } }
    }

    /// Cached values of fetched properties, by slot.
    var fetchedValues: [Int: [Any]] {
        get { extras?.fetchedValues ?? [:] }
        set { changeExtras(clearing: newValue.isEmpty) { $0.fetchedValues = newValue } }
    }

    /// In a child context, the parent's object this one was read from or saved into: held so the
    /// parent keeps the version the child's changes are based on (the parent is the child's
    /// store, and its objects are the child's snapshots).
    var parentObject: NSManagedObject? {
        get { extras?.parentObject }
        set { changeExtras(clearing: newValue == nil) { $0.parentObject = newValue } }
    }

    /// Records a change of `slot`: its value before the event's first change of it, and the
    /// change bit, in one visit to the box.
    @inline(__always)
    func recordChange(of slot: Int) {
        let box = extras ?? ObjectExtras()
        box.eventOldValues.record(slot, values[slot])
        box.changedSlots.insert(slot)
        extras = box
    }

    /// Applies `change` to the extras, making the box only when the change sets something
    /// (`clearing` false) and dropping it once every field is empty.
    private func changeExtras(clearing: Bool, _ change: (ObjectExtras) -> Void) {
        guard extras != nil || !clearing else { return }
        let box = extras ?? ObjectExtras()
        change(box)
        extras = box.isEmpty ? nil : box
    }

    /// Creates an object of `entity` and inserts it into `context` when one is given.
    ///
    /// Traps when `entity` is abstract, as Apple raises.
    public required init(entity: NSEntityDescription, insertInto context: NSManagedObjectContext?) {
        layout = entity.layout
        precondition(
            !layout.isAbstract,
            "NSManagedObject(entity:insertInto:): cannot create an object of abstract entity \(entity.name ?? "")")
        values = layout.initialValues
        super.init()
        if let context {
            context.insert(self)
        }
    }

    deinit {
        if let heldRow { contextLink?.rowHolder?.release(heldRow) }
        madeID.load(ordering: .relaxed)?.release()
    }

    /// Where the object holds its row's snapshot (the coordinator's row cache), while it does.
    var snapshotHolder: SnapshotHolder? { heldRow == nil ? nil : contextLink?.rowHolder }

    /// Stops holding the row's snapshot in the coordinator's cache.
    func releaseSnapshot() {
        parentObject = nil
        releaseHeldRow()
    }

    private func releaseHeldRow() {
        guard let row = heldRow else { return }
        heldRow = nil
        contextLink?.rowHolder?.release(row)
    }

    /// Stops holding the row's snapshot without telling its holder: answers the row, moved out
    /// of the object with the object's count of it, and the holder, unretained (the object's
    /// link keeps it), for the caller to release the row there; `nil`, leaving the object as it
    /// is, when the object holds no row. A context going away or reset lets go of every
    /// object's row this way, a chunk under one lock, without counting and uncounting a
    /// reference to the row, the link or the holder for each.
    @inline(__always)
    final func moveHeldRowOut() -> (row: CachedRow, holder: Unmanaged<SnapshotHolder>)? {
        guard heldRow != nil, let link = contextLink.map(Unmanaged.passUnretained),
            let holder = link._withUnsafeGuaranteedRef({ $0.rowHolder.map(Unmanaged.passUnretained) })
        else { return nil }
        var row: CachedRow?
        swap(&row, &heldRow)
        return (row.unsafelyUnwrapped, holder)
    }

    /// Holds `row` of the cache `link` names (``ContextLink/rowHolder``), counted there already;
    /// `link` is the link of the object's context.
    func hold(_ row: CachedRow, link: ContextLink) {
        // Most objects given a row are already on the link: storing it again retained the
        // context's one link and released it, each an atomic count, once an object.
        if contextLink !== link { contextLink = link }
        heldRow = row
    }

    /// Creates an object of the entity whose class is `Self` and inserts it into `context`.
    /// `required`, as Apple's, so `Self(context:)` works in a class method.
    /// A new object of the entity whose class this is, in no context (insert it with
    /// `context.insert(_:)`). On Apple platforms `NSObject`'s `init()` compiles but is an error
    /// at run time ("failed to call designated initializer"); here it finds the entity among the
    /// loaded models, as ``entity()`` does. A class no loaded model names is a programming error:
    /// it traps, naming the class.
    public override convenience init() {
        guard let entity = ManagedObjectClasses.entity(for: Self.self, in: ManagedObjectClasses.liveModels) else {
            preconditionFailure(
                "NSManagedObject(): no loaded model has an entity of class \(Self.self); use init(entity:insertInto:)")
        }
        self.init(entity: entity, insertInto: nil)
    }

    public required convenience init(context moc: NSManagedObjectContext) {
        guard let model = moc.persistentStoreCoordinator?.managedObjectModel,
            let entity = ManagedObjectClasses.entity(for: Self.self, in: [model])
        else {
            preconditionFailure("NSManagedObject(context:): no entity of the context's model has class \(Self.self)")
        }
        self.init(entity: entity, insertInto: moc)
    }

    /// The entity whose `managedObjectClassName` names this class, in the models of live coordinators.
    ///
    /// When no loaded model claims the class, the entity description has no name and no
    /// properties, as Apple's is then (code such as `entity().name ?? className` relies on it).
    open class func entity() -> NSEntityDescription {
        ManagedObjectClasses.entity(for: self, in: ManagedObjectClasses.liveModels) ?? NSEntityDescription()
    }

    /// A fetch request for this class's entity.
    open class func fetchRequest() -> NSFetchRequest<NSFetchRequestResult> {
        let request = NSFetchRequest<NSFetchRequestResult>()
        request.entity = entity()
        return request
    }

    // MARK: Identity and state

    /// The object's entity.
    open var entity: NSEntityDescription { layout.entity }

    /// The object's ID: temporary until the object is saved, then permanent. Read-only, as in
    /// Apple's API: the context changes it (``NSManagedObjectContext`` keeps its registry by it).
    open var objectID: NSManagedObjectID {
        if let made = madeID.load(ordering: .acquiring) { return made.takeUnretainedValue() }
        let id = Unmanaged.passRetained(NSManagedObjectID(value: tableKey))
        let (exchanged, existing) = madeID.compareExchange(
            expected: nil, desired: id, ordering: .acquiringAndReleasing)
        guard !exchanged, let existing else { return id.takeUnretainedValue() }
        // Another thread made the instance first: answer that one.
        id.release()
        return existing.takeUnretainedValue()
    }

    /// Gives the object its permanent (or, for a child's save, its parent's) ID; only a context
    /// calls it, re-keying its registry at the same time.
    func assign(objectID: NSManagedObjectID) {
        setID(objectID.value)
        madeID.exchange(Unmanaged.passRetained(objectID), ordering: .acquiringAndReleasing)?.release()
    }

    /// Gives the object the ID `value` names, without an ``NSManagedObjectID`` instance: a fault
    /// a fetch makes, whose ID is made only when asked for.
    func assign(idValue value: IDValue) {
        setID(value)
        madeID.exchange(nil, ordering: .acquiringAndReleasing)?.release()
    }

    /// ``assign(idValue:)`` or, with `instance`, ``assign(objectID:)`` for a fault just made by
    /// its context and not yet registered: no other thread can reach the object, so its ID
    /// instance is stored without the atomic exchange a shared object needs (the only instance it
    /// can have yet is one its initializer asked for).
    func assignToNewFault(idValue value: IDValue, instance: NSManagedObjectID?) {
        setID(value)
        let previous = madeID.load(ordering: .relaxed)
        madeID.store(instance.map { Unmanaged.passRetained($0) }, ordering: .releasing)
        previous?.release()
    }

    /// The ``NSManagedObjectID`` instance made for the object so far, if any; never makes one.
    var madeObjectID: NSManagedObjectID? { madeID.load(ordering: .acquiring)?.takeUnretainedValue() }

    /// Whether the object's ID is temporary, read without making an ``NSManagedObjectID``.
    var hasTemporaryID: Bool { tableKey.isTemporary }

    /// The ID a context's registry files the object under, as a value: ``objectID``'s value
    /// without its dynamic dispatch (a subclass must not override it, but could) and without
    /// making an instance. An object not registered yet gets its temporary ID's value here.
    var tableKey: IDValue {
        if changeState.hasID { return IDValue(bits: idBits, layout: layout, tail: idTail) }
        let temporary = IDValue.temporary(for: layout)
        setID(temporary)
        return temporary
    }

    /// Keeps `value` as the object's ID (its layout is the object's own: an ID names its
    /// object's entity).
    private func setID(_ value: IDValue) {
        assert(value.layout === layout, "an object's ID names the object's entity")
        idTail = value.tail
        idBits = value.bits
        changeState.hasID = true
    }

    /// Whether `object` is this object: managed objects are equal only to themselves, as
    /// Apple's are (the NSManagedObject reference lists `isEqual(_:)` and `hash` among the
    /// methods a subclass must not override). Written out so change sets and registries compare
    /// objects by address without Foundation's general path.
    override open func isEqual(_ object: Any?) -> Bool {
        guard let object, DynamicValue.isObject(object) else { return false }
        return DynamicValue.objectAddress(object) == UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
    }

    /// The object's address: equal objects are the same object.
    override open var hash: Int { Int(bitPattern: ObjectIdentifier(self)) }

    /// The context that owns the object; `nil` once it is deleted and saved, or the context was reset.
    open var managedObjectContext: NSManagedObjectContext? { context }

    /// Whether the object was inserted and not saved yet.
    open var isInserted: Bool { isInsertedFlag }

    /// Whether the object has unsaved changes to its values.
    open var isUpdated: Bool { isUpdatedFlag }

    /// Whether the object will be deleted from its store at the next save — true as well for an
    /// object inserted and then deleted before a save, as Apple's (though it is in no change set
    /// and no store row is deleted).
    open var isDeleted: Bool { isDeletedFlag || isDiscardedInsert }

    /// Whether the object is a fault: its values are not loaded yet.
    open var isFault: Bool { isFaultFlag }

    /// Whether the object was inserted, changed or deleted and not saved.
    open var hasChanges: Bool { isInsertedFlag || isUpdatedFlag || isDeletedFlag }

    /// Whether a persistent (non-transient) property changed since the last fetch or save.
    open var hasPersistentChangedValues: Bool {
        changedSlots.contains { layout.isPersistent($0) }
    }

    /// 0 when the object is fully realized; non-zero while it is a fault.
    open var faultingState: Int { isFaultFlag ? 1 : 0 }

    // MARK: Lifecycle hooks

    /// Called once, when the object is first inserted into a context. Set initial values here.
    open func awakeFromInsert() {}

    /// Called when the object's values are first loaded from a store.
    open func awakeFromFetch() {}

    /// Called when the object's values are reloaded by an event such as a refresh or an undo.
    open func awake(fromSnapshotEvents flags: NSSnapshotEventType) {}

    /// Called at the start of a save that includes the object.
    open func willSave() {}

    /// Called when a save that included the object has finished.
    open func didSave() {}

    /// Called before the object is turned into a fault.
    open func willTurnIntoFault() {}

    /// Called after the object was turned into a fault.
    open func didTurnIntoFault() {}

    /// Called when the object is about to be deleted, before delete rules run.
    open func prepareForDeletion() {}

    // MARK: Key-value coding (overridable; implemented in NSManagedObject+KeyValueCoding.swift)

    /// The value of the property named `key`: an attribute's value, a to-one's object, a to-many's
    /// `Set<NSManagedObject>` (or `NSOrderedSet` when ordered), a fetched property's array.
    ///
    /// Fires the fault if the object is one. Traps for a key that is not a property, as Apple
    /// raises `NSUnknownKeyException` (override ``value(forUndefinedKey:)`` to answer it).
    open func value(forKey key: String) -> Any? { kvcValue(forKey: key) }

    /// Answers a key that is not a property. Traps, as Apple raises `NSUnknownKeyException`.
    open func value(forUndefinedKey key: String) -> Any? { kvcValueForUndefinedKey(key) }

    /// Sets the property named `key`, recording the change and keeping the inverse relationship
    /// consistent (Core Data Programming Guide: Core Data maintains inverse relationships).
    ///
    /// For a to-many, pass a `Set`, array, `NSSet` or `NSOrderedSet` of objects. Traps for a key
    /// that is not a property, as Apple raises.
    open func setValue(_ value: Any?, forKey key: String) { kvcSetValue(value, forKey: key) }

    /// Sets a key that is not a property. Traps, as Apple raises `NSUnknownKeyException`.
    open func setValue(_ value: Any?, forUndefinedKey key: String) { kvcSetValueForUndefinedKey(key) }

    /// The stored value of `key`, for custom accessors: the same value as ``value(forKey:)``.
    open func primitiveValue(forKey key: String) -> Any? { kvcPrimitiveValue(forKey: key) }

    /// Sets the stored value of `key` for custom accessors: the change is recorded, but inverse
    /// relationships are not maintained (Apple: primitive accessors do not manage inverses).
    open func setPrimitiveValue(_ value: Any?, forKey key: String) { kvcSetPrimitiveValue(value, forKey: key) }

    /// Fires the fault before a value is read; call it in custom accessors.
    open func willAccessValue(forKey key: String?) { realize() }

    /// Ends a read that ``willAccessValue(forKey:)`` began.
    open func didAccessValue(forKey key: String?) {}

    /// Announces a change of `key`; call it before ``setPrimitiveValue(_:forKey:)`` in custom accessors.
    open func willChangeValue(forKey key: String) { realize() }

    /// Ends a change that ``willChangeValue(forKey:)`` began.
    open func didChangeValue(forKey key: String) {}

    // MARK: Validation (overridable; implemented in NSManagedObject+Validation.swift)

    /// Validates `value` for the property `key` against the model: mandatory values, minimum and
    /// maximum, string length and pattern, relationship counts and the property's validation
    /// predicates. Override to add rules; call `super` first.
    ///
    /// > Note: Differs from Apple Core Data: `value` is `inout Any?` rather than an
    /// > `AutoreleasingUnsafeMutablePointer`, which Linux lacks.
    ///
    /// - Throws: an `NSError` in `NSCocoaErrorDomain` with a validation code (1550–1680) and the
    ///   keys ``NSValidationObjectErrorKey``, ``NSValidationKeyErrorKey``, ``NSValidationValueErrorKey``;
    ///   several failures are one 1560 error with ``NSDetailedErrorsKey``.
    open func validateValue(_ value: inout Any?, forKey key: String) throws {
        try modelValidateValue(&value, forKey: key)
        try runRegisteredValidations(&value, forKey: key)
    }

    /// Validates `value` for the property `key`: the spelling Apple's Swift code uses,
    /// `var value: AnyObject? = …; try object.validateValue(&value, forKey: "name")`. Runs
    /// the `inout Any?` form (so overrides of it apply) and hands back the value
    /// it may have coerced.
    ///
    /// - Throws: the validation error, as the `inout Any?` form does.
    public func validateValue(_ value: inout AnyObject?, forKey key: String) throws {
        var any: Any? = value
        try validateValue(&any, forKey: key)
        value = any.map { $0 as AnyObject }
    }

    /// Validates the object before it is first saved: every property, through ``validateValue(_:forKey:)-(Any?,_)``.
    open func validateForInsert() throws { try modelValidateForInsert() }

    /// Validates the object before its changes are saved: every property, through ``validateValue(_:forKey:)-(Any?,_)``.
    open func validateForUpdate() throws { try modelValidateForUpdate() }

    /// Validates that the object can be deleted: no relationship with the deny rule still has
    /// objects (`NSValidationRelationshipDeniedDeleteError`, 1600).
    open func validateForDelete() throws { try modelValidateForDelete() }

    override open var description: String {
        let entityName = entity.name ?? "?"
        if isFaultFlag { return "<\(entityName): \(objectID.uriRepresentation().absoluteString)> (fault)" }
        let pairs = layout.properties.indices.map { slot -> String in
            let name = layout.properties[slot].name
            return "\(name) = \(describe(slot: slot))"
        }
        return "<\(entityName): \(objectID.uriRepresentation().absoluteString)> { \(pairs.joined(separator: "; ")) }"
    }

    private func describe(slot: Int) -> String {
        let value = values[slot]
        switch value {
        case nil: return "nil"
        case let object as NSManagedObject: return object.objectID.uriRepresentation().absoluteString
        case let id as NSManagedObjectID: return id.uriRepresentation().absoluteString
        case is UnresolvedRelationship: return "<relationship fault>"
        case let set as Set<NSManagedObject>: return "<\(set.count) objects>"
        case let array as [NSManagedObject]: return "<\(array.count) objects>"
        case let ids as [NSManagedObjectID]: return "<\(ids.count) objects>"
        default: return "\(value!)"
        }
    }
}

/// An object's fields that are empty on most objects most of the time: the change records of
/// an object changed since its last save (``NSManagedObject/changedSlots``,
/// ``NSManagedObject/eventOldValues``), and two that few objects ever use
/// (``NSManagedObject/fetchedValues``, ``NSManagedObject/parentObject``). An object keeps them in
/// one box, made when one is set and dropped when all are empty (as fields of their own
/// they took every object to a larger heap block).
private final class ObjectExtras {
    // The change records are written on every change of the object, and only on its context's
    // queue, by code that calls out to nothing while it writes; unchecked, they skip the
    // runtime's exclusive-access check each write took.
    @exclusivity(unchecked) var changedSlots = SlotSet()
    @exclusivity(unchecked) var eventOldValues = OldValues()
    var fetchedValues: [Int: [Any]] = [:]
    var parentObject: NSManagedObject?
    /// ``NSManagedObject/resolvedDestination`` while the object has the box; not counted by
    /// ``isEmpty``: the object keeps it when the box goes.
    var destination: NSManagedObject?

    /// Whether the box holds none of the fields it exists for.
    var isEmpty: Bool {
        changedSlots.isEmpty && eventOldValues.isEmpty && fetchedValues.isEmpty && parentObject == nil
    }
}

/// What an object's one side field holds (``NSManagedObject/extras``): nothing, a resolved
/// to-one destination alone, or the box of extras (which then holds the destination). One word:
/// a field of its own for the destination took every object to a larger heap block.
private enum ObjectSide {
    case none
    case destination(NSManagedObject)
    case extras(ObjectExtras)
}
