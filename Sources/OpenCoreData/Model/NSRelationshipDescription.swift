/// What happens to a relationship's destination objects when the source object is deleted, with
/// Apple's raw values.
public enum NSDeleteRule: UInt, Sendable {
    /// Leave the destination alone, inverse included.
    case noActionDeleteRule = 0
    /// Remove the deleted object from the destination's inverse.
    case nullifyDeleteRule = 1
    /// Delete the destination objects too.
    case cascadeDeleteRule = 2
    /// Refuse the deletion while there are destination objects.
    case denyDeleteRule = 3
}

/// A relationship from one entity to another.
open class NSRelationshipDescription: NSPropertyDescription, @unchecked Sendable {
    /// The entity at the other end.
    open weak var destinationEntity: NSEntityDescription?
    /// The relationship back from the destination, if the model defines one.
    open weak var inverseRelationship: NSRelationshipDescription?
    /// The fewest destination objects allowed when saving.
    open var minCount: Int = 0
    /// The most destination objects allowed; 0 means no limit (a to-many). 1 makes a to-one.
    open var maxCount: Int = 0
    /// What deleting the source does to the destination.
    open var deleteRule: NSDeleteRule = .nullifyDeleteRule
    /// Whether a to-many keeps its destination objects in order.
    open var isOrdered: Bool = false

    /// Names recorded by a model file, resolved to objects once every entity is loaded.
    var destinationEntityName: String?
    var inverseRelationshipName: String?

    /// Whether the relationship holds several objects (its `maxCount` is not 1).
    open var isToMany: Bool { maxCount != 1 }

    override func versionHashSuffix() -> [UInt8] {
        var bytes = Array((destinationEntity?.name ?? destinationEntityName ?? "").utf8)
        if let inverse = inverseRelationship?.name ?? inverseRelationshipName { bytes += Array(inverse.utf8) }
        bytes += VersionHash.littleEndian(UInt32(truncatingIfNeeded: maxCount))
        bytes += VersionHash.littleEndian(UInt32(truncatingIfNeeded: minCount))
        if isOrdered { bytes += [1, 0] }
        return bytes
    }
}

/// A property whose value is the result of a fetch, evaluated lazily; always transient.
open class NSFetchedPropertyDescription: NSPropertyDescription, @unchecked Sendable {
    /// The name of the entity the fetch returns.
    var fetchEntityName: String?
    /// The predicate of the fetch; `$FETCH_SOURCE` and `$FETCHED_PROPERTY` are bound when it runs.
    var fetchPredicate: NSPredicate?

    override public init() {
        super.init()
        isTransient = true
    }

    /// The whole request set through ``fetchRequest`` (sort descriptors, limit and the rest), kept
    /// as a private copy.
    private var storedRequest: NSFetchRequest<NSFetchRequestResult>?

    /// The fetch whose result is the property's value: an entity and a predicate in which
    /// `$FETCH_SOURCE` is the object and `$FETCHED_PROPERTY` this description, with every other
    /// setting of the request it was given (sort descriptors, limit, result type…). Each read
    /// answers a copy, so changing it does not change the property.
    open var fetchRequest: NSFetchRequest<NSFetchRequestResult>? {
        get {
            guard let fetchEntityName else { return nil }
            let request =
                storedRequest.flatMap { $0.copy() as? NSFetchRequest<NSFetchRequestResult> }
                ?? NSFetchRequest<NSFetchRequestResult>(entityName: fetchEntityName)
            request.entity = entity?.managedObjectModel?.entitiesByName[fetchEntityName] ?? request.entity
            request.predicate = fetchPredicate
            return request
        }
        set {
            storedRequest = newValue.flatMap { $0.copy() as? NSFetchRequest<NSFetchRequestResult> }
            fetchEntityName = newValue?.entityName ?? newValue?.entity?.name
            fetchPredicate = newValue?.predicate
        }
    }
}
