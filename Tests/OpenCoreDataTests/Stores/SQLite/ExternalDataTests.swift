import CoreData
import Foundation
import Testing

/// Binary data stored outside the database. Related documentation: NSAttributeDescription,
/// `allowsExternalBinaryDataStorage` ("Core Data heuristically decides on a per-value basis if it
/// should save the data directly in the database or store a URI to a separate file that it
/// manages for you"); the files live in `.<Store>_SUPPORT/_EXTERNAL_DATA` (STORE-FORMAT.md).
@Suite("SQLite store: external binary data")
struct ExternalDataTests {
    let directory = TemporaryDirectory()

    private static func model() -> NSManagedObjectModel {
        let photo = NSEntityDescription()
        photo.name = "Photo"
        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        let image = NSAttributeDescription()
        image.name = "image"
        image.attributeType = .binaryDataAttributeType
        image.allowsExternalBinaryDataStorage = true
        photo.properties = [name, image]
        let model = NSManagedObjectModel()
        model.entities = [photo]
        return model
    }

    private var url: URL { directory.file("Photos.sqlite") }
    private var externalFolder: URL { directory.url.appendingPathComponent(".Photos_SUPPORT/_EXTERNAL_DATA") }

    private func externalFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: externalFolder.path)) ?? []).sorted()
    }

    private func photos(_ context: NSManagedObjectContext) throws -> [NSManagedObject] {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Photo")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        return try context.fetch(request)
    }

    private static func bytes(_ count: Int, seed: UInt8) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) &+ seed })
    }

    /// A small value stays in the row (marker byte 1, then the bytes); a large one goes to a file
    /// named in the row (marker 2, the file's name, NUL); both read back in a new coordinator.
    @Test func smallValuesStayInTheRowLargeOnesGoToFiles() throws {
        let small = Self.bytes(1000, seed: 1)
        let large = Self.bytes(300_000, seed: 2)
        do {
            let context = try sqliteStack(url, model: Self.model())
            for (name, data) in [("a-small", small), ("b-large", large)] {
                let photo = NSEntityDescription.insertNewObject(forEntityName: "Photo", into: context)
                photo.setValue(name, forKey: "name")
                photo.setValue(data, forKey: "image")
            }
            try context.save()
        }
        let files = externalFiles()
        #expect(files.count == 1)
        let stored = try Data(contentsOf: externalFolder.appendingPathComponent(try #require(files.first)))
        #expect(stored == large)
        let markers = try sqlite3(url, "SELECT hex(substr(ZIMAGE, 1, 1)) FROM ZPHOTO ORDER BY ZNAME")
        #expect(markers == ["01", "02"])
        let reference = try sqlite3(url, "SELECT hex(substr(ZIMAGE, 2)) FROM ZPHOTO WHERE ZNAME = 'b-large'")
        #expect(reference == [(Array(files[0].utf8) + [0]).map { String(format: "%02X", $0) }.joined()])

        let context = try sqliteStack(url, model: Self.model())
        let read = try photos(context).map { $0.value(forKey: "image") as? Data }
        #expect(read == [small, large])
    }

    /// Replacing a large value writes a new file and removes the old one after the save; saving
    /// another change keeps the file; deleting the object removes it.
    @Test func filesFollowUpdatesAndDeletes() throws {
        let context = try sqliteStack(url, model: Self.model())
        let photo = NSEntityDescription.insertNewObject(forEntityName: "Photo", into: context)
        photo.setValue("p", forKey: "name")
        photo.setValue(Self.bytes(200_000, seed: 3), forKey: "image")
        try context.save()
        let first = externalFiles()
        #expect(first.count == 1)

        photo.setValue("renamed", forKey: "name")
        try context.save()
        #expect(externalFiles() == first)

        photo.setValue(Self.bytes(250_000, seed: 4), forKey: "image")
        try context.save()
        let second = externalFiles()
        #expect(second.count == 1)
        #expect(second != first)

        photo.setValue(Data([1, 2, 3]), forKey: "image")
        try context.save()
        #expect(externalFiles().isEmpty)
        photo.setValue(Self.bytes(250_000, seed: 5), forKey: "image")
        try context.save()
        #expect(externalFiles().count == 1)

        context.delete(photo)
        try context.save()
        #expect(externalFiles().isEmpty)
    }

    /// A save that fails leaves no file behind: the file written before the commit is removed
    /// when the transaction rolls back (here an optimistic-locking failure).
    @Test func aFailedSaveRemovesTheFilesItWrote() throws {
        let model = Self.model()
        let first = try sqliteStack(url, model: model)
        let photo = NSEntityDescription.insertNewObject(forEntityName: "Photo", into: first)
        photo.setValue("p", forKey: "name")
        try first.save()
        let second = try sqliteStack(url, model: model)
        let other = try #require(try photos(second).first)
        other.setValue("changed elsewhere", forKey: "name")
        try second.save()

        photo.setValue(Self.bytes(200_000, seed: 6), forKey: "image")
        #expect(throws: (any Error).self) { try first.save() }
        #expect(externalFiles().isEmpty)
    }

    /// Migrating the store to another file takes its external files along; destroying a store
    /// removes its support folder.
    @Test func migrateCopiesAndDestroyRemovesExternalFiles() throws {
        let context = try sqliteStack(url, model: Self.model())
        let photo = NSEntityDescription.insertNewObject(forEntityName: "Photo", into: context)
        photo.setValue("p", forKey: "name")
        let large = Self.bytes(200_000, seed: 7)
        photo.setValue(large, forKey: "image")
        try context.save()
        let coordinator = try #require(context.persistentStoreCoordinator)
        let target = directory.file("Moved.sqlite")
        _ = try coordinator.migratePersistentStore(
            coordinator.persistentStores[0], to: target, options: nil, withType: NSSQLiteStoreType)
        let reader = try sqliteStack(target, model: Self.model())
        #expect(try photos(reader).first?.value(forKey: "image") as? Data == large)
        try coordinator.destroyPersistentStore(at: target, ofType: NSSQLiteStoreType)
        #expect(!FileManager.default.fileExists(atPath: directory.url.appendingPathComponent(".Moved_SUPPORT").path))
        #expect(externalFiles().count == 1)
    }
}
