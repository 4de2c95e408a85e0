import CoreData
import Foundation
import OpenCoreDataSQL
import Testing

@testable import OpenCoreDataPostgres

/// A read the store runs again is prepared on the server (PostgreSQL's named statements, "PREPARE":
/// parsed and planned once, run many times) and answers exactly what it answered unprepared: the
/// same rows for the same values of every type, the same errors, and when the server no longer
/// has the statement or its plan no longer fits the table, the rows all the same (NSManagedObjectContext
/// `fetch(_:)`: "returns an array of objects that meet the criteria specified by request" — a
/// fetch run twice answers the same, however the store runs it).
@Suite("PostgreSQL store: reads run again are prepared", .enabled(if: PostgresTestServer.runsTests))
struct PostgreSQLPreparedStatementTests {
    /// A connection whose unqualified names are those of a new schema holding `ITEM` (`ID`,
    /// `AMOUNT` bigint, `PRICE` numeric, `LABEL` text): ids 1…10, amount = id, price = id + 0.25.
    func link() throws -> (PostgresLink, String) {
        let schema = PostgresTestServer.uniqueSchema("prepared")
        let link = try PostgresLink.connect(
            try PostgresLocation(url: PostgresTestServer.url(schema: schema), options: nil))
        try link.query("CREATE SCHEMA \"\(schema)\"")
        try link.query("CREATE TABLE \"ITEM\" (\"ID\" BIGINT, \"AMOUNT\" BIGINT, \"PRICE\" NUMERIC, \"LABEL\" TEXT)")
        try link.query(
            "INSERT INTO \"ITEM\" SELECT n, n, n + 0.25, 'item ' || n FROM generate_series(1, 10) AS n")
        return (link, schema)
    }

    /// How many statements this connection has prepared (the query itself has no parameters, so
    /// it is never prepared).
    func preparedCount(_ link: PostgresLink) throws -> Int64 {
        guard case .integer(let count)? = try link.read("SELECT count(*) FROM pg_prepared_statements", []).first?.first
        else { return -1 }
        return count
    }

    func ids(_ rows: [[SQLValue]]) -> [Int64] {
        rows.compactMap { if case .integer(let id)? = $0.first { return id } else { return nil } }
    }

    /// The second run of a read prepares it, the runs after use it, and every run answers the same.
    @Test func aReadRunAgainIsPreparedAndAnswersTheSame() throws {
        let (link, _) = try link()
        defer { link.close() }
        let sql = "SELECT \"ID\" FROM \"ITEM\" WHERE \"LABEL\" = $1 OR \"AMOUNT\" > $2 ORDER BY \"ID\""
        var answers: [[Int64]] = []
        var counts: [Int64] = []
        for _ in 0..<4 {
            answers.append(ids(try link.read(sql, [.text("item 2"), .integer(8)])))
            counts.append(try preparedCount(link))
        }
        #expect(answers == Array(repeating: [2, 9, 10], count: 4))
        #expect(counts == [0, 1, 1, 1])
        // Rows given one at a time, as a fetch reads them, come from the same statement.
        var streamed: [Int64] = []
        try link.select(sql, [.text("item 2"), .integer(8)]) { row in
            if case .integer(let id) = row[0] { streamed.append(id) }
        }
        #expect(streamed == [2, 9, 10])
        #expect(try preparedCount(link) == 1)
    }

    /// A number compares as the type it is bound as, prepared or not: an integer column against a
    /// fractional value is a numeric comparison (a server left to infer the parameter's type from
    /// the column would refuse 2.5 as an integer), and a decimal bound as text is read as the
    /// column's `NUMERIC`.
    @Test func valuesOfEveryTypeCompareAsBound() throws {
        let (link, _) = try link()
        defer { link.close() }
        let byAmount = "SELECT \"ID\" FROM \"ITEM\" WHERE \"AMOUNT\" > $1 ORDER BY \"ID\""
        let byPrice = "SELECT \"ID\" FROM \"ITEM\" WHERE \"PRICE\" >= $1 ORDER BY \"ID\""
        let byLabel = "SELECT \"ID\" FROM \"ITEM\" WHERE \"LABEL\" = $1 OR $2::bytea = '\\x0102'::bytea ORDER BY \"ID\""
        for _ in 0..<3 {
            #expect(ids(try link.read(byAmount, [.integer(8)])) == [9, 10])
            #expect(ids(try link.read(byAmount, [.real(8.5)])) == [9, 10])
            #expect(ids(try link.read(byAmount, [.real(-.infinity)])) == Array(1...10))
            #expect(ids(try link.read(byPrice, [.text("9.25")])) == [9, 10])
            #expect(ids(try link.read(byLabel, [.text("item 3"), .blob([1, 3])])) == [3])
            #expect(ids(try link.read(byLabel, [.text("none"), .blob([1, 2])])) == Array(1...10))
            #expect(ids(try link.read(byAmount, [.null])).isEmpty)
        }
        // One statement for each text and the types its values were bound with: the amount's
        // three (an integer, a floating-point number, `NULL`) and the label's. The price's text
        // is read as the column's `NUMERIC` only unnamed, and stays so.
        #expect(try preparedCount(link) == 4)
    }

    /// The cells of a prepared statement's rows are read as the server sends them: integers,
    /// floating point, Booleans, decimals, text, bytes and `NULL`.
    @Test func preparedRowsReadEveryType() throws {
        let (link, _) = try link()
        defer { link.close() }
        let sql = """
            SELECT "AMOUNT", "AMOUNT"::int4, "AMOUNT"::int2, "AMOUNT" / 4.0::float8, "AMOUNT" > 1, "PRICE", "LABEL",
            convert_to("LABEL", 'UTF8'), NULL::text FROM "ITEM" WHERE "ID" = $1
            """
        for _ in 0..<3 {
            let row = try #require(try link.read(sql, [.integer(6)]).first)
            #expect(
                row == [
                    .integer(6), .integer(6), .integer(6), .real(1.5), .integer(1), .text("6.25"), .text("item 6"),
                    .blob(Array("item 6".utf8)), .null,
                ])
        }
        #expect(try preparedCount(link) == 1)
    }

    /// When the server has forgotten the connection's statements (a pooler that hands the
    /// connection's statements to another server process, or `DEALLOCATE ALL`), the read is run
    /// unprepared and answers the same, and the connection prepares nothing more.
    @Test func aForgottenStatementIsRunUnprepared() throws {
        let (link, _) = try link()
        defer { link.close() }
        let sql = "SELECT \"ID\" FROM \"ITEM\" WHERE \"AMOUNT\" <= $1 ORDER BY \"ID\""
        for _ in 0..<2 { #expect(ids(try link.read(sql, [.integer(2)])) == [1, 2]) }
        #expect(try preparedCount(link) == 1)
        try link.query("DEALLOCATE ALL")
        for _ in 0..<3 { #expect(ids(try link.read(sql, [.integer(2)])) == [1, 2]) }
        #expect(try preparedCount(link) == 0)
    }

    /// When a table changes under a prepared statement so that its rows would change type, the
    /// server refuses the prepared plan; the read is run unprepared and answers the new rows.
    @Test func aStatementWhosePlanNoLongerFitsIsRunUnprepared() throws {
        let (link, _) = try link()
        defer { link.close() }
        let sql = "SELECT \"ID\", \"AMOUNT\" FROM \"ITEM\" WHERE \"ID\" = $1"
        for _ in 0..<2 { #expect(try link.read(sql, [.integer(4)]) == [[.integer(4), .integer(4)]]) }
        try link.query("ALTER TABLE \"ITEM\" ALTER COLUMN \"AMOUNT\" TYPE TEXT")
        for _ in 0..<3 { #expect(try link.read(sql, [.integer(4)]) == [[.integer(4), .text("4")]]) }
    }

    /// The server's errors stay the statement's errors however often it runs: a value the
    /// column's type cannot read is refused at every run, a statement that fails is never
    /// prepared (so never answers differently later), and the connection goes on.
    @Test func errorsStayTheStatementsErrors() throws {
        let (link, _) = try link()
        defer { link.close() }
        let failing = "SELECT \"ID\" FROM \"ITEM\" WHERE \"AMOUNT\" = $1"
        #expect(ids(try link.read(failing, [.text("3")])) == [3])
        for _ in 0..<3 {
            let error = #expect(throws: NSError.self) { try link.read(failing, [.text("not a number")]) }
            #expect(error?.code == NSPersistentStoreOperationError)
            #expect(error?.userInfo[PostgresLink.sqlStateKey] as? String == "22P02")
        }
        #expect(ids(try link.read(failing, [.text("3")])) == [3])
        #expect(try preparedCount(link) == 0)
        // Text the server reads as a number unnamed fails or answers the same at every run:
        // prepared as text it would not add up, so it stays unnamed.
        let sum = "SELECT $1 + 1"
        for _ in 0..<3 {
            let error = #expect(throws: NSError.self) { try link.read(sum, [.text("x")]) }
            #expect(error?.userInfo[PostgresLink.sqlStateKey] as? String == "22P02")
            #expect(try link.read(sum, [.text("41")]) == [[.integer(42)]])
        }
        #expect(try preparedCount(link) == 0)
    }

    /// Inside a transaction nothing is prepared: a statement the server would not prepare would
    /// abort the whole transaction.
    @Test func nothingIsPreparedInsideATransaction() throws {
        let (link, _) = try link()
        defer { link.close() }
        let sql = "SELECT \"ID\" FROM \"ITEM\" WHERE \"AMOUNT\" = $1"
        let answers = try link.transaction {
            try (0..<3).map { _ in ids(try link.read(sql, [.integer(5)])) }
        }
        #expect(answers == [[5], [5], [5]])
        #expect(try preparedCount(link) == 0)
    }

    /// Through the store: a fetch run again is prepared on its connection, and answers the same
    /// objects as the first time.
    @Test func aFetchRunAgainAnswersTheSameObjects() throws {
        let context = try postgresStack("prepared_fetch")
        for index in 0..<20 {
            let employee = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: context)
            employee.setValue("employee \(index)", forKey: "name")
            employee.setValue(Double(index) * 1000, forKey: "salary")
        }
        try context.save()
        for round in 0..<4 {
            context.reset()
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.predicate = NSPredicate(
                format: "salary >= %@ AND name != %@", NSNumber(value: 15_500.5), "employee 18")
            request.sortDescriptors = [NSSortDescriptor(key: "salary", ascending: false)]
            let names = try context.fetch(request).map { $0.value(forKey: "name") as? String }
            #expect(names == ["employee 19", "employee 17", "employee 16"], "round \(round)")
        }
    }

    /// A save of one new object is one statement that commits on its own; saved again and again,
    /// it is prepared, and every value reaches the store as saved (NSManagedObjectContext
    /// `save()`: "Attempts to commit unsaved changes to registered objects to the context's parent
    /// store") — a decimal too, whose text the server reads as `NUMERIC` only unprepared.
    @Test func singleSavesArePreparedAndKeepEveryValue() throws {
        let model = gaugeModel([
            ("title", .stringAttributeType), ("amount", .decimalAttributeType), ("when", .dateAttributeType),
            ("data", .binaryDataAttributeType), ("flag", .booleanAttributeType), ("count", .integer64AttributeType),
        ])
        let context = try postgresStack("prepared_saves", model: model)
        func values(_ index: Int) -> [String: Any?] {
            // Every third object leaves its optional values nil.
            guard index % 3 != 2 else { return ["title": "entry \(index)"] }
            return [
                "title": "entry \(index)", "amount": NSDecimalNumber(string: "\(index).05"),
                "when": Date(timeIntervalSinceReferenceDate: Double(index) * 86_400.5),
                "data": Data([UInt8(index), 0, 255]), "flag": index % 2 == 0, "count": Int64(index) << 40,
            ]
        }
        for index in 0..<8 {
            let object = NSEntityDescription.insertNewObject(forEntityName: "Gauge", into: context)
            for (key, value) in values(index) { object.setValue(value, forKey: key) }
            try context.save()
        }
        let store = try #require(context.persistentStoreCoordinator?.persistentStores.first as? PostgreSQLStore)
        let writer = try #require(store.writer)
        guard
            case .integer(let prepared)? = try writer.read("SELECT count(*) FROM pg_prepared_statements", []).first?
                .first
        else { throw CocoaError(.coreData) }
        #expect(prepared >= 1)

        context.reset()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Gauge")
        request.sortDescriptors = [NSSortDescriptor(key: "title", ascending: true)]
        let saved = try context.fetch(request)
        #expect(saved.count == 8)
        for (index, object) in saved.enumerated() {
            let expected = values(index)
            #expect(object.value(forKey: "title") as? String == "entry \(index)")
            #expect(object.value(forKey: "amount") as? NSDecimalNumber == expected["amount"] as? NSDecimalNumber)
            #expect(object.value(forKey: "when") as? Date == expected["when"] as? Date)
            #expect(object.value(forKey: "data") as? Data == expected["data"] as? Data)
            #expect(object.value(forKey: "flag") as? Bool == expected["flag"] as? Bool)
            #expect(object.value(forKey: "count") as? Int64 == expected["count"] as? Int64)
        }
    }
}
