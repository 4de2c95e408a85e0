/// The storage type of an attribute, with Apple's raw values (they are stored in model files and
/// hashed into version hashes).
public enum NSAttributeType: UInt, Sendable {
    /// No type; only valid for transient attributes.
    case undefinedAttributeType = 0
    /// A 16-bit integer.
    case integer16AttributeType = 100
    /// A 32-bit integer.
    case integer32AttributeType = 200
    /// A 64-bit integer.
    case integer64AttributeType = 300
    /// A decimal number.
    case decimalAttributeType = 400
    /// A double-precision number.
    case doubleAttributeType = 500
    /// A single-precision number.
    case floatAttributeType = 600
    /// A string.
    case stringAttributeType = 700
    /// A Boolean.
    case booleanAttributeType = 800
    /// A date.
    case dateAttributeType = 900
    /// Binary data.
    case binaryDataAttributeType = 1000
    /// A UUID.
    case UUIDAttributeType = 1100
    /// A URI.
    case URIAttributeType = 1200
    /// A value stored through a value transformer.
    case transformableAttributeType = 1800
    /// A managed object ID.
    case objectIDAttributeType = 2000
    /// A composite of several attributes.
    case compositeAttributeType = 2100
}

/// An attribute of an entity: a typed value stored in a column.
open class NSAttributeDescription: NSPropertyDescription, @unchecked Sendable {
    /// The storage type.
    open var attributeType: NSAttributeType = .undefinedAttributeType {
        willSet { entity?.checkEditable("NSAttributeDescription.attributeType") }
    }
    /// The class name of the attribute's values, such as `"NSString"` or a transformable's class.
    open var attributeValueClassName: String?
    /// Xcode's "Use Scalar Type" from the model source (`usesScalarValueType`): numbers are
    /// generated as Swift scalars instead of `NSNumber`. Only code generation reads it.
    package var usesScalarValueType = false
    /// The class a transformable's values are declared as in the model source (`customClassName`),
    /// for code generation.
    package var customClassName: String?
    /// The value a new object starts with.
    open var defaultValue: Any?
    /// The name of the value transformer of a transformable attribute.
    open var valueTransformerName: String?
    /// Whether large binary values may be stored in files beside the store.
    open var allowsExternalBinaryDataStorage: Bool = false
    /// Whether the attribute is indexed for Spotlight.
    open var isIndexedBySpotlight: Bool = false
    /// Whether the attribute is stored in the Spotlight external record.
    open var isStoredInExternalRecord: Bool = false
    /// Whether the attribute may be read and written by CloudKit (kept for compatibility).
    open var allowsCloudEncryption: Bool = false

    /// Validation bounds and pattern read from a model file (`minValueString`, `maxValueString`,
    /// `regularExpressionString`), applied by validation in a later step.
    var minimumValueText: String?
    var maximumValueText: String?
    var regularExpressionText: String?

}
