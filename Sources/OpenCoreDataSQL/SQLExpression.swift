import OpenCoreData

/// The SQL layer: a fetch lowers to a tree of ``SQLSelect`` and ``SQLExpression`` values that says
/// what to compute, never how a database spells it; ``SQLWriter`` turns the tree into text and
/// bound parameters by asking an ``SQLDialect`` for every difference between databases
/// (placeholders, quoting, booleans, null-safe equality, windows, string matching, collations).
/// The SQLite store is one dialect; a second SQL store adds a dialect, not a second translator.
///
/// Values never enter the text: every value from a request is a ``SQLExpression/parameter(_:)``.

/// A value bound to a statement parameter.
package enum SQLValue: Equatable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// One expression of a statement.
package indirect enum SQLExpression: Equatable, Sendable {
    /// A column, qualified by a table alias when one is given.
    case column(table: String?, name: String)
    /// An integer written into the statement: entity numbers and other values of the store's own
    /// layout, never a value from a request.
    case integer(Int64)
    /// A truth value.
    case boolean(Bool)
    /// A bound parameter.
    case parameter(SQLValue)
    /// A parameter the caller binds each time it runs the statement (one prepared statement
    /// for many rows); written as a placeholder, listed as `.null` among the parameters.
    case slot
    case not(SQLExpression)
    /// All of the terms (true when empty).
    case and([SQLExpression])
    /// Any of the terms (false when empty).
    case or([SQLExpression])
    case compare(SQLExpression, SQLComparison, SQLExpression)
    case isNotNull(SQLExpression)
    case inList(SQLExpression, [SQLExpression])
    case between(SQLExpression, low: SQLExpression, high: SQLExpression)
    /// The expression, with SQL's unknown (`NULL`) read as false: Core Data's two-valued logic.
    case falseIfNull(SQLExpression)
    case exists(SQLSelect)
    /// A scalar sub-select.
    case subquery(SQLSelect)
    case aggregate(SQLAggregate, SQLExpression?)
    /// A comparison predicate's string operator with its `[cdn]` options, as the in-memory rules
    /// judge it (``SQLDialect/stringMatch(operator:options:_:_:)``); never unknown.
    case stringMatch(
        operator: NSComparisonPredicate.Operator, options: NSComparisonPredicate.Options,
        SQLExpression, SQLExpression)
    /// `CASE operand WHEN … THEN … ELSE otherwise END`: the `then` of the first `when` equal to
    /// the operand (`NULL` when none is and there is no `otherwise`).
    case caseOf(SQLExpression, [SQLWhen], otherwise: SQLExpression?)
    /// The first of the expressions that is not `NULL`.
    case coalesce([SQLExpression])
    /// `left + right`: a row version incremented in place (`Z_OPT + 1`).
    case plus(SQLExpression, SQLExpression)
    /// Two blobs' bytes one after the other.
    case blobConcat(SQLExpression, SQLExpression)
    /// A blob's bytes from the 1-based position `from` on (`length` of them, or all the rest).
    case blobSlice(SQLExpression, from: Int, length: Int?)

    /// A column of the table with alias `table`.
    package static func column(_ table: String, _ name: String) -> SQLExpression { .column(table: table, name: name) }
}

/// One `WHEN value THEN result` of a ``SQLExpression/caseOf(_:_:otherwise:)``.
package struct SQLWhen: Equatable, Sendable {
    package let value: SQLExpression
    package let result: SQLExpression

    package init(_ value: SQLExpression, then result: SQLExpression) {
        self.value = value
        self.result = result
    }
}

/// A comparison operator. `.same` and `.notSame` compare `NULL` as a value: `NULL` is the same
/// as `NULL` and not the same as anything else, so they are never unknown.
package enum SQLComparison: Equatable, Sendable {
    case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual, same, notSame
}

/// An aggregate function.
package enum SQLAggregate: Equatable, Sendable {
    /// `COUNT(*)` without an operand, `COUNT(x)` with one.
    case count
    /// The integer sum, 0 over no rows.
    case integerSum
    /// The floating-point sum, 0.0 over no rows.
    case realSum
    case average, minimum, maximum
}

/// What a `SELECT` reads from: a table or a sub-select, named by an alias.
package indirect enum SQLSource: Equatable, Sendable {
    case table(String, alias: String)
    case select(SQLSelect, alias: String)
}

/// A `SELECT` statement, or a sub-select.
package struct SQLSelect: Equatable, Sendable {
    package typealias Source = SQLSource

    /// A joined table.
    package struct Join: Equatable, Sendable {
        package enum Kind: Equatable, Sendable { case inner, left }
        package let kind: Kind
        package let source: Source
        package let on: SQLExpression

        package init(kind: Kind, source: Source, on: SQLExpression) {
            self.kind = kind
            self.source = source
            self.on = on
        }
    }

    /// One `ORDER BY` term. `selector` names the Foundation sort selector strings are ordered by
    /// (``SQLDialect/collation(forSelector:)``); `nil` orders by the database's own order, which
    /// only numbers and dates use. `neverNull` marks a term no row can hold `NULL` in (a primary
    /// key, a join table's key column, an owner the filter names): it is written without the
    /// dialect's null ordering, which would keep PostgreSQL from reading the rows in the order of
    /// an index built in its default order — it sorted every row of the table instead.
    package struct Order: Equatable, Sendable {
        package let expression: SQLExpression
        package var selector: String?
        package var descending = false
        package var neverNull = false

        package init(
            expression: SQLExpression, selector: String? = nil, descending: Bool = false, neverNull: Bool = false
        ) {
            self.expression = expression
            self.selector = selector
            self.descending = descending
            self.neverNull = neverNull
        }

        /// The term of a key column, which holds no `NULL`, in ascending order.
        package static func key(_ expression: SQLExpression) -> Order { Order(expression: expression, neverNull: true) }
    }

    package var columns: [SQLExpression] = []
    var from: Source
    package var joins: [Join] = []
    package var filter: SQLExpression?
    package var groupBy: [SQLExpression] = []
    package var orderBy: [Order] = []
    /// At most this many rows; `nil` for no limit.
    package var limit: Int?
    /// Rows skipped before the first returned; 0 for none.
    package var offset = 0

    package init(
        columns: [SQLExpression] = [], from: Source, joins: [Join] = [], filter: SQLExpression? = nil,
        groupBy: [SQLExpression] = [], orderBy: [Order] = [], limit: Int? = nil, offset: Int = 0
    ) {
        self.columns = columns
        self.from = from
        self.joins = joins
        self.filter = filter
        self.groupBy = groupBy
        self.orderBy = orderBy
        self.limit = limit
        self.offset = offset
    }
}
