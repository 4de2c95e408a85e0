import Foundation
import Testing

@testable import OpenCoreData
@testable import OpenCoreDataSQLite

/// The SQL layer's seam (issue 20; ARCHITECTURE.md, "The SQL layer"): a fetch lowers to one tree,
/// and every spelling that differs between databases — placeholders, quoting, booleans, null-safe
/// equality, `LIMIT`/`OFFSET`, sums, string matching, collations — comes from the dialect. A
/// dialect that spells everything differently from SQLite must leave no SQLite spelling in the
/// text, and bind the same values in the same order.
@Suite("SQL layer: one tree, a dialect per database")
struct SQLDialectTests {
    /// A dialect unlike SQLite's in every answer (PostgreSQL's spellings where it has them).
    struct MarkedDialect: SQLDialect {
        func quote(_ identifier: String) -> String { "\"\(identifier)\"" }
        func placeholder(_ index: Int) -> String { "$\(index)" }
        func boolean(_ value: Bool) -> String { value ? "TRUE" : "FALSE" }
        func comparisonOperator(_ comparison: SQLComparison) -> String {
            switch comparison {
            case .equal: "="
            case .notEqual: "<>"
            case .less: "<"
            case .lessOrEqual: "<="
            case .greater: ">"
            case .greaterOrEqual: ">="
            case .same: "IS NOT DISTINCT FROM"
            case .notSame: "IS DISTINCT FROM"
            }
        }
        func aggregate(_ aggregate: SQLAggregate, _ operand: String?) -> String {
            let operand = operand ?? "*"
            switch aggregate {
            case .count: return "count(\(operand))"
            case .integerSum: return "coalesce(sum(\(operand)), 0)"
            case .realSum: return "coalesce(sum(\(operand)), 0.0)"
            case .average: return "avg(\(operand))"
            case .minimum: return "min(\(operand))"
            case .maximum: return "max(\(operand))"
            }
        }
        func window(limit: Int?, offset: Int, bind: (SQLValue) -> String) -> String {
            var text = ""
            if let limit { text += " LIMIT " + bind(.integer(Int64(limit))) }
            if offset > 0 { text += " OFFSET " + bind(.integer(Int64(offset))) }
            return text
        }
        func canMatchStrings(
            _ type: OpenCoreData.NSComparisonPredicate.Operator, _ options: OpenCoreData.NSComparisonPredicate.Options
        ) -> Bool {
            true
        }
        func stringMatch(
            operator type: OpenCoreData.NSComparisonPredicate.Operator,
            options: OpenCoreData.NSComparisonPredicate.Options, _ lhs: String,
            _ rhs: String
        ) -> String {
            "marked_match(\(lhs), \(rhs))"
        }
        func collation(forSelector selector: String) -> String? { "\"marked_\(selector.dropLast())\"" }
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
        let sqlite = SQLiteQuery(store: store, mapping: mapping, request: request)
        let marked = SQLiteQuery(store: store, mapping: mapping, request: request, dialect: MarkedDialect())
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
            "\"ZNAME\"", "LEFT JOIN \"ZDEPARTMENT\"", "EXISTS (SELECT 1 FROM", "count(*)",
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
        let query = SQLiteQuery(store: store, mapping: store.schema[try #require(request.entity)], request: request)
        #expect(query.select.sql.contains("NSCoreDataStringMatch(") && query.select.sql.contains(" IS ?"))
        #expect(query.select.sql.hasSuffix("LIMIT ? OFFSET ?"))
        #expect(query.select.parameters.suffix(2) == [.integer(5), .integer(2)])
        _ = try context.fetch(request)
        #expect(store.connection.statementsRun > 0)
        _ = try store.connection.prepare(query.select.sql)
    }
}
