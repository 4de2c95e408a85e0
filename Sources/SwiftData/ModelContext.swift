import OpenCoreData

/// Where models are inserted, changed, deleted, fetched and saved: a Core Data context of the
/// container's coordinator, whose objects hold the models' values.
///
/// Related documentation: SwiftData, `ModelContext`.
public final class ModelContext: @unchecked Sendable {
    /// The container whose stores the context saves to.
    public let container: ModelContainer
    let managedObjectContext: NSManagedObjectContext
    /// The model of each Core Data object of the context, by the object's identity, held weakly:
    /// the object holds the values, so a model no one holds is made again when next asked for.
    private var models: [ObjectIdentifier: WeakModel] = [:]
    /// The size of `models` at which entries of released models are next dropped.
    private var pruneAt = 256
    /// The entity of each model class that joined the context, by class: finding it by the
    /// class's name made the name (`String(describing:)`) and hashed it at every insert.
    private var entities: [ObjectIdentifier: NSEntityDescription] = [:]

    /// A context of `container`.
    public init(_ container: ModelContainer) {
        self.container = container
        managedObjectContext = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        managedObjectContext.persistentStoreCoordinator = container.coordinator
        // A model inserted with the value of a `.unique` property a stored model has updates the
        // stored model (SwiftData's upsert): the inserted values win, property by property.
        managedObjectContext.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
    }

    /// Whether the context has inserts, changes or deletions it has not saved.
    public var hasChanges: Bool { managedObjectContext.hasChanges }

    /// Whether the context saves its changes by itself: `true` for a container's
    /// ``ModelContainer/mainContext``, `false` for contexts you make. On Linux the main context
    /// saves on the main queue's next turn after a change (an insert, a deletion, a property set);
    /// another context never saves by itself, as it may be confined to a thread the main queue is
    /// not. A failed autosave is reported on standard error and its changes stay in the context
    /// for the next save.
    public var autosaveEnabled = false
    /// Whether this is its container's main context, which autosaves on the main queue.
    var isMainContext = false
    /// Whether an autosave waits on the main queue.
    private var autosaveScheduled = false

    /// Notes a change for autosave: the main context, autosaving, saves on the main queue's next
    /// turn, once for all the changes made before it.
    func noteChange() {
        guard autosaveEnabled, isMainContext, !autosaveScheduled else { return }
        autosaveScheduled = true
        DispatchQueue.main.async {
            MainActor.assumeIsolated { self.autosave() }
        }
    }

    @MainActor private func autosave() {
        autosaveScheduled = false
        guard autosaveEnabled, hasChanges else { return }
        do {
            try save()
        } catch {
            FileHandle.standardError.write(
                Data("SwiftData: the main context could not autosave; its changes are kept: \(error)\n".utf8))
        }
    }

    /// Adds `model` to the context, to be saved with its next save. A model already in this
    /// context stays as it is.
    public func insert<T: PersistentModel>(_ model: T) {
        join(model)
    }

    /// The Core Data object of `model`, which joins this context first if it is in none.
    func managedObject(for model: any PersistentModel) -> NSManagedObject {
        join(model)
    }

    /// Makes `model` a model of this context, if it is not one already, and returns the Core Data
    /// object holding its values.
    @discardableResult
    private func join<T: PersistentModel>(_ model: T) -> NSManagedObject {
        guard let backing = model.persistentBackingData as? DefaultBackingData<T> else {
            preconditionFailure("\(T.self) has backing data this context did not make")
        }
        if backing.context === self, let object = backing.attached { return object }
        precondition(backing.context == nil, "the model belongs to another context")
        let object = NSManagedObject(entity: entity(of: T.self), insertInto: managedObjectContext)
        // Registered before its values move, so a related model that relates back finds it.
        register(model, for: object)
        backing.attach(to: object, in: self)
        noteChange()
        return object
    }

    /// The entity of model class `type` in the container's model (which does not change).
    private func entity<T: PersistentModel>(of type: T.Type) -> NSEntityDescription {
        if let known = entities[ObjectIdentifier(type)] { return known }
        guard let entity = container.coordinator.managedObjectModel.entitiesByName[Schema.entityName(of: type)] else {
            preconditionFailure("\(T.self) is not in the container's schema")
        }
        entities[ObjectIdentifier(type)] = entity
        return entity
    }

    /// Deletes `model` from its store at the next save.
    public func delete<T: PersistentModel>(_ model: T) {
        guard let backing = model.persistentBackingData as? DefaultBackingData<T>, backing.context === self,
            let object = backing.attached
        else { return }
        managedObjectContext.delete(object)
        noteChange()
    }

    /// Saves the context's inserts, changes and deletions to the stores. Posts
    /// ``willSave`` before and, when the save succeeded, ``didSave`` with the identifiers of the
    /// inserted, updated and deleted models (``NotificationKey``).
    ///
    /// - Throws: what Core Data's save throws: a validation error (a required property without a
    ///   value, 1570), a conflict, the store's error.
    public func save() throws {
        NotificationCenter.default.post(name: Self.willSave, object: self)
        managedObjectContext.processPendingChanges()
        let inserted = managedObjectContext.insertedObjects
        let updated = managedObjectContext.updatedObjects
        let deleted = managedObjectContext.deletedObjects.map(\.objectID)
        let hadChanges = managedObjectContext.hasChanges
        try managedObjectContext.save()
        guard hadChanges else { return }
        NotificationCenter.default.post(
            name: Self.didSave, object: self,
            userInfo: [
                NotificationKey.insertedIdentifiers.rawValue: inserted.map { PersistentIdentifier($0.objectID) },
                NotificationKey.updatedIdentifiers.rawValue: updated.map { PersistentIdentifier($0.objectID) },
                NotificationKey.deletedIdentifiers.rawValue: deleted.map(PersistentIdentifier.init),
            ])
    }

    /// Posted by a context (the notification's object) before it saves.
    public static let willSave = Notification.Name("SwiftData.ModelContext.willSave")
    /// Posted by a context (the notification's object) after it saved changes; its user info holds
    /// the identifiers of the models saved, under ``NotificationKey``'s raw values.
    public static let didSave = Notification.Name("SwiftData.ModelContext.didSave")

    /// The keys of ``didSave``'s user info.
    public enum NotificationKey: String, Sendable {
        /// The identifiers of the inserted models, `[PersistentIdentifier]`.
        case insertedIdentifiers
        /// The identifiers of the updated models, `[PersistentIdentifier]`.
        case updatedIdentifiers
        /// The identifiers of the deleted models, `[PersistentIdentifier]`.
        case deletedIdentifiers
        /// Every model's identifier may have changed (not posted by a save).
        case invalidatedAllIdentifiers
        /// The query generation of the context (not posted by a save).
        case queryGeneration
    }

    /// The author recorded with the context's saves in the store's persistent history.
    public var author: String? {
        get { managedObjectContext.transactionAuthor }
        set { managedObjectContext.transactionAuthor = newValue }
    }

    /// The undo manager that records the context's changes; `nil` (the default) records none.
    public var undoManager: OpenCoreData.UndoManager? {
        get { managedObjectContext.undoManager }
        set { managedObjectContext.undoManager = newValue }
    }

    /// Discards the context's unsaved inserts, changes and deletions.
    public func rollback() {
        managedObjectContext.rollback()
    }

    /// The models `descriptor` describes.
    ///
    /// The predicate and sort run in the store — as one SQL statement for an SQLite store, window
    /// included — when they have an equivalent there (`PredicateTranslation`). Otherwise the store
    /// answers what it can and Foundation evaluates the rest on the models
    /// (`Predicate.evaluate(_:)`, `SortDescriptor.compare(_:_:)`) before the window applies: the
    /// answers are the same either way.
    ///
    /// - Throws: the store's error; an error the predicate throws while evaluated.
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [T] {
        let objects = try fetchObjects(descriptor)
        // Every object may get a new model: room for them all at once, and no sweep for released
        // models while they are registered (each sweep reads every entry's weak reference).
        models.reserveCapacity(models.count + objects.count)
        pruneAt = max(pruneAt, models.count + objects.count + 1)
        let properties = ModelProperties.of(T.self)
        return objects.map { model(of: $0, as: T.self, properties: properties) }
    }

    /// The Core Data objects of the models `descriptor` describes, in order; `batchSize` above
    /// zero has the store hand out their rows a batch at a time as they are used.
    func fetchObjects<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, batchSize: Int = 0) throws
        -> [NSManagedObject]
    {
        let plan = FetchPlan(descriptor)
        let request = NSFetchRequest<NSManagedObject>(entityName: Schema.entityName(of: T.self))
        request.includesPendingChanges = descriptor.includePendingChanges
        request.returnsObjectsAsFaults = batchSize > 0
        request.fetchBatchSize = max(batchSize, 0)
        request.predicate = plan.storePredicate
        if let sorts = plan.storeSorts { request.sortDescriptors = sorts }
        let properties = ModelProperties.of(T.self)
        let prefetched = descriptor.relationshipKeyPathsForPrefetching.compactMap { properties.name(for: $0) }
        if !prefetched.isEmpty { request.relationshipKeyPathsForPrefetching = prefetched }
        if plan.isWhollyInStore {
            request.fetchOffset = descriptor.fetchOffset ?? 0
            request.fetchLimit = descriptor.fetchLimit ?? 0
        }
        let objects = try managedObjectContext.fetch(request)
        guard !plan.isWhollyInStore else { return objects }
        var results = objects.map { model(of: $0, as: T.self) }
        if let predicate = plan.memoryPredicate { results = try results.filter { try predicate.evaluate($0) } }
        if plan.storeSorts == nil { results.sort(using: descriptor.sortBy) }
        let offset = min(max(descriptor.fetchOffset ?? 0, 0), results.count)
        let end = descriptor.fetchLimit.map { min(offset + max($0, 0), results.count) } ?? results.count
        return results[offset..<end].compactMap(\.attachedObject)
    }

    /// The number of models `descriptor` describes.
    ///
    /// - Throws: as ``fetch(_:)``.
    public func fetchCount<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> Int {
        let plan = FetchPlan(descriptor)
        guard plan.memoryPredicate == nil else { return try fetch(descriptor).count }
        let request = NSFetchRequest<NSManagedObject>(entityName: Schema.entityName(of: T.self))
        request.includesPendingChanges = descriptor.includePendingChanges
        request.predicate = plan.storePredicate
        request.fetchOffset = descriptor.fetchOffset ?? 0
        request.fetchLimit = descriptor.fetchLimit ?? 0
        return try managedObjectContext.count(for: request)
    }

    /// The models inserted since the last save.
    public var insertedModelsArray: [any PersistentModel] { registeredModels(of: managedObjectContext.insertedObjects) }

    /// The models changed since the last save.
    public var changedModelsArray: [any PersistentModel] { registeredModels(of: managedObjectContext.updatedObjects) }

    /// The models deleted since the last save.
    public var deletedModelsArray: [any PersistentModel] { registeredModels(of: managedObjectContext.deletedObjects) }

    /// Runs the delete rules and notes the changes made since the last call, as a save would
    /// first.
    public func processPendingChanges() {
        managedObjectContext.processPendingChanges()
    }

    /// Runs `block`, then saves the context's changes.
    ///
    /// - Throws: what `block` throws (nothing is saved then), or what ``save()`` throws.
    public func transaction(block: () throws -> Void) throws {
        try block()
        try save()
    }

    /// Deletes every model of `model` that `predicate` accepts (every one when `nil`), at the next
    /// save. `includeSubclasses` is accepted for Apple's signature; model classes here have no
    /// subclasses in the schema.
    ///
    /// - Throws: as ``fetch(_:)``.
    public func delete<T: PersistentModel>(
        model: T.Type, where predicate: Predicate<T>? = nil, includeSubclasses: Bool = true
    ) throws {
        for model in try fetch(FetchDescriptor<T>(predicate: predicate)) { delete(model) }
    }

    /// The identifiers of the models `descriptor` describes.
    ///
    /// - Throws: as ``fetch(_:)``.
    public func fetchIdentifiers<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [PersistentIdentifier]
    {
        try fetch(descriptor).map(\.persistentModelID)
    }

    /// The model of `id` this context holds, if it holds one.
    public func registeredModel<T: PersistentModel>(for id: PersistentIdentifier) -> T? {
        registeredObject(for: id).flatMap { model(of: $0) as? T }
    }

    /// The model of `id`: the one the context holds, or one whose values the store reads when
    /// first used. An identifier of no store of the container is a programming error, as Apple's
    /// `model(for:)` also traps on one.
    public func model(for id: PersistentIdentifier) -> any PersistentModel {
        guard let model = existingModel(for: id, checkingStore: false) else {
            preconditionFailure("\(id) is not the identifier of a model of this container's stores")
        }
        return model
    }

    /// The model of `id` the context holds, or the store has; `nil` when neither has it.
    /// `checkingStore` false makes a model of a stored identifier without reading its row.
    func existingModel(for id: PersistentIdentifier, checkingStore: Bool = true) -> (any PersistentModel)? {
        if let registered = registeredObject(for: id) { return model(of: registered) }
        guard let url = URL(string: id.uri),
            let objectID = container.coordinator.managedObjectID(forURIRepresentation: url)
        else { return nil }
        let object =
            checkingStore
            ? try? managedObjectContext.existingObject(with: objectID) : managedObjectContext.object(with: objectID)
        return object.flatMap { model(of: $0) }
    }

    /// The Core Data object of `id` the context holds.
    private func registeredObject(for id: PersistentIdentifier) -> NSManagedObject? {
        managedObjectContext.registeredObjects.first { PersistentIdentifier($0.objectID) == id }
    }

    /// The models of `objects`, in no particular order.
    private func registeredModels(of objects: Set<NSManagedObject>) -> [any PersistentModel] {
        objects.compactMap { model(of: $0) }
    }

    /// The model of `object`, one at a time per object: the one inserted or made before while
    /// something holds it, or a new one of the entity's class.
    func model(of object: NSManagedObject) -> (any PersistentModel)? {
        if let known = models[ObjectIdentifier(object)]?.model as? any PersistentModel { return known }
        guard let type = container.schema.typesByEntityName[object.entity.name ?? ""] else { return nil }
        func made<T: PersistentModel>(_ type: T.Type) -> T { model(of: object, as: type) }
        return made(type)
    }

    /// The model of `object`, of class `T`.
    func model<T: PersistentModel>(
        of object: NSManagedObject, as type: T.Type, properties: ModelProperties? = nil
    ) -> T {
        if let known = models[ObjectIdentifier(object)]?.model as? T { return known }
        let model = T(
            backingData: DefaultBackingData<T>(
                object: object, context: self, properties: properties ?? ModelProperties.of(T.self)))
        register(model, for: object)
        return model
    }

    private func register(_ model: AnyObject, for object: NSManagedObject) {
        if models.count >= pruneAt {
            models = models.filter { $0.value.model != nil }
            pruneAt = max(256, models.count * 2)
        }
        models[ObjectIdentifier(object)] = WeakModel(model: model)
    }
}

/// A model the context does not keep alive.
private struct WeakModel {
    weak var model: AnyObject?
}

/// Which parts of a fetch the store answers and which Foundation evaluates on the models.
struct FetchPlan<T: PersistentModel> {
    /// The predicate the store applies; `nil` for none (or when it cannot apply it).
    let storePredicate: OpenCoreData.NSPredicate?
    /// The predicate left to memory; `nil` when the store applies it (or there is none).
    let memoryPredicate: Predicate<T>?
    /// The store's sort; `nil` when the sort is left to memory.
    let storeSorts: [OpenCoreData.NSSortDescriptor]?

    init(_ descriptor: FetchDescriptor<T>) {
        let translated = descriptor.predicate.flatMap { PredicateTranslation.predicate($0) }
        storePredicate = translated
        memoryPredicate = translated == nil ? descriptor.predicate : nil
        storeSorts = PredicateTranslation.sortDescriptors(descriptor.sortBy)
    }

    /// Whether the store answers the whole fetch, window included.
    var isWhollyInStore: Bool { memoryPredicate == nil && storeSorts != nil }
}
