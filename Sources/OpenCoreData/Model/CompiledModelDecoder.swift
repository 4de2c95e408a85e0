/// Decodes a compiled managed object model: an `NSKeyedArchiver` archive as Xcode writes to
/// `.mom` files and Core Data caches in a store's `Z_MODELCACHE` (STORE-FORMAT.md, "Bookkeeping tables").
///
/// Validation predicates, fetch-request templates and derivation expressions are archived
/// predicates and expressions; they are not decoded yet (DEVIATIONS.md).
package struct CompiledModelDecoder {
    let archive: KeyedArchive
    private var entities: [Int: NSEntityDescription] = [:]
    private var properties: [Int: NSPropertyDescription] = [:]

    /// `NSFlagsKey` bit that marks a property whose value is kept in history after deletion
    /// (seen on SampleModel's `Person.id`, `preserveAfterDeletion="YES"` in its source).
    static let preservesValueInHistoryFlag = 0x10
    /// `NSFlagsKey` bit of an attribute that allows external binary storage (the bit Apple's
    /// attribute decoding maps to its store-externally flag; hashed into the version hash).
    static let externalBinaryStorageFlag = 0x04

    package static func model(from data: Data) throws -> NSManagedObjectModel {
        var decoder = CompiledModelDecoder(archive: try KeyedArchive(data: data))
        return try decoder.decodeModel()
    }

    private init(archive: KeyedArchive) {
        self.archive = archive
    }

    private mutating func decodeModel() throws -> NSManagedObjectModel {
        guard let root = archive.objects[archive.root] as? [String: Any],
            archive.className(root) == "NSManagedObjectModel"
        else { throw ModelProblem(message: "does not archive an NSManagedObjectModel") }
        let entityPairs = archive.pairs(root["NSEntities"])
        // A model without entities is valid: Xcode compiles one, and its archive has no entities.
        var names = Set<String>()
        for (name, reference) in entityPairs {
            // Models find entities by name: a second entity of one name (only a damaged or hostile
            // archive has one) would stand for the first wherever a name is looked up.
            guard names.insert(name).inserted else { throw ModelProblem(message: "archives entity \(name) twice") }
            guard let index = KeyedArchive.uid(reference), archive.dictionary(reference) != nil else {
                throw ModelProblem(message: "archives entity \(name) without its description")
            }
            let entity = NSEntityDescription()
            entity.name = name
            entities[index] = entity
        }
        for (index, entity) in entities { try decodeEntity(entity, from: archive.objects[index]) }
        for (index, entity) in entities {
            guard let object = archive.objects[index] as? [String: Any] else { continue }
            // A root entity's superentity is `$null`, UID 0.
            guard let parentIndex = KeyedArchive.uid(object["NSSuperentity"]), parentIndex != 0 else { continue }
            guard let parent = entities[parentIndex] else {
                throw ModelProblem(
                    message: "gives entity \(entity.name ?? "") a superentity that is not one of its entities")
            }
            parent.subentities += [entity]
        }
        try ModelProblem.checkInheritance(Array(entities.values))
        dropInheritedCopies()
        for (index, property) in properties {
            guard let relationship = property as? NSRelationshipDescription,
                let object = archive.objects[index] as? [String: Any]
            else { continue }
            try resolve(relationship, object)
        }
        for entity in entities.values {
            for case let relationship as NSRelationshipDescription in entity.properties
            where relationship.destinationEntity == nil {
                throw ModelProblem(
                    message:
                        "archives relationship \(entity.name ?? "").\(relationship.name) without a destination entity")
            }
        }
        try ModelConsistency.check(Array(entities.values), path: nil)
        let model = NSManagedObjectModel()
        model.entities = entities.values.sorted { ($0.name ?? "") < ($1.name ?? "") }
        model.versionIdentifiers = Set(
            try archive.elements(root["NSVersionIdentifiers"]).compactMap { try archive.value($0) as? AnyHashable })
        for (name, members) in archive.pairs(root["NSConfigurations"]) {
            let list = archive.elements(members).compactMap { KeyedArchive.uid($0).flatMap { entities[$0] } }
            model.setEntities(list, forConfigurationName: name)
        }
        return model
    }

    /// Apple archives every inherited property again in each sub-entity, as the sub-entity's own
    /// copy. Keep the declaring entity's property, and point references at the copies to it.
    private mutating func dropInheritedCopies() {
        var declared: [ObjectIdentifier: [String: NSPropertyDescription]] = [:]
        for entity in entities.values {
            declared[ObjectIdentifier(entity)] = Dictionary(
                entity.declaredProperties.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        }
        var replacement: [ObjectIdentifier: NSPropertyDescription] = [:]
        for entity in entities.values where entity.superentity != nil {
            var ancestors: [NSEntityDescription] = []
            var current = entity.superentity
            while let ancestor = current, ancestors.count < entities.count {
                ancestors.append(ancestor)
                current = ancestor.superentity
            }
            var own: [NSPropertyDescription] = []
            for property in entity.declaredProperties {
                // The root-most ancestor that has the name declares it.
                if let original = ancestors.reversed().lazy.compactMap({
                    declared[ObjectIdentifier($0)]?[property.name]
                })
                .first {
                    replacement[ObjectIdentifier(property)] = original
                } else {
                    own.append(property)
                }
            }
            if own.count != entity.declaredProperties.count { entity.properties = own }
        }
        guard !replacement.isEmpty else { return }
        for (index, property) in properties {
            guard let original = replacement[ObjectIdentifier(property)] else { continue }
            // Follow a chain of copies (a grandchild's copy names the child's copy).
            var target = original
            while let next = replacement[ObjectIdentifier(target)], next !== target { target = next }
            properties[index] = target
        }
    }

    private mutating func decodeEntity(_ entity: NSEntityDescription, from value: Any) throws {
        guard let object = value as? [String: Any] else { return }
        entity.managedObjectClassName = archive.string(object["NSClassNameForEntity"]) ?? "NSManagedObject"
        entity.isAbstract = object["NSIsAbstract"] as? Bool ?? false
        entity.versionHashModifier = archive.string(object["NSVersionHashModifier"])
        entity.renamingIdentifier = archive.string(object["NSRenamingIdentifier"])
        entity.userInfo = try userInfo(object["NSUserInfo"])
        var own: [NSPropertyDescription] = []
        for (name, reference) in archive.pairs(object["NSProperties"]) {
            guard let index = KeyedArchive.uid(reference), let propertyObject = archive.dictionary(reference) else {
                throw ModelProblem(message: "archives property \(entity.name ?? "").\(name) without its description")
            }
            // Sub-entities list inherited properties too; keep those the entity declares.
            if let owner = KeyedArchive.uid(propertyObject["NSEntity"]), entities[owner] !== entity { continue }
            // One description listed under two names would give two properties, only one of
            // which is resolved below (Apple's compiler archives each property once per entity).
            guard properties[index] == nil else {
                throw ModelProblem(
                    message: "archives property \(entity.name ?? "").\(name) with another property's description")
            }
            let property = try decodeProperty(name, propertyObject, entity: entity.name ?? "")
            properties[index] = property
            own.append(property)
        }
        entity.properties = own.sorted { $0.name < $1.name }
        entity.uniquenessConstraints = archive.elements(object["NSUniqueTuples"]).map { tuple in
            archive.elements(tuple).compactMap { archive.string($0) }
        }
        entity.indexes = archive.elements(object["NSFetchIndexDescriptions"]).compactMap { reference in
            guard let index = archive.dictionary(reference), let name = archive.string(index["NSIndexName"]) else {
                return nil
            }
            let elements = archive.elements(index["NSIndexElements"]).compactMap {
                item -> NSFetchIndexElementDescription? in
                guard let element = archive.dictionary(item), let property = archive.string(element["NSPropertyName"])
                else { return nil }
                let type = (element["NSFetchIndexElementType"] as? Int).flatMap { UInt(exactly: $0) }
                return NSFetchIndexElementDescription(
                    propertyName: property, ascending: element["NSAscending"] as? Bool ?? true,
                    collationType: type.flatMap(NSFetchIndexElementDescription.CollationType.init(rawValue:)) ?? .binary
                )
            }
            return NSFetchIndexDescription(name: name, elements: elements)
        }
    }

    private func decodeProperty(_ name: String, _ object: [String: Any], entity: String) throws -> NSPropertyDescription
    {
        let className = archive.className(object) ?? ""
        let property: NSPropertyDescription
        switch className {
        case "NSAttributeDescription", "NSDerivedAttributeDescription", "NSCompositeAttributeDescription":
            let attribute: NSAttributeDescription
            switch className {
            case "NSDerivedAttributeDescription": attribute = NSDerivedAttributeDescription()
            case "NSCompositeAttributeDescription": attribute = NSCompositeAttributeDescription()
            default: attribute = NSAttributeDescription()
            }
            let rawType = object["NSAttributeType"] ?? 0
            guard let number = rawType as? Int, number >= 0, let type = NSAttributeType(rawValue: UInt(number)),
                (type == .compositeAttributeType) == (attribute is NSCompositeAttributeDescription)
            else {
                throw ModelProblem(message: "gives attribute \(entity).\(name) the unknown type \(rawType)")
            }
            if let composite = attribute as? NSCompositeAttributeDescription {
                composite.elements = try compositeElements(object["NSCompositeElements"], of: "\(entity).\(name)")
            } else {
                attribute.attributeType = type
            }
            attribute.attributeValueClassName = archive.string(object["NSAttributeValueClassName"])
            attribute.valueTransformerName = archive.string(object["NSValueTransformerName"])
            attribute.defaultValue = try archive.value(object["NSDefaultValue"])
            if let derived = attribute as? NSDerivedAttributeDescription,
                let text = archive.expressionFormat(object["NSDerivationExpression"])
            {
                derived.derivationExpression = try? NSExpression(
                    node: PredicateParser.parseExpression(text, arguments: []).node)
            }
            property = attribute
        case "NSRelationshipDescription":
            let relationship = NSRelationshipDescription()
            relationship.minCount = object["NSMinCount"] as? Int ?? 0
            relationship.maxCount = object["NSMaxCount"] as? Int ?? 0
            let rule = object["NSDeleteRule"] as? Int ?? 1
            relationship.deleteRule = NSDeleteRule(rawValue: UInt(clamping: rule)) ?? .nullifyDeleteRule
            relationship.isOrdered = object["NSIsOrdered"] as? Bool ?? false
            relationship.destinationEntityName = archive.string(object["_NSDestinationEntityName"])
            relationship.inverseRelationshipName = archive.string(object["_NSInverseRelationshipName"])
            property = relationship
        case "NSFetchedPropertyDescription":
            property = NSFetchedPropertyDescription()
        default:
            throw ModelProblem(message: "archives property \(entity).\(name) of the unknown class \(className)")
        }
        property.name = name
        property.isOptional = object["NSIsOptional"] as? Bool ?? false
        property.isTransient = object["NSIsTransient"] as? Bool ?? (property is NSFetchedPropertyDescription)
        property.isIndexed = object["NSIsIndexed"] as? Bool ?? false
        property.versionHashModifier = archive.string(object["NSVersionHashModifier"])
        property.renamingIdentifier = archive.string(object["NSRenamingIdentifier"])
        property.userInfo = try userInfo(object["NSUserInfo"])
        let flags = object["NSFlagsKey"] as? Int ?? 0
        property.preservesValueInHistoryOnDeletion = flags & Self.preservesValueInHistoryFlag != 0
        (property as? NSAttributeDescription)?.allowsExternalBinaryDataStorage =
            flags & Self.externalBinaryStorageFlag != 0
        return property
    }

    /// A composite's archived elements, each checked as Apple checks them before it is set, so a
    /// damaged or hostile archive is an error rather than a trap.
    private func compositeElements(_ reference: Any?, of path: String) throws -> [NSAttributeDescription] {
        // Composites nest; a cycle of references in a hostile archive must not recurse forever.
        guard path.split(separator: ".").count < 64 else {
            throw ModelProblem(message: "nests composite \(path) too deeply")
        }
        return try archive.elements(reference).map { item in
            guard let element = archive.dictionary(item), let name = archive.string(element["NSPropertyName"]),
                let attribute = try decodeProperty(name, element, entity: path) as? NSAttributeDescription
            else { throw ModelProblem(message: "archives an element of composite \(path) that is not an attribute") }
            if let problem = NSCompositeAttributeDescription.problem(with: attribute) {
                throw ModelProblem(message: "archives composite \(path): \(problem)")
            }
            return attribute
        }
    }

    private func resolve(_ relationship: NSRelationshipDescription, _ object: [String: Any]) throws {
        if let index = KeyedArchive.uid(object["NSDestinationEntity"]), let destination = entities[index] {
            relationship.destinationEntity = destination
        } else if let name = relationship.destinationEntityName,
            let destination = entities.values.first(where: { $0.name == name })
        {
            relationship.destinationEntity = destination
        } else {
            throw ModelProblem(message: "archives relationship \(relationship.name) without a known destination entity")
        }
        if let index = KeyedArchive.uid(object["NSInverseRelationship"]),
            let inverse = properties[index] as? NSRelationshipDescription
        {
            relationship.inverseRelationship = inverse
        } else if let name = relationship.inverseRelationshipName {
            relationship.inverseRelationship = relationship.destinationEntity?.relationshipsByName[name]
        }
    }

    private func userInfo(_ reference: Any?) throws -> [AnyHashable: Any]? {
        guard let info = try archive.value(reference) as? [String: Any], !info.isEmpty else { return [:] }
        return Dictionary(uniqueKeysWithValues: info.map { (AnyHashable($0.key), $0.value) })
    }
}
