import CoreData
import Foundation
import Testing

@testable import OpenCoreData

/// Lightweight migration of SQLite stores, in place. Apple's documentation: "Migrating your data
/// model automatically" (`NSMigratePersistentStoresAutomaticallyOption` with
/// `NSInferMappingModelAutomaticallyOption`, true by default for `NSPersistentContainer`); Core
/// Data Model Versioning and Data Migration Programming Guide, "Lightweight Migration" ("if you use
/// an inferred model and you use the SQLite store, then Core Data can perform the migration in
/// situ (solely by issuing SQL statements)"); the migration error codes (134110, 134130, 134140).
@Suite("Migration: lightweight, in place on SQLite", .serialized)
struct LightweightMigrationTests {
    let directory = TemporaryDirectory()
    nonisolated(unsafe) static let migrate: [AnyHashable: Any] = [
        NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true,
    ]

    private func wibosco(_ version: String, _ root: URL) throws -> NSManagedObjectModel {
        try NSManagedObjectModel(
            validatingContentsOf: root.appendingPathComponent(
                "stores/wibosco-migration/CoreDataMigration_Example.xcdatamodeld/\(version).xcdatamodel"))
    }

    /// A store and Apple's own lightweight migration of it (the same UUID), with the model
    /// version it was migrated to.
    struct ApplesMigration: CustomTestStringConvertible, Sendable {
        let store: String
        let migrated: String
        let model: String
        var testDescription: String { (store as NSString).lastPathComponent }
    }

    static let applesMigrations = [
        // Version 2 renames `color` to `hexColor` through a renaming identifier.
        ApplesMigration(
            store: "wibosco-migration/CoreDataMigration_Example_1.sqlite",
            migrated: "wibosco-migration/CoreDataMigration_Example_2.sqlite",
            model: "wibosco-migration/CoreDataMigration_Example.xcdatamodeld/CoreDataMigration_Example 2.xcdatamodel"),
        // Version 2 renames ExpensiveSportCar to LuxuryCar (renaming identifier) in a three-level
        // hierarchy, drops `Car.color` and `Person.id`, and adds a fetch index.
        ApplesMigration(
            store: "coredataplus-samplemodel/SampleModel/Fixtures/SampleModel_V1.sqlite",
            migrated: "coredataplus-samplemodel/SampleModel/Fixtures/SampleModel_V2.sqlite",
            model: "coredataplus-samplemodel/SampleModel/SampleModel.xcdatamodeld/SampleModel2.xcdatamodel"),
    ]

    @Test("a store migrated in place holds what Apple's own migration of it holds", arguments: applesMigrations)
    func migrationMatchesApples(_ fixture: ApplesMigration) throws {
        guard let root = Fixtures.root() else { return }
        let ours = try FixtureStores.copy(fixture.store, root: root, to: directory)
        let apples = try FixtureStores.copy(fixture.migrated, root: root, to: directory)
        let model = try NSManagedObjectModel(
            validatingContentsOf: root.appendingPathComponent("stores").appendingPathComponent(fixture.model))
        let before = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: ours, options: nil)
        let context = try sqliteStack(ours, model: model, options: Self.migrate)
        #expect(try !context.fetch(NSFetchRequest<NSManagedObject>(entityName: model.entities[0].name ?? "")).isEmpty)
        // The same indexes as Apple's, the same tables with the same columns, and the same rows in
        // them. Columns are compared by name: Apple orders a hierarchy's columns in a way
        // STORE-FORMAT.md does not pin down yet (SampleModel: the root's to-one `ZOWNER` before the
        // sub-entity's `ZISLIMITEDEDITION`), and Core Data reads columns by name.
        let indexes =
            "SELECT name || ': ' || sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name"
        #expect(try sqlite3(ours, indexes) == sqlite3(apples, indexes))
        let tables = try sqlite3(apples, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        #expect(try sqlite3(ours, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") == tables)
        for table in tables where table != "Z_METADATA" && table != "Z_MODELCACHE" {
            let columns = "SELECT name || ' ' || type FROM pragma_table_info('\(table)') ORDER BY name"
            #expect(try sqlite3(ours, columns) == sqlite3(apples, columns), "\(table)")
            let names = try sqlite3(apples, "SELECT name FROM pragma_table_info('\(table)') ORDER BY cid")
            let rows = "SELECT \(names.joined(separator: ", ")) FROM \(table) ORDER BY 1, 2"
            #expect(try sqlite3(ours, rows) == sqlite3(apples, rows), "\(table)")
        }
        let after = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: ours, options: nil)
        let apple = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: apples, options: nil)
        #expect(after[NSStoreUUIDKey] as? String == before[NSStoreUUIDKey] as? String, "the store keeps its UUID")
        #expect(
            after["NSStoreModelVersionHashes"] as? [String: Data] == apple["NSStoreModelVersionHashes"]
                as? [String: Data])
        // The migrated store opens with the new version and no options, and its cache is that version.
        let reopened = try sqliteStack(ours, model: model)
        #expect(try reopened.count(for: NSFetchRequest<NSManagedObject>(entityName: model.entities[0].name ?? "")) > 0)
        #expect(
            try NSManagedObjectModel(contentsOfStoreAt: ours).entityVersionHashesByName
                == model.entityVersionHashesByName)
    }

    @Test("version 2 to 3 adds an entity and drops an attribute; 3 to 4 adds a required attribute with its default")
    func entitiesAndRequiredAttributes() throws {
        guard let root = Fixtures.root() else { return }
        let two = try FixtureStores.copy(
            "wibosco-migration/CoreDataMigration_Example_2.sqlite", root: root, to: directory)
        let context = try sqliteStack(
            two, model: try wibosco("CoreDataMigration_Example 3", root), options: Self.migrate)
        let posts = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Post"))
        #expect(posts.count == 10)
        #expect(posts.allSatisfy { ($0.value(forKey: "sections") as? Set<NSManagedObject>)?.isEmpty == true })
        #expect(
            try sqlite3(two, "SELECT Z_ENT || ' ' || Z_NAME FROM Z_PRIMARYKEY ORDER BY Z_ENT") == [
                "1 Post", "2 Section",
            ])
        #expect(try sqlite3(two, "SELECT COUNT(*) FROM pragma_table_info('ZPOST') WHERE name = 'ZCONTENT'") == ["0"])
        // Apple's store 3 (sections split from content by the app's own mapping) to version 4.
        let three = try FixtureStores.copy(
            "wibosco-migration/CoreDataMigration_Example_3.sqlite", root: root, to: directory)
        let sectionsBefore = try sqlite3(
            three, "SELECT Z_PK || ' ' || ZPOST || ' ' || ZTITLE FROM ZSECTION ORDER BY Z_PK")
        let four = try sqliteStack(
            three, model: try wibosco("CoreDataMigration_Example 4", root), options: Self.migrate)
        let migrated = try four.fetch(NSFetchRequest<NSManagedObject>(entityName: "Post"))
        #expect(!migrated.isEmpty)
        #expect(migrated.allSatisfy { ($0.value(forKey: "softDeleted") as? NSNumber)?.boolValue == false })
        #expect(
            try sqlite3(three, "SELECT Z_PK || ' ' || ZPOST || ' ' || ZTITLE FROM ZSECTION ORDER BY Z_PK")
                == sectionsBefore)
        let sections = migrated.reduce(0) { $0 + (($1.value(forKey: "sections") as? Set<NSManagedObject>)?.count ?? 0) }
        #expect(sections == sectionsBefore.count, "every section still belongs to its post")
    }

    /// Models built in code for the rename, hierarchy and relationship cases.
    static func model(version: Int) -> NSManagedObjectModel {
        func attribute(_ name: String, _ type: NSAttributeType, renamedFrom: String? = nil) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.renamingIdentifier = renamedFrom
            return attribute
        }
        let car = NSEntityDescription()
        car.name = version == 1 ? "Car" : "Automobile"
        car.renamingIdentifier = version == 1 ? nil : "Car"
        car.properties = [
            attribute(
                version == 1 ? "color" : "paintColor", .stringAttributeType, renamedFrom: version == 1 ? nil : "color")
        ]
        let person = NSEntityDescription()
        person.name = "Person"
        person.properties = [attribute("name", .stringAttributeType)]
        if version == 2 {
            let age = attribute("age", .integer16AttributeType)
            age.isOptional = false
            age.defaultValue = 7
            person.properties += [age]
        }
        let owner = NSRelationshipDescription()
        owner.name = "owner"
        owner.destinationEntity = person
        owner.maxCount = 1
        let cars = NSRelationshipDescription()
        cars.name = "cars"
        cars.destinationEntity = car
        cars.maxCount = 0
        owner.inverseRelationship = cars
        cars.inverseRelationship = owner
        car.properties += [owner]
        person.properties += [cars]
        let other = NSEntityDescription()
        other.name = version == 1 ? "Draft" : "Garage"
        other.properties = [attribute(version == 1 ? "text" : "address", .stringAttributeType)]
        let model = NSManagedObjectModel()
        model.entities = [car, person, other]
        return model
    }

    /// Version 1's objects: Ada with a red and a blue car, and a draft.
    static func saveVersionOneObjects(into context: NSManagedObjectContext) throws {
        let ada = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
        ada.setValue("Ada", forKey: "name")
        for color in ["red", "blue"] {
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
            car.setValue(color, forKey: "color")
            car.setValue(ada, forKey: "owner")
        }
        NSEntityDescription.insertNewObject(forEntityName: "Draft", into: context).setValue("x", forKey: "text")
        try context.save()
    }

    /// Checks that version 1's objects read back through version 2 (renamed entities and
    /// attributes, a new required attribute's default, relationships), then saves new objects,
    /// which must get keys past the old ones, in the new entity too.
    static func expectMigratedObjects(in context: NSManagedObjectContext) throws {
        let people = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
        let ada = try #require(people.first)
        #expect(people.count == 1 && ada.value(forKey: "name") as? String == "Ada")
        #expect((ada.value(forKey: "age") as? NSNumber)?.intValue == 7, "a new required attribute takes its default")
        let cars = try #require(ada.value(forKey: "cars") as? Set<NSManagedObject>)
        #expect(Set(cars.compactMap { $0.value(forKey: "paintColor") as? String }) == ["red", "blue"])
        #expect(
            cars.allSatisfy { $0.entity.name == "Automobile" && $0.value(forKey: "owner") as? NSManagedObject === ada })
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Garage")) == 0)
        let garage = NSEntityDescription.insertNewObject(forEntityName: "Garage", into: context)
        garage.setValue("Main St", forKey: "address")
        let car = NSEntityDescription.insertNewObject(forEntityName: "Automobile", into: context)
        car.setValue(ada, forKey: "owner")
        try context.save()
    }

    @Test("renamed entities and attributes, removed and added entities, to-ones and to-manys carry over")
    func renamesAndRelationships() throws {
        let url = directory.file("Cars.sqlite")
        try Self.saveVersionOneObjects(into: sqliteStack(url, model: Self.model(version: 1)))
        let context = try sqliteStack(url, model: Self.model(version: 2), options: Self.migrate)
        try Self.expectMigratedObjects(in: context)
        #expect(
            try sqlite3(url, "SELECT name FROM sqlite_master WHERE name = 'ZDRAFT'").isEmpty,
            "a removed entity's table is dropped")
        #expect(
            try sqliteStack(url, model: Self.model(version: 2)).count(
                for: NSFetchRequest<NSManagedObject>(entityName: "Automobile"))
                == 3)
    }

    /// The migrations of a store holding a `Person` without a name that cannot run, each refused
    /// with Apple's error when `open` adds the store with a model and options: another version
    /// without the migration options (134100); a required attribute without a default that a row
    /// lacks (134110 over the validation error 1570); a change no mapping can be inferred for
    /// (134140 over the inference error 134190).
    static func expectRefusals(_ open: (NSManagedObjectModel, [AnyHashable: Any]?) throws -> Void) throws {
        let refused = #expect(throws: NSError.self) { try open(model(version: 2), nil) }
        #expect(refused?.code == NSPersistentStoreIncompatibleVersionHashError)
        let required = model(version: 1)
        let name = try #require(required.entitiesByName["Person"]?.attributesByName["name"])
        name.isOptional = false
        let missing = #expect(throws: NSError.self) { try open(required, migrate) }
        #expect(missing?.code == NSMigrationError)
        #expect(
            (missing?.userInfo[NSUnderlyingErrorKey] as? NSError)?.code == NSValidationMissingMandatoryPropertyError)
        let changed = model(version: 1)
        changed.entitiesByName["Car"]?.attributesByName["color"]?.attributeType = .integer64AttributeType
        let uninferable = #expect(throws: NSError.self) { try open(changed, migrate) }
        #expect(uninferable?.code == NSMigrationMissingMappingModelError)
        #expect((uninferable?.userInfo[NSUnderlyingErrorKey] as? NSError)?.code == NSInferredMappingModelError)
    }

    @Test("a migration that cannot run leaves the store exactly as it was, with Apple's error")
    func failuresLeaveTheStore() throws {
        let url = directory.file("Keep.sqlite")
        do {
            let context = try sqliteStack(url, model: Self.model(version: 1))
            NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)  // no name
            try context.save()
        }
        // The file and its write-ahead log, when it has frames (opening a store may leave an
        // empty one).
        func bytes() throws -> [Data] {
            let log = (try? Data(contentsOf: URL(fileURLWithPath: url.path + "-wal"))) ?? Data()
            return [try Data(contentsOf: url)] + (log.isEmpty ? [] : [log])
        }
        let original = try bytes()
        try Self.expectRefusals { model, options in _ = try sqliteStack(url, model: model, options: options) }
        #expect(try bytes() == original, "nothing was written")
        #expect(
            try sqliteStack(url, model: Self.model(version: 1)).count(
                for: NSFetchRequest<NSManagedObject>(entityName: "Person")) == 1)
    }

    @Test("a mapping model the program ships for other versions is passed over, and the migration is inferred")
    func shippedMappingModelsForOtherVersions() throws {
        // "Core Data looks for a mapping model … If it can't find one, it infers" (Migrating your
        // data model automatically): a mapping model between other versions, or a damaged file,
        // is not this migration's.
        let url = directory.file("Shipped.sqlite")
        do {
            let context = try sqliteStack(url, model: Self.model(version: 1))
            NSEntityDescription.insertNewObject(forEntityName: "Person", into: context).setValue("Ada", forKey: "name")
            try context.save()
        }
        let resources = directory.file("Resources")
        try FileManager.default.createDirectory(at: resources, withIntermediateDirectories: true)
        try Data("not a mapping model".utf8).write(to: resources.appendingPathComponent("Damaged.cdm"))
        if let root = Fixtures.root() {
            try FileManager.default.copyItem(
                at: root.appendingPathComponent(MappingModelTests.sampleModel + "Fixtures/V2toV3.cdm"),
                to: resources.appendingPathComponent("V2toV3.cdm"))
        }
        let bundle = try #require(Bundle(path: resources.path))
        let migrated = try ModelVersions.$additionalBundles.withValue([bundle]) {
            try sqliteStack(url, model: Self.model(version: 2), options: Self.migrate)
        }
        #expect(try migrated.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) == 1)
    }

    /// One bookmark as the test compares it: title, URL, favourite folders, favourites in order.
    struct Bookmark: Equatable {
        let title: String?
        let url: String?
        let folders: Set<String>
        let favorites: [String]
    }

    /// Every bookmark of a DuckDuckGo store by UUID; `folders` from the to-one `favoriteFolder`
    /// (versions 1–3) or the to-many `favoriteFolders` (4–6).
    static func bookmarks(_ context: NSManagedObjectContext) throws -> [String: Bookmark] {
        var result: [String: Bookmark] = [:]
        for object in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "BookmarkEntity")) {
            func uuid(_ object: Any?) -> String? { (object as? NSManagedObject)?.value(forKey: "uuid") as? String }
            let attributes = object.entity.propertiesByName
            let folders: [Any] =
                attributes["favoriteFolders"] != nil
                ? Array(object.value(forKey: "favoriteFolders") as? Set<NSManagedObject> ?? [])
                : [object.value(forKey: "favoriteFolder")].compactMap { $0 }
            result[uuid(object) ?? ""] = Bookmark(
                title: object.value(forKey: "title") as? String, url: object.value(forKey: "url") as? String,
                folders: Set(folders.compactMap(uuid)),
                favorites: ((object.value(forKey: "favorites") as? NSOrderedSet)?.array ?? []).compactMap(uuid))
        }
        return result
    }

    /// DuckDuckGo's bookmark store of model `version`, copied into `directory`, with the model
    /// version that wrote it and the current one; `nil` without the fixtures (outside CI).
    static func bookmarksFixture(_ version: Int, in directory: TemporaryDirectory) throws -> (
        store: URL, writer: NSManagedObjectModel, current: NSManagedObjectModel
    )? {
        guard let root = Fixtures.root() else { return nil }
        let models = root.appendingPathComponent("stores/ddg-bookmarks/BookmarksModel.xcdatamodeld")
        let store = try FixtureStores.copy("ddg-bookmarks/Bookmarks_V\(version).sqlite", root: root, to: directory)
        let writer = try #require(try FixtureStores.matchingModel(for: store, models: models))
        return (store, writer, try NSManagedObjectModel(validatingContentsOf: models))
    }

    @Test(
        "a to-one that became a to-many moves into a join table, the inverse's order kept (DuckDuckGo's bookmarks)",
        arguments: 1...3)
    func toOneBecomesManyToMany(_ version: Int) throws {
        // Version 4 turned `favoriteFolder` (to-one; inverse `favorites`, ordered) into
        // `favoriteFolders` (to-many, renaming identifier `favoriteFolder`): a many-to-many.
        guard let (original, writer, current) = try Self.bookmarksFixture(version, in: directory) else { return }
        let before = try Self.bookmarks(try sqliteStack(original, model: writer))
        #expect(before.values.contains { !$0.folders.isEmpty } && before.values.contains { !$0.favorites.isEmpty })
        let migratedCopy = directory.url.appendingPathComponent("migrated-\(version)")
        try FileManager.default.createDirectory(at: migratedCopy, withIntermediateDirectories: true)
        let store = migratedCopy.appendingPathComponent("Bookmarks.sqlite")
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: original.path + suffix) {
            try FileManager.default.copyItem(atPath: original.path + suffix, toPath: store.path + suffix)
        }
        let after = try Self.bookmarks(try sqliteStack(store, model: current, options: Self.migrate))
        #expect(after == before)
        #expect(try !sqlite3(store, "SELECT name FROM sqlite_master WHERE name = 'Z_1FAVORITES'").isEmpty)
    }
}
