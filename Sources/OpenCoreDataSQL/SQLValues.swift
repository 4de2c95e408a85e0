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

    /// The column value for the value in `slot` of `values`: what ``column(_:type:attribute:)``
    /// answers for `values[slot]`, taken from the cell when it holds the attribute's own type.
    /// Classifying the slot's `Any` instead (unwrapping it, then a dynamic cast per candidate
    /// type) would cost every column of every row saved.
    package static func column(
        _ values: SlotValues, slot: Int, type: NSAttributeType, attribute: NSAttributeDescription?
    ) -> SQLValue {
        switch (values.scalar(at: slot), type) {
        case (.none, _):
            return .null
        case (.int(let int), .integer16AttributeType), (.int(let int), .integer32AttributeType),
            (.int(let int), .integer64AttributeType):
            return .integer(Int64(int))
        case (.bool(let bool), .booleanAttributeType):
            return .integer(bool ? 1 : 0)
        case (.double(let double), .doubleAttributeType), (.double(let double), .floatAttributeType):
            return .real(double)
        case (.string(let string), .stringAttributeType):
            return .text(string)
        case (.date(let date), .dateAttributeType):
            return .real(date.timeIntervalSinceReferenceDate)
        default:
            return column(values[slot], type: type, attribute: attribute)
        }
    }

    /// The attribute value of a column value read back from a database that answers in the SQL
    /// layer's values (the SQLite store reads its C columns directly, `SQLiteValues`, to the same
    /// rules). A value of the wrong kind for its attribute — a damaged or foreign database — reads
    /// as the nearest value or none, never a trap.
    package static func attributeValue(_ value: SQLValue, type: NSAttributeType, attribute: NSAttributeDescription?)
        -> Any?
    {
        switch (type, value) {
        case (_, .null): return nil
        case (.integer16AttributeType, _), (.integer32AttributeType, _), (.integer64AttributeType, _):
            switch value {
            case .integer(let integer): return Int(integer)
            case .real(let real): return saturatingInt(real)
            case .text(let text): return Int(text) ?? Double(text).flatMap(saturatingInt)
            default: return nil
            }
        case (.booleanAttributeType, .integer(let integer)): return integer != 0
        case (.booleanAttributeType, .real(let real)): return real != 0
        case (.doubleAttributeType, .real(let real)): return real
        case (.doubleAttributeType, .integer(let integer)): return Double(integer)
        case (.floatAttributeType, .real(let real)): return Float(real)
        case (.floatAttributeType, .integer(let integer)): return Float(integer)
        case (.decimalAttributeType, .integer(let integer)): return Decimal(integer)
        case (.decimalAttributeType, .real(let real)): return Decimal(string: String(real)) ?? Decimal(real)
        case (.decimalAttributeType, .text(let text)): return Decimal(string: text)
        case (.stringAttributeType, .text(let text)): return text
        case (.stringAttributeType, .integer(let integer)): return String(integer)
        case (.stringAttributeType, .real(let real)): return String(real)
        case (.dateAttributeType, .real(let real)): return Date(timeIntervalSinceReferenceDate: real)
        case (.dateAttributeType, .integer(let integer)): return Date(timeIntervalSinceReferenceDate: Double(integer))
        case (.UUIDAttributeType, .text(let text)): return UUID(uuidString: text)
        case (.UUIDAttributeType, .blob(let bytes)):
            guard bytes.count == 16 else { return nil }
            return UUID(
                uuid: (
                    bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8],
                    bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                ))
        case (.URIAttributeType, .text(let text)), (.objectIDAttributeType, .text(let text)): return URL(string: text)
        case (.transformableAttributeType, .blob(let bytes)):
            return Transformable.decode(Data(bytes), attribute: attribute)
        case (.binaryDataAttributeType, .blob(let bytes)), (_, .blob(let bytes)): return Data(bytes)
        default: return nil
        }
    }

    /// Stores in `slot` of `values` what ``attributeValue(_:type:attribute:)`` gives for `value`,
    /// the common kinds typed, with no value boxed as `Any` on the way; no value leaves the slot
    /// as it is.
    @inline(__always)
    package static func store(
        _ value: SQLValue, type: NSAttributeType, attribute: NSAttributeDescription?, in values: inout SlotValues,
        at slot: Int
    ) {
        switch (type, value) {
        case (_, .null): return
        case (.integer64AttributeType, .integer(let integer)), (.integer32AttributeType, .integer(let integer)),
            (.integer16AttributeType, .integer(let integer)):
            values.setInt(Int(integer), at: slot)
        case (.stringAttributeType, .text(let text)): values.setString(text, at: slot)
        case (.doubleAttributeType, .real(let real)): values.setDouble(real, at: slot)
        case (.booleanAttributeType, .integer(let integer)): values.setBool(integer != 0, at: slot)
        case (.dateAttributeType, .real(let real)): values.setDate(Date(timeIntervalSinceReferenceDate: real), at: slot)
        default: values[slot] = attributeValue(value, type: type, attribute: attribute)
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
