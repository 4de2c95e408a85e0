import OpenCoreData

extension Schema {
    /// A relationship's options, from its `@Relationship(...)`: what deleting the model does to the
    /// related ones, how many there may be, and the property at the other end.
    ///
    /// Related documentation: SwiftData, `Schema.Relationship`.
    public final class Relationship: SchemaProperty, @unchecked Sendable {
        /// The relationship's name (empty in the options `@Relationship` lists).
        public internal(set) var name = ""
        /// The key path of the relationship on its class (`nil` in the options).
        public internal(set) var keypath: AnyKeyPath?
        /// The name of the entity of the related models.
        public internal(set) var destination = ""
        /// Whether the relationship holds one model rather than several.
        public internal(set) var isToOneRelationship = false
        /// Whether the relationship may hold no model.
        public internal(set) var isOptional = true
        /// The property's Swift type: the model class, or the array of models.
        public internal(set) var valueType: any Any.Type = Any.self
        /// The name of the relationship at the other end, once the schema paired it.
        var pairedInverseName: String?

        /// One option of a relationship.
        public struct Option: Hashable, Sendable {
            let name: String

            /// The related model is unique among the models of the class (recorded in the model;
            /// Core Data's uniqueness constraints hold attributes only).
            public static let unique = Option(name: "unique")
        }

        /// What deleting a model does to the models its relationship holds.
        public enum DeleteRule: String, Codable, Hashable, Sendable {
            /// The related models are deleted too.
            case cascade
            /// The model cannot be deleted (the save fails) while the relationship holds models.
            case deny
            /// The related models are left as they are, still pointing at the deleted one.
            case noAction
            /// The deleted model is removed from the related models' inverse (the default).
            case nullify

            /// The Core Data rule of the same meaning.
            var coreDataRule: NSDeleteRule {
                switch self {
                case .cascade: .cascadeDeleteRule
                case .deny: .denyDeleteRule
                case .noAction: .noActionDeleteRule
                case .nullify: .nullifyDeleteRule
                }
            }
        }

        /// The options given.
        public let options: [Option]
        /// What deleting the model does to the related ones.
        public var deleteRule: DeleteRule
        /// The fewest related models a save accepts (0 for no minimum).
        public var minimumModelCount: Int?
        /// The most related models a save accepts (0 for no maximum).
        public var maximumModelCount: Int?
        /// The relationship's name in the previous version of the schema.
        public var originalName: String?
        /// The key path of the relationship at the other end, when given.
        public var inverseKeyPath: AnyKeyPath?
        /// The modifier of the relationship's version hash.
        public var hashModifier: String?

        /// The options of `@Relationship(options..., deleteRule:, minimumModelCount:,
        /// maximumModelCount:, originalName:, inverse:, hashModifier:)`.
        public convenience init(
            _ options: Option..., deleteRule: DeleteRule = .nullify, minimumModelCount: Int? = 0,
            maximumModelCount: Int? = 0, originalName: String? = nil, inverse: AnyKeyPath? = nil,
            hashModifier: String? = nil
        ) {
            self.init(
                options: options, deleteRule: deleteRule, minimumModelCount: minimumModelCount,
                maximumModelCount: maximumModelCount, originalName: originalName, inverse: inverse,
                hashModifier: hashModifier)
        }

        init(
            options: [Option], deleteRule: DeleteRule, minimumModelCount: Int?, maximumModelCount: Int?,
            originalName: String?, inverse: AnyKeyPath?, hashModifier: String?
        ) {
            self.options = options
            self.deleteRule = deleteRule
            self.minimumModelCount = minimumModelCount
            self.maximumModelCount = maximumModelCount
            self.originalName = originalName
            self.inverseKeyPath = inverse
            self.hashModifier = hashModifier
        }

        /// The name of the relationship at the other end: the one `inverse:` names, or in a
        /// schema's entity the one the schema paired it with.
        public var inverseName: String? {
            if let pairedInverseName { return pairedInverseName }
            guard let inverseKeyPath, let root = Swift.type(of: inverseKeyPath).rootType as? any PersistentModel.Type
            else { return nil }
            return ModelProperties.of(root).name(for: inverseKeyPath)
        }

        /// Whether the relationship's models are unique among the models of its class.
        public var isUnique: Bool { options.contains(.unique) }
        /// `false`: a relationship is always saved.
        public var isTransient: Bool { false }
        /// `false`: not an attribute.
        public var isAttribute: Bool { false }
        /// `true`: a relationship.
        public var isRelationship: Bool { true }

        /// Whether the two are the same object: each is one property (or entity) of one schema.
        public static func == (lhs: Relationship, rhs: Relationship) -> Bool { lhs === rhs }
        /// Hashes the object's identity, as ``==(_:_:)`` compares it.
        public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    }
}

/// What a persisted property is, found from its Swift type: an attribute, or a relationship to one
/// model (`Model` or `Model?`) or to several (`[Model]` or `[Model]?`, which Apple stores
/// unordered).
enum PropertyKind {
    case attribute(Any.Type, optional: Bool)
    case toOne(any PersistentModel.Type, optional: Bool)
    case toMany(any ToManyValue.Type, optional: Bool)

    init(_ valueType: Any.Type) {
        let optional = valueType as? any OptionalValue.Type
        let type = optional?.wrappedType ?? valueType
        if let model = type as? any PersistentModel.Type {
            self = .toOne(model, optional: optional != nil)
        } else if let collection = type as? any ToManyValue.Type {
            self = .toMany(collection, optional: optional != nil)
        } else {
            self = .attribute(type, optional: optional != nil)
        }
    }

    /// The model class at the other end of a relationship; `nil` for an attribute.
    var destination: (any PersistentModel.Type)? {
        switch self {
        case .attribute: nil
        case .toOne(let model, _): model
        case .toMany(let collection, _): collection.modelType
        }
    }
}

/// The value of a to-many relationship: an array of models.
protocol ToManyValue {
    /// The class of the models.
    static var modelType: any PersistentModel.Type { get }
    /// The array of `models`, each of the class.
    static func make(_ models: [any PersistentModel]) -> Self
    /// The models of the array.
    var models: [any PersistentModel] { get }
    /// The key path of the array's `count`.
    static var countKeyPath: AnyKeyPath { get }
}

extension Array: ToManyValue where Element: PersistentModel {
    static var modelType: any PersistentModel.Type { Element.self }

    static func make(_ models: [any PersistentModel]) -> [Element] { models.compactMap { $0 as? Element } }

    var models: [any PersistentModel] { self }

    static var countKeyPath: AnyKeyPath { \[Element].count }
}
