import CoreData
import Foundation
import Testing

/// The `coredata` tool on PostgreSQL stores, run as a user runs it through `coredata-postgres` (a store copies
/// "between SQLite and PostgreSQL with migratePersistentStore and the coredata tool, both ways"):
/// an Apple-written SQLite store is converted into a PostgreSQL schema, read there with the model
/// cached in it (`export`, `query`, `info`), converted back to SQLite, and exports the same JSON;
/// `import`, `check`, `migrate` and `history` take `postgres://` URLs as they take files.
@Suite("coredata tool: PostgreSQL stores", .enabled(if: PostgresTestServer.runsTests))
struct ToolPostgresTests {
    let directory = TemporaryDirectory()

    @Test func aStoreGoesToPostgreSQLAndBackUnchanged() throws {
        guard let root = Fixtures.root() else { return }
        let source = try FixtureStores.copy("ddg-bookmarks/Bookmarks_V5.sqlite", root: root, to: directory)
        let before = try Tool.runPostgres(["export", source.path])
        #expect(before.status == 0, "\(before.error)")
        let url = PostgresTestServer.url(schema: PostgresTestServer.uniqueSchema("tool")).absoluteString
        let toPostgres = try Tool.runPostgres(["convert", source.path, url, "--type", "postgres"])
        #expect(toPostgres.status == 0, "\(toPostgres.error)")
        #expect(toPostgres.output.contains("(SQLite) → \(url) (PostgreSQL)"))
        // The PostgreSQL store keeps its model: no --model needed.
        let exported = try Tool.runPostgres(["export", url])
        #expect(exported.status == 0, "\(exported.error)")
        #expect(exported.output == before.output)
        let count = try Tool.runPostgres(["query", url, "BookmarkEntity", "--count"])
        #expect(count.status == 0, "\(count.error)")
        #expect(Int(count.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 > 0, "\(count.output)")
        // A PostgreSQL store keeps its model, as the README says: `info` counts its entities
        // without --model, from the model cached in the store.
        let info = try Tool.runPostgres(["info", url])
        #expect(info.status == 0, "\(info.error)")
        #expect(info.output.contains("PostgreSQL"), "\(info.output)")
        #expect(info.output.contains("(from the model cached in the store)"), "\(info.output)")
        #expect(!info.output.contains("pass --model"), "\(info.output)")
        let back = directory.file("back.sqlite")
        let toSQLite = try Tool.runPostgres(["convert", url, back.path, "--type", "sqlite"])
        #expect(toSQLite.status == 0, "\(toSQLite.error)")
        let after = try Tool.runPostgres(["export", back.path])
        #expect(after.status == 0, "\(after.error)")
        #expect(after.output == before.output)
        // A schema that already holds a store is never converted over.
        let again = try Tool.runPostgres(["convert", source.path, url, "--type", "postgres"])
        #expect(again.status == 2 && again.error.contains("already holds a store"), "\(again.error)")
    }

    @Test("import, check, migrate and history take a postgres:// URL as they take a file")
    func theOtherCommands() throws {
        guard let root = Fixtures.root() else { return }
        let source = try FixtureStores.copy(
            "wibosco-migration/CoreDataMigration_Example_1.sqlite", root: root, to: directory)
        let export = try Tool.runPostgres(["export", source.path])
        #expect(export.status == 0, "\(export.error)")
        let file = directory.file("posts.json")
        try Data(export.output.utf8).write(to: file)
        let schema = PostgresTestServer.uniqueSchema("tooltypes")
        let url = PostgresTestServer.url(schema: schema).absoluteString

        // import: into a schema that holds no store yet, with the SQLite store's cached model.
        let imported = try Tool.runPostgres(["import", url, "--model", source.path, file.path])
        #expect(imported.status == 0, "\(imported.error)")
        #expect(imported.output.hasPrefix("imported "), "\(imported.output)")
        #expect(try Tool.runPostgres(["export", url]).output == export.output)

        // check: sound; then a Z_MAX below the keys is a finding (exit 1).
        let sound = try Tool.runPostgres(["check", url])
        #expect(sound.status == 0 && sound.output.contains("no problems found"), "\(sound.output)\(sound.error)")
        _ = try PostgresTestServer.run("UPDATE \"\(schema)\".\"Z_PRIMARYKEY\" SET \"Z_MAX\" = 0")
        let damaged = try Tool.runPostgres(["check", url])
        #expect(damaged.status == 1 && damaged.output.contains("is above Z_MAX 0"), "\(damaged.output)")
        _ = try PostgresTestServer.run("UPDATE \"\(schema)\".\"Z_PRIMARYKEY\" SET \"Z_MAX\" = 1000")

        // migrate: in place to version 2; a second run has nothing to do; a mapping model is refused.
        let models = root.appendingPathComponent("stores/wibosco-migration/CoreDataMigration_Example.xcdatamodeld")
        let version2 = models.appendingPathComponent("CoreDataMigration_Example 2.xcdatamodel")
        let migrated = try Tool.runPostgres(["migrate", url, "--model", version2.path])
        #expect(migrated.status == 0, "\(migrated.error)")
        #expect(migrated.output.contains("Store:              \(url)"))
        #expect(migrated.output.contains("Migrated:           in place"), "\(migrated.output)")
        let again = try Tool.runPostgres(["migrate", url, "--model", version2.path])
        #expect(again.status == 0 && again.output.contains("nothing to migrate"), "\(again.output)")
        let mapping = root.appendingPathComponent(MappingModelTests.sampleModel + "Fixtures/V2toV3.cdm")
        let refused = try Tool.runPostgres(["migrate", url, "--model", models.path, "--mapping", mapping.path])
        #expect(refused.status == 2 && refused.error.contains("in place only"), "\(refused.error)")
        #expect(try Tool.runPostgres(["check", url, "--model", version2.path]).status == 0)

        // history: what a store opened with NSPersistentHistoryTrackingKey recorded.
        let tracked = try postgresStack("toolhistory", options: [NSPersistentHistoryTrackingKey: true])
        tracked.transactionAuthor = "importer"
        tracked.employee("Ada")
        try tracked.save()
        let store = try #require(tracked.persistentStoreCoordinator?.persistentStores.first?.url)
        let history = try Tool.runPostgres(["history", store.absoluteString])
        #expect(history.status == 0, "\(history.error)")
        #expect(history.output.hasPrefix("#1  ") && history.output.contains("author importer"), "\(history.output)")
        #expect(history.output.contains("  insert ") && history.output.hasSuffix("(1 transaction)\n"))
    }
}

/// `coredata` links no PostgreSQL driver (so its first build compiles SQLite's stack only): given a
/// `postgres://` URL, every command says which executable reads it, with the usage status (2),
/// without trying a connection.
@Suite("coredata tool: without the PostgreSQL store")
struct ToolWithoutPostgresTests {
    @Test(arguments: [
        ["info", "postgres://app@127.0.0.1:1/db"], ["query", "postgres://app@127.0.0.1:1/db", "Item"],
        ["export", "postgresql://app@127.0.0.1:1/db"], ["check", "postgres://app@127.0.0.1:1/db"],
        ["convert", "/nonexistent.sqlite", "postgres://app@127.0.0.1:1/db", "--type", "postgres"],
    ])
    func aPostgresURLNamesTheExecutableThatReadsIt(arguments: [String]) throws {
        let result = try Tool.run(arguments)
        #expect(result.status == 2, "\(result.error)")
        #expect(result.error.contains("built without the PostgreSQL store"), "\(result.error)")
        #expect(result.error.contains("coredata-postgres"))
    }
}
