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
    open var destinationEntity: NSEntityDescription? {
        get { destinationReference.entity }
        set { destinationReference.entity = newValue }
    }
    private var destinationReference = WeakEntity()
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

}
