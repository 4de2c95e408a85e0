import OpenCoreData

/// SQLite's spelling of the SQL layer (``SQLDialect``): `?` placeholders, `IS` for null-safe
/// equality, booleans as 1 and 0, `LIMIT -1` for no limit, `TOTAL` for a real sum, and the store's
/// own function and collations (``SQLiteFunctions``) for string matching and string order.
struct SQLiteDialect: SQLDialect {
    func quote(_ identifier: String) -> String { OpenCoreDataSQLite.quote(identifier) }

    func placeholder(_ index: Int) -> String { "?" }

    func boolean(_ value: Bool) -> String { value ? "1" : "0" }

    func comparisonOperator(_ comparison: SQLComparison) -> String {
        switch comparison {
        case .equal: "="
        case .notEqual: "<>"
        case .less: "<"
        case .lessOrEqual: "<="
        case .greater: ">"
        case .greaterOrEqual: ">="
        case .same: "IS"
        case .notSame: "IS NOT"
        }
    }

    func aggregate(_ aggregate: SQLAggregate, _ operand: String?) -> String {
        let operand = operand ?? "*"
        switch aggregate {
        case .count: return "COUNT(\(operand))"
        case .integerSum: return "COALESCE(SUM(\(operand)), 0)"
        case .realSum: return "TOTAL(\(operand))"
        case .average: return "AVG(\(operand))"
        case .minimum: return "MIN(\(operand))"
        case .maximum: return "MAX(\(operand))"
        }
    }

    func window(limit: Int?, offset: Int, bind: (SQLValue) -> String) -> String {
        guard limit != nil || offset > 0 else { return "" }
        let limitText = bind(.integer(limit.map(Int64.init) ?? -1))
        return " LIMIT \(limitText) OFFSET \(bind(.integer(Int64(offset))))"
    }

    /// Every operator and option: `NSCoreDataStringMatch` runs the in-memory comparison itself.
    func canMatchStrings(_ type: NSComparisonPredicate.Operator, _ options: NSComparisonPredicate.Options) -> Bool {
        true
    }

    /// `NSCoreDataStringMatch(operator, options, lhs, rhs)`; the operator and options are the
    /// predicate's own enumeration values, written as integers.
    func stringMatch(
        operator type: NSComparisonPredicate.Operator, options: NSComparisonPredicate.Options, _ lhs: String,
        _ rhs: String
    ) -> String {
        "NSCoreDataStringMatch(\(type.rawValue), \(options.rawValue), \(lhs), \(rhs))"
    }

    func collation(forSelector selector: String) -> String? { SQLiteFunctions.collation(for: selector) }
}
