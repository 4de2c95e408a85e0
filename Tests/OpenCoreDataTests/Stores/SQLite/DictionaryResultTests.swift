import Foundation
import Testing

@testable import OpenCoreData
@testable import OpenCoreDataSQL
@testable import OpenCoreDataSQLite

/// Dictionary results from the SQLite store run as one SQL statement and give the same rows as
/// the in-memory path. Related documentation: NSFetchRequest reference — `resultType`
/// (`.dictionaryResultType`), `propertiesToFetch` (attribute and relationship descriptions, key
/// paths, expression descriptions; relationships come back as object IDs), `propertiesToGroupBy`,
/// `havingPredicate`, `returnsDistinctResults`; NSExpressionDescription reference; Core Data
/// Programming Guide, "Fetching Specific Values" (aggregate functions such as `sum:` and `max:`).
@Suite("SQLite store: dictionary results in SQL", .serialized)
struct DictionaryResultTests {
    private static let twins = Result { try TwinStores() }

    private static func expression(_ name: String, _ function: String, _ keyPath: String) -> NSExpressionDescription {
        let description = NSExpressionDescription()
        description.name = name
        description.expression = NSExpression(forFunction: function, arguments: [NSExpression(forKeyPath: keyPath)])
        return description
    }

    /// One dictionary request: what it asks, and whether SQL can answer it in one statement.
    struct Case: CustomTestStringConvertible, Sendable {
        let label: String
        let inSQL: Bool
        /// Whether the sort descriptors give one order; otherwise rows compare as a set, since the
        /// in-memory store's order is unspecified.
        let ordered: Bool
        let make: @Sendable () -> NSFetchRequest<NSFetchRequestResult>
        var testDescription: String { label }

        init(
            _ label: String, inSQL: Bool = true, ordered: Bool = false,
            _ make: @escaping @Sendable (NSFetchRequest<NSFetchRequestResult>) -> Void
        ) {
            self.label = label
            self.inSQL = inSQL
            self.ordered = ordered
            self.make = {
                let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Employee")
                request.resultType = .dictionaryResultType
                make(request)
                return request
            }
        }
    }

    static let cases: [Case] = [
        Case("attributes, sorted by a number then a string (string order applied to the rows)", ordered: true) {
            $0.propertiesToFetch = ["name", "salary"]
            $0.sortDescriptors = [
                NSSortDescriptor(key: "salary", ascending: false), NSSortDescriptor(key: "name", ascending: true),
            ]
        },
        Case("every attribute when propertiesToFetch is nil", ordered: true) {
            $0.sortDescriptors = [
                NSSortDescriptor(key: "startDate", ascending: true), NSSortDescriptor(key: "salary", ascending: true),
            ]
        },
        Case("a to-one relationship comes back as an object ID", ordered: true) {
            $0.propertiesToFetch = ["name", "department", "manager"]
            $0.predicate = NSPredicate(format: "salary > 20")
            $0.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        },
        Case("key paths across to-ones, with a window", ordered: true) {
            $0.propertiesToFetch = ["name", "manager.name", "badge.number", "department.name"]
            $0.sortDescriptors = [
                NSSortDescriptor(key: "salary", ascending: true), NSSortDescriptor(key: "startDate", ascending: false),
            ]
            $0.fetchOffset = 3
            $0.fetchLimit = 8
        },
        Case("distinct values, first occurrence order") {
            $0.propertiesToFetch = ["department.name"]
            $0.returnsDistinctResults = true
        },
        Case("distinct values, sorted", ordered: true) {
            $0.propertiesToFetch = ["department.name"]
            $0.returnsDistinctResults = true
            $0.sortDescriptors = [NSSortDescriptor(key: "department.name", ascending: false)]
        },
        Case("group by a key path with every aggregate", ordered: true) {
            $0.propertiesToFetch = [
                "department.name", expression("total", "sum:", "salary"), expression("n", "count:", "salary"),
                expression("mean", "average:", "salary"), expression("low", "min:", "salary"),
                expression("high", "max:", "salary"), expression("first", "min:", "startDate"),
            ]
            $0.propertiesToGroupBy = ["department.name"]
            $0.sortDescriptors = [NSSortDescriptor(key: "department.name", ascending: true)]
        },
        Case("group by a to-one relationship") {
            $0.propertiesToFetch = ["department", expression("n", "count:", "name")]
            $0.propertiesToGroupBy = ["department"]
        },
        Case("having filters the groups") {
            $0.propertiesToFetch = ["department.name", expression("total", "sum:", "salary")]
            $0.propertiesToGroupBy = ["department.name"]
            $0.havingPredicate = NSPredicate(format: "total > 400")
        },
        Case("having names an expression's result as a variable, as Apple allows ($n > 1)") {
            $0.propertiesToFetch = ["department.name", expression("n", "count:", "name")]
            $0.propertiesToGroupBy = ["department.name"]
            $0.havingPredicate = NSPredicate(format: "$n > 1")
        },
        Case("groups sorted by a string key, with a limit", ordered: true) {
            $0.propertiesToFetch = ["manager.name", expression("total", "sum:", "salary")]
            $0.propertiesToGroupBy = ["manager.name"]
            $0.sortDescriptors = [NSSortDescriptor(key: "manager.name", ascending: false)]
            $0.fetchLimit = 3
        },
        Case("aggregates over the whole entity") {
            $0.propertiesToFetch = [
                expression("total", "sum:", "salary"), expression("n", "count:", "name"),
                expression("latest", "max:", "startDate"),
            ]
        },
        Case("aggregates over no rows") {
            $0.predicate = NSPredicate(format: "salary > 1000")
            $0.propertiesToFetch = [
                expression("total", "sum:", "salary"), expression("n", "count:", "name"),
                expression("high", "max:", "salary"),
            ]
        },
        Case("@count of a to-many as a column", ordered: true) {
            $0.propertiesToFetch = ["name", "projects.@count"]
            $0.predicate = NSPredicate(format: "department.name == 'Sales'")
            $0.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        },
        Case("the evaluated object as an expression description") {
            let description = NSExpressionDescription()
            description.name = "id"
            description.expression = NSExpression.expressionForEvaluatedObject()
            $0.propertiesToFetch = [description, "name"]
            $0.predicate = NSPredicate(format: "badge != nil")
        },
        Case("only the entity itself: includesSubentities = false") {
            $0.propertiesToFetch = ["department.name", expression("n", "count:", "name")]
            $0.propertiesToGroupBy = ["department.name"]
            $0.includesSubentities = false
        },
        Case("median is computed in memory", inSQL: false) {
            $0.propertiesToFetch = ["department.name", expression("middle", "median:", "salary")]
            $0.propertiesToGroupBy = ["department.name"]
        },
        Case("a predicate SQL cannot express runs in memory", inSQL: false) {
            $0.propertiesToFetch = ["name"]
            $0.predicate = NSPredicate(format: "salary > manager.salary")
        },
    ]

    /// Rows as comparable text: object IDs by entity and name, numbers as doubles, dates as seconds.
    private static func normalized(_ rows: [Any], _ context: NSManagedObjectContext) -> [String] {
        rows.map { row in
            let dictionary = (row as? NSDictionary) ?? [:]
            var parts: [String] = []
            for case let key as String in dictionary.allKeys {
                let value = dictionary[key]
                let text: String
                switch value {
                case let id as NSManagedObjectID:
                    let object = context.object(with: id)
                    let label = object.entity.attributesByName["name"] != nil ? "name" : "title"
                    text = "\(id.entity.name ?? "?"):\(object.value(forKey: label) ?? "?")"
                case let date as Date: text = "date \(date.timeIntervalSinceReferenceDate)"
                case let string as String: text = "'\(string)'"
                default:
                    text = DynamicValue.number(value as Any).map { "\($0.doubleValue)" } ?? "\(value ?? "nil")"
                }
                parts.append("\(key)=\(text)")
            }
            return parts.sorted().joined(separator: " ")
        }
    }

    @Test(arguments: cases)
    func sameRowsAsInMemory(_ testCase: Case) throws {
        let twins = try Self.twins.get()
        let store = try #require(twins.sqlite.persistentStoreCoordinator?.persistentStores.first as? SQLiteStore)
        var expected = Self.normalized(try twins.memory.fetch(testCase.make()), twins.memory)
        let before = store.connection.statementsRun
        let fetched = try twins.sqlite.fetch(testCase.make())
        let statements = store.connection.statementsRun - before
        var rows = Self.normalized(fetched, twins.sqlite)
        if !testCase.ordered {
            expected.sort()
            rows.sort()
        }
        #expect(rows == expected)
        #expect(!expected.isEmpty)
        if let postgres = twins.postgres {
            // The same plan in PostgreSQL's dialect gives the same rows.
            var postgresRows = Self.normalized(try postgres.fetch(testCase.make()), postgres)
            if !testCase.ordered { postgresRows.sort() }
            #expect(postgresRows == expected, "PostgreSQL")
        }
        let request = testCase.make()
        request.entity = twins.sqlite.persistentStoreCoordinator?.managedObjectModel.entitiesByName["Employee"]
        let plan = SQLQuery(
            schema: store.schema, mapping: store.schema[try #require(request.entity)], request: request,
            dialect: SQLiteDialect())
        #expect((plan.dictionary != nil) == testCase.inSQL)
        if testCase.inSQL { #expect(statements == 1, "one SQL statement answers the request") }
    }

    /// Apple leaves a key out of a result dictionary when its value is nil.
    @Test func nilValuesLeaveTheirKeyOut() throws {
        let twins = try Self.twins.get()
        let request = NSFetchRequest<NSDictionary>(entityName: "Employee")
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = ["name", "department.name"]
        request.predicate = NSPredicate(format: "department == nil")
        let rows = try twins.sqlite.fetch(request)
        #expect(!rows.isEmpty)
        #expect(rows.allSatisfy { $0["department.name"] == nil && $0["name"] is String })
    }

    /// Objects whose group-by key is nil form one group, in memory as in SQL (SQL `GROUP BY`
    /// treats nulls as one value).
    @Test func nilKeysFormOneGroup() throws {
        let twins = try Self.twins.get()
        for context in [twins.memory, twins.sqlite] {
            let request = NSFetchRequest<NSDictionary>(entityName: "Employee")
            request.resultType = .dictionaryResultType
            request.propertiesToFetch = ["department", Self.expression("n", "count:", "name")]
            request.propertiesToGroupBy = ["department"]
            let rows = try context.fetch(request)
            #expect(rows.count == 4)
            #expect(rows.filter { $0["department"] == nil }.map { $0["n"] as? Int } == [6])
        }
    }

    /// Aggregates come back as numbers of the attribute's kind: integer sums and counts as
    /// integers, double sums and averages as doubles, date extremes as dates.
    @Test func aggregateValueTypes() throws {
        let twins = try Self.twins.get()
        let request = NSFetchRequest<NSDictionary>(entityName: "Manager")
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = [
            Self.expression("budgets", "sum:", "budget"), Self.expression("n", "count:", "name"),
            Self.expression("mean", "average:", "salary"), Self.expression("first", "min:", "startDate"),
        ]
        let row = try #require(try twins.sqlite.fetch(request).first)
        #expect(row["budgets"] as? Int == 15)
        #expect(row["n"] as? Int == 5)
        #expect(row["mean"] is Double)
        #expect(row["first"] as? Date == Date(timeIntervalSinceReferenceDate: 0))
    }
}
