import OpenCoreData

/// The model classes of a container, and the Core Data model they make: an entity per class, named
/// after it, with an attribute per persisted property, as Apple's SwiftData describes them.
///
/// Related documentation: SwiftData, `Schema`.
public final class Schema: @unchecked Sendable {
    /// Something a property's metadata can carry (an attribute's or relationship's options).
    public protocol SchemaProperty {}

    /// A persisted property as `@Model` lists it.
    public struct PropertyMetadata: @unchecked Sendable {
        /// The property's name, which is its attribute's.
        public var name: String
        /// The key path of the property on its class.
        public var keypath: AnyKeyPath
        /// The value a new model takes when its initializer sets none.
        public var defaultValue: Any?
        /// The property's options.
        public var metadata: (any SchemaProperty)?

        /// The metadata of the property `name` at `keypath`.
        public init(name: String, keypath: AnyKeyPath, defaultValue: Any? = nil, metadata: (any SchemaProperty)? = nil)
        {
            self.name = name
            self.keypath = keypath
            self.defaultValue = defaultValue
            self.metadata = metadata
        }
    }

    /// The model classes, in the order given.
    public let types: [any PersistentModel.Type]
    /// The Core Data model of the classes.
    let managedObjectModel: NSManagedObjectModel
    /// What cannot be stored, one sentence each; empty when every property can be.
    let problems: [String]

    /// A schema of `types`.
    public convenience init(_ types: any PersistentModel.Type...) { self.init(types) }

    /// A schema of `types`.
    public init(_ types: [any PersistentModel.Type]) {
        self.types = types
        var problems: [String] = []
        let model = NSManagedObjectModel()
        model.entities = types.map { type in
            let entity = NSEntityDescription()
            entity.name = Self.entityName(of: type)
            entity.properties = type.schemaMetadata.compactMap { property in
                let valueType = Swift.type(of: property.keypath).valueType
                let optional = valueType as? any OptionalValue.Type
                guard let attributeType = Self.attributeType(of: optional?.wrappedType ?? valueType) else {
                    problems.append(
                        "\(entity.name ?? "").\(property.name) has the type \(valueType), which cannot be stored yet")
                    return nil
                }
                let attribute = NSAttributeDescription()
                attribute.name = property.name
                attribute.attributeType = attributeType
                attribute.isOptional = optional != nil
                if let value = property.defaultValue { attribute.defaultValue = DynamicValue.unwrap(value) }
                if let options = property.metadata as? Attribute {
                    options.apply(to: attribute)
                    if options.isUnique { entity.uniquenessConstraints.append([property.name]) }
                }
                return attribute
            }
            return entity
        }
        managedObjectModel = model
        self.problems = problems
    }

    /// The entities of the schema, as Core Data describes them.
    public var entities: [NSEntityDescription] { managedObjectModel.entities }

    /// The entity name of a model class: the class's name, as Apple's SwiftData names it.
    static func entityName(of type: any PersistentModel.Type) -> String { String(describing: type) }

    /// The Core Data attribute type of a property's Swift type, as SwiftData stores it.
    private static func attributeType(of type: Any.Type) -> NSAttributeType? {
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
        default: nil
        }
    }
}

extension NSManagedObjectModel {
    /// The Core Data model of a SwiftData schema.
    ///
    /// Related documentation: `NSManagedObjectModel.makeManagedObjectModel(for:)`.
    public static func makeManagedObjectModel(for types: [any PersistentModel.Type]) -> NSManagedObjectModel? {
        Schema(types).managedObjectModel
    }
}
