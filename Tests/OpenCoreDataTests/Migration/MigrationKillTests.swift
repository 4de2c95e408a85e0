import CoreData
import Foundation
import Testing

/// A process killed while it migrates a store leaves the store as it was or migrated, never in
/// between, and never unopenable. Core Data Model Versioning and Data Migration Programming Guide
/// ("Lightweight Migration": in situ, by SQL statements); "a migration that fails or is
/// killed half-way leaves the original store intact and openable".
@Suite("Killing a process that migrates")
struct MigrationKillTests {
    static let rows = 200_000

    /// `ConflictWriter migrate`'s model (the same definition as its `migratedBatchModel()`).
    static func migratedModel() -> NSManagedObjectModel {
        let model = KillTests.model()
        let entry = model.entities[0]
        entry.name = "Entry"
        entry.renamingIdentifier = "Item"
        let body = entry.properties.first { $0.name == "payload" }
        body?.name = "body"
        body?.renamingIdentifier = "payload"
        let flag = CompanyModel.attribute("flag", .booleanAttributeType, optional: false)
        flag.defaultValue = false
        entry.properties += [flag]
        return model
    }

    /// A store of the kill test's model holding `rows` items (inserted by `sqlite3` after one
    /// save, so building it takes no time).
    private static func makeStore(at url: URL) throws {
        let context = try sqliteStack(url, model: KillTests.model())
        let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
        item.setValue(Int64(0), forKey: "batch")
        item.setValue(Int64(0), forKey: "index")
        item.setValue("seed", forKey: "payload")
        try context.save()
        _ = try sqlite3Write(
            url,
            """
            WITH RECURSIVE n(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows))
            INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZBATCH, ZINDEX, ZPAYLOAD)
            SELECT i, 1, 1, i / 10, i % 10, 'payload ' || i FROM n;
            UPDATE Z_PRIMARYKEY SET Z_MAX = \(rows) WHERE Z_NAME = 'Item';
            """)
    }

    private func killedMigration(_ url: URL, after milliseconds: Int) throws -> Bool {
        try runConflictWriter(["migrate", url.path], killAfter: milliseconds).contains("migrated")
    }

    @Test func everyKillLeavesTheStoreWholeEitherBeforeOrAfterTheMigration() throws {
        let directory = TemporaryDirectory()
        let original = directory.file("Original.sqlite")
        try Self.makeStore(at: original)
        var generator = SystemRandomNumberGenerator()
        var before = 0
        var after = 0
        for trial in 0..<40 {
            let url = directory.file("Trial\(trial).sqlite")
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: original.path + suffix) {
                try FileManager.default.copyItem(atPath: original.path + suffix, toPath: url.path + suffix)
            }
            let reported = try killedMigration(url, after: Int.random(in: 20...600, using: &generator))
            // Either the old model opens it with every item…
            if let old = try? sqliteStack(url, model: KillTests.model()) {
                #expect(!reported, "trial \(trial): the migration said it finished, but the store is not migrated")
                #expect(try old.count(for: NSFetchRequest<NSManagedObject>(entityName: "Item")) == Self.rows)
                before += 1
                continue
            }
            // …or the new model opens it, migrated whole.
            let migrated = try #require(
                try? sqliteStack(url, model: Self.migratedModel()), "trial \(trial): the store opens with neither model"
            )
            #expect(try migrated.count(for: NSFetchRequest<NSManagedObject>(entityName: "Entry")) == Self.rows)
            #expect(try sqlite3(url, "SELECT COUNT(*) FROM ZENTRY WHERE ZBODY IS NULL OR ZFLAG IS NULL") == ["0"])
            #expect(try sqlite3(url, "SELECT ZBODY FROM ZENTRY WHERE Z_PK = 12345") == ["payload 12345"])
            after += 1
        }
        // Both outcomes were seen, so the kills landed before and after the commit.
        #expect(before > 0 && after > 0, "before: \(before), after: \(after)")
    }

    /// A fixture lineage's migration: the store, its type, the model it migrates to, and the
    /// files that go into the program's resources (model versions, mapping models).
    struct Lineage: CustomTestStringConvertible, Sendable {
        let name: String
        let store: String
        let type: String
        let model: String
        let resources: [String]
        var testDescription: String { name }
    }

    static let lineages = [
        Lineage(
            name: "wibosco 1 → 2, inferred, in place", store: "wibosco-migration/CoreDataMigration_Example_1.sqlite",
            type: NSSQLiteStoreType,
            model: "wibosco-migration/CoreDataMigration_Example.xcdatamodeld/CoreDataMigration_Example 2.xcdatamodel",
            resources: []),
        Lineage(
            name: "DuckDuckGo bookmarks V1 → 6, inferred, in place", store: "ddg-bookmarks/Bookmarks_V1.sqlite",
            type: NSSQLiteStoreType, model: "ddg-bookmarks/BookmarksModel.xcdatamodeld/BookmarksModel 6.xcdatamodel",
            resources: []),
        Lineage(
            name: "Moody 2 → 3, through its mapping model", store: "objcio-moody-migrations/stores/Moody 2.moody",
            type: NSSQLiteStoreType, model: "objcio-moody-migrations/Moody.xcdatamodeld/Moody 3.xcdatamodel",
            resources: [
                "objcio-moody-migrations/Moody.xcdatamodeld",
                "objcio-moody-migrations/mappings/Moody 2-Moody 3.xcmappingmodel",
            ]),
        Lineage(
            name: "wibosco 1 → 2 as an XML store, inferred, through the migration manager",
            store: "wibosco-migration/CoreDataMigration_Example_1.sqlite", type: NSXMLStoreType,
            model: "wibosco-migration/CoreDataMigration_Example.xcdatamodeld/CoreDataMigration_Example 2.xcdatamodel",
            resources: ["wibosco-migration/CoreDataMigration_Example.xcdatamodeld"]),
    ]

    /// Every object of every entity of the store at `url` opened with `model`, as sorted lines of
    /// its attribute values and relationship sizes.
    static func dump(_ url: URL, type: String, model: NSManagedObjectModel) throws -> [String] {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(
            ofType: type, configurationName: nil, at: url, options: [NSReadOnlyPersistentStoreOption: true])
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        var lines: [String] = []
        for entity in model.entities where !entity.isAbstract {
            let request = NSFetchRequest<NSManagedObject>(entityName: entity.name ?? "")
            request.includesSubentities = false
            for object in try context.fetch(request) {
                let values = entity.attributesByName.keys.sorted().map { "\($0)=\(object.value(forKey: $0) ?? "nil")" }
                let sizes = entity.relationshipsByName.keys.sorted().map { name -> String in
                    let value = object.value(forKey: name)
                    let size =
                        (value as? Set<NSManagedObject>)?.count ?? (value as? NSOrderedSet)?.count
                        ?? (value == nil ? 0 : 1)
                    return "\(name)#\(size)"
                }
                lines.append(([entity.name ?? ""] + values + sizes).joined(separator: " "))
            }
        }
        return lines.sorted()
    }

    @Test(
        "Every fixture lineage's migration, killed at any moment, leaves a store that then migrates whole",
        arguments: lineages)
    func killsDuringFixtureMigrations(lineage: Lineage) throws {
        guard let root = Fixtures.root() else { return }
        let directory = TemporaryDirectory()
        let stores = root.appendingPathComponent("stores")
        let resources = directory.file("Resources")
        try FileManager.default.createDirectory(at: resources, withIntermediateDirectories: true)
        for file in lineage.resources {
            let source = stores.appendingPathComponent(file)
            try FileManager.default.copyItem(at: source, to: resources.appendingPathComponent(source.lastPathComponent))
        }
        let model = try #require(NSManagedObjectModel(contentsOf: stores.appendingPathComponent(lineage.model)))
        // The store to migrate, in the lineage's type.
        var original = try FixtureStores.copy(lineage.store, root: root, to: directory)
        if lineage.type != NSSQLiteStoreType {
            let source = try NSManagedObjectModel(contentsOfStoreAt: original)
            let converter = NSPersistentStoreCoordinator(managedObjectModel: source)
            let store = try converter.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: original)
            let converted = directory.file("Original.\(lineage.type)")
            _ = try converter.migratePersistentStore(store, to: converted, options: nil, withType: lineage.type)
            original = converted
        }
        func copy(_ name: String) throws -> URL {
            let url = directory.file(name)
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: original.path + suffix) {
                try FileManager.default.copyItem(atPath: original.path + suffix, toPath: url.path + suffix)
            }
            return url
        }
        func run(_ url: URL, killAfter milliseconds: Int?) throws -> Bool {
            try runConflictWriter(
                [
                    "migrate-to", url.path, lineage.type, stores.appendingPathComponent(lineage.model).path,
                    resources.path,
                ],
                killAfter: milliseconds
            ).contains("migrated")
        }
        // The migration, not killed: what every killed one must end as.
        let reference = try copy("Reference.store")
        let started = Date()
        #expect(try run(reference, killAfter: nil), "the migration of \(lineage.name) fails")
        // Kills land within the time a whole run took (process start included), so most land
        // before the migration finishes however fast the machine is: a fixed 0–120 ms window
        // missed every time once a lineage's migration took less (a flaky CI run).
        let whole = max(10, Int(Date().timeIntervalSince(started) * 1000))
        let expected = try Self.dump(reference, type: lineage.type, model: model)
        #expect(!expected.isEmpty)
        var generator = SystemRandomNumberGenerator()
        var finished = 0
        for trial in 0..<12 {
            let url = try copy("Trial\(trial).store")
            if try run(url, killAfter: Int.random(in: 0...(whole * 9 / 10), using: &generator)) { finished += 1 }
            // Whatever the kill left, the store opens and migrates (again, or not at all) to the
            // same objects.
            #expect(try run(url, killAfter: nil), "trial \(trial): the store left by the kill does not migrate")
            #expect(try Self.dump(url, type: lineage.type, model: model) == expected, "trial \(trial)")
        }
        #expect(finished < 12, "no kill landed before the migration finished")
    }
}
