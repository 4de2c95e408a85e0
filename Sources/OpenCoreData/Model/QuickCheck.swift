/// The common case of a property's validation, decided without the general checks: a value of the
/// attribute's own type with no bounds, pattern or predicate to test, a present or optional
/// to-one, a to-many without counts. Worked out once per entity layout (the model is immutable
/// by then), so saving N objects does not repeat the model's casts and lookups N times.
///
/// ``accepts(_:)`` answers `true` only when the general checks (`constraintErrors`) would find
/// nothing; anything else — a wrong type, `NSNull`, a number out of an integer's range, a
/// property with bounds — goes to them, so the errors and their order stay Apple's.
struct QuickCheck {
    enum Form {
        /// Validated by the general checks only.
        case general
        /// An integer attribute of this many bits, its value an `NSNumber` holding an integer.
        case integer(bits: Int)
        /// A floating-point, decimal or Boolean attribute, its value an `NSNumber`.
        case number
        case string
        case date
        /// A to-one relationship: a managed object, or nothing when optional.
        case toOne
        /// A to-many relationship without a minimum or maximum count, optional.
        case anyMembers
    }

    let form: Form
    let isOptional: Bool

    init(_ property: NSPropertyDescription) {
        isOptional = property.isOptional
        if !property.validationPredicates.isEmpty {
            form = .general
            return
        }
        switch property {
        case let attribute as NSAttributeDescription:
            guard attribute.minimumValueText == nil, attribute.maximumValueText == nil,
                attribute.regularExpressionText == nil
            else {
                form = .general
                return
            }
            switch attribute.attributeType {
            case .integer16AttributeType: form = .integer(bits: 16)
            case .integer32AttributeType: form = .integer(bits: 32)
            case .integer64AttributeType: form = .integer(bits: 64)
            case .doubleAttributeType, .floatAttributeType, .booleanAttributeType: form = .number
            case .stringAttributeType: form = .string
            case .dateAttributeType: form = .date
            default: form = .general
            }
        case let relationship as NSRelationshipDescription:
            if !relationship.isToMany {
                form = .toOne
            } else if relationship.isOptional, relationship.minCount == 0, relationship.maxCount == 0 {
                form = .anyMembers
            } else {
                form = .general
            }
        default:
            form = .general
        }
    }

    /// Whether `value`, as the public accessors hand it out, certainly passes the property's
    /// model validation.
    @inline(__always)
    func accepts(_ value: Any?) -> Bool {
        guard let value else {
            switch form {
            case .general: return false
            case .anyMembers: return true
            default: return isOptional
            }
        }
        switch form {
        case .general:
            return false
        case .string:
            return Self.isExactly(value, String.self) || value is String
        case .date:
            return Self.isExactly(value, Date.self) || value is Date
        case .number:
            return Self.plainNumber(value) != nil
        case .integer(let bits):
            guard let number = Self.plainNumber(value) else { return false }
            // The first character of the type encoding: a floating-point or unsigned number
            // goes to the general checks, which know their rules.
            switch UInt8(bitPattern: number.objCType.pointee) {
            case UInt8(ascii: "c"), UInt8(ascii: "s"), UInt8(ascii: "i"), UInt8(ascii: "l"), UInt8(ascii: "q"),
                UInt8(ascii: "B"):
                if bits == 64 { return true }
                let integer = number.int64Value
                let limit = Int64(1) << (bits - 1)
                return integer >= -limit && integer < limit
            default:
                return false
            }
        case .toOne:
            return value is NSManagedObject
        case .anyMembers:
            return true
        }
    }

    /// `value` when it is an `NSNumber` other than an `NSDecimalNumber` (which the general checks
    /// read as a decimal), as the general checks read numbers.
    @inline(__always)
    private static func plainNumber(_ value: Any) -> NSNumber? {
        // What the accessors hand out is an `NSNumber` of that very class: known by its type, it
        // needs no class test first and has no `NSDecimalNumber` to rule out.
        if isExactly(value, NSNumber.self) { return value as? NSNumber }
        guard DynamicValue.isObject(value), let number = value as? NSNumber, !(number is NSDecimalNumber) else {
            return nil
        }
        return number
    }

    /// Whether `value`'s dynamic type is `type` itself: one comparison of the type the value
    /// carries, where a cast from `Any` searches the runtime (a few casts for every attribute of
    /// every object saved). A value of another type still goes to the
    /// cast, so the answer is the cast's.
    @inline(__always)
    private static func isExactly(_ value: Any, _ type: Any.Type) -> Bool {
        ObjectIdentifier(Swift.type(of: value)) == ObjectIdentifier(type)
    }
}
