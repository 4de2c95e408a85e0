/// The typed attribute API of macOS 12 / iOS 15: `attribute.type = .string`.
///
/// Related documentation: NSAttributeDescription, `type` and `AttributeType`.
extension NSAttributeDescription {
    /// An attribute's type, the Swift counterpart of ``NSAttributeType``.
    public struct AttributeType: Hashable, Sendable {
        /// The type as ``NSAttributeType``.
        let rawType: NSAttributeType

        /// The typed value of `type`.
        public init(_ type: NSAttributeType) { rawType = type }

        /// No type; only valid for transient attributes.
        public static let undefined = AttributeType(.undefinedAttributeType)
        /// A 16-bit integer.
        public static let integer16 = AttributeType(.integer16AttributeType)
        /// A 32-bit integer.
        public static let integer32 = AttributeType(.integer32AttributeType)
        /// A 64-bit integer.
        public static let integer64 = AttributeType(.integer64AttributeType)
        /// A decimal number.
        public static let decimal = AttributeType(.decimalAttributeType)
        /// A double-precision number.
        public static let double = AttributeType(.doubleAttributeType)
        /// A single-precision number.
        public static let float = AttributeType(.floatAttributeType)
        /// A string.
        public static let string = AttributeType(.stringAttributeType)
        /// A Boolean.
        public static let boolean = AttributeType(.booleanAttributeType)
        /// A date.
        public static let date = AttributeType(.dateAttributeType)
        /// Binary data.
        public static let binaryData = AttributeType(.binaryDataAttributeType)
        /// A universally unique identifier.
        public static let uuid = AttributeType(.UUIDAttributeType)
        /// A uniform resource identifier.
        public static let uri = AttributeType(.URIAttributeType)
        /// A value stored through a value transformer.
        public static let transformable = AttributeType(.transformableAttributeType)
        /// A managed object ID.
        public static let objectID = AttributeType(.objectIDAttributeType)
        /// A composite of other attributes.
        public static let composite = AttributeType(.compositeAttributeType)
    }

    /// The attribute's type, the typed spelling of ``attributeType``.
    public var type: AttributeType {
        get { AttributeType(attributeType) }
        set { attributeType = newValue.rawType }
    }
}
