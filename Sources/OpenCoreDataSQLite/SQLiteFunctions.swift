internal import CSQLite
import OpenCoreData

/// SQL functions the store registers on each connection, so predicates SQL cannot spell
/// natively still run inside the query with the very rules of in-memory evaluation.
///
/// `NSCoreDataStringMatch(operator, options, lhs, rhs)` applies a comparison predicate's string
/// operator (`BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE`, `MATCHES`, `==`, `!=`, `<`…) with its
/// `[cdn]` options; it answers 0 or 1, never NULL. The comparison is built once per statement
/// for a constant right side (SQLite's auxiliary data).
///
/// Collations, one per string sort selector (``collation(for:)``), order text in `ORDER BY` with
/// the very comparison an in-memory sort uses (`NSSortDescriptor.compareValues`), so a fetch
/// sorted by a string attribute sorts — and windows, `LIMIT 100` — in SQL.
enum SQLiteFunctions {
    /// The sort selectors strings can sort by in SQL, each with its collation's name.
    static let collations: [(selector: String, name: String)] = [
        ("compare:", "NSCoreDataCompare"), ("caseInsensitiveCompare:", "NSCoreDataCaseInsensitiveCompare"),
        ("localizedCompare:", "NSCoreDataLocalizedCompare"),
        ("localizedCaseInsensitiveCompare:", "NSCoreDataLocalizedCaseInsensitiveCompare"),
        ("localizedStandardCompare:", "NSCoreDataLocalizedStandardCompare"),
    ]

    /// The collation that sorts strings as `selector` does in memory.
    static func collation(for selector: String) -> String? {
        collations.first { $0.selector == selector }?.name
    }

    static func register(on connection: SQLiteConnection) throws {
        for (index, collation) in collations.enumerated() {
            let code = sqlite3_create_collation_v2(
                connection.handle, collation.name, SQLITE_UTF8, UnsafeMutableRawPointer(bitPattern: index + 1),
                { argument, count1, bytes1, count2, bytes2 in
                    let index = Int(bitPattern: argument) - 1
                    let a = UnsafeRawBufferPointer(start: bytes1, count: Int(count1))
                    let b = UnsafeRawBufferPointer(start: bytes2, count: Int(count2))
                    return SQLiteFunctions.compare(a, b, selector: SQLiteFunctions.collations[index].selector)
                }, nil)
            guard code == SQLITE_OK else {
                throw SQLiteConnection.error(code: code, db: connection.handle, "Cannot register SQL collations")
            }
        }
        let code = sqlite3_create_function_v2(
            connection.handle, "NSCoreDataStringMatch", 4, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
            { context, count, arguments in
                guard count == 4, let arguments else { return }
                let operatorCode = UInt(sqlite3_value_int64(arguments[0]))
                let options = UInt(sqlite3_value_int64(arguments[1]))
                let lhs = SQLiteFunctions.string(arguments[2])
                let rhs = SQLiteFunctions.string(arguments[3])
                let predicate: NSComparisonPredicate
                if let cached = sqlite3_get_auxdata(context, 3) {
                    predicate = Unmanaged<NSComparisonPredicate>.fromOpaque(cached).takeUnretainedValue()
                } else {
                    predicate = NSComparisonPredicate(
                        leftExpression: NSExpression(forKeyPath: "self"),
                        rightExpression: NSExpression(forConstantValue: rhs),
                        modifier: .direct, type: NSComparisonPredicate.Operator(rawValue: operatorCode) ?? .equalTo,
                        options: NSComparisonPredicate.Options(rawValue: options))
                    sqlite3_set_auxdata(
                        context, 3, Unmanaged.passRetained(predicate).toOpaque(),
                        { pointer in
                            if let pointer { Unmanaged<NSComparisonPredicate>.fromOpaque(pointer).release() }
                        })
                }
                sqlite3_result_int(context, predicate.compare(lhs, rhs) ? 1 : 0)
            }, nil, nil, nil)
        guard code == SQLITE_OK else {
            throw SQLiteConnection.error(code: code, db: connection.handle, "Cannot register SQL functions")
        }
    }

    /// Orders two UTF-8 strings as `selector` orders them in memory: -1, 0 or 1.
    static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, selector: String) -> Int32 {
        // `compare:` on ASCII is byte order (Swift's String ordering on ASCII), without decoding.
        if selector == "compare:", !a.contains(where: { $0 >= 0x80 }), !b.contains(where: { $0 >= 0x80 }) {
            return a.lexicographicallyPrecedes(b) ? -1 : (a.elementsEqual(b) ? 0 : 1)
        }
        let result = NSSortDescriptor.compareValues(
            String(decoding: a, as: UTF8.self), String(decoding: b, as: UTF8.self), selector: selector)
        switch result {
        case .orderedAscending: return -1
        case .orderedSame: return 0
        case .orderedDescending: return 1
        }
    }

    private static func string(_ value: OpaquePointer?) -> String? {
        guard sqlite3_value_type(value) != SQLITE_NULL, let text = sqlite3_value_text(value) else { return nil }
        let count = Int(sqlite3_value_bytes(value))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }
}
