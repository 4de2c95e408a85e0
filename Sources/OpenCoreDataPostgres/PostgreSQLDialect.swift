import OpenCoreData
import OpenCoreDataSQL

/// PostgreSQL's spelling of the SQL layer (``SQLDialect``): numbered `$n` placeholders, every
/// identifier quoted (PostgreSQL folds unquoted names to lower case, and Apple's are upper case),
/// `IS NOT DISTINCT FROM` for null-safe equality, sums and averages cast back to the column's kind
/// (`SUM` of a `BIGINT` is a `NUMERIC`), and text columns in the `"C"` collation, so text compares
/// and sorts by its bytes as `compare:` and Apple's SQLite store do, whatever the database's
/// locale.
///
/// String operators run in SQL where PostgreSQL's own functions judge as the in-memory rules do —
/// `BEGINSWITH`, `ENDSWITH` and `CONTAINS` without options, the empty string matching nothing, and
/// `LIKE` without options and without `?` — and in memory otherwise (`[cd]`, `MATCHES`;
/// DEVIATIONS.md).
struct PostgreSQLDialect: SQLDialect {
    func quote(_ identifier: String) -> String {
        // Every statement quotes every name it writes: Apple's names have no quote to double,
        // and looking for one by bytes costs a fraction of Foundation's replacement.
        guard identifier.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + identifier + "\"" }
        return "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    func placeholder(_ index: Int) -> String { "$\(index)" }

    func boolean(_ value: Bool) -> String { value ? "TRUE" : "FALSE" }

    func nullSafeComparison(negated: Bool) -> String { negated ? "IS DISTINCT FROM" : "IS NOT DISTINCT FROM" }

    func sum(_ operand: String, real: Bool) -> String {
        "CAST(COALESCE(SUM(\(operand)), 0) AS \(real ? "DOUBLE PRECISION" : "BIGINT"))"
    }

    func average(_ operand: String) -> String { "CAST(AVG(\(operand)) AS DOUBLE PRECISION)" }

    func window(limit: Int?, offset: Int, bind: (SQLValue) -> String) -> String {
        var text = ""
        if let limit { text += " LIMIT " + bind(.integer(Int64(limit))) }
        if offset > 0 { text += " OFFSET " + bind(.integer(Int64(offset))) }
        return text
    }

    /// `BEGINSWITH`, `ENDSWITH` and `CONTAINS` without options, as given; `LIKE` without options
    /// as PostgreSQL's own pattern (``likePattern(_:)``) when it has no `?`; anything else in
    /// memory.
    func stringMatchParameter(
        _ type: NSComparisonPredicate.Operator, _ options: NSComparisonPredicate.Options, _ value: String
    ) -> SQLValue? {
        guard options.isEmpty else { return nil }
        switch type {
        case .beginsWith, .endsWith, .contains: return .text(value)
        case .like: return Self.likePattern(value).map(SQLValue.text)
        default: return nil
        }
    }

    /// A `LIKE` pattern of Core Data's (`*` any run of characters, `?` one character, a backslash
    /// taking the next character as itself) as PostgreSQL's (`%`, `_`, backslash escapes), its own
    /// `%` and `_` escaped. `nil` for a pattern with `?`: PostgreSQL's `_` is one code point, the
    /// in-memory `?` one character, which may be several (an emoji with a skin tone, `\r\n`).
    static func likePattern(_ pattern: String) -> String? {
        var result = ""
        var escaping = false
        for character in pattern {
            if escaping {
                result += "\\" + String(character)
                escaping = false
                continue
            }
            switch character {
            case "\\": escaping = true
            case "*": result += "%"
            case "?": return nil
            case "%", "_": result += "\\" + String(character)
            default: result.append(character)
            }
        }
        if escaping { result += "\\\\" }  // a trailing backslash is itself
        return result
    }

    /// The affix and substring tests by bytes; `rhs` (a placeholder) may appear twice, which
    /// PostgreSQL's numbered parameters allow. `NSString` never finds the empty string, so an
    /// empty right side matches nothing (but an empty `LIKE` pattern matches the empty string), and
    /// a `NULL` on either side is false, never unknown.
    func stringMatch(
        operator type: NSComparisonPredicate.Operator, options: NSComparisonPredicate.Options, _ lhs: String,
        _ rhs: String
    ) -> String {
        if type == .like { return "COALESCE(\(lhs) LIKE \(rhs), FALSE)" }
        let test =
            switch type {
            case .beginsWith: "STARTS_WITH(\(lhs), \(rhs))"
            case .endsWith: "RIGHT(\(lhs), LENGTH(\(rhs))) = \(rhs)"
            default: "STRPOS(\(lhs), \(rhs)) > 0"
            }
        return "COALESCE(LENGTH(\(rhs)) > 0 AND \(test), FALSE)"
    }

    /// PostgreSQL sorts `NULL` after every value unless told otherwise.
    func nullOrdering(descending: Bool) -> String { descending ? " NULLS LAST" : " NULLS FIRST" }

    /// `compare:` is byte order, the `"C"` collation every text column of the store is created
    /// in (``columnType(_:length:)``), so a sort names no collation: PostgreSQL sorts a column in
    /// its own collation about twice as fast as through a `COLLATE` clause, even the same one.
    /// The case-insensitive and localized selectors sort in memory.
    func collation(forSelector selector: String) -> String? {
        selector == "compare:" ? "" : nil
    }

    /// Apple's column types in PostgreSQL's: keys, integers and Booleans as `BIGINT`, dates (seconds
    /// since 2001, as Apple stores them) and floating point as `DOUBLE PRECISION`, decimals as
    /// `NUMERIC`, text in byte order, bytes as `BYTEA`.
    func columnType(_ type: SQLColumnType, length: Int?) -> String {
        switch type {
        case .integer: "BIGINT"
        case .float, .timestamp: "DOUBLE PRECISION"
        case .decimal: "NUMERIC"
        // A declared length (`Z_UUID VARCHAR(255)`) limits nothing in SQLite; nor does it here.
        case .varchar: "TEXT COLLATE \"C\""
        case .blob: "BYTEA"
        }
    }

    /// Text columns are created in the `"C"` collation, and PostgreSQL allows no collation on the
    /// other types an index may hold: none is named.
    var bytewiseCollation: String? { nil }

    var joinTableColumnsQuery: String? {
        "SELECT table_name::text, column_name::text FROM information_schema.columns "
            + "WHERE table_schema = current_schema() AND table_name ~ '^Z_[0-9]' ORDER BY table_name, ordinal_position"
    }

    /// Every column of the tables of the store's schema.
    var tableColumnsQuery: String {
        "SELECT table_name::text, column_name::text FROM information_schema.columns "
            + "WHERE table_schema = current_schema()"
    }

    /// `INSERT … ON CONFLICT (key) DO UPDATE SET` the other columns (`DO NOTHING` when every
    /// column is part of the key, as a join table's pair is).
    func upsert(key: [String], columns: [String]) -> (verb: String, suffix: String) {
        let updates = columns.filter { !key.contains($0) }.map { "\($0) = EXCLUDED.\($0)" }
        let action = updates.isEmpty ? "NOTHING" : "UPDATE SET " + updates.joined(separator: ", ")
        return ("INSERT", " ON CONFLICT (\(key.joined(separator: ", "))) DO \(action)")
    }
}

extension PostgreSQLDialect {
    /// The text of a tree of the SQL layer in PostgreSQL's spelling; its slots are `$1`, `$2`, …
    /// bound by the caller in order.
    static func text(_ statement: SQLStatement) -> String {
        SQLWriter.write(statement, dialect: PostgreSQLDialect()).sql
    }
}
