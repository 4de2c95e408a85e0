import OpenCoreData
import OpenCoreDataSQL

/// SQLite's spelling of the SQL layer (``SQLDialect``): `?` placeholders, `IS` for null-safe
/// equality, booleans as 1 and 0, `LIMIT -1` for no limit, `TOTAL` for a real sum, and the store's
/// own function and collations (``SQLiteFunctions``) for string matching and string order.
struct SQLiteDialect: SQLDialect {
    func quote(_ identifier: String) -> String { OpenCoreDataSQLite.quote(identifier) }

    func placeholder(_ index: Int) -> String { "?" }

    func boolean(_ value: Bool) -> String { value ? "1" : "0" }

    func nullSafeComparison(negated: Bool) -> String { negated ? "IS NOT" : "IS" }

    /// `TOTAL` is SQLite's floating-point sum, 0.0 over no rows.
    func sum(_ operand: String, real: Bool) -> String { real ? "TOTAL(\(operand))" : "COALESCE(SUM(\(operand)), 0)" }

    func average(_ operand: String) -> String { "AVG(\(operand))" }

    func window(limit: Int?, offset: Int, bind: (SQLValue) -> String) -> String {
        guard limit != nil || offset > 0 else { return "" }
        let limitText = bind(.integer(limit.map(Int64.init) ?? -1))
        return " LIMIT \(limitText) OFFSET \(bind(.integer(Int64(offset))))"
    }

    /// Every operator and option: `NSCoreDataStringMatch` runs the in-memory comparison itself.
    /// Every string operator, as given: the store's own function runs the in-memory rules.
    func stringMatchParameter(
        _ type: NSComparisonPredicate.Operator, _ options: NSComparisonPredicate.Options, _ value: String
    ) -> SQLValue? { .text(value) }

    /// `NSCoreDataStringMatch(operator, options, lhs, rhs)`; the operator and options are the
    /// predicate's own enumeration values, written as integers.
    func stringMatch(
        operator type: NSComparisonPredicate.Operator, options: NSComparisonPredicate.Options, _ lhs: String,
        _ rhs: String
    ) -> String {
        "NSCoreDataStringMatch(\(type.rawValue), \(options.rawValue), \(lhs), \(rhs))"
    }

    func collation(forSelector selector: String) -> String? { SQLiteFunctions.collation(for: selector) }

    /// SQLite sorts `NULL` before every value already.
    func nullOrdering(descending: Bool) -> String { "" }

    /// Apple's column types (STORE-FORMAT.md, "Types"); `Z_PK INTEGER PRIMARY KEY` is SQLite's row
    /// ID.
    func columnType(_ type: SQLColumnType, length: Int?) -> String {
        let name =
            switch type {
            case .integer: "INTEGER"
            case .float: "FLOAT"
            case .decimal: "DECIMAL"
            case .timestamp: "TIMESTAMP"
            case .varchar: "VARCHAR"
            case .blob: "BLOB"
            }
        return name + (length.map { "(\($0))" } ?? "")
    }

    var bytewiseCollation: String? { "BINARY" }

    var marksExternalBinaryData: Bool { true }

    /// `||` makes text in SQLite; the cast keeps the bytes a blob.
    func blobConcat(_ left: String, _ right: String) -> String { "CAST(\(left) || \(right) AS BLOB)" }

    func blobSlice(_ operand: String, from: Int, length: Int?) -> String {
        "substr(\(operand), \(from)" + (length.map { ", \($0)" } ?? "") + ")"
    }

    var joinTableColumnsQuery: String? {
        "SELECT m.name, p.name FROM sqlite_master AS m, pragma_table_info(m.name) AS p "
            + "WHERE m.type = 'table' AND m.name GLOB 'Z_[0-9]*' ORDER BY m.name, p.cid"
    }

    /// Every table's columns, from `pragma_table_info`.
    var tableColumnsQuery: String {
        "SELECT m.name, p.name FROM sqlite_master AS m, pragma_table_info(m.name) AS p WHERE m.type = 'table'"
    }

    /// `INSERT OR REPLACE`: the conflict is the table's primary key or a unique index.
    func upsert(key: [String], columns: [String]) -> (verb: String, suffix: String) { ("INSERT OR REPLACE", "") }
}

/// An identifier taken from the model, ready for SQL text: bare when it is a plain identifier
/// (as Apple writes its schema), else quoted with any quote doubled.
func quote(_ identifier: String) -> String {
    let plain =
        identifier.utf8.first.map { !(48...57).contains($0) } ?? false
        && identifier.utf8.allSatisfy {
            ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 95
        }
    if plain { return identifier }
    return "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}

extension SQLiteDialect {
    /// The text of a tree of the SQL layer in SQLite's spelling. Its slots are `?`, bound by the
    /// caller in order.
    static func text(_ statement: SQLStatement) -> String { SQLWriter.write(statement, dialect: SQLiteDialect()).sql }
}

extension SQLiteConnection {
    /// The prepared statement of `tree` (from the cache when its text was prepared before).
    ///
    /// - Throws: `NSSQLiteError` when SQLite cannot prepare it.
    func statement(_ tree: SQLStatement) throws -> SQLiteStatement { try statement(SQLiteDialect.text(tree)) }

    /// Runs `tree` with `arguments` bound to its slots, in order, and returns its rows.
    ///
    /// - Throws: `NSSQLiteError` when SQLite fails.
    func rows(_ tree: SQLStatement, _ arguments: [SQLiteValue] = []) throws -> [[SQLiteValue]] {
        try rows(SQLiteDialect.text(tree), arguments)
    }

    /// Runs `tree` with `arguments` bound to its slots, in order.
    ///
    /// - Throws: `NSSQLiteError` when SQLite fails.
    func run(_ tree: SQLStatement, _ arguments: [SQLiteValue] = []) throws {
        try run(SQLiteDialect.text(tree), arguments)
    }
}
