import CoreData
import Foundation
import Testing

/// Store file size. Rules: Core Data Programming Guide, "Persistent Store Types and Behaviors"
/// ("File Size May Not Reduce After Deleting a Record": use `NSSQLiteManualVacuumOption`);
/// NSSQLiteManualVacuumOption reference (SQLite's `VACUUM` when the store is added) and
/// NSSQLiteAnalyzeOption reference (`ANALYZE`); Apple's stores use incremental auto-vacuum and
/// record it as `_NSAutoVacuumLevel` (STORE-FORMAT.md).
@Suite("SQLite store: file size")
struct VacuumTests {
    let directory = TemporaryDirectory()

    /// Saves `count` employees with 4 KiB names (a page or more each).
    func fill(_ url: URL, count: Int = 300) throws {
        let context = try sqliteStack(url)
        let padding = String(repeating: "x", count: 4096)
        for index in 0..<count { context.employee("\(index) \(padding)") }
        try context.save()
    }

    func pragma(_ url: URL, _ name: String) throws -> Int {
        Int(try sqlite3(url, "PRAGMA \(name)").first ?? "") ?? -1
    }

    @Test("a new store uses incremental auto-vacuum and records level 2 in its metadata")
    func newStoreLevel() throws {
        let url = directory.file("New.sqlite")
        try fill(url, count: 1)
        #expect(try pragma(url, "auto_vacuum") == 2)
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: url, options: nil)
        #expect(metadata["_NSAutoVacuumLevel"] as? String == "2")
    }

    @Test("a save that deletes many rows hands the free pages back")
    func deletingReleasesPages() throws {
        let url = directory.file("Shrink.sqlite")
        try fill(url)
        let full = try pragma(url, "page_count")
        let context = try sqliteStack(url)
        for employee in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee")) {
            context.delete(employee)
        }
        try context.save()
        #expect(try pragma(url, "freelist_count") < 16, "the freed pages went back")
        #expect(try pragma(url, "page_count") * 4 < full, "the file shrank")
    }

    @Test("NSSQLiteManualVacuumOption rebuilds the file at the metadata's auto-vacuum level")
    func manualVacuum() throws {
        let url = directory.file("Vacuum.sqlite")
        try fill(url)
        // As a store written without auto-vacuum would be: rows deleted, their pages left free.
        _ = try sqlite3(url, "PRAGMA auto_vacuum = 0; VACUUM; DELETE FROM ZEMPLOYEE;", readOnly: false)
        #expect(try pragma(url, "auto_vacuum") == 0)
        let free = try pragma(url, "freelist_count")
        #expect(free > 100)
        _ = try sqliteStack(url)
        #expect(try pragma(url, "freelist_count") == free, "without the option nothing is rebuilt")
        _ = try sqliteStack(url, options: [NSSQLiteManualVacuumOption: true])
        #expect(try pragma(url, "freelist_count") == 0)
        #expect(try pragma(url, "auto_vacuum") == 2, "the level Apple recorded in the metadata")
    }

    @Test("NSSQLiteAnalyzeOption gathers the query planner's statistics")
    func analyze() throws {
        let url = directory.file("Analyze.sqlite")
        try fill(url, count: 20)
        #expect(try sqlite3(url, "SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_stat1'") == ["0"])
        _ = try sqliteStack(url, options: [NSSQLiteAnalyzeOption: true])
        #expect(try sqlite3(url, "SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_stat1'") == ["1"])
    }
}
