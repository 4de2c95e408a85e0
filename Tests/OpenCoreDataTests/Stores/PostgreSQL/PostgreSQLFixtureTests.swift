import CoreData
import Foundation
import OpenCoreDataPostgres
import Testing

/// Apple-written SQLite stores copied into PostgreSQL and back ("a store can be copied
/// between SQLite and PostgreSQL with migratePersistentStore … both ways, losing nothing").
/// `migratePersistentStore(_:to:options:type:)` is Apple's documented way to change a store's type
/// (NSPersistentStoreCoordinator reference); the copy back is read by a new coordinator, so every
/// value comes out of PostgreSQL, and `coredata export` of the original and of the round trip must
/// be the same JSON — every object, attribute value, relationship and order.
@Suite("PostgreSQL store: Apple's fixture stores to PostgreSQL and back", .enabled(if: PostgresTestServer.runsTests))
struct PostgreSQLFixtureTests {
    let directory = TemporaryDirectory()

    @Test(arguments: FixtureStores.cases)
    func aFixtureStoreMakesTheRoundTripUnchanged(_ fixture: FixtureStores.Case) throws {
        guard let root = Fixtures.root() else { return }
        let original = try FixtureStores.copy(fixture.store, root: root, to: directory)
        let model = try NSManagedObjectModel(contentsOfStoreAt: original)
        let before = try Tool.run(["export", original.path])
        #expect(before.status == 0, "\(before.error)")

        let source = NSPersistentStoreCoordinator(managedObjectModel: model)
        let sqlite = try source.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: original,
            options: [NSReadOnlyPersistentStoreOption: true])
        let uuid = sqlite.identifier
        let url = PostgresTestServer.url(schema: PostgresTestServer.uniqueSchema("fixture"))
        let postgres = try source.migratePersistentStore(sqlite, to: url, options: nil, withType: NSPostgreSQLStoreType)
        #expect(postgres.type == NSPostgreSQLStoreType)
        #expect(postgres.identifier == uuid)

        let reader = NSPersistentStoreCoordinator(managedObjectModel: model)
        let stored = try reader.addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil, at: url)
        #expect(stored.identifier == uuid)
        let back = directory.file("back-" + original.lastPathComponent)
        _ = try reader.migratePersistentStore(stored, to: back, options: nil, withType: NSSQLiteStoreType)
        let after = try Tool.run(["export", back.path])
        #expect(after.status == 0, "\(after.error)")
        #expect(after.output == before.output)
        #expect(!before.output.isEmpty)
    }
}
