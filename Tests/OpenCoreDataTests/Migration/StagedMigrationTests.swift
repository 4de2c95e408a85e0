import CoreData
import Foundation
import Testing

@testable import OpenCoreData

/// Staged migration (Apple's 2023 API — NSStagedMigrationManager,
/// NSLightweightMigrationStage, NSCustomMigrationStage, NSManagedObjectModelReference and the
/// `NSPersistentStoreStagedMigrationManagerOptionKey` store option): wibosco's lineage goes from
/// version 1 to 4 through a lightweight stage, a custom stage that splits each post's `content`
/// into a `Section` (the change wibosco's own app makes by hand), and a second lightweight stage.
@Suite("Staged migration", .serialized)
struct StagedMigrationTests {
    let directory = TemporaryDirectory()

    func versions(_ root: URL) throws -> [NSManagedObjectModel] {
        let models = root.appendingPathComponent("stores/wibosco-migration/CoreDataMigration_Example.xcdatamodeld")
        return try ["", " 2", " 3", " 4"].map { suffix in
            try #require(
                NSManagedObjectModel(
                    contentsOf: models.appendingPathComponent("CoreDataMigration_Example\(suffix).xcdatamodel")))
        }
    }

    /// The stages from version 1 to 4, recording the handlers' calls in `log`. With
    /// `supplementing`, the lightweight stages list only the versions they lead to, as Apple's
    /// lightweight stages "supplement your custom migration stages": version 1, then the custom
    /// stage from 2 to 3, then version 4.
    func stages(_ v: [NSManagedObjectModel], log: LockedLog, supplementing: Bool = false) -> NSStagedMigrationManager {
        let early = NSLightweightMigrationStage(
            supplementing ? [v[0].versionChecksum] : [v[0].versionChecksum, v[1].versionChecksum])
        early.label = "1 to 2"
        let split = NSCustomMigrationStage(
            migratingFrom: NSManagedObjectModelReference(model: v[1], versionChecksum: v[1].versionChecksum),
            to: NSManagedObjectModelReference(model: v[2], versionChecksum: v[2].versionChecksum))
        split.label = "content to sections"
        nonisolated(unsafe) var contents: [String: String] = [:]
        split.willMigrateHandler = { manager, stage in
            log.append("will \(stage.label ?? "")")
            let context = try #require(manager.container).newBackgroundContext()
            try context.performAndWait {
                for post in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Post")) {
                    if let id = post.value(forKey: "postID") as? String,
                        let content = post.value(forKey: "content") as? String
                    {
                        contents[id] = content
                    }
                }
            }
        }
        split.didMigrateHandler = { manager, stage in
            log.append("did \(stage.label ?? "")")
            let context = try #require(manager.container).newBackgroundContext()
            try context.performAndWait {
                for post in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Post")) {
                    guard let id = post.value(forKey: "postID") as? String, let content = contents[id] else { continue }
                    let section = NSEntityDescription.insertNewObject(forEntityName: "Section", into: context)
                    section.setValue(content, forKey: "body")
                    section.setValue(Int16(0), forKey: "index")
                    section.setValue(post, forKey: "post")
                }
                try context.save()
            }
        }
        let late = NSLightweightMigrationStage(
            supplementing ? [v[3].versionChecksum] : [v[2].versionChecksum, v[3].versionChecksum])
        return NSStagedMigrationManager([early, split, late])
    }

    /// Each post of the store: its ID, colour and content, as version 1 holds them.
    func posts(_ url: URL, type: String, model: NSManagedObjectModel) throws -> [String: (
        color: String?, content: String?
    )] {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(
            ofType: type, configurationName: nil, at: url, options: [NSReadOnlyPersistentStoreOption: true])
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        var result: [String: (color: String?, content: String?)] = [:]
        for post in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Post")) {
            result[post.value(forKey: "postID") as? String ?? ""] = (
                post.value(forKey: "color") as? String, post.value(forKey: "content") as? String
            )
        }
        return result
    }

    /// SQLite only: version 3 requires each post to have a section, which only the custom stage's
    /// did-migrate handler provides, after the step. SQLite's in-place steps do not validate (as
    /// Apple's do not); the atomic stores' steps run through the migration manager, which
    /// validates the migrated objects, so their version-3 step fails (DEVIATIONS.md).
    @Test(
        "A store of version 1 opens with version 4 through the stages, the custom stage's handlers around its step",
        arguments: [NSSQLiteStoreType])
    func wiboscoThroughStages(type: String) throws {
        try migrateWibosco(type: type, supplementing: false)
    }

    /// Regression: a lightweight stage after a custom stage that did not list the custom stage's
    /// next version was not applied (NSLightweightMigrationStage: its stages "supplement your
    /// custom migration stages and help maintain a consistent stage order").
    @Test("Lightweight stages that list only the versions they lead to run before and after the custom stage")
    func wiboscoThroughSupplementingStages() throws {
        try migrateWibosco(type: NSSQLiteStoreType, supplementing: true)
    }

    func migrateWibosco(type: String, supplementing: Bool) throws {
        guard let root = Fixtures.root() else { return }
        let v = try versions(root)
        var url = try FixtureStores.copy(
            "wibosco-migration/CoreDataMigration_Example_1.sqlite", root: root, to: directory)
        if type != NSSQLiteStoreType {
            let converter = NSPersistentStoreCoordinator(managedObjectModel: v[0])
            let store = try converter.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url)
            let converted = directory.file("Example.\(type)")
            _ = try converter.migratePersistentStore(store, to: converted, options: nil, withType: type)
            url = converted
        }
        let before = try posts(url, type: type, model: v[0])
        #expect(!before.isEmpty)
        let log = LockedLog()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: v[3])
        // The app's bundle holds the model versions, where a lightweight stage's versions are
        // found by checksum (a SQLite store also keeps its own model).
        let resources = directory.file("Resources")
        try FileManager.default.createDirectory(at: resources, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: root.appendingPathComponent("stores/wibosco-migration/CoreDataMigration_Example.xcdatamodeld"),
            to: resources.appendingPathComponent("CoreDataMigration_Example.xcdatamodeld"))
        let bundles = type == NSSQLiteStoreType ? [] : [try #require(Bundle(path: resources.path))]
        try ModelVersions.$additionalBundles.withValue(bundles) {
            try coordinator.addPersistentStore(
                ofType: type, configurationName: nil, at: url,
                options: [
                    NSPersistentStoreStagedMigrationManagerOptionKey: stages(v, log: log, supplementing: supplementing)
                ])
        }
        #expect(log.lines == ["will content to sections", "did content to sections"])
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let migrated = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Post"))
        #expect(migrated.count == before.count)
        for post in migrated {
            let id = post.value(forKey: "postID") as? String ?? ""
            let original = try #require(before[id])
            #expect(post.value(forKey: "hexColor") as? String == original.color)
            #expect((post.value(forKey: "softDeleted") as? NSNumber)?.boolValue == false)
            let sections = post.value(forKey: "sections") as? Set<NSManagedObject> ?? []
            #expect(
                sections.compactMap { $0.value(forKey: "body") as? String } == (original.content.map { [$0] } ?? []))
        }
    }

    @Test(
        "An XML store moves through lightweight stages alone, its versions found by checksum in the program's bundles")
    func xmlThroughLightweightStages() throws {
        guard let root = Fixtures.root() else { return }
        let v = try versions(root)
        let sqlite = try FixtureStores.copy(
            "wibosco-migration/CoreDataMigration_Example_1.sqlite", root: root, to: directory)
        let converter = NSPersistentStoreCoordinator(managedObjectModel: v[0])
        let store = try converter.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: sqlite)
        let url = directory.file("Example.xml")
        _ = try converter.migratePersistentStore(store, to: url, options: nil, withType: NSXMLStoreType)
        let before = try posts(url, type: NSXMLStoreType, model: v[0])
        let resources = directory.file("Resources")
        try FileManager.default.createDirectory(at: resources, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: root.appendingPathComponent("stores/wibosco-migration/CoreDataMigration_Example.xcdatamodeld"),
            to: resources.appendingPathComponent("CoreDataMigration_Example.xcdatamodeld"))
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: v[1])
        try ModelVersions.$additionalBundles.withValue([try #require(Bundle(path: resources.path))]) {
            try coordinator.addPersistentStore(
                ofType: NSXMLStoreType, configurationName: nil, at: url,
                options: [
                    NSPersistentStoreStagedMigrationManagerOptionKey: NSStagedMigrationManager([
                        NSLightweightMigrationStage([v[0].versionChecksum, v[1].versionChecksum])
                    ])
                ])
        }
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let colors = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Post")).compactMap {
            $0.value(forKey: "hexColor") as? String
        }
        #expect(colors.sorted() == before.values.compactMap(\.color).sorted())
    }

    @Test("A store whose version no stage names is refused with 134110 and stays as it was")
    func noStageForTheStore() throws {
        guard let root = Fixtures.root() else { return }
        let v = try versions(root)
        let url = try FixtureStores.copy(
            "wibosco-migration/CoreDataMigration_Example_1.sqlite", root: root, to: directory)
        let original = try Data(contentsOf: url)
        let manager = NSStagedMigrationManager([
            NSLightweightMigrationStage([v[2].versionChecksum, v[3].versionChecksum])
        ])
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: v[3])
        #expect {
            try coordinator.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: url,
                options: [NSPersistentStoreStagedMigrationManagerOptionKey: manager])
        } throws: { error in
            (error as NSError).code == NSMigrationError
                && ((error as NSError).userInfo["reason"] as? String)?.contains("no stage") == true
        }
        #expect(try Data(contentsOf: url) == original)
        let missing = NSManagedObjectModelReference(fileURL: directory.file("none.xcdatamodel"), versionChecksum: "x")
        #expect(missing.resolvedModel.entities.isEmpty)
    }
}

/// A store that tracks persistent history keeps doing so through a staged migration: each step
/// opens it with the options it is added with, so a custom stage's handler can save (without
/// `NSPersistentHistoryTrackingKey` a store whose history holds transactions opens read-only, as
/// Apple's does), and the handler's save is recorded in the history like any other.
@Suite("Staged migration of a store with persistent history")
struct StagedMigrationHistoryTests {
    static func model(withLength: Bool) -> NSManagedObjectModel {
        let note = NSEntityDescription()
        note.name = "Note"
        let text = NSAttributeDescription()
        text.name = "text"
        text.attributeType = .stringAttributeType
        var properties = [text]
        if withLength {
            let length = NSAttributeDescription()
            length.name = "length"
            length.attributeType = .integer64AttributeType
            length.isOptional = true
            properties.append(length)
        }
        note.properties = properties
        let model = NSManagedObjectModel()
        model.entities = [note]
        return model
    }

    @Test func aCustomStageSavesIntoAStoreThatTracksHistory() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Notes.sqlite")
        let v1 = Self.model(withLength: false)
        let v2 = Self.model(withLength: true)
        let history: [AnyHashable: Any] = [NSPersistentHistoryTrackingKey: true]
        do {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: v1)
            try coordinator.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: history)
            let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            for text in ["one", "three"] {
                NSEntityDescription.insertNewObject(forEntityName: "Note", into: context).setValue(text, forKey: "text")
            }
            try context.save()
        }
        let stage = NSCustomMigrationStage(
            migratingFrom: NSManagedObjectModelReference(model: v1, versionChecksum: v1.versionChecksum),
            to: NSManagedObjectModelReference(model: v2, versionChecksum: v2.versionChecksum))
        stage.didMigrateHandler = { manager, _ in
            let context = try #require(manager.container).newBackgroundContext()
            try context.performAndWait {
                for note in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Note")) {
                    note.setValue(Int64((note.value(forKey: "text") as? String ?? "").count), forKey: "length")
                }
                try context.save()
            }
        }
        var options = history
        options[NSPersistentStoreStagedMigrationManagerOptionKey] = NSStagedMigrationManager([stage])
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: v2)
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: options)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let request = NSFetchRequest<NSManagedObject>(entityName: "Note")
        request.sortDescriptors = [NSSortDescriptor(key: "text", ascending: true)]
        #expect(try context.fetch(request).map { ($0.value(forKey: "length") as? NSNumber)?.intValue } == [3, 5])
        let transactions = try #require(
            (try context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?))
                as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction])
        #expect(transactions.count == 2)
        #expect(transactions.last?.changes?.map(\.changeType) == [.update, .update])
    }
}

/// Lines appended from migration handlers.
final class LockedLog: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [String] = []

    func append(_ line: String) {
        lock.lock()
        storage.append(line)
        lock.unlock()
    }

    var lines: [String] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }
}
