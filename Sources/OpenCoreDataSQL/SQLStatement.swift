import OpenCoreData

/// The statements of the SQL layer beside a fetch's ``SQLSelect``: what a store of Apple's layout
/// runs to read rows by key, write a save and create its tables. Like a select, each says what to
/// do, never how a database spells it; ``SQLWriter`` asks the ``SQLDialect`` for every difference
/// (column types, the upsert of a join row, the byte-order collation of an index).
package enum SQLStatement: Equatable, Sendable {
    case select(SQLSelect)
    case insert(SQLInsert)
    /// `UPDATE table SET … WHERE filter`.
    case update(table: String, set: [SQLAssignment], filter: SQLExpression?)
    /// `DELETE FROM table WHERE filter`.
    case delete(table: String, filter: SQLExpression?)
    /// `UPDATE table AS alias SET … WHERE filter RETURNING …`: a batch update in one statement,
    /// the filter a fetch's (its columns qualified by `alias`), the keys of the rows changed back.
    case updateReturning(
        table: String, alias: String, set: [SQLAssignment], filter: SQLExpression?, returning: [SQLExpression])
    /// `DELETE FROM table AS alias WHERE filter RETURNING …`: a batch delete in one statement.
    case deleteReturning(table: String, alias: String, filter: SQLExpression?, returning: [SQLExpression])
    case createTable(SQLTableDefinition)
    case createIndex(SQLIndexDefinition)
    /// `INSERT INTO table (columns) SELECT …`: rows copied from another table (a migration).
    case insertSelect(table: String, columns: [String], select: SQLSelect)
    /// `ALTER TABLE table RENAME TO name`.
    case renameTable(String, to: String)
    /// `DROP TABLE table`.
    case dropTable(String)
    /// `DROP INDEX index`.
    case dropIndex(String)
}

/// An `INSERT` of one row.
package struct SQLInsert: Equatable, Sendable {
    package let table: String
    package let columns: [String]
    package let values: [SQLExpression]
    /// When set, a row already holding these key columns' values is replaced instead of the
    /// insert failing (``SQLDialect/upsert(key:columns:)``).
    package let replacingOnConflictOf: [String]?

    package init(table: String, columns: [String], values: [SQLExpression], replacingOnConflictOf: [String]? = nil) {
        self.table = table
        self.columns = columns
        self.values = values
        self.replacingOnConflictOf = replacingOnConflictOf
    }
}

/// One `column = value` of an `UPDATE`.
package struct SQLAssignment: Equatable, Sendable {
    package let column: String
    package let value: SQLExpression

    package init(_ column: String, _ value: SQLExpression) {
        self.column = column
        self.value = value
    }
}

/// The column types of Apple's store layout (STORE-FORMAT.md, "Types"); each dialect spells them.
package enum SQLColumnType: Equatable, Sendable {
    /// Integers of every width, Booleans, keys and entity numbers.
    case integer
    /// Double and Float attributes.
    case float
    case decimal
    /// Dates, as seconds since 2001-01-01.
    case timestamp
    /// Strings and URIs.
    case varchar
    /// Binary data, transformable values, UUIDs and URLs as archives or bytes.
    case blob
}

/// A `CREATE TABLE`.
package struct SQLTableDefinition: Equatable, Sendable {
    /// One column; at most one column of a table is its own primary key.
    package struct Column: Equatable, Sendable {
        package let name: String
        package let type: SQLColumnType
        /// A declared length (`VARCHAR(255)`), as Apple declares `Z_UUID`.
        package let length: Int?
        package let isPrimaryKey: Bool

        package init(_ name: String, _ type: SQLColumnType, length: Int? = nil, isPrimaryKey: Bool = false) {
            self.name = name
            self.type = type
            self.length = length
            self.isPrimaryKey = isPrimaryKey
        }
    }

    package let name: String
    package let columns: [Column]
    /// A primary key of several columns, written as a table constraint (empty: none).
    package let primaryKey: [String]

    package init(name: String, columns: [Column], primaryKey: [String] = []) {
        self.name = name
        self.columns = columns
        self.primaryKey = primaryKey
    }
}

/// A `CREATE [UNIQUE] INDEX`.
package struct SQLIndexDefinition: Equatable, Sendable {
    /// One indexed column. `order` set writes the column with the byte-order collation and its
    /// direction (as Apple writes uniqueness constraints and fetch indexes); `nil` writes the
    /// column alone.
    package struct Column: Equatable, Sendable {
        package enum Order: Equatable, Sendable { case ascending, descending }
        package let name: String
        package let order: Order?

        package init(_ name: String, order: Order? = nil) {
            self.name = name
            self.order = order
        }
    }

    package let name: String
    package let table: String
    package let columns: [Column]
    package let isUnique: Bool

    package init(name: String, table: String, columns: [Column], isUnique: Bool = false) {
        self.name = name
        self.table = table
        self.columns = columns
        self.isUnique = isUnique
    }
}

extension SQLWriter {
    /// The text and parameters of `statement`. A ``SQLExpression/slot`` is written as a
    /// placeholder and stands in `parameters` as `.null`, to be bound by the caller at each run.
    package static func write(_ statement: SQLStatement, dialect: any SQLDialect) -> (
        sql: String, parameters: [SQLValue]
    ) {
        var writer = SQLWriter(dialect: dialect)
        let sql = writer.statement(statement)
        return (sql, writer.parameters)
    }

    mutating func statement(_ statement: SQLStatement) -> String {
        let quote = dialect.quote
        switch statement {
        case .select(let select):
            return self.select(select)
        case .insert(let insert):
            let values = insert.values.map { expression($0) }.joined(separator: ", ")
            let columns = insert.columns.map(quote).joined(separator: ", ")
            let (verb, suffix) =
                insert.replacingOnConflictOf.map {
                    dialect.upsert(key: $0.map(quote), columns: insert.columns.map(quote))
                } ?? ("INSERT", "")
            return "\(verb) INTO \(quote(insert.table)) (\(columns)) VALUES (\(values))\(suffix)"
        case .update(let table, let assignments, let filter):
            let sets = assignments.map { "\(quote($0.column)) = \(expression($0.value))" }.joined(separator: ", ")
            return "UPDATE \(quote(table)) SET \(sets)" + (filter.map { " WHERE " + condition($0) } ?? "")
        case .delete(let table, let filter):
            return "DELETE FROM \(quote(table))" + (filter.map { " WHERE " + condition($0) } ?? "")
        case .updateReturning(let table, let alias, let assignments, let filter, let returning):
            let sets = assignments.map { "\(quote($0.column)) = \(expression($0.value))" }.joined(separator: ", ")
            return "UPDATE \(quote(table)) AS \(quote(alias)) SET \(sets)"
                + (filter.map { " WHERE " + condition($0) } ?? "")
                + " RETURNING " + returning.map { expression($0) }.joined(separator: ", ")
        case .deleteReturning(let table, let alias, let filter, let returning):
            return "DELETE FROM \(quote(table)) AS \(quote(alias))"
                + (filter.map { " WHERE " + condition($0) } ?? "")
                + " RETURNING " + returning.map { expression($0) }.joined(separator: ", ")
        case .createTable(let table):
            var parts = table.columns.map {
                "\(quote($0.name)) \(dialect.columnType($0.type, length: $0.length))"
                    + ($0.isPrimaryKey ? " PRIMARY KEY" : "")
            }
            if !table.primaryKey.isEmpty {
                parts.append("PRIMARY KEY (\(table.primaryKey.map(quote).joined(separator: ", ")))")
            }
            return "CREATE TABLE \(quote(table.name)) ( \(parts.joined(separator: ", ")) )"
        case .createIndex(let index):
            // Each column keeps `NULL` where a sort puts it (first ascending, last descending), so
            // a sort on the indexed columns, either way round, reads the index in order.
            let columns = index.columns.map { column -> String in
                guard let order = column.order else {
                    return quote(column.name) + dialect.nullOrdering(descending: false)
                }
                let direction = order == .ascending ? "ASC" : "DESC"
                return quote(column.name) + (dialect.bytewiseCollation.map { " COLLATE " + $0 } ?? "") + " " + direction
                    + dialect.nullOrdering(descending: order == .descending)
            }
            let kind = index.isUnique ? "CREATE UNIQUE INDEX" : "CREATE INDEX"
            return "\(kind) \(quote(index.name)) ON \(quote(index.table)) (\(columns.joined(separator: ", ")))"
        case .insertSelect(let table, let columns, let select):
            let list = columns.map(quote).joined(separator: ", ")
            return "INSERT INTO \(quote(table)) (\(list)) \(self.select(select))"
        case .renameTable(let table, let name):
            return "ALTER TABLE \(quote(table)) RENAME TO \(quote(name))"
        case .dropTable(let table):
            return "DROP TABLE \(quote(table))"
        case .dropIndex(let index):
            return "DROP INDEX \(quote(index))"
        }
    }
}
