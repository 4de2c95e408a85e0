import Foundation
import Testing

@testable import OpenCoreData

/// Automatic migration beyond SQLite-in-place: with
/// `NSMigratePersistentStoresAutomaticallyOption`, a store written by another model version is
/// migrated with the mapping model the program ships for the two versions, and — with
/// `NSInferMappingModelAutomaticallyOption` — with an inferred one otherwise; XML and binary
/// stores migrate too (Core Data Model Versioning and Data Migration Programming Guide,
/// "Initiating the Migration Process": Core Data looks for a mapping model in the application's
/// bundles, then infers one when asked to).
@Suite("Automatic migration with mapping models and of atomic stores", .serialized)
struct AutomaticMigrationTests {
    let directory = TemporaryDirectory()

    /// A folder of copies of fixture files, used as one of the program's bundles.
    func bundle(_ files: [URL]) throws -> Bundle {
        let folder = directory.file("Resources-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for file in files {
            try FileManager.default.copyItem(at: file, to: folder.appendingPathComponent(file.lastPathComponent))
        }
        return try #require(Bundle(path: folder.path))
    }

    @Test("A SQLite store migrates automatically through the mapping model the program ships, keeping its UUID")
    func sqliteThroughShippedMappingModel() throws {
        guard let root = Fixtures.root() else { return }
        let sample = root.appendingPathComponent(MappingModelTests.sampleModel)
        let store = try FixtureStores.copy(
            "coredataplus-samplemodel/SampleModel/Fixtures/SampleModel_V2.sqlite", root: root, to: directory)
        let uuid =
            try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: store)[
                NSStoreUUIDKey] as? String
        let v3 = try #require(
            NSManagedObjectModel(
                contentsOf: sample.appendingPathComponent("SampleModel.xcdatamodeld/SampleModel3.xcdatamodel")))
        let resources = try bundle([sample.appendingPathComponent("Fixtures/V2toV3.cdm")])
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: v3)
        // Without the mapping model and without inference: 134140, the store untouched.
        let untouched = try Data(contentsOf: store)
        #expect {
            try coordinator.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: store,
                options: [NSMigratePersistentStoresAutomaticallyOption: true])
        } throws: { ($0 as NSError).code == NSMigrationMissingMappingModelError }
        #expect(try Data(contentsOf: store) == untouched)
        try ModelVersions.$additionalBundles.withValue([resources]) {
            let added = try coordinator.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: store,
                options: [NSMigratePersistentStoresAutomaticallyOption: true])
            #expect(added.identifier == uuid)
        }
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let makers = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Maker"))
        #expect(!makers.isEmpty)
        let cars = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))
        #expect(cars.allSatisfy { $0.value(forKey: "createdBy") != nil })
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter {
            $0.contains("migrating")
        }
        #expect(leftovers.isEmpty)
    }

    @Test(
        "XML and binary stores written by an older model version migrate automatically by inference",
        arguments: [NSXMLStoreType, NSBinaryStoreType])
    func atomicStoresMigrate(type: String) throws {
        guard let root = Fixtures.root() else { return }
        let models = root.appendingPathComponent("stores/wibosco-migration/CoreDataMigration_Example.xcdatamodeld")
        let v1 = try #require(
            NSManagedObjectModel(contentsOf: models.appendingPathComponent("CoreDataMigration_Example.xcdatamodel")))
        let v2 = try #require(
            NSManagedObjectModel(contentsOf: models.appendingPathComponent("CoreDataMigration_Example 2.xcdatamodel")))
        // An atomic store of version 1: the Apple-written SQLite store, converted.
        let sqlite = try FixtureStores.copy(
            "wibosco-migration/CoreDataMigration_Example_1.sqlite", root: root, to: directory)
        let converter = NSPersistentStoreCoordinator(managedObjectModel: v1)
        let opened = try converter.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: sqlite)
        let url = directory.file("Example.\(type)")
        let converted = try converter.migratePersistentStore(opened, to: url, options: nil, withType: type)
        let uuid = converted.identifier
        let reader = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        reader.persistentStoreCoordinator = converter
        let colors = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Post")).compactMap {
            $0.value(forKey: "color") as? String
        }
        #expect(!colors.isEmpty)
        let resources = try bundle([models])
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: v2)
        // Refused without the options, as before.
        #expect {
            try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url)
        } throws: { ($0 as NSError).code == NSPersistentStoreIncompatibleVersionHashError }
        try ModelVersions.$additionalBundles.withValue([resources]) {
            let migrated = try coordinator.addPersistentStore(
                ofType: type, configurationName: nil, at: url,
                options: [
                    NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true,
                ])
            #expect(migrated.identifier == uuid)
        }
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let hexColors = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Post")).compactMap {
            $0.value(forKey: "hexColor") as? String
        }
        #expect(hexColors.sorted() == colors.sorted())
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter {
            $0.contains("migrating")
        }
        #expect(leftovers.isEmpty)
    }
}

/// Inferred changes that in-place SQL does not make go through the migration manager
/// ("to-one ↔ to-many" among Apple's lightweight cases).
@Suite("Lightweight migration beyond in-place SQL")
struct ManagerFallbackTests {
    let directory = TemporaryDirectory()

    /// Owner ⇄ Thing: `things` a to-many in version 1, a to-one in version 2.
    static func model(version: Int) -> NSManagedObjectModel {
        CompanyModel.owning(
            "Owner", [CompanyModel.attribute("name", .stringAttributeType)], toMany: "things", isToMany: version == 1,
            members: "Thing", [CompanyModel.attribute("label", .stringAttributeType)], toOne: "owner")
    }

    @Test("A to-many that becomes a to-one migrates automatically, each owner keeping its thing")
    func toManyBecomesToOne() throws {
        let url = directory.file("Owners.sqlite")
        do {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.model(version: 1))
            try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url)
            let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            for n in 1...3 {
                let owner = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: context)
                owner.setValue("owner \(n)", forKey: "name")
                let thing = NSEntityDescription.insertNewObject(forEntityName: "Thing", into: context)
                thing.setValue("thing \(n)", forKey: "label")
                thing.setValue(owner, forKey: "owner")
            }
            try context.save()
        }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.model(version: 2))
        let store = try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: url,
            options: [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true])
        #expect(store.identifier != nil)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let owners = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Owner"))
        #expect(owners.count == 3)
        for owner in owners {
            let name = owner.value(forKey: "name") as? String ?? ""
            let thing = owner.value(forKey: "things") as? NSManagedObject
            #expect(thing?.value(forKey: "label") as? String == name.replacingOccurrences(of: "owner", with: "thing"))
        }
    }
}
