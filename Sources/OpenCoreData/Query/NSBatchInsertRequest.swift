import Foundation

/// What an ``NSBatchInsertRequest`` returns in its ``NSBatchInsertResult``, with Apple's raw values.
public enum NSBatchInsertRequestResultType: UInt, Sendable {
    /// Only whether the insert succeeded: `true`.
    case statusOnly = 0
    /// The IDs of the objects inserted (or, where a uniqueness constraint matched a stored
    /// object, updated), in the order of the dictionaries.
    case objectIDs = 1
    /// The number of objects inserted or updated.
    case count = 2
}

/// A request that inserts many objects of one entity into a SQLite store in one transaction,
/// from dictionaries of attribute values, without creating managed objects in a context.
///
/// As Apple documents it: contexts are not told (merge the result's IDs with
/// ``NSManagedObjectContext/mergeChanges(fromRemoteContextSave:into:)``), validation does not
/// run, relationships cannot be set, and where the entity has uniqueness constraints a dictionary
/// matching a stored object updates that object with the dictionary's values instead of inserting
/// a second one. Attributes a dictionary leaves out take the model's default value.
///
/// Related documentation: NSBatchInsertRequest ("A request to perform a batch insertion of
/// managed objects"), `dictionaryHandler`, `managedObjectHandler`.
open class NSBatchInsertRequest: NSPersistentStoreRequest, @unchecked Sendable {
    private let name: String

    /// The name of the entity inserted.
    open var entityName: String { entity?.name ?? name }
    /// The entity inserted; `nil` until the request runs when it was made with an entity name.
    open internal(set) var entity: NSEntityDescription?
    /// The objects to insert, as dictionaries of attribute values keyed by attribute name.
    open var objectsToInsert: [[String: Any]]?
    /// Called to fill one dictionary at a time; it returns `true` to stop (that dictionary is
    /// not inserted).
    open var dictionaryHandler: ((NSMutableDictionary) -> Bool)?
    /// Called to fill one managed object (not in any context) at a time; it returns `true` to
    /// stop (that object is not inserted).
    open var managedObjectHandler: ((NSManagedObject) -> Bool)?
    /// What the result holds; ``NSBatchInsertRequestResultType/statusOnly`` by default.
    open var resultType: NSBatchInsertRequestResultType = .statusOnly

    /// A request inserting `dictionaries` as objects of the entity named `entityName`.
    public init(entityName: String, objects dictionaries: [[String: Any]]) {
        name = entityName
        objectsToInsert = dictionaries
        super.init()
    }

    /// A request inserting `dictionaries` as objects of `entity`.
    public convenience init(entity: NSEntityDescription, objects dictionaries: [[String: Any]]) {
        self.init(entityName: entity.name ?? "", objects: dictionaries)
        self.entity = entity
    }

    /// A request inserting the dictionaries `handler` fills, until it returns `true`.
    public init(entityName: String, dictionaryHandler handler: @escaping (NSMutableDictionary) -> Bool) {
        name = entityName
        dictionaryHandler = handler
        super.init()
    }

    /// A request inserting the dictionaries `handler` fills, until it returns `true`.
    public convenience init(
        entity: NSEntityDescription, dictionaryHandler handler: @escaping (NSMutableDictionary) -> Bool
    ) {
        self.init(entityName: entity.name ?? "", dictionaryHandler: handler)
        self.entity = entity
    }

    /// A request inserting the objects `handler` fills, until it returns `true`.
    public init(entityName: String, managedObjectHandler handler: @escaping (NSManagedObject) -> Bool) {
        name = entityName
        managedObjectHandler = handler
        super.init()
    }

    /// A request inserting the objects `handler` fills, until it returns `true`.
    public convenience init(
        entity: NSEntityDescription, managedObjectHandler handler: @escaping (NSManagedObject) -> Bool
    ) {
        self.init(entityName: entity.name ?? "", managedObjectHandler: handler)
        self.entity = entity
    }

    /// ``NSPersistentStoreRequestType/batchInsertRequestType``.
    override open var requestType: NSPersistentStoreRequestType { .batchInsertRequestType }

    /// A copy of the request.
    override open func copy(with zone: NSZone? = nil) -> Any {
        let copy = NSBatchInsertRequest(entityName: name, objects: objectsToInsert ?? [])
        copy.entity = entity
        copy.objectsToInsert = objectsToInsert
        copy.dictionaryHandler = dictionaryHandler
        copy.managedObjectHandler = managedObjectHandler
        copy.resultType = resultType
        copy.affectedStores = affectedStores
        return copy
    }
}
