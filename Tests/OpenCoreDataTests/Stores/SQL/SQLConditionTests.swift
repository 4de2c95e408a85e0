import Foundation
import Logging
import Testing

@testable import OpenCoreData
@testable import OpenCoreDataSQL
@testable import OpenCoreDataSQLite

/// Core Data's predicates are two-valued — a comparison with no value is false, never unknown
/// (Predicate Programming Guide, "Using Null Values") — so the SQL tree wraps comparisons that
/// SQL could leave unknown in `falseIfNull`. Where the expression only selects rows (a `WHERE`, a
/// join's `ON`, and the `AND`/`OR` terms there) unknown already keeps no row, and the wrapper is
/// left out: the comparison stays bare, so SQLite can use an index on its column.
/// Under `NOT` the two differ, and the wrapper is written.
@Suite("SQL layer: conditions", .serialized)
struct SQLConditionTests {
    struct Dialect: SQLDialect {
        func quote(_ identifier: String) -> String { identifier }
        func placeholder(_ index: Int) -> String { "?" }
        func boolean(_ value: Bool) -> String { value ? "1" : "0" }
        func nullSafeComparison(negated: Bool) -> String { negated ? "IS NOT" : "IS" }
        func sum(_ operand: String, real: Bool) -> String { "SUM(\(operand))" }
        func average(_ operand: String) -> String { "AVG(\(operand))" }
        func window(limit: Int?, offset: Int, bind: (SQLValue) -> String) -> String { "" }
        func stringMatchParameter(
            _ type: OpenCoreData.NSComparisonPredicate.Operator, _ options: OpenCoreData.NSComparisonPredicate.Options,
            _ value: String
        ) -> SQLValue? { nil }
        func stringMatch(
            operator type: OpenCoreData.NSComparisonPredicate.Operator,
            options: OpenCoreData.NSComparisonPredicate.Options, _ lhs: String, _ rhs: String
        ) -> String { "" }
        func collation(forSelector selector: String) -> String? { nil }
        func columnType(_ type: SQLColumnType, length: Int?) -> String { "INTEGER" }
        func nullOrdering(descending: Bool) -> String { "" }
        var bytewiseCollation: String? { "BINARY" }
        func upsert(key: [String], columns: [String]) -> (verb: String, suffix: String) { ("INSERT", "") }
    }

    @Test("falseIfNull is left out where a term only selects rows, and kept under NOT")
    func wrapperOnlyUnderNot() {
        let age = SQLExpression.column("t0", "ZAGE")
        let atLeast = SQLExpression.falseIfNull(.compare(age, .greaterOrEqual, .parameter(.integer(30))))
        let under = SQLExpression.falseIfNull(.compare(age, .less, .parameter(.integer(60))))
        var select = SQLSelect(columns: [.column("t0", "Z_PK")], from: .table("ZPERSON", alias: "t0"))
        select.filter = .and([atLeast, .or([under, .not(atLeast)])])
        let (sql, parameters) = SQLWriter.write(select, dialect: Dialect())
        #expect(
            sql
                == "SELECT t0.Z_PK FROM ZPERSON t0 WHERE (t0.ZAGE >= ? AND (t0.ZAGE < ? OR NOT (COALESCE(t0.ZAGE >= ?, 0))))"
        )
        #expect(parameters == [.integer(30), .integer(60), .integer(30)])
    }

    @Test("a range on an indexed attribute is searched through its index, and NOT still counts rows without a value")
    func rangesUseIndexes() throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let person = NSEntityDescription()
        person.name = "Person"
        let age = CompanyModel.attribute("age", .integer64AttributeType)
        age.isIndexed = true
        person.properties = [age]
        let model = NSManagedObjectModel()
        model.entities = [person]
        let url = directory.file("Ranges.sqlite")
        let context = try sqliteStack(url, model: model)
        for value in [20, 40, 70, nil] as [Int?] {
            NSEntityDescription.insertNewObject(forEntityName: "Person", into: context).setValue(value, forKey: "age")
        }
        try context.save()
        // The statement the store runs for the range, with its two values written in, as SQLite plans it.
        let logged = try CapturedLog.sqlDebug(level: 1).capture { lines in
            let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
            request.predicate = OpenCoreData.NSPredicate(format: "age >= 30 AND age < 60")
            #expect(try context.fetch(request).count == 1)
            return try #require(
                lines.logged(on: pthread_self()).first { $0.hasPrefix("sql: SELECT") && $0.contains("ZAGE") })
        }
        #expect(!logged.contains("COALESCE"))
        var statement = String(logged.dropFirst("sql: ".count))
        for value in ["30", "60"] {
            if let range = statement.range(of: "?") { statement.replaceSubrange(range, with: value) }
        }
        let plan = try sqlite3(url, "EXPLAIN QUERY PLAN " + statement)
        #expect(plan.contains { $0.contains("SEARCH") && $0.contains("ZPERSON_ZAGE_INDEX") }, "\(plan)")
        func count(_ format: String) throws -> Int {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
            request.predicate = OpenCoreData.NSPredicate(format: format)
            return try context.count(for: request)
        }
        #expect(try count("age >= 30 AND age < 60") == 1)
        #expect(try count("age >= 30 OR age < 10") == 2)
        // The object without an age: `age >= 30` is false for it, so NOT makes it true.
        #expect(try count("NOT (age >= 30)") == 2)
        #expect(try count("NOT (age >= 30 AND age < 60)") == 3)
    }
}
