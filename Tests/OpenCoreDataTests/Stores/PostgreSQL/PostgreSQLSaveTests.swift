import CoreData
import Foundation
import OpenCoreDataSQL
import Testing

@testable import OpenCoreDataPostgres

/// Keys and saves of one object on a PostgreSQL store, where keys are reserved ahead in blocks
/// and a save of one new object is a single statement. An object ID "uniquely identifies the same
/// managed object both between managed object contexts in a single application, and in multiple
/// applications" (NSManagedObjectID reference), and a save either succeeds or fails as a whole
/// (Core Data Programming Guide, "Saving"): a key is never handed out twice, whichever
/// coordinator or failed save held it, and a refused save of one object keeps nothing.
@Suite("PostgreSQL store: keys and one-object saves", .enabled(if: PostgresTestServer.runsTests))
struct PostgreSQLSaveTests {
    /// The test's coordinators, kept alive with their stores.
    let coordinators = Collector<NSPersistentStoreCoordinator>()

    func context(_ url: URL) throws -> NSManagedObjectContext {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
        coordinators.append(coordinator)
        try coordinator.addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil, at: url)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// `Z_MAX` of the department entity's row in `Z_PRIMARYKEY`, and the largest `Z_PK` of its table.
    func keys(schema: String) throws -> (maximum: Int64, largest: Int64) {
        let maximum = try PostgresTestServer.run(
            "SELECT \"Z_MAX\" FROM \"\(schema)\".\"Z_PRIMARYKEY\" WHERE \"Z_NAME\" = 'Department'")
        let largest = try PostgresTestServer.run("SELECT max(\"Z_PK\") FROM \"\(schema)\".\"ZDEPARTMENT\"")
        return (maximum, largest)
    }

    @Test("two coordinators saving one object at a time, and several at once, never get the same key")
    func keysAreNeverHandedOutTwice() throws {
        let schema = PostgresTestServer.uniqueSchema("keys")
        let url = PostgresTestServer.url(schema: schema)
        let first = try context(url)
        let second = try context(url)
        var ids: [NSManagedObjectID] = []
        for round in 0..<70 {
            for (index, context) in [first, second].enumerated() {
                let department = context.department("d\(round)-\(index)")
                try context.save()
                ids.append(department.objectID)
            }
        }
        let several = (0..<5).map { first.department("batch \($0)") }
        try first.save()
        ids += several.map(\.objectID)
        #expect(ids.allSatisfy { !$0.isTemporaryID })
        #expect(Set(ids).count == ids.count, "every object has a key of its own")
        let count = try first.count(for: NSFetchRequest<NSManagedObject>(entityName: "Department"))
        #expect(count == 145)
        // Z_MAX covers every key handed out, so a later reservation (this process or Apple's
        // layout's next writer) starts past them.
        let (maximum, largest) = try keys(schema: schema)
        #expect(maximum >= largest && largest > 0, "Z_MAX \(maximum), largest key \(largest)")
    }

    @Test("a save of one new object the server refuses keeps nothing, and saves once the value is fixed")
    func aRefusedSaveOfOneObjectKeepsNothing() throws {
        let schema = PostgresTestServer.uniqueSchema("refused")
        let url = PostgresTestServer.url(schema: schema)
        let context = try context(url)
        context.department("first")
        try context.save()
        // A rule of the server's own, which the model does not know.
        _ = try PostgresTestServer.run(
            "ALTER TABLE \"\(schema)\".\"ZDEPARTMENT\" ADD CONSTRAINT refused CHECK (\"ZNAME\" <> 'refused')")
        let refused = context.department("refused")
        #expect(throws: (any Error).self) { try context.save() }
        let request = NSFetchRequest<NSManagedObject>(entityName: "Department")
        #expect(try PostgresTestServer.run("SELECT count(*) FROM \"\(schema)\".\"ZDEPARTMENT\"") == 1)

        // Another coordinator saves in between: its key is not the one the refused save held.
        let other = try self.context(url)
        let between = other.department("between")
        try other.save()

        refused.setValue("accepted", forKey: "name")
        try context.save()
        #expect(refused.objectID != between.objectID)
        let names = try other.fetch(request).compactMap { $0.value(forKey: "name") as? String }
        #expect(Set(names) == ["first", "between", "accepted"])
    }
}
