import Foundation

/// What an ``NSBatchUpdateRequest`` returns in its ``NSBatchUpdateResult``, with Apple's raw values.
public enum NSBatchUpdateRequestResultType: UInt, Sendable {
    /// Only whether the update succeeded: `true`.
    case statusOnlyResultType = 0
    /// The IDs of the objects updated.
    case updatedObjectIDsResultType = 1
    /// The number of objects updated.
    case updatedObjectsCountResultType = 2
}

/// A request that changes attributes of every object of an entity matching a predicate, in the
/// SQLite store, without loading objects into a context.
///
/// As Apple documents it (Core Data Batch Programming Guide, "Implementing Batch Updates"):
/// validation does not run, the context is not told (refresh or merge the updated IDs), each
/// updated row's version (`Z_OPT`) is incremented so contexts holding the old values meet an
/// optimistic-locking conflict on their next save. Values are constants or `NSExpression`s
/// evaluated against each object's stored values (`salary * 1.1`).
///
/// Related documentation: NSBatchUpdateRequest, `propertiesToUpdate` ("a dictionary of property
/// description or name to new value or expression").
open class NSBatchUpdateRequest: NSPersistentStoreRequest, @unchecked Sendable {
    private let name: String
    private var resolved: NSEntityDescription?

    /// The name of the entity updated.
    open var entityName: String { resolved?.name ?? name }
    /// The entity updated: for a request made with an entity name, a description with only
    /// that name until the request runs against a model.
    open var entity: NSEntityDescription {
        if let resolved { return resolved }
        let placeholder = NSEntityDescription()
        placeholder.name = name
        return placeholder
    }
    /// Which objects are updated; `nil` updates every object of the entity.
    open var predicate: NSPredicate?
    /// Whether objects of sub-entities are updated too; `true` by default.
    open var includesSubentities = true
    /// What the result holds; ``NSBatchUpdateRequestResultType/statusOnlyResultType`` by default.
    open var resultType: NSBatchUpdateRequestResultType = .statusOnlyResultType
    /// The new values: keys are attribute names or `NSAttributeDescription`s, values constants
    /// (`NSNull` for no value) or `NSExpression`s.
    open var propertiesToUpdate: [AnyHashable: Any]?

    /// A request updating objects of the entity named `entityName`.
    public init(entityName: String) {
        name = entityName
        super.init()
    }

    /// A request updating objects of `entity`.
    public init(entity: NSEntityDescription) {
        name = entity.name ?? ""
        resolved = entity
        super.init()
    }

    /// The entity the request names in `model`, or its own.
    func entity(in model: NSManagedObjectModel) -> NSEntityDescription? {
        resolved ?? model.entitiesByName[name]
    }

    /// ``NSPersistentStoreRequestType/batchUpdateRequestType``.
    override open var requestType: NSPersistentStoreRequestType { .batchUpdateRequestType }

    /// A copy of the request.
    override open func copy(with zone: NSZone? = nil) -> Any {
        let copy = resolved.map { NSBatchUpdateRequest(entity: $0) } ?? NSBatchUpdateRequest(entityName: name)
        copy.predicate = predicate
        copy.includesSubentities = includesSubentities
        copy.resultType = resultType
        copy.propertiesToUpdate = propertiesToUpdate
        copy.affectedStores = affectedStores
        return copy
    }
}
