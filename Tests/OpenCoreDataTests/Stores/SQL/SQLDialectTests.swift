import Foundation
import Testing

@testable import OpenCoreData
@testable import OpenCoreDataPostgres
@testable import OpenCoreDataSQL
@testable import OpenCoreDataSQLite

/// The SQL layer's seam (ARCHITECTURE.md, "The SQL layer"): a fetch lowers to one tree,
/// and every spelling that differs between databases — placeholders, quoting, booleans, null-safe
/// equality, `LIMIT`/`OFFSET`, sums, string matching, collations — comes from the dialect. A
/// dialect that spells everything differently from SQLite must leave no SQLite spelling in the
/// text, and bind the same values in the same order.
@Suite("SQL layer: one tree, a dialect per database")
struct SQLDialectTests {
    /// A dialect unlike SQLite's in every answer: PostgreSQL's spellings, with marked string
    /// matching and collations so the test sees they come from the dialect.
    struct MarkedDialect: SQLDialect {
        let postgres = PostgreSQLDialect()
        func quote(_ identifier: String) -> String { postgres.quote(identifier) }
        func placeholder(_ index: Int) -> String { postgres.placeholder(index) }
        func boolean(_ value: Bool) -> String { postgres.boolean(value) }
        func nullSafeComparison(negated: Bool) -> String { postgres.nullSafeComparison(negated: negated) }
        func sum(_ operand: String, real: Bool) -> String { postgres.sum(operand, real: real) }
        func average(_ operand: String) -> String { postgres.average(operand) }
        func window(limit: Int?, offset: Int, bind: (SQLValue) -> String) -> String {
            postgres.window(limit: limit, offset: offset, bind: bind)
        }
        func stringMatchParameter(
            _ type: OpenCoreData.NSComparisonPredicate.Operator, _ options: OpenCoreData.NSComparisonPredicate.Options,
            _ value: String
        ) -> SQLValue? { .text(value) }
        func stringMatch(
            operator type: OpenCoreData.NSComparisonPredicate.Operator,
            options: OpenCoreData.NSComparisonPredicate.Options, _ lhs: String,
            _ rhs: String
        ) -> String {
            "marked_match(\(lhs), \(rhs))"
        }
        func collation(forSelector selector: String) -> String? { "\"marked_\(selector.dropLast())\"" }
        func columnType(_ type: SQLColumnType, length: Int?) -> String {
            postgres.columnType(type, length: length)
        }
        var bytewiseCollation: String? { "\"C\"" }
        func nullOrdering(descending: Bool) -> String { postgres.nullOrdering(descending: descending) }
        func upsert(key: [String], columns: [String]) -> (verb: String, suffix: String) {
            postgres.upsert(key: key, columns: columns)
        }
    }

    /// A fetch using every construct the translator lowers: comparisons with constants, `IN`,
    /// `BETWEEN`, `[cd]` strings, a to-one key path (a join), `ANY` and `@count` over to-manys,
    /// `NOT`, `OR`, `SELF`, sorts on a string and a number, and a window.
    private static func request(in model: NSManagedObjectModel) -> NSFetchRequest<NSFetchRequestResult> {
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Employee")
        request.entity = model.entitiesByName["Employee"]
        request.predicate = OpenCoreData.NSPredicate(
            format: """
                (salary > %@ AND salary BETWEEN {1, 9}) OR name BEGINSWITH[cd] %@ OR department.name == %@ \
                OR NOT (name IN {'a', 'b'}) OR ANY projects.title CONTAINS %@ OR directReports.@count > 2 \
                OR manager == nil
                """, NSNumber(value: 10), "é", "R&D", "x")
        request.sortDescriptors = [
            OpenCoreData.NSSortDescriptor(key: "name", ascending: true),
            OpenCoreData.NSSortDescriptor(key: "salary", ascending: false),
        ]
        request.fetchLimit = 5
        request.fetchOffset = 2
        return request
    }

    @Test func everyDatabaseDifferenceComesFromTheDialect() throws {
        let directory = TemporaryDirectory()
        let context = try sqliteStack(directory.url.appendingPathComponent("dialect.sqlite"))
        let coordinator = try #require(context.persistentStoreCoordinator)
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        let request = Self.request(in: coordinator.managedObjectModel)
        let mapping = store.schema[try #require(request.entity)]
        let sqlite = SQLQuery(schema: store.schema, mapping: mapping, request: request, dialect: SQLiteDialect())
        let marked = SQLQuery(schema: store.schema, mapping: mapping, request: request, dialect: MarkedDialect())
        #expect(sqlite.isComplete && marked.isComplete, "the whole request lowers to SQL")

        for (name, statement) in [("rows", marked.select), ("keys", marked.identifiers), ("count", marked.count)] {
            let sql = statement.sql
            for sqliteOnly in ["?", " IS $", " IS NOT $", "TOTAL(", "NSCoreData", "-1", ", 0)"] {
                #expect(!sql.contains(sqliteOnly), "\(name): \(sqliteOnly) in \(sql)")
            }
            // Placeholders are numbered in the order their values are bound.
            let numbers = sql.split(separator: "$").dropFirst().map { Int($0.prefix { $0.isNumber }) }
            #expect(numbers == Array(1...statement.parameters.count).map(Optional.some), "\(name): \(sql)")
        }
        let text = marked.select.sql
        for spelling in [
            "IS NOT DISTINCT FROM", "marked_match(", "COLLATE \"marked_compare\"", "LIMIT $", "OFFSET $",
            "\"ZNAME\"", "LEFT JOIN \"ZDEPARTMENT\"", "EXISTS (SELECT 1 FROM", "COUNT(*)",
        ] {
            #expect(text.contains(spelling), "\(spelling) missing from \(text)")
        }
        // The same values, in the same order, whatever the spelling.
        #expect(marked.select.parameters == sqlite.select.parameters)
        #expect(marked.count.parameters == sqlite.count.parameters)
        #expect(sqlite.select.parameters.contains(.text("é")))
    }

    /// SQLite's own spelling of the same tree is what the store runs; it answers as memory does
    /// (the predicate table of `SQLitePredicateTests` checks that broadly). Here: the statement the
    /// store prepares is the SQLite dialect's text.
    @Test func theSQLiteStoreRunsTheSQLiteDialect() throws {
        let directory = TemporaryDirectory()
        let context = try sqliteStack(directory.url.appendingPathComponent("dialect.sqlite"))
        let coordinator = try #require(context.persistentStoreCoordinator)
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        let request = Self.request(in: coordinator.managedObjectModel)
        let query = SQLQuery(
            schema: store.schema, mapping: store.schema[try #require(request.entity)], request: request,
            dialect: SQLiteDialect())
        #expect(query.select.sql.contains("NSCoreDataStringMatch(") && query.select.sql.contains(" IS ?"))
        #expect(query.select.sql.hasSuffix("LIMIT ? OFFSET ?"))
        #expect(query.select.parameters.suffix(2) == [.integer(5), .integer(2)])
        _ = try context.fetch(request)
        #expect(store.connection.statementsRun > 0)
        _ = try store.connection.prepare(query.select.sql)
    }

    /// Beside fetches, a store of Apple's layout reads rows by key, the members of to-manys and
    /// row versions, writes a save (rows, join-table pairs, order columns, keys, metadata) and
    /// creates its tables. Every one of those statements is a tree too: written in a dialect
    /// unlike SQLite's, none keeps a SQLite spelling (`?`, `INSERT OR REPLACE`, SQLite's type
    /// names, `COLLATE BINARY`), and each numbers its placeholders in order.
    @Test func everyStatementOfTheLayoutIsWrittenByTheDialect() throws {
        let directory = TemporaryDirectory()
        let context = try sqliteStack(directory.url.appendingPathComponent("statements.sqlite"), model: Self.model())
        let coordinator = try #require(context.persistentStoreCoordinator)
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        let schema = store.schema!
        let model = coordinator.managedObjectModel
        var statements = schema.createStatements() + SQLBookkeeping.createTables
        statements += [
            SQLBookkeeping.insertEntity, SQLBookkeeping.entities, SQLBookkeeping.keyMaximum,
            SQLBookkeeping.setKeyMaximum, SQLBookkeeping.metadata, SQLBookkeeping.metadataUUID,
            SQLBookkeeping.insertMetadata, SQLBookkeeping.updateMetadata, SQLBookkeeping.rewriteMetadata,
            SQLBookkeeping.insertModelCache, SQLBookkeeping.modelCache,
        ]
        var sawPair = false
        var sawMembers = 0
        for entity in model.entities {
            let mapping = schema[entity]
            let columns = mapping.table.columns.map(\.name)
            statements += [
                .select(schema.rowSelect(mapping.table, keys: 1)), .select(schema.rowSelect(mapping.table, keys: 8)),
                .select(schema.columnsSelect(["Z_OPT"], table: mapping.table.name)),
                schema.insertRow(mapping.table, columns: columns), schema.updateRow(mapping.table, columns: columns),
                schema.deleteRows(mapping.table.name),
            ]
            for storage in mapping.storage {
                guard let destinationEntity = storageDestination(storage, mapping) else { continue }
                let destination = schema[destinationEntity]
                if let keys = schema.memberKeysSelect(storage, destination: destination),
                    let rows = schema.memberRowsSelect(storage, destination: destination, owners: 8)
                {
                    statements += [.select(keys), .select(rows)]
                    sawMembers += 1
                }
                switch storage {
                case .toManyByInverse(let table, _, let order?):
                    statements.append(schema.updateOrder(table, column: order))
                case .join(let join, let source, let target, let order):
                    statements += [
                        schema.insertPair(join, source: source, target: target, order: order),
                        schema.deleteRows(join.name, where: source),
                    ]
                    sawPair = true
                default:
                    break
                }
            }
        }
        #expect(sawPair && sawMembers >= 2, "the test model has join tables and to-manys by inverse")
        let hasUnique = statements.contains {
            if case .createIndex(let index) = $0 { return index.isUnique }
            return false
        }
        #expect(hasUnique, "the test model has a uniqueness constraint")
        for statement in statements {
            let (sql, parameters) = SQLWriter.write(statement, dialect: MarkedDialect())
            for sqliteOnly in ["?", "OR REPLACE", "INTEGER", "VARCHAR", "BLOB", "FLOAT", "TIMESTAMP", "BINARY"] {
                #expect(!sql.contains(sqliteOnly), "\(sqliteOnly) in \(sql)")
            }
            let numbers = sql.split(separator: "$").dropFirst().map { Int($0.prefix { $0.isNumber }) }
            #expect(
                numbers == Array(1...max(1, parameters.count)).prefix(parameters.count).map(Optional.some), "\(sql)")
        }
        let pair = try #require(
            statements.lazy.map { SQLWriter.write($0, dialect: MarkedDialect()).sql }.first {
                $0.contains("ON CONFLICT")
            })
        #expect(pair.hasPrefix("INSERT INTO \"Z_"), "\(pair)")
    }

    /// The company model with a uniqueness constraint on a department's name.
    private static func model() -> NSManagedObjectModel {
        let model = CompanyModel.make()
        model.entitiesByName["Department"]?.uniquenessConstraints = [["name"]]
        return model
    }

    /// The destination entity of a to-many's storage, for the statement test.
    private func storageDestination(_ storage: SQLSchema.Storage, _ mapping: SQLSchema.Entity) -> NSEntityDescription? {
        guard
            let slot = mapping.storage.indices.first(where: { index in
                switch (mapping.storage[index], storage) {
                case (.toManyByInverse(let a, let b, _), .toManyByInverse(let c, let d, _)): return a == c && b == d
                case (.join(let a, let b, _, _), .join(let c, let d, _, _)): return a.name == c.name && b == d
                default: return false
                }
            })
        else { return nil }
        return mapping.entity.layout.relationship(at: slot).destinationEntity
    }

    /// SQLite's spelling of those statements is Apple's: the tables a new store gets are the ones
    /// Apple's Core Data writes (STORE-FORMAT.md) — `Z_PK INTEGER PRIMARY KEY`, `Z_UUID VARCHAR(255)`,
    /// join tables keyed by their pair, uniqueness constraints as `COLLATE BINARY ASC` indexes.
    @Test func theSQLiteSpellingOfTheLayoutIsApples() throws {
        let directory = TemporaryDirectory()
        let context = try sqliteStack(directory.url.appendingPathComponent("statements.sqlite"), model: Self.model())
        let store = try #require(context.persistentStoreCoordinator?.persistentStores.first as? SQLiteStore)
        let texts = (store.schema.createStatements() + SQLBookkeeping.createTables).map(SQLiteDialect.text)
        #expect(
            texts.contains(
                "CREATE TABLE Z_METADATA ( Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB )"))
        #expect(
            texts.contains(
                "CREATE TABLE Z_PRIMARYKEY ( Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER )"
            ))
        #expect(
            texts.contains {
                $0.hasPrefix("CREATE TABLE ZEMPLOYEE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER,")
            })
        #expect(texts.contains { $0.hasPrefix("CREATE UNIQUE INDEX") && $0.hasSuffix("COLLATE BINARY ASC)") })
        #expect(texts.contains { $0.hasPrefix("CREATE TABLE Z_") && $0.contains("PRIMARY KEY (Z_") })
        let stored = try store.connection.rows("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL").compactMap {
            if case .text(let sql)? = $0.first { return sql }
            return nil
        }
        #expect(Set(stored) == Set(texts), "the store runs the dialect's text")
    }
}
