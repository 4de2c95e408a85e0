import Foundation
import Testing

/// The `coredata` tool on PostgreSQL stores, run as a user runs it (issue 27: a store copies
/// "between SQLite and PostgreSQL with migratePersistentStore and the coredata tool, both ways"):
/// an Apple-written SQLite store is converted into a PostgreSQL schema, read there with the model
/// cached in it (`export`, `query`, `info`), converted back to SQLite, and exports the same JSON.
@Suite("coredata tool: PostgreSQL stores", .enabled(if: PostgresTestServer.runsTests))
struct ToolPostgresTests {
    let directory = TemporaryDirectory()

    @Test func aStoreGoesToPostgreSQLAndBackUnchanged() throws {
        guard let root = Fixtures.root() else { return }
        let source = try FixtureStores.copy("ddg-bookmarks/Bookmarks_V5.sqlite", root: root, to: directory)
        let before = try Tool.run(["export", source.path])
        #expect(before.status == 0, "\(before.error)")
        let url = PostgresTestServer.url(schema: PostgresTestServer.uniqueSchema("tool")).absoluteString
        let toPostgres = try Tool.run(["convert", source.path, url, "--type", "postgres"])
        #expect(toPostgres.status == 0, "\(toPostgres.error)")
        #expect(toPostgres.output.contains("(SQLite) → \(url) (PostgreSQL)"))
        // The PostgreSQL store keeps its model: no --model needed.
        let exported = try Tool.run(["export", url])
        #expect(exported.status == 0, "\(exported.error)")
        #expect(exported.output == before.output)
        let count = try Tool.run(["query", url, "BookmarkEntity", "--count"])
        #expect(count.status == 0, "\(count.error)")
        #expect(Int(count.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 > 0, "\(count.output)")
        let info = try Tool.run(["info", url])
        #expect(info.status == 0, "\(info.error)")
        #expect(info.output.contains("PostgreSQL"), "\(info.output)")
        let back = directory.file("back.sqlite")
        let toSQLite = try Tool.run(["convert", url, back.path, "--type", "sqlite"])
        #expect(toSQLite.status == 0, "\(toSQLite.error)")
        let after = try Tool.run(["export", back.path])
        #expect(after.status == 0, "\(after.error)")
        #expect(after.output == before.output)
        // A schema that already holds a store is never converted over.
        let again = try Tool.run(["convert", source.path, url, "--type", "postgres"])
        #expect(again.status == 2 && again.error.contains("already holds a store"), "\(again.error)")
    }
}
