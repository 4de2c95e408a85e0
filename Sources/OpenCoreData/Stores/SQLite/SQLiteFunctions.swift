internal import CSQLite

/// SQL functions the store registers on each connection, so predicates SQL cannot spell
/// natively still run inside the query with the very rules of in-memory evaluation.
///
/// `NSCoreDataStringMatch(operator, options, lhs, rhs)` applies a comparison predicate's string
/// operator (`BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE`, `MATCHES`, `==`, `!=`, `<`…) with its
/// `[cdn]` options; it answers 0 or 1, never NULL. The comparison is built once per statement
/// for a constant right side (SQLite's auxiliary data).
enum SQLiteFunctions {
    static func register(on connection: SQLiteConnection) throws {
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

    private static func string(_ value: OpaquePointer?) -> String? {
        guard sqlite3_value_type(value) != SQLITE_NULL, let text = sqlite3_value_text(value) else { return nil }
        let count = Int(sqlite3_value_bytes(value))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }
}
