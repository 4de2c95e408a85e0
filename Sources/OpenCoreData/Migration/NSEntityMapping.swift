import Foundation

/// What an entity mapping does with the instances of its source entity.
public enum NSEntityMappingType: UInt, Sendable {
    /// A mapping whose kind is not set.
    case undefinedEntityMappingType = 0
    /// A mapping run by a custom `NSEntityMigrationPolicy`.
    case customEntityMappingType = 1
    /// The destination entity is new: there is nothing to migrate.
    case addEntityMappingType = 2
    /// The source entity is gone: its instances are not migrated.
    case removeEntityMappingType = 3
    /// The entity is unchanged: instances are copied as they are.
    case copyEntityMappingType = 4
    /// The entity changed: instances are migrated through the property mappings.
    case transformEntityMappingType = 5
}

/// How the instances of one source entity become instances of one destination entity.
open class NSEntityMapping: NSObject {
    /// The mapping's name (`SourceToDestination`, as Xcode names mappings).
    open var name: String!
    /// What the mapping does.
    open var mappingType: NSEntityMappingType = .undefinedEntityMappingType
    /// The source entity's name; nil for an added entity.
    open var sourceEntityName: String?
    /// The source entity's version hash.
    open var sourceEntityVersionHash: Data?
    /// The destination entity's name; nil for a removed entity.
    open var destinationEntityName: String?
    /// The destination entity's version hash.
    open var destinationEntityVersionHash: Data?
    /// How each destination attribute gets its value.
    open var attributeMappings: [NSPropertyMapping]?
    /// How each destination relationship gets its destinations.
    open var relationshipMappings: [NSPropertyMapping]?
    /// The expression that fetches the source instances to migrate.
    open var sourceExpression: NSExpression?
    /// The class name of the `NSEntityMigrationPolicy` that runs the mapping; nil for the default.
    open var entityMigrationPolicyClassName: String?
    /// Information for the migration policy.
    open var userInfo: [AnyHashable: Any]?

    override open var description: String {
        "<NSEntityMapping: \(name ?? "") \(sourceEntityName ?? "-") → \(destinationEntityName ?? "-") (\(mappingType))>"
    }

    /// Whether `object` maps the same entities (names and version hashes) the same way: kind,
    /// source expression, policy class and property mappings (`userInfo` is not compared). Two
    /// loads of one mapping model are equal, as on Apple platforms.
    override open func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSEntityMapping else { return false }
        if other === self { return true }
        return name == other.name && mappingType == other.mappingType
            && sourceEntityName == other.sourceEntityName && sourceEntityVersionHash == other.sourceEntityVersionHash
            && destinationEntityName == other.destinationEntityName
            && destinationEntityVersionHash == other.destinationEntityVersionHash
            && sourceExpression == other.sourceExpression
            && entityMigrationPolicyClassName == other.entityMigrationPolicyClassName
            && (attributeMappings ?? []) == (other.attributeMappings ?? [])
            && (relationshipMappings ?? []) == (other.relationshipMappings ?? [])
    }

    /// A hash of the mapping's name and entities, equal for equal mappings.
    override open var hash: Int {
        var hasher = Hasher()
        hasher.combine(name)
        hasher.combine(sourceEntityName)
        hasher.combine(destinationEntityName)
        return hasher.finalize()
    }
}
