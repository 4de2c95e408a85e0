import OpenCoreData

/// Everything that differs between SQL databases, asked by ``SQLWriter`` while it writes a tree.
package protocol SQLDialect {
    /// An identifier from the model (a table or column name), ready for the text.
    func quote(_ identifier: String) -> String
    /// The placeholder of the `index`th bound parameter (from 1).
    func placeholder(_ index: Int) -> String
    /// A truth value as a literal.
    func boolean(_ value: Bool) -> String
    /// The infix operator that compares two values with `NULL` as a value of its own: equal
    /// (`IS NOT DISTINCT FROM` in standard SQL), or, `negated`, different. The other comparisons
    /// are standard SQL's, written by ``SQLWriter``.
    func nullSafeComparison(negated: Bool) -> String
    /// The sum of `operand` over the rows, 0 over no rows, as an integer or (`real`) a
    /// floating-point number. `COUNT`, `MIN` and `MAX` are standard SQL's.
    func sum(_ operand: String, real: Bool) -> String
    /// The floating-point average of `operand` over the rows.
    func average(_ operand: String) -> String
    /// The window clause for `limit` rows after `offset` (with a leading space), its values bound
    /// through `bind`; empty when there is no window.
    func window(limit: Int?, offset: Int, bind: (SQLValue) -> String) -> String
    /// The value to bind as the right side of a string operator with these options against the
    /// constant `value` (which ``stringMatch(operator:options:_:_:)`` then tests), when the
    /// database judges it exactly as the in-memory rules do; `nil` leaves the comparison to memory.
    /// A dialect may rewrite the value (a `LIKE` pattern into its own wildcards).
    func stringMatchParameter(
        _ type: NSComparisonPredicate.Operator, _ options: NSComparisonPredicate.Options, _ value: String
    ) -> SQLValue?
    /// The test `lhs <operator> rhs` under the in-memory string rules; never unknown.
    func stringMatch(
        operator type: NSComparisonPredicate.Operator, options: NSComparisonPredicate.Options, _ lhs: String,
        _ rhs: String
    ) -> String
    /// What follows a sort term so that `NULL` comes first in ascending order and last in
    /// descending order, as in memory (nil sorts before every value); empty where that is the
    /// database's own order.
    func nullOrdering(descending: Bool) -> String
    /// The collation that orders text as `selector` does in memory, `nil` when there is none (the
    /// sort is then done in memory); empty when the text columns' own collation is that order, so
    /// a sort names none.
    func collation(forSelector selector: String) -> String?
    /// A column type of Apple's layout as a `CREATE TABLE` writes it, with its declared length
    /// (`VARCHAR(255)`) when it has one.
    func columnType(_ type: SQLColumnType, length: Int?) -> String
    /// The collation that orders text by its bytes, as an index column names it; `nil` when the
    /// store's text columns already order by bytes (and other types take no collation).
    var bytewiseCollation: String? { get }
    /// A query whose rows are (table, column) for every column of the store's join tables
    /// (`Z_<n>…`), in table order and then column order; `nil` when the database cannot list them.
    var joinTableColumnsQuery: String? { get }
    /// A query whose rows are (table, column) for every column of every table of the store.
    var tableColumnsQuery: String { get }
    /// Whether binary attributes that allow external storage hold a marker byte before their
    /// value (Apple's SQLite layout), which a migration adds or removes when the option changes.
    var marksExternalBinaryData: Bool { get }
    /// Two blobs' bytes one after the other.
    func blobConcat(_ left: String, _ right: String) -> String
    /// A blob's bytes from the 1-based position `from` on, `length` of them or all the rest.
    func blobSlice(_ operand: String, from: Int, length: Int?) -> String
    /// How an insert that replaces a row with the same `key` is written: the verb before `INTO`
    /// and the text after `VALUES (…)`. `key` and `columns` are quoted.
    func upsert(key: [String], columns: [String]) -> (verb: String, suffix: String)
}

/// Writes a tree of ``SQLSelect`` and ``SQLExpression`` as text with bound parameters, asking
/// `dialect` for every database difference.
package struct SQLWriter {
    let dialect: any SQLDialect
    private(set) var parameters: [SQLValue] = []

    init(dialect: any SQLDialect) { self.dialect = dialect }

    /// The text and parameters of `select`.
    package static func write(_ select: SQLSelect, dialect: any SQLDialect) -> (sql: String, parameters: [SQLValue]) {
        var writer = SQLWriter(dialect: dialect)
        let sql = writer.select(select)
        return (sql, writer.parameters)
    }

    private mutating func bind(_ value: SQLValue) -> String {
        parameters.append(value)
        return dialect.placeholder(parameters.count)
    }

    mutating func select(_ select: SQLSelect) -> String {
        var sql = "SELECT " + select.columns.map { expression($0) }.joined(separator: ", ")
        sql += " FROM " + source(select.from)
        for join in select.joins {
            sql += join.kind == .left ? " LEFT JOIN " : " JOIN "
            sql += source(join.source) + " ON " + condition(join.on)
        }
        if let filter = select.filter { sql += " WHERE " + condition(filter) }
        if !select.groupBy.isEmpty {
            sql += " GROUP BY " + select.groupBy.map { expression($0) }.joined(separator: ", ")
        }
        if !select.orderBy.isEmpty {
            sql += " ORDER BY " + select.orderBy.map { order($0) }.joined(separator: ", ")
        }
        sql += dialect.window(limit: select.limit, offset: select.offset) { bind($0) }
        return sql
    }

    private mutating func source(_ source: SQLSource) -> String {
        switch source {
        case .table(let name, let alias): return "\(dialect.quote(name)) \(alias)"
        case .select(let select, let alias): return "(\(self.select(select))) \(alias)"
        }
    }

    private mutating func order(_ order: SQLSelect.Order) -> String {
        var sql = expression(order.expression)
        if let selector = order.selector, let collation = dialect.collation(forSelector: selector), !collation.isEmpty {
            sql += " COLLATE " + collation
        }
        if order.descending { sql += " DESC" }
        return order.neverNull ? sql : sql + dialect.nullOrdering(descending: order.descending)
    }

    /// An expression whose only use is to select rows (a `WHERE`, a join's `ON`, and the terms
    /// of an `AND` or `OR` there): a row is kept when it is true, and unknown (`NULL`) keeps it
    /// no more than false does — so a ``SQLExpression/falseIfNull(_:)`` is not written here.
    /// Bare, a comparison can use an index (`COALESCE(ZAGE >= ?, 0)` cannot) and costs each row
    /// less. Under `NOT` unknown and false differ, and the wrapper is written.
    /// The infix operator of a comparison: standard SQL's, the dialect's for `NULL`-safe ones.
    private func comparisonOperator(_ comparison: SQLComparison) -> String {
        switch comparison {
        case .equal: "="
        case .notEqual: "<>"
        case .less: "<"
        case .lessOrEqual: "<="
        case .greater: ">"
        case .greaterOrEqual: ">="
        case .same: dialect.nullSafeComparison(negated: false)
        case .notSame: dialect.nullSafeComparison(negated: true)
        }
    }

    /// An aggregate call on `operand` (`nil`: over rows, `COUNT(*)`).
    private func aggregate(_ aggregate: SQLAggregate, _ operand: String?) -> String {
        let operand = operand ?? "*"
        switch aggregate {
        case .count: return "COUNT(\(operand))"
        case .integerSum: return dialect.sum(operand, real: false)
        case .realSum: return dialect.sum(operand, real: true)
        case .average: return dialect.average(operand)
        case .minimum: return "MIN(\(operand))"
        case .maximum: return "MAX(\(operand))"
        }
    }

    mutating func condition(_ expression: SQLExpression) -> String {
        switch expression {
        case .falseIfNull(let operand):
            return condition(operand)
        case .and(let terms) where !terms.isEmpty:
            return "(" + terms.map { condition($0) }.joined(separator: " AND ") + ")"
        case .or(let terms) where !terms.isEmpty:
            return "(" + terms.map { condition($0) }.joined(separator: " OR ") + ")"
        default:
            return self.expression(expression)
        }
    }

    mutating func expression(_ expression: SQLExpression) -> String {
        switch expression {
        case .column(let table, let name):
            return table.map { dialect.quote($0) + "." + dialect.quote(name) } ?? dialect.quote(name)
        case .integer(let value):
            return String(value)
        case .boolean(let value):
            return dialect.boolean(value)
        case .parameter(let value):
            return bind(value)
        case .slot:
            return bind(.null)
        case .not(let operand):
            return "NOT (\(self.expression(operand)))"
        case .and(let terms):
            if terms.isEmpty { return dialect.boolean(true) }
            return "(" + terms.map { self.expression($0) }.joined(separator: " AND ") + ")"
        case .or(let terms):
            if terms.isEmpty { return dialect.boolean(false) }
            return "(" + terms.map { self.expression($0) }.joined(separator: " OR ") + ")"
        case .compare(let lhs, let comparison, let rhs):
            let left = self.expression(lhs)
            return "\(left) \(comparisonOperator(comparison)) \(self.expression(rhs))"
        case .isNotNull(let operand):
            return "\(self.expression(operand)) IS NOT NULL"
        case .inList(let operand, let list):
            let left = self.expression(operand)
            return "\(left) IN (" + list.map { self.expression($0) }.joined(separator: ", ") + ")"
        case .between(let operand, let low, let high):
            let left = self.expression(operand)
            let lower = self.expression(low)
            return "\(left) BETWEEN \(lower) AND \(self.expression(high))"
        case .falseIfNull(let operand):
            return "COALESCE(\(self.expression(operand)), \(dialect.boolean(false)))"
        case .exists(let select):
            return "EXISTS (\(self.select(select)))"
        case .subquery(let select):
            return "(\(self.select(select)))"
        case .aggregate(let aggregate, let operand):
            return self.aggregate(aggregate, operand.map { self.expression($0) })
        case .stringMatch(let type, let options, let lhs, let rhs):
            let left = self.expression(lhs)
            return dialect.stringMatch(operator: type, options: options, left, self.expression(rhs))
        case .caseOf(let operand, let whens, let otherwise):
            var text = "CASE \(self.expression(operand))"
            for when in whens {
                let value = self.expression(when.value)
                text += " WHEN \(value) THEN \(self.expression(when.result))"
            }
            if let otherwise { text += " ELSE \(self.expression(otherwise))" }
            return text + " END"
        case .coalesce(let terms):
            return "COALESCE(" + terms.map { self.expression($0) }.joined(separator: ", ") + ")"
        case .plus(let left, let right):
            return "(\(self.expression(left)) + \(self.expression(right)))"
        case .blobConcat(let left, let right):
            let first = self.expression(left)
            return dialect.blobConcat(first, self.expression(right))
        case .blobSlice(let operand, let from, let length):
            return dialect.blobSlice(self.expression(operand), from: from, length: length)
        }
    }
}

extension SQLDialect {
    /// No listing: the computed names are used.
    package var joinTableColumnsQuery: String? { nil }

    /// The SQL standard's `information_schema.columns`.
    package var tableColumnsQuery: String { "SELECT table_name, column_name FROM information_schema.columns" }

    /// Binary values are stored as they are.
    package var marksExternalBinaryData: Bool { false }

    /// The SQL-standard `||`.
    package func blobConcat(_ left: String, _ right: String) -> String { "(\(left) || \(right))" }

    /// The SQL-standard `SUBSTRING`.
    package func blobSlice(_ operand: String, from: Int, length: Int?) -> String {
        "SUBSTRING(\(operand) FROM \(from)" + (length.map { " FOR \($0)" } ?? "") + ")"
    }
}
