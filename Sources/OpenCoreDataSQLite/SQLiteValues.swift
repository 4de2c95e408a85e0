import OpenCoreData
import OpenCoreDataSQL

/// Reading attribute values back from SQLite's columns, in Apple's layout (``SQLValues`` writes
/// them).
enum SQLiteValues {
    /// Stores the attribute value of column `index` in `slot` of the new `values`: what
    /// ``value(_:_:type:attribute:)`` gives, with the common types stored typed instead of through
    /// `Any`, which would box them. The attribute description is needed only for the types read
    /// through `Any`; it stays unretained until then, so a column costs no retain and release.
    @inline(__always)
    static func store(
        _ statement: SQLiteStatement, _ index: Int32, type: NSAttributeType,
        attribute: Unmanaged<NSAttributeDescription>?, in values: SlotFiller, at slot: Int
    ) {
        let columnType = statement.type(at: index)
        if columnType == 5 { return }  // SQLITE_NULL: the slot holds no value already.
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            // A REAL (a damaged or foreign file) is saturated by `value`.
            if columnType == 2 {
                values.set(value(statement, index, type: type, attribute: attribute?.takeUnretainedValue()), at: slot)
            } else {
                values.setInt(Int(statement.int64(at: index)), at: slot)
            }
        case .booleanAttributeType:
            values.setBool(statement.int64(at: index) != 0, at: slot)
        case .doubleAttributeType:
            values.setDouble(statement.double(at: index), at: slot)
        case .stringAttributeType:
            if let string = statement.string(at: index) { values.setString(string, at: slot) }
        case .dateAttributeType:
            values.setDate(Date(timeIntervalSinceReferenceDate: statement.double(at: index)), at: slot)
        default:
            values.set(value(statement, index, type: type, attribute: attribute?.takeUnretainedValue()), at: slot)
        }
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
            if columnType == 2 { return SQLValues.saturatingInt(statement.double(at: index)) }
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
}
