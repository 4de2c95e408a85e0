import OpenCoreData

/// Converting attribute values to and from the column values Apple's store writes
/// (STORE-FORMAT.md, "Types"): dates as seconds since 2001-01-01, UUIDs as 16 bytes, URIs as text,
/// Booleans as 0 and 1.
///
/// Integer attributes of every width read back as `Int` (see DEVIATIONS.md).
enum SQLiteValues {
    /// The column value for an attribute value.
    static func column(_ value: Any?, type: NSAttributeType, attribute: NSAttributeDescription?) -> SQLiteValue {
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
    static func integerColumn(_ double: Double) -> SQLiteValue {
        guard !double.isNaN else { return .null }
        if double >= 9.223372036854775807e18 { return .integer(.max) }
        if double <= -9.223372036854775808e18 { return .integer(.min) }
        return .integer(Int64(double.rounded(.towardZero)))
    }

    /// `double` as an Int, its integer part saturated at Int's range; `nil` for NaN.
    static func saturatingInt(_ double: Double) -> Int? {
        guard !double.isNaN else { return nil }
        if double >= 9.223372036854775807e18 { return .max }
        if double <= -9.223372036854775808e18 { return .min }
        return Int(double.rounded(.towardZero))
    }

    /// The attribute value of column `index` of the statement's current row.
    static func value(
        _ statement: SQLiteStatement, _ index: Int32, type: NSAttributeType, attribute: NSAttributeDescription?
    ) -> Any? {
        let columnType = statement.type(at: index)
        if columnType == 5 { return nil }  // SQLITE_NULL
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            // A REAL where an integer is expected (a damaged or foreign file): its integer part,
            // saturated at the type's range; NaN reads as no value. Never a trap.
            if columnType == 2 { return saturatingInt(statement.double(at: index)) }
            return Int(statement.int64(at: index))
        case .booleanAttributeType:
            return statement.int64(at: index) != 0
        case .doubleAttributeType:
            return statement.double(at: index)
        case .floatAttributeType:
            return Float(statement.double(at: index))
        case .decimalAttributeType:
            switch columnType {
            case 1: return Decimal(statement.int64(at: index))
            case 2: return Decimal(string: String(statement.double(at: index))) ?? Decimal(statement.double(at: index))
            default: return statement.string(at: index).flatMap { Decimal(string: $0) }
            }
        case .stringAttributeType:
            return statement.string(at: index)
        case .dateAttributeType:
            return Date(timeIntervalSinceReferenceDate: statement.double(at: index))
        case .binaryDataAttributeType:
            return statement.data(at: index)
        case .UUIDAttributeType:
            if columnType == 3 { return statement.string(at: index).flatMap(UUID.init(uuidString:)) }
            let bytes = statement.bytes(at: index)
            guard bytes.count == 16 else { return nil }
            return UUID(
                uuid: (
                    bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8],
                    bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                ))
        case .URIAttributeType:
            return statement.string(at: index).flatMap { URL(string: $0) }
        case .objectIDAttributeType:
            return statement.string(at: index).flatMap { URL(string: $0) }
        case .transformableAttributeType:
            return Transformable.decode(statement.data(at: index), attribute: attribute)
        default:
            return statement.data(at: index)
        }
    }

    /// A constant from a predicate, bound as the column of `type` would hold it; `nil` when the
    /// constant has no SQL form (the predicate is then evaluated in memory).
    static func parameter(_ value: Any?, type: NSAttributeType?) -> SQLiteValue? {
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

/// Transformable attributes: through the attribute's named `ValueTransformer`, else the secure
/// unarchiving one, Apple's default. A transformer that unarchives from data
/// (`NSSecureUnarchiveFromDataTransformer` and its subclasses, which the legacy
/// `NSKeyedUnarchiveFromData` name also names here) is used in reverse, as Apple's Core Data
/// does: `reverseTransformedValue` makes the stored `Data`, `transformedValue` reads it. Any other
/// transformer turns the value into `Data` forward and back in reverse.
package enum Transformable {
    static func transformer(_ attribute: NSAttributeDescription?) -> ValueTransformer? {
        let name = attribute?.valueTransformerName.flatMap { $0.isEmpty ? nil : $0 }
        return ValueTransformer.registered(.init(name ?? "NSSecureUnarchiveFromData"))
    }

    /// The `Data` stored for `value`: the transformer's output, or the value itself when it is
    /// already `Data` and the transformer gives none.
    package static func encode(_ value: Any, attribute: NSAttributeDescription?) -> Data? {
        guard let transformer = transformer(attribute) else { return value as? Data }
        guard transformer is NSSecureUnarchiveFromDataTransformer else {
            return (transformer.transformedValue(value) as? Data) ?? (value as? Data)
        }
        // Property-list values are archived here, deterministically, as Apple's archiver lays them
        // out, when the transformer is Apple's own (a subclass may archive its own way).
        if type(of: transformer) == NSSecureUnarchiveFromDataTransformer.self,
            let archive = CompiledModelEncoder.plainArchive(value)
        {
            return archive
        }
        return (transformer.reverseTransformedValue(value) as? Data) ?? (value as? Data)
    }

    /// The attribute's value for stored `data`: the transformer's output, or the bytes themselves
    /// when the transformer cannot read them (so nothing stored is lost).
    package static func decode(_ data: Data, attribute: NSAttributeDescription?) -> Any? {
        guard let transformer = transformer(attribute) else { return data }
        let output =
            transformer is NSSecureUnarchiveFromDataTransformer
            ? transformer.transformedValue(data) : transformer.reverseTransformedValue(data)
        return DynamicValue.unwrap(output) ?? data
    }
}
