import OpenCoreData

/// The model classes of a container, and the Core Data model they make: an entity per class, named
/// after it, with an attribute per persisted property, as Apple's SwiftData describes them.
///
/// Related documentation: SwiftData, `Schema`.
public final class Schema: @unchecked Sendable {
    /// A property of an entity of the schema: an ``Attribute`` or a ``Relationship`` — also what
    /// a property's metadata carries (its `@Attribute` or `@Relationship` options).
    public protocol SchemaProperty: AnyObject, Hashable {
        /// The property's name.
        var name: String { get }
        /// The property's name in the previous version of the schema.
        var originalName: String? { get }
        /// The property's Swift type.
        var valueType: any Any.Type { get }
        /// Whether the property may hold no value.
        var isOptional: Bool { get }
        /// Whether changes are tracked but not saved.
        var isTransient: Bool { get }
        /// Whether the property's value is unique among the models of its class.
        var isUnique: Bool { get }
        /// Whether the property is an attribute.
        var isAttribute: Bool { get }
        /// Whether the property is a relationship.
        var isRelationship: Bool { get }
    }

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

    /// The model classes: those given, in their order, then the classes their relationships reach
    /// that were not given, as Apple's schema includes them.
    public let types: [any PersistentModel.Type]
    /// The Core Data model of the classes.
    let managedObjectModel: NSManagedObjectModel
    /// What cannot be stored, one sentence each; empty when every property can be.
    let problems: [String]
    /// The model class of each entity, by the entity's name.
    let typesByEntityName: [String: any PersistentModel.Type]

    /// The schema's version.
    public let version: Version

    /// A schema of `types`.
    public convenience init(_ types: any PersistentModel.Type..., version: Version = Version(1, 0, 0)) {
        self.init(types, version: version)
    }

    /// A schema of `types` and of the classes their relationships reach, at `version`.
    public init(_ types: [any PersistentModel.Type], version: Version = Version(1, 0, 0)) {
        self.version = version
        var all: [any PersistentModel.Type] = []
        var seen: Set<ObjectIdentifier> = []
        func visit(_ type: any PersistentModel.Type) {
            guard seen.insert(ObjectIdentifier(type)).inserted else { return }
            all.append(type)
            for property in type.schemaMetadata {
                if let destination = PropertyKind(Swift.type(of: property.keypath).valueType).destination {
                    visit(destination)
                }
            }
        }
        types.forEach(visit)
        self.types = all
        let typesByEntityName = Dictionary(
            all.map { (Self.entityName(of: $0), $0) }, uniquingKeysWith: { first, _ in first })
        self.typesByEntityName = typesByEntityName
        var builder = ModelBuilder()
        managedObjectModel = builder.model(of: all)
        managedObjectModel.versionIdentifiers = [version.description]
        problems = builder.problems
        entities = managedObjectModel.entities.compactMap { description in
            typesByEntityName[description.name ?? ""].map { Entity(description, of: $0) }
        }
    }

    /// The entities of the schema: one per model class, named after it.
    public let entities: [Entity]

    /// The entities of the schema by name.
    public var entitiesByName: [String: Entity] {
        Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The entity of the model class `type`, when the schema has it.
    public func entity<Model: PersistentModel>(for type: Model.Type) -> Entity? {
        entitiesByName[Self.entityName(of: type)]
    }

    /// The entity name of a model class: the class's name, as Apple's SwiftData names it.
    static func entityName(of type: any PersistentModel.Type) -> String { String(describing: type) }
}

extension NSManagedObjectModel {
    /// The Core Data model of a SwiftData schema.
    ///
    /// Related documentation: `NSManagedObjectModel.makeManagedObjectModel(for:)`.
    public static func makeManagedObjectModel(for types: [any PersistentModel.Type]) -> NSManagedObjectModel? {
        Schema(types).managedObjectModel
    }
}
