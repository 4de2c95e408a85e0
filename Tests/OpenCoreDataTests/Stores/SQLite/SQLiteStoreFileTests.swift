import CoreData
import Foundation
import Testing

/// Read-only stores and whole-store file operations. Related documentation:
/// NSPersistentStoreCoordinator reference (`NSReadOnlyPersistentStoreOption`,
/// `migratePersistentStore(_:to:options:withType:)` — "the store is removed from the
/// coordinator", `replacePersistentStore(at:…)`, `destroyPersistentStore(at:ofType:options:)`);
/// SQLite's documentation, "Write-Ahead Logging" (the `-wal` and `-shm` files) and "The Online
/// Backup API".
@Suite("SQLite store: read-only opening, migrate, replace and destroy")
struct SQLiteStoreFileTests {
    let directory = TemporaryDirectory()

    /// A store with two departments and three employees, saved and checkpointed.
    private func makeStore(_ name: String = "Company.sqlite") throws -> URL {
        let url = directory.file(name)
        let context = try sqliteStack(url)
        let sales = context.department("Sales")
        let research = context.department("Research")
        for (name, department) in [("Ada", sales), ("Bob", sales), ("Cy", research)] {
            context.employee(name, salary: Double(name.count)).setValue(department, forKey: "department")
        }
        try context.save()
        return url
    }

    private func names(_ context: NSManagedObjectContext) throws -> [String] {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        return try context.fetch(request).compactMap { $0.value(forKey: "name") as? String }
    }

    private func files(beside url: URL) -> [String] {
        let all = (try? FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path)) ?? []
        return all.filter { $0.hasPrefix(url.lastPathComponent) }.sorted()
    }

    /// A read-only store reads every row and writes nothing beside the file: SQLite would create
    /// `-wal`/`-shm` for a WAL database, so a store with no `-wal` is opened immutable.
    @Test func readOnlyStoreWritesNothingBesideTheFile() throws {
        let url = try makeStore()
        #expect(files(beside: url) == ["Company.sqlite"])
        let before = try Data(contentsOf: url)
        let context = try sqliteStack(url, options: [NSReadOnlyPersistentStoreOption: true])
        #expect(try names(context) == ["Ada", "Bob", "Cy"])
        #expect(context.persistentStoreCoordinator?.persistentStores.first?.isReadOnly == true)
        context.employee("Dee")
        #expect(throws: (any Error).self) { try context.save() }
        #expect(files(beside: url) == ["Company.sqlite"])
        #expect(try Data(contentsOf: url) == before)
    }

    /// While another coordinator has the store open, its committed rows live in the `-wal`; a
    /// read-only store opened then reads them too.
    @Test func readOnlyStoreSeesRowsStillInTheWriteAheadLog() throws {
        let url = directory.file("Company.sqlite")
        let writer = try sqliteStack(url)
        writer.employee("Ada")
        try writer.save()
        #expect(files(beside: url).contains("Company.sqlite-wal"))
        let reader = try sqliteStack(url, options: [NSReadOnlyPersistentStoreOption: true])
        #expect(try names(reader) == ["Ada"])
    }

    /// Opening a missing file read-only is an error, and creates no file.
    @Test func readOnlyMissingStoreIsAnError() throws {
        let url = directory.file("Missing.sqlite")
        #expect(throws: (any Error).self) { try sqliteStack(url, options: [NSReadOnlyPersistentStoreOption: true]) }
        #expect(files(beside: url).isEmpty)
    }

    /// `migratePersistentStore` writes the store's saved contents to the new location, returns
    /// the new store, and removes the old one from the coordinator; the old file is unchanged.
    @Test func migrateToAnotherSQLiteFile() throws {
        let source = try makeStore()
        let context = try sqliteStack(source)
        let coordinator = try #require(context.persistentStoreCoordinator)
        let old = try #require(coordinator.persistentStores.first)
        let target = directory.file("Copies/Moved.sqlite")
        let moved = try coordinator.migratePersistentStore(old, to: target, options: nil, withType: NSSQLiteStoreType)
        #expect(coordinator.persistentStores.count == 1)
        #expect(coordinator.persistentStores.first === moved)
        #expect(moved.url == target)
        #expect(try names(context) == ["Ada", "Bob", "Cy"])
        #expect(try sqlite3(target, "SELECT COUNT(*) FROM ZEMPLOYEE") == ["3"])
        #expect(try sqlite3(source, "SELECT COUNT(*) FROM ZEMPLOYEE") == ["3"])
        context.employee("Dee")
        try context.save()
        #expect(try sqlite3(target, "SELECT COUNT(*) FROM ZEMPLOYEE") == ["4"])
        #expect(try sqlite3(source, "SELECT COUNT(*) FROM ZEMPLOYEE") == ["3"])
    }

    /// Migrating to another store type copies every object, attribute and relationship.
    @Test func migrateToTheInMemoryStoreCopiesTheGraph() throws {
        let source = try makeStore()
        let context = try sqliteStack(source)
        let coordinator = try #require(context.persistentStoreCoordinator)
        let memory = try coordinator.migratePersistentStore(
            coordinator.persistentStores[0], to: URL(fileURLWithPath: "/dev/null"), type: .inMemory)
        #expect(memory.type == NSInMemoryStoreType)
        #expect(coordinator.persistentStores.map(\.type) == [NSInMemoryStoreType])
        #expect(try names(context) == ["Ada", "Bob", "Cy"])
        let request = NSFetchRequest<NSManagedObject>(entityName: "Department")
        request.predicate = NSPredicate(format: "name == %@", "Sales")
        let sales = try #require(try context.fetch(request).first)
        let members = (sales.value(forKey: "employees") as? Set<NSManagedObject>) ?? []
        #expect(Set(members.compactMap { $0.value(forKey: "name") as? String }) == ["Ada", "Bob"])
        #expect(sales.objectID.persistentStore === memory)
    }

    /// `replacePersistentStore` copies the source store over the destination (SQLite's backup
    /// API), and `destroyPersistentStore` "deletes (or truncates) the target persistent store in
    /// accordance with the store class's requirements": Apple's SQLite store empties the file
    /// through SQLite and keeps it, with no `-wal` or `-shm` left; a store added there is new.
    @Test func replaceThenDestroy() throws {
        let source = try makeStore("Source.sqlite")
        let destination = directory.file("Destination.sqlite")
        do {
            let other = try sqliteStack(destination)
            other.employee("Zed")
            try other.save()
        }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
        try coordinator.replacePersistentStore(
            at: destination, withPersistentStoreFrom: source, ofType: NSSQLiteStoreType)
        #expect(try names(try sqliteStack(destination)) == ["Ada", "Bob", "Cy"])
        let copied = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: destination)
        let original = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: source)
        #expect(copied[NSStoreUUIDKey] as? String == original[NSStoreUUIDKey] as? String)
        do {
            let writer = try sqliteStack(destination)
            writer.employee("Eve")
            try writer.save()
            #expect(files(beside: destination).contains("Destination.sqlite-wal"))
        }
        try coordinator.destroyPersistentStore(at: destination, type: .sqlite)
        #expect(files(beside: destination) == ["Destination.sqlite"])
        #expect(try sqlite3(destination, "SELECT count(*) FROM sqlite_master") == ["0"])
        #expect(files(beside: source) == ["Source.sqlite"])
        let reused = try sqliteStack(destination)
        #expect(try names(reused).isEmpty)
        reused.employee("Fay")
        try reused.save()
        #expect(try names(try sqliteStack(destination)) == ["Fay"])
    }
}
