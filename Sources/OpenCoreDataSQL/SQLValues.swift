import OpenCoreData

/// Converting attribute values to and from the column values Apple's store writes
/// (STORE-FORMAT.md, "Types"): dates as seconds since 2001-01-01, UUIDs as 16 bytes, URIs as text,
/// Booleans as 0 and 1.
///
/// Integer attributes of every width read back as `Int` (see DEVIATIONS.md). Reading a column
/// back is each database's own (`SQLiteValues` in the SQLite store).
package enum SQLValues {
    /// The column value for an attribute value.
    package static func column(_ value: Any?, type: NSAttributeType, attribute: NSAttributeDescription?) -> SQLValue {
        guard let value = DynamicValue.unwrap(value) else { return .null }
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            if let int = value as? Int { return .integer(Int64(int)) }
            if let number = DynamicValue.number(value) {
                if let exact = number.exactInt { return .integer(exact) }
                return integerColumn(number.doubleValue)
            }
            return .null
        case .booleanAttributeType:
            if let bool = value as? Bool { return .integer(bool ? 1 : 0) }
            if let number = DynamicValue.number(value) { return .integer(number.doubleValue != 0 ? 1 : 0) }
            return .null
        case .doubleAttributeType, .floatAttributeType:
            if let double = value as? Double { return .real(double) }
            if let number = DynamicValue.number(value) { return .real(number.doubleValue) }
            return .null
        case .decimalAttributeType:
            if let decimal = value as? Decimal { return .text(decimal.description) }
            if let number = DynamicValue.number(value) { return .real(number.doubleValue) }
            return .null
        case .stringAttributeType:
            if let string = value as? String { return .text(string) }
            return .text(String(describing: value))
        case .dateAttributeType:
            if let date = value as? Date { return .real(date.timeIntervalSinceReferenceDate) }
            return .null
        case .binaryDataAttributeType:
            if let data = value as? Data { return .blob([UInt8](data)) }
            if let bytes = value as? [UInt8] { return .blob(bytes) }
            return .null
        case .UUIDAttributeType:
            if let uuid = value as? UUID { return .blob(withUnsafeBytes(of: uuid.uuid) { Array($0) }) }
            return .null
        case .URIAttributeType:
            if let url = value as? URL { return .text(url.absoluteString) }
            if let string = value as? String { return .text(string) }
            return .null
        case .objectIDAttributeType:
            if let id = value as? NSManagedObjectID { return .text(id.uriRepresentation().absoluteString) }
            return .null
        case .transformableAttributeType:
            if let data = Transformable.encode(value, attribute: attribute) { return .blob([UInt8](data)) }
            return .null
        default:
            if let data = value as? Data { return .blob([UInt8](data)) }
            return .null
        }
    }

    /// An integer column value for a fractional or out-of-range number: its integer part,
    /// saturated at Int64's range; NaN is no value.
    package static func integerColumn(_ double: Double) -> SQLValue {
        guard !double.isNaN else { return .null }
        if double >= 9.223372036854775807e18 { return .integer(.max) }
        if double <= -9.223372036854775808e18 { return .integer(.min) }
        return .integer(Int64(double.rounded(.towardZero)))
    }

    /// `double` as an Int, its integer part saturated at Int's range; `nil` for NaN.
    package static func saturatingInt(_ double: Double) -> Int? {
        guard !double.isNaN else { return nil }
        if double >= 9.223372036854775807e18 { return .max }
        if double <= -9.223372036854775808e18 { return .min }
        return Int(double.rounded(.towardZero))
    }

    /// A constant from a predicate, bound as the column of `type` would hold it; `nil` when the
    /// constant has no SQL form (the predicate is then evaluated in memory).
    package static func parameter(_ value: Any?, type: NSAttributeType?) -> SQLValue? {
        guard let value = DynamicValue.unwrap(value) else { return .null }
        switch type {
        case .integer16AttributeType?, .integer32AttributeType?, .integer64AttributeType?, .booleanAttributeType?,
            .doubleAttributeType?, .floatAttributeType?:
            // A constant compared with a number column keeps its own value — never truncated to
            // the column's type — so SQL compares as the in-memory predicate does (`age == 36.5`
            // matches nothing, `active == 2` matches nothing, `age < 1e300` matches every age).
            if let bool = value as? Bool, !DynamicValue.isObject(value) { return .integer(bool ? 1 : 0) }
            guard let number = DynamicValue.number(value) else { return column(value, type: type!, attribute: nil) }
            if let exact = number.exactInt, type != .doubleAttributeType, type != .floatAttributeType {
                return .integer(exact)
            }
            return .real(number.doubleValue)
        default:
            break
        }
        if let type { return column(value, type: type, attribute: nil) }
        switch value {
        case let string as String: return .text(string)
        case let bool as Bool: return .integer(bool ? 1 : 0)
        case let date as Date: return .real(date.timeIntervalSinceReferenceDate)
        default:
            guard let number = DynamicValue.number(value) else { return nil }
            if let exact = number.exactInt { return .integer(exact) }
            return .real(number.doubleValue)
        }
    }
}
