import OpenCoreData

extension Schema {
    /// An entity of the schema: a model class, its attributes and its relationships, as values.
    ///
    /// Related documentation: SwiftData, `Schema.Entity`.
    public final class Entity: Hashable, CustomDebugStringConvertible, @unchecked Sendable {
        /// The entity's name: its model class's.
        public let name: String
        /// The entity's persisted properties, attributes and relationships.
        public let properties: [any SchemaProperty]
        /// The entity's attributes.
        public let attributes: Set<Attribute>
        /// The entity's relationships.
        public let relationships: Set<Relationship>
        /// The groups of attribute names whose values are unique together (`#Unique`,
        /// `@Attribute(.unique)`).
        public let uniquenessConstraints: [[String]]
        /// The groups of property names indexed together (`#Index`).
        public let indices: [[String]]
        /// The entity this one inherits from: none, as model classes are entities of their own.
        public var superentity: Entity? { nil }
        /// The name of ``superentity``.
        public var superentityName: String? { nil }
        /// The entities inheriting from this one: none.
        public var subentities: Set<Entity> { [] }
        /// The name the entity is stored under.
        public var mangledName: String { name }

        init(_ description: NSEntityDescription, of type: any PersistentModel.Type) {
            name = description.name ?? ""
            let metadata = Dictionary(
                type.schemaMetadata.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            var properties: [any SchemaProperty] = []
            var attributes: Set<Attribute> = []
            var relationships: Set<Relationship> = []
            for property in type.schemaMetadata {
                guard let described = description.propertiesByName[property.name] else { continue }
                if let relationship = described as? NSRelationshipDescription {
                    let made = Self.relationship(relationship, metadata[property.name])
                    relationships.insert(made)
                    properties.append(made)
                } else if let attribute = described as? NSAttributeDescription {
                    let made = Self.attribute(attribute, metadata[property.name])
                    attributes.insert(made)
                    properties.append(made)
                }
            }
            self.properties = properties
            self.attributes = attributes
            self.relationships = relationships
            uniquenessConstraints = description.uniquenessConstraints.map { constraint in
                constraint.compactMap { ($0 as? String) ?? ($0 as? NSPropertyDescription)?.name }
            }
            indices = description.indexes.map { index in
                index.elements.compactMap { $0.propertyName ?? $0.property?.name }
            }
        }

        /// The persisted properties that are saved.
        public var storedProperties: [any SchemaProperty] { properties.filter { !$0.isTransient } }
        /// ``storedProperties`` by name.
        public var storedPropertiesByName: [String: any SchemaProperty] {
            Dictionary(storedProperties.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        }
        /// ``attributes`` by name.
        public var attributesByName: [String: Attribute] {
            Dictionary(attributes.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        }
        /// ``relationships`` by name.
        public var relationshipsByName: [String: Relationship] {
            Dictionary(relationships.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        }

        /// The entity's name and properties.
        public var debugDescription: String {
            "Entity \(name): " + properties.map(\.name).joined(separator: ", ")
        }

        /// Whether the two are the same object: each is one property (or entity) of one schema.
        public static func == (lhs: Entity, rhs: Entity) -> Bool { lhs === rhs }
        /// Hashes the object's identity, as ``==(_:_:)`` compares it.
        public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

        private static func attribute(_ description: NSAttributeDescription, _ metadata: PropertyMetadata?)
            -> Attribute
        {
            let options = metadata?.metadata as? Attribute
            let valueType = metadata.map { property in
                let declared = Swift.type(of: property.keypath).valueType
                return (declared as? any OptionalValue.Type)?.wrappedType ?? declared
            }
            return attribute(
                description, options: options, valueType: valueType ?? Any.self, defaultValue: metadata?.defaultValue)
        }

        private static func attribute(
            _ description: NSAttributeDescription, options: Attribute?, valueType: any Any.Type, defaultValue: Any?
        ) -> Attribute {
            let made: Attribute
            if let composite = description as? NSCompositeAttributeDescription {
                let compositeAttribute = CompositeAttribute(
                    name: description.name, originalName: options?.originalName, options: options?.options ?? [],
                    valueType: valueType, defaultValue: defaultValue, hashModifier: options?.hashModifier)
                compositeAttribute.properties = composite.elements.map { element in
                    attribute(element, options: nil, valueType: Any.self, defaultValue: nil)
                }
                made = compositeAttribute
            } else {
                made = Attribute(
                    name: description.name, originalName: options?.originalName, options: options?.options ?? [],
                    valueType: valueType, defaultValue: defaultValue, hashModifier: options?.hashModifier)
            }
            made.isOptional = description.isOptional
            return made
        }

        private static func relationship(_ description: NSRelationshipDescription, _ metadata: PropertyMetadata?)
            -> Relationship
        {
            let options = metadata?.metadata as? Relationship
            let made = Relationship(
                options: options?.options ?? [], deleteRule: options?.deleteRule ?? .nullify,
                minimumModelCount: options?.minimumModelCount ?? 0,
                maximumModelCount: options?.maximumModelCount ?? 0, originalName: options?.originalName,
                inverse: options?.inverseKeyPath, hashModifier: options?.hashModifier)
            made.name = description.name
            made.keypath = metadata?.keypath
            made.destination = description.destinationEntity?.name ?? ""
            made.isToOneRelationship = !description.isToMany
            made.isOptional = description.isOptional
            made.pairedInverseName = description.inverseRelationship?.name
            if let metadata { made.valueType = Swift.type(of: metadata.keypath).valueType }
            return made
        }
    }
}
