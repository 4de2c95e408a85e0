import OpenCoreData

extension Schema {
    /// An attribute of an entity of the schema (``Entity/attributes``), or the options of a
    /// persisted property's `@Attribute(...)`, which `@Model` lists in the class's metadata.
    ///
    /// Related documentation: SwiftData, `Schema.Attribute`.
    public class Attribute: SchemaProperty, @unchecked Sendable {
        /// One option of an attribute.
        public struct Option: Hashable, Sendable {
            let name: String
            /// The registered name of the value transformer, for `.transformable(by:)`.
            var transformerName: String?

            /// The value is stored as the `Data` the value transformer registered under
            /// `transformerName` makes of it (`ValueTransformer.setValueTransformer(_:forName:)`).
            public static func transformable(by transformerName: String) -> Option {
                Option(name: "transformable", transformerName: transformerName)
            }

            /// The value is stored as the `Data` a transformer of `transformerType` makes of it,
            /// registered under the class's name, as Apple's SwiftData looks it up.
            public static func transformable(by transformerType: OpenCoreData.ValueTransformer.Type) -> Option {
                transformable(by: String(describing: transformerType))
            }

            /// One model per value of the property: inserting a model with a value a stored model
            /// has updates the stored model with the new one's values (an upsert).
            public static let unique = Option(name: "unique")
            /// The value may be kept in a file beside the store rather than in it.
            public static let externalStorage = Option(name: "externalStorage")
            /// Persistent history keeps the value of a deleted model.
            public static let preserveValueOnDeletion = Option(name: "preserveValueOnDeletion")
            /// Changes are tracked but the value is not saved.
            public static let ephemeral = Option(name: "ephemeral")
            /// The value is indexed by Spotlight (recorded in the model; Linux has no Spotlight).
            public static let spotlight = Option(name: "spotlight")
            /// The value may be encrypted in CloudKit (recorded in the model; there is no
            /// CloudKit here).
            public static let allowsCloudEncryption = Option(name: "allowsCloudEncryption")
        }

        /// The options given.
        public let options: [Option]
        /// The property's name in the previous version of the schema.
        public let originalName: String?
        /// The modifier of the property's version hash.
        public let hashModifier: String?
        /// The property's name (empty in the options `@Attribute` lists).
        public let name: String
        /// The property's Swift type, an optional's wrapped type.
        public let valueType: any Any.Type
        /// The value a new model takes when its initializer sets none.
        public let defaultValue: Any?
        /// Whether the property may hold no value.
        public internal(set) var isOptional = false

        /// The options of `@Attribute(options..., originalName:, hashModifier:)`.
        public init(_ options: Option..., originalName: String? = nil, hashModifier: String? = nil) {
            self.options = options
            self.originalName = originalName
            self.hashModifier = hashModifier
            name = ""
            valueType = Any.self
            defaultValue = nil
        }

        /// The attribute `name` of an entity, holding values of `valueType`.
        public init(
            name: String, originalName: String? = nil, options: [Option] = [], valueType: any Any.Type,
            defaultValue: Any? = nil, hashModifier: String? = nil
        ) {
            self.options = options
            self.originalName = originalName
            self.hashModifier = hashModifier
            self.name = name
            self.valueType = valueType
            self.defaultValue = defaultValue
        }

        /// Whether the property's value is unique among the models of its class.
        public var isUnique: Bool { options.contains(.unique) }
        /// Whether changes are tracked but the value is not saved (`.ephemeral`).
        public var isTransient: Bool { options.contains(.ephemeral) }
        /// `true`: an attribute.
        public var isAttribute: Bool { true }
        /// `false`: not a relationship.
        public var isRelationship: Bool { false }

        /// Whether the two are the same object: each is one property (or entity) of one schema.
        public static func == (lhs: Attribute, rhs: Attribute) -> Bool { lhs === rhs }
        /// Hashes the object's identity, as ``==(_:_:)`` compares it.
        public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

        /// The name of the value transformer of a `.transformable(by:)` property.
        var transformerName: String? { options.lazy.compactMap(\.transformerName).first }

        /// Applies the options to `attribute`, the property's attribute in the Core Data model.
        func apply(to attribute: NSAttributeDescription) {
            attribute.renamingIdentifier = originalName
            attribute.versionHashModifier = hashModifier
            attribute.allowsExternalBinaryDataStorage = options.contains(.externalStorage)
            attribute.preservesValueInHistoryOnDeletion = options.contains(.preserveValueOnDeletion)
            attribute.isTransient = options.contains(.ephemeral)
            attribute.isIndexedBySpotlight = options.contains(.spotlight)
            attribute.allowsCloudEncryption = options.contains(.allowsCloudEncryption)
            if let transformerName {
                attribute.attributeType = .transformableAttributeType
                attribute.valueTransformerName = transformerName
            }
        }
    }
}

extension Schema {
    /// An attribute whose value is composed of other attributes: a `Codable` struct a model
    /// holds, whose properties are its ``properties``.
    ///
    /// Related documentation: SwiftData, `Schema.CompositeAttribute`.
    public final class CompositeAttribute: Attribute, @unchecked Sendable {
        /// The attributes the value is composed of.
        public internal(set) var properties: [Attribute] = []
    }
}
