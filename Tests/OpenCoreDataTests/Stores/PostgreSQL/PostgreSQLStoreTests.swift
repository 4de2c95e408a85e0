import CoreData
import Foundation
import OpenCoreDataSQL
import Testing

@testable import OpenCoreDataPostgres

/// Opening PostgreSQL stores: where the URL and options say, with Cocoa errors — never a crash —
/// for a server that is not there, a URL that is not PostgreSQL's, a model the store was not
/// written with, and a read-only open of nothing (NSPersistentStoreCoordinator
/// `addPersistentStore(ofType:configurationName:at:options:)`: "If an error occurs, upon return
/// contains an instance of NSError"; Apple's codes 134080 and 134100).
@Suite("PostgreSQL store: opening", .enabled(if: PostgresTestServer.runsTests))
struct PostgreSQLStoreTests {
    /// The test's coordinators, kept alive with their stores.
    let coordinators = Collector<NSPersistentStoreCoordinator>()

    func add(_ url: URL?, model: NSManagedObjectModel = CompanyModel.make(), options: [AnyHashable: Any]? = nil)
        throws -> NSPersistentStore
    {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        coordinators.append(coordinator)
        return try coordinator.addPersistentStore(
            ofType: NSPostgreSQLStoreType, configurationName: nil, at: url, options: options)
    }

    func code(_ body: () throws -> Void) -> Int? {
        do {
            try body()
            return nil
        } catch {
            return (error as NSError).domain == NSCocoaErrorDomain ? (error as NSError).code : -1
        }
    }

    @Test func aServerThatIsNotThereIsAnOpenError() throws {
        let closedPort = URL(string: "postgres://postgres@127.0.0.1:1/postgres?connect_timeout=2")!
        #expect(code { _ = try add(closedPort) } == NSPersistentStoreOpenError)
    }

    @Test func aURLThatIsNotPostgreSQLsIsAnOpenError() throws {
        #expect(code { _ = try add(URL(fileURLWithPath: "/tmp/x.sqlite")) } == NSPersistentStoreOpenError)
        #expect(code { _ = try add(nil) } == NSPersistentStoreOpenError)
        let badTLS = PostgresTestServer.url(schema: "x").absoluteString + "&sslmode=sometimes"
        #expect(code { _ = try add(URL(string: badTLS)!) } == NSPersistentStoreOpenError)
    }

    @Test func theSchemaOptionAndTheURLsSchemaNameWhereTheTablesGo() throws {
        let schema = PostgresTestServer.uniqueSchema("option")
        let base = URL(string: PostgresTestServer.baseURL)!
        let store = try add(base, options: [PostgreSQLSchemaOption: schema])
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = store.persistentStoreCoordinator
        context.department("Sales")
        try context.save()
        // The same tables through the URL's schema item.
        let reader = try add(PostgresTestServer.url(schema: schema))
        #expect(reader.identifier == store.identifier)
        let count = try PostgresTestServer.run(
            "SELECT count(*) FROM pg_tables WHERE schemaname = $1 AND tablename = 'ZDEPARTMENT'", [.text(schema)])
        #expect(count == 1)
    }

    @Test func aModelOfAnotherVersionIsRefusedWith134100() throws {
        let url = PostgresTestServer.url(schema: PostgresTestServer.uniqueSchema("version"))
        _ = try add(url)
        let changed = CompanyModel.make()
        changed.entitiesByName["Department"]?.properties.append(CompanyModel.attribute("budget", .doubleAttributeType))
        #expect(code { _ = try add(url, model: changed) } == NSPersistentStoreIncompatibleVersionHashError)
    }

    /// Apple documents batch requests for SQLite stores only ("Batch updates are only available when
    /// you are using a SQLite persistent store", NSBatchUpdateRequest); a PostgreSQL store answers
    /// them as Apple's other stores do: 134091.
    @Test func batchRequestsAreUnsupportedAsOnAppleStoresOtherThanSQLite() throws {
        let context = try postgresStack("batch")
        context.employee("Ada")
        try context.save()
        let update = NSBatchUpdateRequest(entityName: "Employee")
        update.propertiesToUpdate = ["salary": 1.0]
        let delete = NSBatchDeleteRequest(fetchRequest: NSFetchRequest<NSFetchRequestResult>(entityName: "Employee"))
        let insert = NSBatchInsertRequest(entityName: "Employee", objects: [["name": "Grace"]])
        for request in [update, delete, insert] as [NSPersistentStoreRequest] {
            #expect(code { _ = try context.execute(request) } == NSPersistentStoreUnsupportedRequestTypeError)
        }
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Employee")) == 1)
    }

    /// Core Data's `LIKE` wildcards (`*`, `?`, a backslash escaping the next character; Predicate
    /// Programming Guide, "String Comparisons") become PostgreSQL's (`%`, `_`, backslash), its own
    /// wildcards escaped; a pattern with `?` stays in memory (one character may be several code
    /// points). The predicate table (`PredicateEquivalenceTests`) checks the answers against memory.
    @Test func likePatternsBecomePostgreSQLsOwn() {
        #expect(PostgreSQLDialect.likePattern("A*") == "A%")
        #expect(PostgreSQLDialect.likePattern("100%_x") == "100\\%\\_x")
        #expect(PostgreSQLDialect.likePattern("a\\*b") == "a\\*b")
        #expect(PostgreSQLDialect.likePattern("end\\") == "end\\\\")
        #expect(PostgreSQLDialect.likePattern("a?c") == nil)
        #expect(PostgreSQLDialect.likePattern("a\\?c") == "a\\?c")
        let dialect = PostgreSQLDialect()
        #expect(dialect.stringMatchParameter(.like, [], "A*") == .text("A%"))
        #expect(dialect.stringMatchParameter(.like, [.caseInsensitive], "A*") == nil)
        #expect(dialect.stringMatchParameter(.matches, [], "A.*") == nil)
    }

    /// A statement that fails inside a transaction aborts it, and PostgreSQL then answers `COMMIT`
    /// with `ROLLBACK` and no error. Even when the failure was set aside, the transaction must not
    /// report success: nothing of it was kept ("nothing already saved is ever lost", and nothing
    /// unsaved reported as saved).
    @Test func aCommitThePostgreSQLServerRolledBackIsAnError() throws {
        let schema = PostgresTestServer.uniqueSchema("rollback")
        let link = try PostgresLink.connect(
            try PostgresLocation(url: PostgresTestServer.url(schema: schema), options: nil))
        defer { link.close() }
        try link.query("CREATE SCHEMA \"\(schema)\"")
        try link.query("CREATE TABLE \"\(schema)\".t (x BIGINT)")
        #expect(
            code {
                try link.transaction {
                    try link.query("INSERT INTO \"\(schema)\".t VALUES (1)")
                    _ = try? link.query("SELECT 1 / 0")
                }
            } == NSPersistentStoreOperationError)
        #expect(try link.query("SELECT count(*) FROM \"\(schema)\".t").rows.first?.first == .integer(0))
        // The connection is usable again.
        _ = try link.transaction { try link.query("INSERT INTO \"\(schema)\".t VALUES (2)") }
        #expect(try link.query("SELECT count(*) FROM \"\(schema)\".t").rows.first?.first == .integer(1))
    }

    @Test func readOnlyOpensAStoreAndRefusesToCreateOne() throws {
        let url = PostgresTestServer.url(schema: PostgresTestServer.uniqueSchema("readonly"))
        #expect(
            code { _ = try add(url, options: [NSReadOnlyPersistentStoreOption: true]) } == NSPersistentStoreOpenError)
        _ = try add(url)
        let store = try add(url, options: [NSReadOnlyPersistentStoreOption: true])
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = store.persistentStoreCoordinator
        context.department("Ops")
        #expect(code { try context.save() } != nil)
    }
}
