import OpenCoreData

extension Schema {
    /// A persisted property's options, from its `@Attribute(...)`.
    ///
    /// Related documentation: SwiftData, `Schema.Attribute`.
    public final class Attribute: SchemaProperty, @unchecked Sendable {
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

        /// The options of `@Attribute(options..., originalName:, hashModifier:)`.
        public init(_ options: Option..., originalName: String? = nil, hashModifier: String? = nil) {
            self.options = options
            self.originalName = originalName
            self.hashModifier = hashModifier
        }

        /// Whether the property's value is unique among the models of its class.
        public var isUnique: Bool { options.contains(.unique) }

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
