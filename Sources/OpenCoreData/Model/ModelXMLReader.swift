#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Turns the elements of an `.xcdatamodel/contents` document into entities and properties, then
/// resolves the names it refers to (parent entities, destinations, inverses).
struct ModelXMLReader {
    let root: XMLElement
    /// The file read, for warnings.
    var path: String? = nil

    /// Xcode's spelling of each attribute type.
    static let attributeTypes: [String: NSAttributeType] = [
        "Undefined": .undefinedAttributeType, "Integer 16": .integer16AttributeType,
        "Integer 32": .integer32AttributeType, "Integer 64": .integer64AttributeType,
        "Decimal": .decimalAttributeType, "Double": .doubleAttributeType, "Float": .floatAttributeType,
        "String": .stringAttributeType, "Boolean": .booleanAttributeType, "Date": .dateAttributeType,
        "Binary": .binaryDataAttributeType, "UUID": .UUIDAttributeType, "URI": .URIAttributeType,
        "Transformable": .transformableAttributeType, "ObjectID": .objectIDAttributeType,
        "Composite": .compositeAttributeType,
    ]

    static let deleteRules: [String: NSDeleteRule] = [
        "No Action": .noActionDeleteRule, "Nullify": .nullifyDeleteRule, "Cascade": .cascadeDeleteRule,
        "Deny": .denyDeleteRule,
    ]

    func model() throws -> NSManagedObjectModel {
        let model = NSManagedObjectModel()
        if let identifier = root.attribute(forName: "userDefinedModelVersionIdentifier")?.stringValue,
            !identifier.isEmpty
        {
            model.versionIdentifiers = [identifier]
        }
        var entities: [NSEntityDescription] = []
        for element in children(of: root, named: "entity") {
            entities.append(try entity(element))
        }
        var byName: [String: NSEntityDescription] = [:]
        for entity in entities {
            guard let name = entity.name else { continue }
            guard byName[name] == nil else { throw ModelProblem(message: "declares entity \(name) twice") }
            byName[name] = entity
        }
        for entity in entities {
            if let parentName = entity.superentityName {
                guard let parent = byName[parentName] else {
                    throw ModelProblem(
                        message: "gives entity \(entity.name ?? "") the unknown parent entity \(parentName)")
                }
                parent.subentities += [entity]
            }
        }
        try ModelProblem.checkInheritance(entities)
        for entity in entities {
            for case let relationship as NSRelationshipDescription in entity.declaredProperties {
                try resolve(relationship, in: entity, byName: byName)
            }
        }
        try ModelConsistency.check(entities, path: path)
        model.entities = entities.sorted { ($0.name ?? "") < ($1.name ?? "") }
        for configuration in children(of: root, named: "configuration") {
            let name = try required(configuration, "name", "a configuration")
            let members = try children(of: configuration, named: "memberEntity").map { member -> NSEntityDescription in
                let entityName = try required(member, "name", "a member of configuration \(name)")
                guard let entity = byName[entityName] else {
                    throw ModelProblem(message: "puts the unknown entity \(entityName) in configuration \(name)")
                }
                return entity
            }
            model.setEntities(members, forConfigurationName: name)
        }
        // Fetch request templates: <fetchRequest name= entity= predicateString= fetchLimit=…> under <model>.
        for template in children(of: root, named: "fetchRequest") {
            let name = try required(template, "name", "a fetch request template")
            let entityName = try required(template, "entity", "fetch request template \(name)")
            guard let entity = byName[entityName] else {
                throw ModelProblem(message: "gives fetch request template \(name) the unknown entity \(entityName)")
            }
            let request = NSFetchRequest<NSFetchRequestResult>()
            request.entity = entity
            request.predicate = try predicate(template, owner: "fetch request template \(name)")
            request.fetchLimit = string(template, "fetchLimit").flatMap { Int($0) } ?? 0
            request.fetchBatchSize = string(template, "fetchBatchSize").flatMap { Int($0) } ?? 0
            model.setFetchRequestTemplate(request, forName: name)
        }
        return model
    }

    private func resolve(
        _ relationship: NSRelationshipDescription, in entity: NSEntityDescription,
        byName: [String: NSEntityDescription]
    ) throws {
        let owner = "relationship \(entity.name ?? "").\(relationship.name)"
        guard let destinationName = relationship.destinationEntityName else {
            throw ModelProblem(message: "gives \(owner) no destination entity")
        }
        guard let destination = byName[destinationName] else {
            throw ModelProblem(message: "gives \(owner) the unknown destination entity \(destinationName)")
        }
        relationship.destinationEntity = destination
        if let inverseName = relationship.inverseRelationshipName {
            guard let inverse = destination.relationshipsByName[inverseName] else {
                throw ModelProblem(message: "gives \(owner) the unknown inverse \(destinationName).\(inverseName)")
            }
            relationship.inverseRelationship = inverse
        }
    }

    private func children(of element: XMLElement, named name: String) -> [XMLElement] {
        element.elements(forName: name)
    }

    private func string(_ element: XMLElement, _ name: String) -> String? {
        element.attribute(forName: name)?.stringValue
    }

    private func flag(_ element: XMLElement, _ name: String) -> Bool {
        string(element, name) == "YES"
    }

    private func required(_ element: XMLElement, _ name: String, _ what: String) throws -> String {
        guard let value = string(element, name), !value.isEmpty else {
            throw ModelProblem(message: "has \(what) without the required \"\(name)\"")
        }
        return value
    }

    private func entity(_ element: XMLElement) throws -> NSEntityDescription {
        let entity = NSEntityDescription()
        let name = try required(element, "name", "an entity")
        entity.name = name
        entity.managedObjectClassName = string(element, "representedClassName") ?? "NSManagedObject"
        entity.isAbstract = flag(element, "isAbstract")
        entity.versionHashModifier = string(element, "versionHashModifier")
        entity.renamingIdentifier = string(element, "elementID")
        entity.superentityName = string(element, "parentEntity")
        entity.codeGenerationType = string(element, "codeGenerationType")
        entity.userInfo = userInfo(element)
        var properties: [NSPropertyDescription] = []
        for child in element.children?.compactMap({ $0 as? XMLElement }) ?? [] {
            switch child.name {
            case "attribute": properties.append(try attribute(child, entity: name))
            case "relationship": properties.append(try relationship(child, entity: name))
            case "fetchedProperty": properties.append(try fetchedProperty(child, entity: name))
            default: break
            }
        }
        var seen = Set<String>()
        for property in properties where !seen.insert(property.name).inserted {
            throw ModelProblem(message: "declares property \(name).\(property.name) twice")
        }
        entity.properties = properties
        var constraints: [[Any]] = []
        for group in children(of: element, named: "uniquenessConstraints") {
            for constraint in children(of: group, named: "uniquenessConstraint") {
                let names: [String] = children(of: constraint, named: "constraint").compactMap { string($0, "value") }
                constraints.append(names)
            }
        }
        entity.uniquenessConstraints = constraints
        var compoundIndexes: [[String]] = []
        for group in children(of: element, named: "compoundIndexes") {
            for index in children(of: group, named: "compoundIndex") {
                compoundIndexes.append(children(of: index, named: "index").compactMap { string($0, "value") })
            }
        }
        entity.compoundIndexNames = compoundIndexes
        entity.indexes = try children(of: element, named: "fetchIndex").map { index in
            let indexName = try required(index, "name", "a fetch index of \(name)")
            let elements = children(of: index, named: "fetchIndexElement").compactMap {
                item -> NSFetchIndexElementDescription? in
                guard let property = string(item, "property") else { return nil }
                return NSFetchIndexElementDescription(
                    propertyName: property, ascending: string(item, "order") != "descending",
                    collationType: string(item, "type") == "RTree" ? .rTree : .binary)
            }
            return NSFetchIndexDescription(name: indexName, elements: elements)
        }
        return entity
    }

    /// The `predicateString` of a fetch request element, parsed; a malformed one names its owner.
    private func predicate(_ element: XMLElement, owner: String) throws -> NSPredicate? {
        guard let text = string(element, "predicateString") else { return nil }
        do {
            return try PredicateParser.parsePredicate(text, arguments: [])
        } catch {
            throw ModelProblem(message: "gives \(owner) a malformed predicate: \(error)")
        }
    }

    private func common(_ property: NSPropertyDescription, _ element: XMLElement) {
        property.isOptional = flag(element, "optional")
        property.isTransient = flag(element, "transient")
        property.isIndexed = flag(element, "indexed")
        property.versionHashModifier = string(element, "versionHashModifier")
        property.renamingIdentifier = string(element, "elementID")
        property.preservesValueInHistoryOnDeletion = flag(element, "preserveAfterDeletion")
        property.userInfo = userInfo(element)
    }

    private func attribute(_ element: XMLElement, entity: String) throws -> NSAttributeDescription {
        let name = try required(element, "name", "an attribute of \(entity)")
        let typeName = string(element, "attributeType") ?? "Undefined"
        guard let type = Self.attributeTypes[typeName] else {
            throw ModelProblem(message: "gives attribute \(entity).\(name) the unknown type \"\(typeName)\"")
        }
        let attribute: NSAttributeDescription
        if type == .compositeAttributeType {
            attribute = try composite(element, owner: "\(entity).\(name)")
        } else if flag(element, "derived") {
            let derived = NSDerivedAttributeDescription()
            if let text = string(element, "derivationExpression") {
                do {
                    derived.derivationExpression = try NSExpression(
                        node: PredicateParser.parseExpression(text, arguments: []).node)
                } catch {
                    throw ModelProblem(message: "gives attribute \(entity).\(name) a malformed derivation: \(error)")
                }
            }
            attribute = derived
        } else {
            attribute = NSAttributeDescription()
        }
        attribute.name = name
        common(attribute, element)
        if !(attribute is NSCompositeAttributeDescription) { attribute.attributeType = type }
        attribute.valueTransformerName = string(element, "valueTransformerName")
        attribute.attributeValueClassName = string(element, "customClassName") ?? Self.valueClassName(type)
        attribute.customClassName = string(element, "customClassName")
        attribute.usesScalarValueType = flag(element, "usesScalarValueType")
        attribute.allowsExternalBinaryDataStorage = flag(element, "allowsExternalBinaryDataStorage")
        attribute.isIndexedBySpotlight = flag(element, "spotlightIndexingEnabled")
        attribute.isStoredInExternalRecord = flag(element, "storedInTruthFile")
        attribute.allowsCloudEncryption = flag(element, "allowsCloudEncryption")
        attribute.minimumValueText = string(element, "minValueString")
        attribute.maximumValueText = string(element, "maxValueString")
        attribute.regularExpressionText = string(element, "regularExpressionString")
        attribute.defaultValue = try defaultValue(element, type: type, owner: "\(entity).\(name)")
        return attribute
    }

    /// A composite attribute: its elements are those of the model's `<compositeAttribute>` that
    /// its `composite` names (Xcode declares a composite once, at the model's level, and entities'
    /// attributes refer to it by name); an element may itself be a composite.
    private func composite(_ element: XMLElement, owner: String) throws -> NSCompositeAttributeDescription {
        guard let typeName = string(element, "composite"),
            let definition = children(of: root, named: "compositeAttribute").first(where: {
                string($0, "name") == typeName
            })
        else {
            throw ModelProblem(message: "gives composite attribute \(owner) no composite declared in the model")
        }
        // A composite that contains itself, directly or not, would nest forever.
        guard owner.split(separator: ".").count < 64 else {
            throw ModelProblem(message: "nests composite attribute \(owner) too deeply")
        }
        let composite = NSCompositeAttributeDescription()
        let elements = try children(of: definition, named: "attribute").map { try attribute($0, entity: owner) }
        for element in elements {
            if let problem = NSCompositeAttributeDescription.problem(with: element) {
                throw ModelProblem(message: "gives composite attribute \(owner) an element it cannot hold: \(problem)")
            }
        }
        composite.elements = elements
        return composite
    }

    static func valueClassName(_ type: NSAttributeType) -> String? {
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .doubleAttributeType,
            .floatAttributeType, .booleanAttributeType:
            "NSNumber"
        case .decimalAttributeType: "NSDecimalNumber"
        case .stringAttributeType: "NSString"
        case .dateAttributeType: "NSDate"
        case .binaryDataAttributeType: "NSData"
        case .UUIDAttributeType: "NSUUID"
        case .URIAttributeType: "NSURL"
        default: nil
        }
    }

    private func defaultValue(_ element: XMLElement, type: NSAttributeType, owner: String) throws -> Any? {
        if type == .dateAttributeType {
            guard let text = string(element, "defaultDateTimeInterval") else { return nil }
            guard let interval = Double(text) else {
                throw ModelProblem(message: "gives attribute \(owner) the malformed default date \"\(text)\"")
            }
            return Date(timeIntervalSinceReferenceDate: interval)
        }
        guard let text = string(element, "defaultValueString") else { return nil }
        if let value = Self.exactValue(text, type: type) { return value }
        // Xcode accepts any text as a default and Apple's model compiler reads it the way
        // NSString's `longLongValue`, `doubleValue` and `boolValue` do — a real app's Integer 16
        // with the default "NO" gets 0. Do the same, and say so, rather than refuse the model.
        let value = Self.appleValue(text, type: type)
        let described = value.map { "\($0)" } ?? "no default"
        ModelWarnings.warn(
            "attribute \(owner) has the default \"\(text)\", which is not a valid value of its type; "
                + "using \(described), as Apple's model compiler does",
            path: path)
        return value
    }

    /// `text` as a value of `type` when it spells one exactly. Xcode writes integer defaults
    /// such as "0.0"; Apple's model compiler reads them as numbers.
    static func exactValue(_ text: String, type: NSAttributeType) -> Any? {
        switch type {
        case .integer16AttributeType: integer(text).flatMap { Int16(exactly: $0) }
        case .integer32AttributeType: integer(text).flatMap { Int32(exactly: $0) }
        case .integer64AttributeType: integer(text)
        case .doubleAttributeType: Double(text)
        case .floatAttributeType: Float(text)
        case .decimalAttributeType: Decimal(string: text)
        case .booleanAttributeType:
            ["YES": true, "NO": false, "1": true, "0": false, "true": true, "false": false][text]
        case .UUIDAttributeType: UUID(uuidString: text)
        case .URIAttributeType: URL(string: text)
        default: text
        }
    }

    /// What Apple's model compiler makes of a default that does not spell a value of `type`:
    /// NSString's scanning conversions for numbers and booleans (leading whitespace skipped,
    /// the longest numeric prefix read, 0 when there is none; integers clamped to the type),
    /// and no default for types with no such conversion.
    static func appleValue(_ text: String, type: NSAttributeType) -> Any? {
        switch type {
        case .integer16AttributeType: Int16(clamping: NumericPrefix.integer(text))
        case .integer32AttributeType: Int32(clamping: NumericPrefix.integer(text))
        case .integer64AttributeType: NumericPrefix.integer(text)
        case .doubleAttributeType: NumericPrefix.double(text)
        case .floatAttributeType: Float(NumericPrefix.double(text))
        case .booleanAttributeType: NumericPrefix.bool(text)
        default: nil
        }
    }

    private static func integer(_ text: String) -> Int64? {
        if let value = Int64(text) { return value }
        guard let double = Double(text), double.rounded(.towardZero) == double, abs(double) < 9.2e18 else { return nil }
        return Int64(double)
    }

    private func relationship(_ element: XMLElement, entity: String) throws -> NSRelationshipDescription {
        let name = try required(element, "name", "a relationship of \(entity)")
        let relationship = NSRelationshipDescription()
        relationship.name = name
        common(relationship, element)
        let toMany = flag(element, "toMany")
        func count(_ key: String, _ absent: Int) throws -> Int {
            guard let text = string(element, key) else { return absent }
            guard let count = Int(text) else {
                throw ModelProblem(message: "gives relationship \(entity).\(name) the \(key) \"\(text)\", not a count")
            }
            return count
        }
        relationship.maxCount = try count("maxCount", toMany ? 0 : 1)
        relationship.minCount = try count("minCount", 0)
        relationship.isOrdered = flag(element, "ordered")
        let rule = string(element, "deletionRule") ?? "Nullify"
        guard let deleteRule = Self.deleteRules[rule] else {
            throw ModelProblem(message: "gives relationship \(entity).\(name) the unknown delete rule \"\(rule)\"")
        }
        relationship.deleteRule = deleteRule
        relationship.destinationEntityName = string(element, "destinationEntity")
        relationship.inverseRelationshipName = string(element, "inverseName")
        return relationship
    }

    private func fetchedProperty(_ element: XMLElement, entity: String) throws -> NSFetchedPropertyDescription {
        let name = try required(element, "name", "a fetched property of \(entity)")
        let property = NSFetchedPropertyDescription()
        property.name = name
        common(property, element)
        property.isTransient = true
        if let request = children(of: element, named: "fetchRequest").first {
            property.fetchEntityName = string(request, "entity")
            property.fetchPredicate = try predicate(request, owner: "fetched property \(entity).\(name)")
        }
        return property
    }

    private func userInfo(_ element: XMLElement) -> [AnyHashable: Any]? {
        let entries = children(of: element, named: "userInfo").flatMap { children(of: $0, named: "entry") }
        guard !entries.isEmpty else { return [:] }
        var info: [AnyHashable: Any] = [:]
        for entry in entries {
            if let key = string(entry, "key") { info[key] = string(entry, "value") ?? "" }
        }
        return info
    }
}
