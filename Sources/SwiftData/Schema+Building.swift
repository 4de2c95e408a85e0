import OpenCoreData

/// Builds the Core Data model of model classes: an entity per class, named after it, an attribute
/// per persisted property of a stored value type, a relationship per property holding models,
/// with the inverses `@Relationship(inverse:)` names or that can be inferred.
struct ModelBuilder {
    /// What cannot be stored, one sentence each.
    private(set) var problems: [String] = []

    /// A relationship made for a property, waiting for its destination and inverse.
    private struct Pending {
        let description: NSRelationshipDescription
        let source: String
        let destination: String
        let options: Schema.Relationship?
        var label: String { "\(source).\(description.name)" }
    }

    /// The Core Data model of `types`.
    mutating func model(of types: [any PersistentModel.Type]) -> NSManagedObjectModel {
        let model = NSManagedObjectModel()
        var entities: [String: NSEntityDescription] = [:]
        var relationships: [Pending] = []
        model.entities = types.map { type in
            let entity = NSEntityDescription()
            let name = Schema.entityName(of: type)
            entity.name = name
            if entities[name] != nil {
                problems.append("Two model classes are named \(name); an entity name must be unique.")
            }
            entities[name] = entity
            entity.properties = type.schemaMetadata.compactMap { property -> NSPropertyDescription? in
                let valueType = Swift.type(of: property.keypath).valueType
                switch PropertyKind(valueType) {
                case .attribute(let type, let optional):
                    return attribute(property, of: entity, type: type, optional: optional, declared: valueType)
                case .toOne(let destination, let optional):
                    let pending = relationship(property, source: name, destination: destination, toOne: true, optional)
                    relationships.append(pending)
                    return pending.description
                case .toMany(let collection, let optional):
                    let pending = relationship(
                        property, source: name, destination: collection.modelType, toOne: false, optional)
                    relationships.append(pending)
                    return pending.description
                }
            }
            constraintsAndIndexes(of: type, in: entity)
            return entity
        }
        for pending in relationships { pending.description.destinationEntity = entities[pending.destination] }
        pairInverses(relationships)
        return model
    }

    /// The class's `#Unique` constraints and `#Index`es, as the entity's uniqueness constraints
    /// and fetch indexes (named `<property>_<property>…`, so the store's index is
    /// `Z_<Entity>_<property>_…`). A key path that is not a
    /// stored property of the class cannot be either.
    private mutating func constraintsAndIndexes(of type: any PersistentModel.Type, in entity: NSEntityDescription) {
        let properties = ModelProperties.of(type)
        let entityName = entity.name ?? ""
        func names(_ keyPaths: [AnyKeyPath], _ macro: String) -> [String]? {
            let names = keyPaths.compactMap { properties.name(for: $0) }
            guard names.count == keyPaths.count, !names.isEmpty else {
                problems.append("A #\(macro) of \(entityName) names something that is not a stored property.")
                return nil
            }
            return names
        }
        for keyPaths in type._$uniquenessConstraints {
            if let names = names(keyPaths, "Unique") { entity.uniquenessConstraints.append(names) }
        }
        let indexes = type._$indexes.map { ($0, false) } + type._$rTreeIndexes.map { ($0, true) }
        for (keyPaths, isRTree) in indexes {
            guard let names = names(keyPaths, "Index") else { continue }
            let elements = names.compactMap { name in
                entity.propertiesByName[name].map {
                    NSFetchIndexElementDescription(property: $0, collationType: isRTree ? .rTree : .binary)
                }
            }
            entity.indexes.append(
                NSFetchIndexDescription(name: names.joined(separator: "_"), elements: elements))
        }
    }

    private mutating func attribute(
        _ property: Schema.PropertyMetadata, of entity: NSEntityDescription, type: Any.Type, optional: Bool,
        declared: Any.Type
    ) -> NSAttributeDescription? {
        let options = property.metadata as? Schema.Attribute
        let attribute: NSAttributeDescription
        // A transformable property's value is whatever its transformer turns into `Data`.
        if options?.transformerName != nil {
            attribute = NSAttributeDescription()
            attribute.attributeType = .transformableAttributeType
        } else if let attributeType = Self.attributeType(of: type) {
            attribute = NSAttributeDescription()
            attribute.attributeType = attributeType
        } else {
            switch ValueCoding.of(type) {
            case .collection:
                attribute = NSAttributeDescription()
                attribute.attributeType = .binaryDataAttributeType
            case .composite:
                guard let decodable = type as? any Decodable.Type,
                    let composite = try? CompositeEncoding.description(of: decodable, named: property.name)
                else {
                    problems.append(
                        "\(entity.name ?? "").\(property.name) has the type \(declared), which cannot be stored.")
                    return nil
                }
                attribute = composite
            case .plain, .enumeration:
                problems.append(
                    "\(entity.name ?? "").\(property.name) has the type \(declared), which cannot be stored: SwiftData stores the scalar types, Codable values and models."
                )
                return nil
            }
        }
        attribute.name = property.name
        attribute.isOptional = optional
        if let value = property.defaultValue {
            let coding = ValueCoding.of(type)
            attribute.defaultValue =
                coding == .plain ? DynamicValue.unwrap(value) : try? coding.storable(DynamicValue.unwrap(value))
        }
        if let options {
            options.apply(to: attribute)
            if options.isUnique { entity.uniquenessConstraints.append([property.name]) }
        }
        return attribute
    }

    private func relationship(
        _ property: Schema.PropertyMetadata, source: String, destination: any PersistentModel.Type, toOne: Bool,
        _ optional: Bool
    ) -> Pending {
        let description = NSRelationshipDescription()
        description.name = property.name
        description.isOptional = optional
        let options = property.metadata as? Schema.Relationship
        description.deleteRule = options?.deleteRule.coreDataRule ?? .nullifyDeleteRule
        description.minCount = toOne ? 0 : max(options?.minimumModelCount ?? 0, 0)
        description.maxCount = toOne ? 1 : max(options?.maximumModelCount ?? 0, 0)
        description.renamingIdentifier = options?.originalName
        description.versionHashModifier = options?.hashModifier
        return Pending(
            description: description, source: source, destination: Schema.entityName(of: destination),
            options: options)
    }

    /// Pairs each relationship with its inverse: the one `@Relationship(inverse:)` names on either
    /// side; else, between two classes that each have exactly one relationship to the other, those
    /// two, as SwiftData infers them — unless one of them is a to-one that cannot be empty, which
    /// SwiftData leaves one-way. A relationship to its own class is paired only when named.
    private mutating func pairInverses(_ relationships: [Pending]) {
        var inverse: [ObjectIdentifier: NSRelationshipDescription] = [:]
        func pair(_ one: NSRelationshipDescription, _ other: NSRelationshipDescription) {
            inverse[ObjectIdentifier(one)] = other
            inverse[ObjectIdentifier(other)] = one
        }
        for pending in relationships {
            guard let options = pending.options, options.inverseKeyPath != nil else { continue }
            guard let name = options.inverseName,
                let other = relationships.first(where: {
                    $0.source == pending.destination && $0.description.name == name
                })
            else {
                problems.append("The inverse of \(pending.label) is not a relationship of \(pending.destination).")
                continue
            }
            guard other.destination == pending.source else {
                problems.append(
                    "The inverse of \(pending.label), \(other.label), holds \(other.destination), not \(pending.source)."
                )
                continue
            }
            if let existing = inverse[ObjectIdentifier(other.description)], existing !== pending.description {
                problems.append("\(other.label) is named the inverse of both \(existing.name) and \(pending.label).")
                continue
            }
            pair(pending.description, other.description)
        }
        let unpaired = relationships.filter { inverse[ObjectIdentifier($0.description)] == nil }
        for pending in unpaired where pending.source < pending.destination {
            let forth = unpaired.filter { $0.source == pending.source && $0.destination == pending.destination }
            let back = unpaired.filter { $0.source == pending.destination && $0.destination == pending.source }
            guard forth.count == 1, back.count == 1,
                [pending, back[0]].allSatisfy({ $0.description.isToMany || $0.description.isOptional })
            else { continue }
            pair(pending.description, back[0].description)
        }
        for pending in relationships {
            pending.description.inverseRelationship = inverse[ObjectIdentifier(pending.description)]
        }
    }

    /// The Core Data attribute type of a property's Swift type, as SwiftData stores it.
    static func attributeType(of type: Any.Type) -> NSAttributeType? {
        switch type {
        case is Bool.Type: .booleanAttributeType
        case is Int.Type, is Int64.Type, is UInt.Type, is UInt64.Type, is UInt32.Type: .integer64AttributeType
        case is Int32.Type, is UInt16.Type: .integer32AttributeType
        case is Int16.Type, is Int8.Type, is UInt8.Type: .integer16AttributeType
        case is Double.Type: .doubleAttributeType
        case is Float.Type: .floatAttributeType
        case is Decimal.Type: .decimalAttributeType
        case is String.Type: .stringAttributeType
        case is Date.Type: .dateAttributeType
        case is Data.Type: .binaryDataAttributeType
        case is UUID.Type: .UUIDAttributeType
        case is URL.Type: .URIAttributeType
        case let enumeration as any RawRepresentable.Type: attributeType(of: enumeration.rawValueType)
        default: nil
        }
    }
}
