import Foundation

/// Lightweight migration's inferred mapping (Core Data Model Versioning and Data Migration
/// Programming Guide, "Lightweight Migration"; "Migrating your data model automatically"): which
/// source entity and property each destination entity and property comes from, and whether the
/// change between them is one lightweight migration can make.
///
/// An entity or property of the destination comes from the source one with its name, or with the
/// name its `renamingIdentifier` gives. A renaming identifier is a canonical name — the first name —
/// so a source entity or property that carries the same renaming identifier matches too, and a
/// rename in version 2 and another in version 3 migrate from 1 to 3 as well as from 2 to 3.
struct MappingInference {
    let source: NSManagedObjectModel
    let destination: NSManagedObjectModel

    /// Every entity mapping: the destination entities in model order (copy, transform or add),
    /// then the source entities nothing maps from (remove).
    ///
    /// - Throws: `NSInferredMappingModelError` for a change inference cannot make.
    func entityMappings() throws -> [NSEntityMapping] {
        let sources = source.entities
        var sourceFor: [ObjectIdentifier: NSEntityDescription] = [:]
        var claimed: [ObjectIdentifier: NSEntityDescription] = [:]
        for entity in destination.entities {
            guard let match = Self.match(entity, among: sources) else { continue }
            if let other = claimed[ObjectIdentifier(match)] {
                throw Self.failure(
                    "The destination entities \(other.name ?? "") and \(entity.name ?? "") both come from the source entity \(match.name ?? ""); lightweight migration cannot split an entity",
                    entity: entity)
            }
            claimed[ObjectIdentifier(match)] = entity
            sourceFor[ObjectIdentifier(entity)] = match
        }
        try checkHierarchies(sourceFor)
        var mappings: [NSEntityMapping] = []
        for entity in destination.entities {
            guard let from = sourceFor[ObjectIdentifier(entity)] else {
                mappings.append(Self.mapping(.addEntityMappingType, from: nil, to: entity))
                continue
            }
            let unchanged = from.versionHash == entity.versionHash && from.name == entity.name
            let mapping = Self.mapping(
                unchanged ? .copyEntityMappingType : .transformEntityMappingType, from: from, to: entity)
            try propertyMappings(from: from, to: entity, sourceFor: sourceFor, into: mapping)
            mappings.append(mapping)
        }
        for entity in sources where claimed[ObjectIdentifier(entity)] == nil {
            mappings.append(Self.mapping(.removeEntityMappingType, from: entity, to: nil))
        }
        return mappings
    }

    /// The element of `candidates` that `item` comes from: same name first, then through renaming
    /// identifiers.
    static func match<Item: NSObject>(
        _ item: Item, among candidates: [Item], name: (Item) -> String?, renaming: (Item) -> String?
    ) -> Item? {
        if let found = candidates.first(where: { name($0) == name(item) }) { return found }
        guard let canonical = renaming(item) else { return nil }
        return candidates.first { name($0) == canonical || renaming($0) == canonical }
    }

    private static func match(_ entity: NSEntityDescription, among entities: [NSEntityDescription])
        -> NSEntityDescription?
    {
        match(entity, among: entities, name: { $0.name }, renaming: { $0.renamingIdentifier })
    }

    /// "You cannot merge entity hierarchies": destination entities of one hierarchy (one table
    /// on SQLite) must come from entities of one source hierarchy.
    private func checkHierarchies(_ sourceFor: [ObjectIdentifier: NSEntityDescription]) throws {
        var sourceRootOf: [ObjectIdentifier: (root: NSEntityDescription, entity: NSEntityDescription)] = [:]
        for entity in destination.entities {
            guard let from = sourceFor[ObjectIdentifier(entity)] else { continue }
            let root = ObjectIdentifier(Self.root(of: entity))
            let fromRoot = Self.root(of: from)
            if let seen = sourceRootOf[root], seen.root !== fromRoot {
                throw Self.failure(
                    "The destination entities \(seen.entity.name ?? "") and \(entity.name ?? "") share a hierarchy, but their source entities \(sourceFor[ObjectIdentifier(seen.entity)]?.name ?? "") and \(from.name ?? "") do not; lightweight migration cannot merge entity hierarchies",
                    entity: entity)
            }
            sourceRootOf[root] = (fromRoot, entity)
        }
    }

    private static func root(of entity: NSEntityDescription) -> NSEntityDescription {
        var root = entity
        while let parent = root.superentity { root = parent }
        return root
    }

    /// The attribute and relationship mappings of a destination entity from its source entity.
    private func propertyMappings(
        from source: NSEntityDescription, to destination: NSEntityDescription,
        sourceFor: [ObjectIdentifier: NSEntityDescription], into mapping: NSEntityMapping
    ) throws {
        let sourceProperties = source.properties.filter(Self.isMigrated)
        var attributes: [NSPropertyMapping] = []
        var relationships: [NSPropertyMapping] = []
        for property in destination.properties where Self.isMigrated(property) {
            let from = Self.match(
                property, among: sourceProperties, name: { $0.name }, renaming: { $0.renamingIdentifier })
            let propertyMapping = NSPropertyMapping()
            propertyMapping.name = property.name
            switch (property, from) {
            case (let attribute as NSAttributeDescription, let old as NSAttributeDescription):
                guard attribute.attributeType == old.attributeType else {
                    throw Self.failure(
                        "Source and destination attribute types are incompatible: \(destination.name ?? "").\(attribute.name) was \(old.attributeType) and is \(attribute.attributeType)",
                        entity: destination)
                }
                propertyMapping.valueExpression = Self.valueForKey(old.name)
            case (let relationship as NSRelationshipDescription, let old as NSRelationshipDescription):
                let target = relationship.destinationEntity.flatMap { sourceFor[ObjectIdentifier($0)] }
                guard let target, let oldTarget = old.destinationEntity,
                    target === oldTarget || Self.isKind(oldTarget, of: target) || Self.isKind(target, of: oldTarget)
                else {
                    throw Self.failure(
                        "The relationship \(destination.name ?? "").\(relationship.name) leads to \(relationship.destinationEntity?.name ?? "nothing"), which does not come from \(old.destinationEntity?.name ?? "nothing"), the destination of its source relationship",
                        entity: destination)
                }
                propertyMapping.valueExpression = Self.destinationInstances(old.name)
            case (_, nil):
                break  // a new property: it takes its default value
            default:
                throw Self.failure(
                    "\(destination.name ?? "").\(property.name) changed between attribute and relationship",
                    entity: destination)
            }
            if property is NSRelationshipDescription {
                relationships.append(propertyMapping)
            } else {
                attributes.append(propertyMapping)
            }
        }
        mapping.attributeMappings = attributes
        mapping.relationshipMappings = relationships
    }

    /// Whether `entity` is `ancestor` or one of its sub-entities.
    private static func isKind(_ entity: NSEntityDescription, of ancestor: NSEntityDescription) -> Bool {
        var current: NSEntityDescription? = entity
        while let candidate = current {
            if candidate === ancestor { return true }
            current = candidate.superentity
        }
        return false
    }

    /// Stored properties are migrated; transient and fetched ones are not.
    private static func isMigrated(_ property: NSPropertyDescription) -> Bool {
        !property.isTransient && !(property is NSFetchedPropertyDescription)
    }

    private static func mapping(
        _ type: NSEntityMappingType, from source: NSEntityDescription?, to destination: NSEntityDescription?
    ) -> NSEntityMapping {
        let mapping = NSEntityMapping()
        mapping.name = inferredName(type, source: source, destination: destination)
        mapping.mappingType = type
        // Apple's inferred mappings carry a user info dictionary (empty), never nil.
        mapping.userInfo = [:]
        mapping.sourceEntityName = source?.name
        mapping.sourceEntityVersionHash = source?.versionHash
        mapping.destinationEntityName = destination?.name
        mapping.destinationEntityVersionHash = destination?.versionHash
        if let name = source?.name, type != .removeEntityMappingType {
            mapping.sourceExpression = sourceFetch(name)
        }
        if type == .addEntityMappingType || type == .removeEntityMappingType {
            mapping.attributeMappings = []
            mapping.relationshipMappings = []
        }
        return mapping
    }

    /// The name Apple's inference gives an entity mapping: `IEM_<Kind>_<Entity>` — `Add` with the
    /// destination entity's name; `Copy`, `Transform` or `Remove` with the source entity's (a
    /// renamed entity's old name), as code that looks inferred mappings up by name expects.
    static func inferredName(
        _ type: NSEntityMappingType, source: NSEntityDescription?, destination: NSEntityDescription?
    ) -> String {
        switch type {
        case .addEntityMappingType: "IEM_Add_" + (destination?.name ?? "")
        case .removeEntityMappingType: "IEM_Remove_" + (source?.name ?? "")
        case .copyEntityMappingType: "IEM_Copy_" + (source?.name ?? "")
        default: "IEM_Transform_" + (source?.name ?? "")
        }
    }

    /// `FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", name,
    /// predicate), $manager.sourceContext, NO)`: every instance of the source entity the predicate
    /// accepts (all of them for `TRUEPREDICATE`), the expression Xcode writes for an entity mapping.
    static func sourceFetch(_ entity: String, predicate: String = "TRUEPREDICATE") -> NSExpression {
        NSExpression(
            forFunction: "FETCH",
            arguments: [
                NSExpression(
                    format: "FUNCTION($manager, 'fetchRequestForSourceEntityNamed:predicateString:', %@, %@)",
                    entity, predicate),
                NSExpression(format: "$manager.sourceContext"), NSExpression(forConstantValue: false),
            ])
    }

    /// `FUNCTION($source, "valueForKey:", name)`: the source instance's value.
    private static func valueForKey(_ name: String) -> NSExpression {
        NSExpression(format: "FUNCTION($source, 'valueForKey:', %@)", name)
    }

    /// `FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", name,
    /// $source.name)`: the migrated destinations of the source instance's relationship.
    private static func destinationInstances(_ name: String) -> NSExpression {
        NSExpression(
            format:
                "FUNCTION($manager, 'destinationInstancesForSourceRelationshipNamed:sourceInstances:', %@, $source.%K)",
            name, name)
    }

    private static func failure(_ reason: String, entity: NSEntityDescription) -> NSError {
        CoreDataError.make(
            NSInferredMappingModelError, "Can't find or automatically infer mapping model for migration. \(reason)",
            ["reason": reason, "entity": entity.name ?? ""])
    }
}
