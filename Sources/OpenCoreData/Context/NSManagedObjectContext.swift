/// A scratch pad of managed objects: it fetches objects from its coordinator's stores, tracks
/// every insert, change and delete, and saves them together.
///
/// ```swift
/// let context = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
/// context.persistentStoreCoordinator = coordinator
/// let ada = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: context)
/// ada.setValue("Ada", forKey: "name")
/// try context.save()
/// ```
///
/// A context is confined to its queue: use it inside ``perform(_:)`` or ``performAndWait(_:)->()``
/// (or on the main thread for a main-queue context). Pass object IDs, not objects, between contexts.
open class NSManagedObjectContext: NSObject, @unchecked Sendable {
    /// The queue discipline of a context, with Apple's raw values.
    public enum ConcurrencyType: UInt, Sendable {
        /// Deprecated by Apple: the context is used from the thread that created it.
        case confinementConcurrencyType = 0
        /// The context runs its blocks on its own private serial queue.
        case privateQueueConcurrencyType = 1
        /// The context runs its blocks on the main queue.
        case mainQueueConcurrencyType = 2
    }

    /// The queue discipline chosen at creation.
    public let concurrencyType: ConcurrencyType
    let queue: DispatchQueue
    let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    var coordinator: NSPersistentStoreCoordinator? {
        didSet {
            // Objects hold rows of the link's cache: another coordinator's objects get a new link.
            guard coordinator !== oldValue else { return }
            link.route(firesFromRows: false, maxAge: -1)
            link = ContextLink(context: self, rowHolder: coordinator?.rowCache, objects: registry.objectTable)
            updateLink()
        }
    }
    var parentContext: NSManagedObjectContext? { didSet { updateLink() } }
    /// The observer of other contexts' saves while `automaticallyMergesChangesFromParent` is on.
    var mergeObserver: NSObjectProtocol?
    var mergesFromParent = false
    /// Whether a main-queue context has asked the main queue to end its current event.
    var endOfEventScheduled = false
    /// What the current event fetched or looked up, kept alive until the event ends (``EventLifetime``).
    var eventHeld: [Any] = []
    /// How many objects ``eventHeld`` holds.
    var eventHeldCount = 0
    /// How deep the context's queue blocks (`perform`, `performAndWait`) running now are nested.
    var blockDepth = 0
    /// Whether a main-queue context has asked the main queue to let go of ``eventHeld``.
    var eventReleaseScheduled = false
    /// A name for debugging and notifications.
    open var name: String?
    /// The author recorded in persistent history for this context's saves.
    open var transactionAuthor: String?
    /// How conflicts found while saving are resolved; ``NSErrorMergePolicy`` by default.
    open var mergePolicy: Any = NSErrorMergePolicy
    /// Whether delete rules run at the end of each event (true) or only just before a save.
    open var propagatesDeletesAtEndOfEvent = true
    /// Whether a fault whose object was deleted from the store becomes an empty deleted object
    /// (true) rather than a failure.
    open var shouldDeleteInaccessibleFaults = true
    // Read each time a fault fires, and each read was checked for exclusivity at run time. A
    // `Double` read or set whole, never held across a call, so the check is off.
    /// How old a cached snapshot may be before firing a fault refetches the row; negative means
    /// any age (the default).
    @exclusivity(unchecked) open var stalenessInterval: TimeInterval = -1 { didSet { updateLink() } }
    /// The undo manager of the context; `nil` by default.
    open var undoManager: UndoManager?

    /// Every registered object, by ID; unchanged ones weakly unless `retainsRegisteredObjects`.
    ///
    /// Looked up for every to-one followed and written for every object a fetch makes, and each
    /// access was checked for exclusivity at run time, so the check is off. The table is a class the registry
    /// holds in a `let`: a read during a change (an object's `deinit`, run when a sweep or a
    /// replacement lets go of it, reading the context's objects) reads a consistent table.
    @exclusivity(unchecked) var registry = ObjectRegistry()
    /// The unsaved changes: changed only through `ObjectLifecycle.swift`.
    var changeSets = ContextChangeSets()
    var inserted: ChangeList { changeSets.inserted }
    var updated: ChangeList { changeSets.updated }
    var deleted: ChangeList { changeSets.deleted }

    /// Changes since the last `processPendingChanges`, for `ObjectsDidChange`.
    var eventInserted = EventSet(bit: 1)
    var eventUpdated = EventSet(bit: 2)
    var eventDeleted = EventSet(bit: 4)
    /// Objects changed in this event, each once (`NSManagedObject.isInEventChanged` marks membership).
    var eventChanged: [NSManagedObject] = []
    /// Unchanged objects whose row version the next save checks (`detectConflicts(for:)`).
    var lockedObjects = Set<NSManagedObject>()
    /// Deleted objects whose delete rules have not run yet.
    var pendingDeletes = DeleteQueue()
    /// The temporary IDs a child context inserted objects under here, and what each became when
    /// this context gave the object a permanent ID (``ChildTemporaryIDs``).
    var childTemporaryIDs = ChildTemporaryIDs()
    /// Objects given a store by `assign(_:to:)`.
    var assignedStores: [ObjectIdentifier: NSPersistentStore] = [:]
    var isProcessingChanges = false
    /// Whether the context was given the current query generation and pins it at its next read.
    var pinsAtNextRead = false
    /// Whether a save is calling its objects' `willSave()`.
    var isCallingWillSave = false
    /// The query generation the context is pinned to; `nil` reads the latest state.
    var queryGeneration: QueryGeneration? { didSet { updateLink() } }
    /// Editors with uncommitted changes, in the order they registered.
    var editors: [NSEditor] = []
    /// The lock behind `lock()` / `unlock()` / `tryLock()`.
    let contextLock = NSRecursiveLock()
    /// The weak reference every object of the context reads its context through, and the row
    /// cache they hold their rows of.
    private(set) var link = ContextLink(context: nil, rowHolder: nil, objects: nil)

    /// Creates a context with the given queue discipline.
    public init(concurrencyType type: ConcurrencyType) {
        concurrencyType = type
        switch type {
        case .mainQueueConcurrencyType:
            queue = DispatchQueue.main
        case .privateQueueConcurrencyType, .confinementConcurrencyType:
            queue = DispatchQueue(label: "OpenCoreData.NSManagedObjectContext")
        }
        super.init()
        link.context = self
        if type == .privateQueueConcurrencyType {
            queue.setSpecific(key: queueKey, value: ObjectIdentifier(self))
        }
    }

    deinit {
        // From here on the objects' faults fire through the context, which is gone: as Apple's.
        link.route(firesFromRows: false, maxAge: -1)
        if let mergeObserver { NotificationCenter.default.removeObserver(mergeObserver) }
        // Objects that outlive their context (the app's references, relationship cycles) no
        // longer use their rows' snapshots. A chunk at a time, in address order: each object's
        // row is let go of, and the object freed (when nothing else holds it), while the chunk is
        // in the processor's caches.
        let released = registry.count
        registry.objectTable.drainInMemoryOrder(chunkSize: Self.teardownChunk) { releaseSnapshots(of: $0) }
        FreedMemory.released(objects: released)
    }

    /// Creates a confinement context. Deprecated by Apple; use ``init(concurrencyType:)``.
    @available(*, deprecated, message: "Use init(concurrencyType:)")
    override public convenience init() {
        self.init(concurrencyType: .confinementConcurrencyType)
    }

    /// The coordinator the context fetches from and saves to.
    ///
    /// Setting it to `nil` traps, as Apple raises.
    open var persistentStoreCoordinator: NSPersistentStoreCoordinator? {
        get { coordinator }
        set {
            precondition(newValue != nil, "NSManagedObjectContext.persistentStoreCoordinator cannot be set to nil")
            coordinator = newValue
        }
    }

    /// The context this one fetches from and saves into; `nil` for a context on a coordinator.
    ///
    /// Setting it makes the context a child: its ``persistentStoreCoordinator`` is the parent's.
    open var parent: NSManagedObjectContext? {
        get { parentContext }
        set {
            if let newValue {
                var ancestor: NSManagedObjectContext? = newValue
                while let context = ancestor {
                    precondition(
                        context !== self, "NSManagedObjectContext.parent: a context cannot be its own ancestor")
                    ancestor = context.parentContext
                }
            }
            parentContext = newValue
            if let newValue { coordinator = newValue.persistentStoreCoordinator }
            updateAutomaticMerging()
        }
    }

    /// Whether the context merges, on its own queue, the changes other contexts save to its parent
    /// (or, for a context on a coordinator, to that coordinator); false by default.
    open var automaticallyMergesChangesFromParent: Bool {
        get { mergesFromParent }
        set {
            mergesFromParent = newValue
            updateAutomaticMerging()
        }
    }

    // MARK: Change sets

    /// Whether the context has unsaved inserts, changes or deletes.
    open var hasChanges: Bool { !inserted.isEmpty || !updated.isEmpty || !deleted.isEmpty }

    /// Objects inserted since the last save.
    open var insertedObjects: Set<NSManagedObject> { inserted.set }

    /// Registered objects with unsaved changes (not inserted or deleted ones).
    open var updatedObjects: Set<NSManagedObject> { updated.set }

    /// Objects that will be deleted from their stores at the next save.
    open var deletedObjects: Set<NSManagedObject> { deleted.set }

    /// Every object registered in the context that is still alive.
    ///
    /// Unchanged objects the app no longer references leave this set (at the end of the event,
    /// or when the set is asked for), unless
    /// ``retainsRegisteredObjects`` is true (Core Data Programming Guide, "Managed Objects and
    /// References").
    open var registeredObjects: Set<NSManagedObject> {
        sweepRegistry()
        return Set(registry.values)
    }

    /// Whether the context keeps every registered object alive (true) or only those with unsaved
    /// changes (false, the default: an unchanged object goes away when the app drops it).
    open var retainsRegisteredObjects: Bool {
        get { registry.retainsObjects }
        set {
            checkQueue("retainsRegisteredObjects")
            registry.retainsObjects = newValue
            if !newValue { sweepRegistry() }
        }
    }

    // MARK: Registration

    /// The object with `objectID`: the registered instance, or a new fault for it. Never fetches.
    open func object(with objectID: NSManagedObjectID) -> NSManagedObject {
        checkQueue("object(with:)")
        if let registered = registry[objectID] { return registered }
        let entity = objectID.layout.entity
        // The instance asked with is the one the object answers.
        let object = makeFault(
            objectID.value, instance: objectID, of: ManagedObjectClasses.objectClass(for: entity), entity: entity,
            in: registry.objectTable.filingTable(for: objectID.value), link: link)
        registry.noteCandidates(1)
        holdSnapshot(of: object)
        holdForEvent(object)
        if let store = objectID.persistentStore as? NSIncrementalStore, store.wantsRegistrationCallbacks {
            store.managedObjectContextDidRegisterObjects(with: [objectID])
        }
        return object
    }

    /// The object with `objectID`, with its values loaded.
    ///
    /// - Throws: `NSManagedObjectReferentialIntegrityError` (133000) when no store has the object.
    open func existingObject(with objectID: NSManagedObjectID) throws -> NSManagedObject {
        checkQueue("existingObject(with:)")
        if let registered = registry[objectID], !registered.isDiscardedInsert {
            if registered.isFaultFlag { try fulfill(registered) }
            return registered
        }
        guard parentContext != nil || (!objectID.isTemporaryID && objectID.persistentStore != nil) else {
            throw CoreDataError.make(
                NSManagedObjectReferentialIntegrityError, "No object with ID \(objectID) exists.",
                [NSAffectedObjectsErrorKey: [objectID]])
        }
        let (snapshot, parentObject) = try loadSnapshot(for: objectID)
        let object = self.object(with: objectID)
        if object.isFaultFlag { realize(object, with: snapshot, parentObject: parentObject) }
        return object
    }

    /// The registered object with `objectID`, or `nil`. Never creates a fault.
    open func registeredObject(for objectID: NSManagedObjectID) -> NSManagedObject? {
        registry[objectID]
    }

    /// Registers a new object: it is inserted at the next save. Calls `awakeFromInsert()` the first time.
    open func insert(_ object: NSManagedObject) {
        checkQueue("insert(_:)")
        register(insertOf: object, awakening: true)
    }

    /// Inserts `object`; `awakening` false brings back an object an undo restores, which must not
    /// be woken from insertion a second time.
    func register(insertOf object: NSManagedObject, awakening: Bool) {
        // The owner, read from its weak reference only when the object holds another link.
        let current = object.currentLink
        let owner = current === link ? self : current?.context
        if let owner, owner !== self {
            preconditionFailure("insert(_:): the object belongs to another context")
        }
        if object.isInsertedFlag { return }
        if object.isDeletedFlag, owner === self {
            // Re-inserting a deleted object undoes the delete; deleted in an earlier event, it
            // comes back as an insert of this one.
            leaveDeleted(object)
            if eventDeleted.remove(object) == nil { eventInserted.insert(object) }
            if object.hasPersistentChangedValues { markUpdated(object) }
            return
        }
        let isFirstInsertion = owner == nil
        object.attach(to: link)
        object.realizeForInsertion()
        registry.register(object)
        enterInserted(object)
        eventInserted.insert(object)
        scheduleEndOfEvent()
        if isFirstInsertion, awakening { object.awakeFromInsert() }
    }

    /// Marks an object for deletion at the next save. Its delete rules run at the end of the event.
    ///
    /// An object inserted and deleted before a save is in no change set (Core Data Programming
    /// Guide: it is simply forgotten).
    open func delete(_ object: NSManagedObject) {
        checkQueue("delete(_:)")
        guard object.context === self else {
            if object.context == nil { return }
            preconditionFailure("delete(_:): the object belongs to another context")
        }
        if object.isDeletedFlag || object.isDiscardedInsert { return }
        if object.isInsertedFlag {
            discardInsert(object)
            if !eventInserted.contains(object) { eventDeleted.insert(object) }
            eventInserted.remove(object)
        } else {
            enterDeleted(object)
            // Undeleted earlier in this event, the object's event nets out to no change.
            if eventInserted.remove(object) == nil { eventDeleted.insert(object) }
            eventUpdated.remove(object)
        }
        pendingDeletes.append(object)
        scheduleEndOfEvent()
    }

    /// A main-queue context ends its event when the main queue's current work is done — the
    /// run-loop pass, in Apple's words — so `ObjectsDidChange` arrives while the main run loop
    /// (or `dispatchMain()`) runs, without an explicit `processPendingChanges()` (Core Data
    /// Programming Guide, "Change Management"; NSManagedObjectContext, `processPendingChanges()`).
    func scheduleEndOfEvent() {
        guard concurrencyType == .mainQueueConcurrencyType, !endOfEventScheduled, MainQueue.isCurrent else { return }
        endOfEventScheduled = true
        let context = UncheckedSendable(WeakReference(self))
        DispatchQueue.main.async {
            guard let context = context.value.object else { return }
            context.endOfEventScheduled = false
            context.processPendingChanges()
        }
    }

    /// Chooses the store a new object is saved to.
    open func assign(_ object: Any, to store: NSPersistentStore) {
        guard let object = object as? NSManagedObject else { return }
        assignedStores[ObjectIdentifier(object)] = store
    }

    // MARK: Object callbacks

    /// Called by an object whose value is about to change.
    func objectDidChange(_ object: NSManagedObject) {
        guard object.context === self else { return }
        if !object.isInEventChanged {
            object.isInEventChanged = true
            eventChanged.append(object)
            scheduleEndOfEvent()
        }
        if object.isInsertedFlag || object.isDeletedFlag || object.isDiscardedInsert { return }
        markUpdated(object)
    }

    private func markUpdated(_ object: NSManagedObject) {
        if enterUpdated(object) { eventUpdated.insert(object) }
    }

    /// Forgets an object: it leaves the registry and every change set.
    func forget(_ object: NSManagedObject) {
        registry.removeValue(forKey: object.tableKey)
        removeFromChangeSets(object)
        assignedStores.removeValue(forKey: ObjectIdentifier(object))
        object.releaseSnapshot()
        object.context = nil
        didUnregister([object.tableKey])
    }

    /// Lets go of the registered objects only the context references (``ObjectRegistry/sweep(namingIDs:)``),
    /// telling the stores that asked for registration callbacks which ones left.
    func sweepRegistry() {
        let naming =
            coordinator?.persistentStores.contains {
                ($0 as? NSIncrementalStore)?.wantsRegistrationCallbacks ?? false
            } ?? false
        let released = registry.sweep(namingIDs: naming)
        if naming { withExtendedLifetime(released) { didUnregister(released.map(\.value)) } }
    }

    /// Tells incremental stores that asked for registration callbacks that objects left the
    /// context (forgotten, or gone away with the app's last reference). The IDs' store parts
    /// must be alive (kept by their objects or ID instances).
    func didUnregister(_ ids: [IDValue]) {
        for id in ids {
            if let store = id.space?.store as? NSIncrementalStore, store.wantsRegistrationCallbacks {
                store.managedObjectContextDidUnregisterObjects(with: [NSManagedObjectID(value: id)])
            }
        }
    }

}

extension NSEntityDescription {
    /// Creates an object of the entity named `entityName` and inserts it into `context`.
    ///
    /// Traps when the context's model has no such entity, as Apple raises.
    @discardableResult
    public class func insertNewObject(forEntityName entityName: String, into context: NSManagedObjectContext)
        -> NSManagedObject
    {
        guard let entity = entity(forEntityName: entityName, in: context) else {
            preconditionFailure("insertNewObject(forEntityName:into:): no entity named \(entityName) in the model")
        }
        let objectClass = ManagedObjectClasses.objectClass(for: entity)
        return objectClass.init(entity: entity, insertInto: context)
    }

    /// The entity named `entityName` in the model of `context`'s coordinator.
    public class func entity(forEntityName entityName: String, in context: NSManagedObjectContext)
        -> NSEntityDescription?
    {
        context.persistentStoreCoordinator?.managedObjectModel.entitiesByName[entityName]
    }
}

/// A weak reference that can cross to another queue inside ``UncheckedSendable``.
final class WeakReference<Object: AnyObject> {
    weak var object: Object?
    init(_ object: Object) { self.object = object }
}
