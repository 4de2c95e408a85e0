import CoreData
import Foundation
import Testing

@testable import OpenCoreDataPostgres

/// Lightweight migration of PostgreSQL stores, in place and in one transaction ("schema
/// creation and lightweight migration in transactions"). Apple's documentation: "Migrating your
/// data model automatically" (`NSMigratePersistentStoresAutomaticallyOption` with
/// `NSInferMappingModelAutomaticallyOption`); Core Data Model Versioning and Data Migration
/// Programming Guide, "Lightweight Migration"; the migration error codes (134110, 134140). The
/// models are those of the SQLite store's `LightweightMigrationTests`.
@Suite("PostgreSQL store: lightweight migration", .enabled(if: PostgresTestServer.runsTests))
struct PostgreSQLMigrationTests {
    let directory = TemporaryDirectory()
    static var migrate: [AnyHashable: Any] { LightweightMigrationTests.migrate }

    func stack(_ url: URL, model: NSManagedObjectModel, options: [AnyHashable: Any]? = nil) throws
        -> NSManagedObjectContext
    {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(
            ofType: NSPostgreSQLStoreType, configurationName: nil, at: url, options: options)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// Whether the schema `schema` holds a table `name`.
    func hasTable(_ schema: String, _ name: String) throws -> Bool {
        try PostgresTestServer.run(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = $1 AND table_name = $2",
            [.text(schema), .text(name)]) == 1
    }

    @Test("renamed entities and attributes, removed and added entities, to-ones and to-manys carry over")
    func renamesAndRelationships() throws {
        let schema = PostgresTestServer.uniqueSchema("migrate")
        let url = PostgresTestServer.url(schema: schema)
        try LightweightMigrationTests.saveVersionOneObjects(
            into: stack(url, model: LightweightMigrationTests.model(version: 1)))
        let context = try stack(url, model: LightweightMigrationTests.model(version: 2), options: Self.migrate)
        try LightweightMigrationTests.expectMigratedObjects(in: context)
        #expect(try !hasTable(schema, "ZDRAFT"), "a removed entity's table is dropped")
        #expect(try hasTable(schema, "ZGARAGE"))
        #expect(try !hasTable(schema, "Z_MIGRATING_ZCAR"), "no staging table is left")
        // A new coordinator opens the migrated store without migrating: the cached model and the
        // metadata are the new version's.
        let reopened = try stack(url, model: LightweightMigrationTests.model(version: 2))
        #expect(try reopened.count(for: NSFetchRequest<NSManagedObject>(entityName: "Automobile")) == 3)
        let cached = try NSManagedObjectModel(contentsOfPostgreSQLStoreAt: url)
        #expect(cached.entitiesByName["Garage"] != nil && cached.entitiesByName["Draft"] == nil)
    }

    @Test("a migration that cannot run leaves the store exactly as it was, with Apple's error")
    func failuresLeaveTheStore() throws {
        let schema = PostgresTestServer.uniqueSchema("keep")
        let url = PostgresTestServer.url(schema: schema)
        do {
            let context = try stack(url, model: LightweightMigrationTests.model(version: 1))
            NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)  // no name
            try context.save()
        }
        /// The schema's tables and columns, and its metadata, as text.
        func layout() throws -> Int64 {
            try PostgresTestServer.run(
                """
                SELECT hashtext(string_agg(table_name || '.' || column_name || ':' || data_type, ',' ORDER BY table_name, column_name))
                FROM information_schema.columns WHERE table_schema = $1
                """, [.text(schema)])
        }
        func metadata() throws -> Int64 {
            try PostgresTestServer.run(
                "SELECT hashtext(encode(\"Z_PLIST\", 'hex')) FROM \"\(schema)\".\"Z_METADATA\"")
        }
        let original = (try layout(), try metadata())
        try LightweightMigrationTests.expectRefusals { model, options in
            _ = try stack(url, model: model, options: options)
        }
        // A statement that fails half-way (a table the plan creates already exists): 134110, and
        // the tables the migration had already rebuilt are as they were.
        _ = try PostgresTestServer.run("CREATE TABLE \"\(schema)\".\"ZGARAGE\" (\"Z_PK\" BIGINT)")
        let failed = #expect(throws: NSError.self) {
            try stack(url, model: LightweightMigrationTests.model(version: 2), options: Self.migrate)
        }
        #expect(failed?.code == NSMigrationError)
        _ = try PostgresTestServer.run("DROP TABLE \"\(schema)\".\"ZGARAGE\"")
        #expect(try layout() == original.0, "no table or column changed")
        #expect(try metadata() == original.1, "the metadata is as it was")
        #expect(
            try stack(url, model: LightweightMigrationTests.model(version: 1)).count(
                for: NSFetchRequest<NSManagedObject>(entityName: "Person")) == 1)
    }

    @Test("coordinators opening an old store with a new model at once: one migrates, the others find it migrated")
    func concurrentOpens() throws {
        let url = PostgresTestServer.url(schema: PostgresTestServer.uniqueSchema("concurrent"))
        do {
            let context = try stack(url, model: LightweightMigrationTests.model(version: 1))
            NSEntityDescription.insertNewObject(forEntityName: "Person", into: context).setValue("Ada", forKey: "name")
            try context.save()
        }
        let failures = LockedIDs()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            do {
                let context = try stack(url, model: LightweightMigrationTests.model(version: 2), options: Self.migrate)
                let people = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
                if people.count != 1 || (people.first?.value(forKey: "age") as? NSNumber)?.intValue != 7 {
                    failures.fail("\(people.count) people after the migration")
                }
            } catch {
                failures.fail("\(error)")
            }
        }
        #expect(failures.failure == nil)
    }

    @Test(
        "a to-one that became a to-many moves into a join table, the inverse's order kept (DuckDuckGo's bookmarks, copied into PostgreSQL)",
        arguments: 1...3)
    func toOneBecomesManyToMany(_ version: Int) throws {
        guard let (original, writer, current) = try LightweightMigrationTests.bookmarksFixture(version, in: directory)
        else { return }
        let source = NSPersistentStoreCoordinator(managedObjectModel: writer)
        let sqlite = try source.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: original,
            options: [NSReadOnlyPersistentStoreOption: true])
        let before = try LightweightMigrationTests.bookmarks(try sqliteStack(original, model: writer))
        #expect(before.values.contains { !$0.folders.isEmpty } && before.values.contains { !$0.favorites.isEmpty })
        let schema = PostgresTestServer.uniqueSchema("bookmarks")
        let url = PostgresTestServer.url(schema: schema)
        _ = try source.migratePersistentStore(sqlite, to: url, options: nil, withType: NSPostgreSQLStoreType)
        let after = try LightweightMigrationTests.bookmarks(try stack(url, model: current, options: Self.migrate))
        #expect(after == before)
        #expect(try hasTable(schema, "Z_1FAVORITES"))
    }

    /// Staged migration of a PostgreSQL store (NSStagedMigrationManager): each lightweight step
    /// runs in place, from the model the store keeps, as a SQLite store's do — the store is never
    /// copied and replaced. A custom stage from version 1 to 2 whose did-migrate handler fills the
    /// new attribute, then a lightweight stage listing only version 3 (Apple's lightweight stages
    /// "supplement your custom migration stages").
    @Test("a PostgreSQL store moves through staged migration in place: a custom stage, then a lightweight one")
    func stagedMigration() throws {
        let v1 = CompanyModel.make()
        let v2 = CompanyModel.make()
        v2.entitiesByName["Employee"]?.properties.append(CompanyModel.attribute("title", .stringAttributeType))
        let v3 = CompanyModel.make()
        v3.entitiesByName["Employee"]?.properties += [
            CompanyModel.attribute("title", .stringAttributeType),
            CompanyModel.attribute("level", .integer64AttributeType),
        ]
        let url = PostgresTestServer.url(schema: PostgresTestServer.uniqueSchema("staged"))
        do {
            let context = try stack(url, model: v1)
            context.employee("Ada")
            try context.save()
        }
        let custom = NSCustomMigrationStage(
            migratingFrom: NSManagedObjectModelReference(model: v1, versionChecksum: v1.versionChecksum),
            to: NSManagedObjectModelReference(model: v2, versionChecksum: v2.versionChecksum))
        custom.didMigrateHandler = { manager, _ in
            let context = try #require(manager.container).newBackgroundContext()
            try context.performAndWait {
                for employee in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee")) {
                    employee.setValue("migrated", forKey: "title")
                }
                try context.save()
            }
        }
        let manager = NSStagedMigrationManager([custom, NSLightweightMigrationStage([v3.versionChecksum])])
        let context = try stack(url, model: v3, options: [NSPersistentStoreStagedMigrationManagerOptionKey: manager])
        let ada = try #require(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee")).first)
        #expect(ada.value(forKey: "name") as? String == "Ada")
        #expect(ada.value(forKey: "title") as? String == "migrated")
        #expect(ada.value(forKey: "level") == nil)
        let cached = try NSManagedObjectModel(contentsOfPostgreSQLStoreAt: url)
        #expect(cached.entityVersionHashesByName == v3.entityVersionHashesByName)
    }
}

/// The PostgreSQL store reads a store's own join-table names as the SQLite store does
/// (`AppleJoinTableNameTests`): a store an earlier version wrote, with one column name in two
/// join tables where a new store now gives the second a digit, still reads and saves.
@Suite("PostgreSQL store: a store's own join-table names", .enabled(if: PostgresTestServer.runsTests))
struct PostgreSQLJoinTableNameTests {
    @Test("a store with Z_4USERS in both join tables reads every relationship and saves through its names")
    func earlierNames() throws {
        let schema = PostgresTestServer.uniqueSchema("joins")
        let url = PostgresTestServer.url(schema: schema)
        func stack() throws -> NSManagedObjectContext {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: AppleJoinTableNameTests.model())
            try coordinator.addPersistentStore(
                ofType: NSPostgreSQLStoreType, configurationName: nil, at: url, options: nil)
            let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            return context
        }
        do {
            let context = try stack()
            let user = NSEntityDescription.insertNewObject(forEntityName: "User", into: context)
            user.setValue("second", forKey: "name")
            let message = NSEntityDescription.insertNewObject(forEntityName: "SystemMessage", into: context)
            message.mutableSetValue(forKey: "users").add(user)
            try context.save()
        }
        let columns = try PostgresTestServer.run(
            "SELECT count(*) FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'Z_2USERS' "
                + "AND column_name = 'Z_4USERS1'", [.text(schema)])
        #expect(columns == 1, "a new store gives the second pair's column a digit")
        _ = try PostgresTestServer.run("ALTER TABLE \(schema).\"Z_2USERS\" RENAME COLUMN \"Z_4USERS1\" TO \"Z_4USERS\"")
        let context = try stack()
        let message = try #require(
            try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "SystemMessage")).first)
        #expect(message.mutableSetValue(forKey: "users").count == 1)
        let user = try #require(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "User")).first)
        #expect(user.mutableSetValue(forKey: "systemMessages").count == 1)
        message.mutableSetValue(forKey: "users").removeAllObjects()
        try context.save()
        #expect(try PostgresTestServer.run("SELECT count(*) FROM \(schema).\"Z_2USERS\"") == 0)
    }
}
