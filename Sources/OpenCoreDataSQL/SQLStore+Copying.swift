import OpenCoreData

/// Copying an SQL store's tables from one database to another, for `replacePersistentStore` and
/// `migratePersistentStore` between two stores of one SQL type: the layout the source's cached
/// model gives, every row as it is.
extension SQLStore {
    /// Every table of `schema`'s layout: the entities' tables, the join tables and the
    /// bookkeeping tables.
    package static func tableNames(of schema: SQLSchema) -> [String] {
        schema.tables.map(\.name) + schema.joinTables.map(\.name) + ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"]
    }

    /// The layout of the store on `link`, from its cached model and entity numbers; `nil` when
    /// the database holds no store.
    ///
    /// - Throws: `NSPersistentStoreOperationError` (134070) when the store's cached model cannot
    ///   be read; the database's error.
    package static func storedSchema(on link: some SQLRowRunner, dialect: any SQLDialect) throws -> SQLSchema? {
        guard try link.hasTable("Z_METADATA") else { return nil }
        guard let model = cachedModel(on: link, dialect: dialect) else {
            throw CoreDataError.make(NSPersistentStoreOperationError, "The store's cached model cannot be read.")
        }
        return SQLSchema(
            model: model, numbers: try SQLMigrationPlan.entityNumbers(on: link, dialect),
            joinTables: try SQLMigrationPlan.joinTables(on: link, dialect))
    }

    /// Creates `schema`'s tables on `target` and copies into them the rows of the same tables on
    /// `source`, inside the callers' transactions (the source read in one snapshot).
    ///
    /// - Throws: the database's error.
    package static func copyTables(
        of schema: SQLSchema, from source: some SQLRowRunner, to target: some SQLRowRunner, dialect: any SQLDialect
    ) throws {
        for statement in schema.createStatements() + SQLBookkeeping.createTables {
            try target.change(SQLWriter.write(statement, dialect: dialect).sql, [])
        }
        var columns: [String: [String]] = [:]
        for row in try source.select(dialect.tableColumnsQuery, []) {
            guard row.count == 2, case .text(let table) = row[0], case .text(let column) = row[1] else { continue }
            columns[table, default: []].append(column)
        }
        for table in tableNames(of: schema) {
            guard let names = columns[table], !names.isEmpty else { continue }
            // Identifiers from the store's own catalog, quoted; every value is bound.
            let list = names.map(dialect.quote).joined(separator: ", ")
            let insert =
                "INSERT INTO \(dialect.quote(table)) (\(list)) VALUES ("
                + (1...names.count).map(dialect.placeholder).joined(separator: ", ") + ")"
            for row in try source.select("SELECT \(list) FROM \(dialect.quote(table))", []) {
                try target.change(insert, row)
            }
        }
    }
}
