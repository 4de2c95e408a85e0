/// The base of a store you write yourself: Core Data asks it for objects, values and saves
/// through the methods below, and the built-in in-memory store is written the same way.
///
/// Override ``NSPersistentStore/loadMetadata()`` (set `metadata` with ``NSStoreTypeKey`` and ``NSStoreUUIDKey``),
/// ``execute(_:with:)`` (fetch and save requests), ``newValuesForObject(with:with:)``,
/// ``newValue(forRelationship:forObjectWith:with:)`` and ``obtainPermanentIDs(for:)``.
///
/// ```swift
/// final class MyStore: NSIncrementalStore {
///     override func loadMetadata() throws {
///         metadata = [NSStoreTypeKey: "MyStore", NSStoreUUIDKey: UUID().uuidString]
///     }
///     // …
/// }
/// NSPersistentStoreCoordinator.registerStoreClass(MyStore.self, forStoreType: "MyStore")
/// ```
///
/// Related documentation: Incremental Store Programming Guide.
open class NSIncrementalStore: NSPersistentStore {
    /// A new identifier for a store created at `storeURL`: a UUID string by default.
    open class func identifierForNewStore(at storeURL: URL) -> Any {
        UUID().uuidString
    }

    /// Answers a fetch request (an array of objects, IDs, dictionaries or one count) or a save
    /// request (an empty array).
    ///
    /// A fetch request reaches the store as an `NSFetchRequest<NSFetchRequestResult>`.
    open func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext?) throws -> Any {
        // The built-in stores answer the contract from their rows; a user's store overrides it.
        if let store = self as? any RowStore { return try store.answer(request, context: context) }
        throw CoreDataError.make(
            NSPersistentStoreUnsupportedRequestTypeError,
            "\(Swift.type(of: self)) does not override execute(_:with:)", [NSAffectedStoresErrorKey: [self]])
    }

    /// The values of the object with `objectID`, when a fault fires.
    open func newValuesForObject(
        with objectID: NSManagedObjectID, with context: NSManagedObjectContext
    ) throws -> NSIncrementalStoreNode {
        if let store = self as? any RowStore { return try store.node(for: objectID) }
        throw CoreDataError.make(
            NSPersistentStoreOperationError, "\(Swift.type(of: self)) does not override newValuesForObject(with:with:)")
    }

    /// The destination of a relationship the node left out: an object ID or `NSNull` for a
    /// to-one, a collection of object IDs for a to-many.
    open func newValue(
        forRelationship relationship: NSRelationshipDescription, forObjectWith objectID: NSManagedObjectID,
        with context: NSManagedObjectContext?
    ) throws -> Any {
        if let store = self as? any RowStore {
            return try store.destination(of: relationship, for: objectID, generation: nil, cachedRow: { _ in nil })
        }
        throw CoreDataError.make(
            NSPersistentStoreOperationError,
            "\(Swift.type(of: self)) does not override newValue(forRelationship:forObjectWith:with:)")
    }

    /// Permanent IDs for newly inserted objects, in the same order.
    open func obtainPermanentIDs(for array: [NSManagedObject]) throws -> [NSManagedObjectID] {
        if let store = self as? any RowStore { return try store.permanentIDs(for: array) }
        throw CoreDataError.make(
            NSPersistentStoreOperationError, "\(Swift.type(of: self)) does not override obtainPermanentIDs(for:)")
    }

    /// Whether the registration callbacks below are worth calling; the built-in stores (the row
    /// stores) have nothing to do with them.
    package var wantsRegistrationCallbacks: Bool { !(self is any RowStore) }

    /// Told when contexts register objects of this store.
    open func managedObjectContextDidRegisterObjects(with objectIDs: [NSManagedObjectID]) {}

    /// Told when contexts stop using objects of this store.
    open func managedObjectContextDidUnregisterObjects(with objectIDs: [NSManagedObjectID]) {}

    /// A permanent object ID for the object of `entity` that the store knows by `data` (for
    /// example, a primary key or a string). `data` must be `Hashable`.
    public final func newObjectID(for entity: NSEntityDescription, referenceObject data: Any) -> NSManagedObjectID {
        NSManagedObjectID(
            entity: entity, key: NSManagedObjectID.permanentKey(for: data), store: self, reference: data)
    }

    /// The reference object of an ID this store made with ``newObjectID(for:referenceObject:)``.
    public final func referenceObject(for objectID: NSManagedObjectID) -> Any {
        guard let reference = objectID.referenceObject else {
            preconditionFailure("referenceObject(for:): \(objectID) is a temporary ID")
        }
        return reference
    }
}
