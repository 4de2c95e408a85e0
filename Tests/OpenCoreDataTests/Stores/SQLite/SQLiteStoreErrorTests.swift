import CoreData
import Foundation
import Testing

/// Bad store files and mismatched models are thrown errors, never crashes. Related documentation:
/// Core Data Constants, `NSPersistentStoreIncompatibleVersionHashError` (134100),
/// `NSPersistentStoreOpenError` (134080), `NSSQLiteError` (134180); NSPersistentStoreCoordinator,
/// `NSIgnorePersistentStoreVersioningOption`.
@Suite("SQLite store: bad files and mismatched models")
struct SQLiteStoreErrorTests {
    let directory = TemporaryDirectory()

    private func open(_ url: URL, model: NSManagedObjectModel = CompanyModel.make(), options: [AnyHashable: Any]? = nil)
        throws
    {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: options)
    }

    private func code(of body: () throws -> Void) -> Int? {
        do {
            try body()
            return nil
        } catch let error as NSError {
            #expect(error.domain == NSCocoaErrorDomain)
            return error.code
        }
    }

    /// A file that is not SQLite at all is `NSPersistentStoreOpenError`.
    @Test func textFileIsNotAStore() throws {
        let url = directory.file("notes.sqlite")
        try Data(repeating: 0x41, count: 4096).write(to: url)
        #expect(code { try open(url) } == NSPersistentStoreOpenError)
    }

    /// An SQLite database without Core Data's tables is `NSPersistentStoreOpenError`.
    @Test func plainSQLiteDatabaseIsNotAStore() throws {
        let url = directory.file("plain.sqlite")
        _ = try sqlite3Write(url, "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);")
        #expect(code { try open(url) } == NSPersistentStoreOpenError)
    }

    /// A store cut short, or with its pages overwritten, is an error (open or SQLite), not a crash.
    @Test func truncatedAndCorruptStoresAreErrors() throws {
        let url = directory.file("Company.sqlite")
        do {
            let context = try sqliteStack(url)
            for index in 0..<200 { context.employee("E\(index)", salary: Double(index)) }
            try context.save()
        }
        try checkpoint(url)
        let whole = try Data(contentsOf: url)
        let truncated = directory.file("Truncated.sqlite")
        try whole.prefix(whole.count / 2).write(to: truncated)
        let truncatedCode = code {
            let context = try sqliteStack(truncated)
            _ = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee"))
        }
        #expect(truncatedCode == NSPersistentStoreOpenError || truncatedCode == NSSQLiteError)
        var bytes = [UInt8](whole)
        for index in stride(from: 100, to: bytes.count, by: 7) { bytes[index] ^= 0x5A }
        let corrupt = directory.file("Corrupt.sqlite")
        try Data(bytes).write(to: corrupt)
        let corruptCode = code {
            let context = try sqliteStack(corrupt)
            _ = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee"))
        }
        #expect(corruptCode == NSPersistentStoreOpenError || corruptCode == NSSQLiteError)
    }

    /// A model whose entity version hashes differ from the store's is refused with 134100;
    /// `NSIgnorePersistentStoreVersioningOption` opens it anyway.
    @Test func versionHashMismatchIsRefusedUnlessIgnored() throws {
        let url = directory.file("Company.sqlite")
        try open(url)
        let changed = CompanyModel.make()
        changed.entitiesByName["Department"]!.properties.append(CompanyModel.attribute("budget", .doubleAttributeType))
        #expect(code { try open(url, model: changed) } == NSPersistentStoreIncompatibleVersionHashError)
        #expect(
            code { try open(url, model: changed, options: [NSIgnorePersistentStoreVersioningOption: true]) }
                != NSPersistentStoreIncompatibleVersionHashError)
    }

    /// The metadata Apple writes: store type, UUID as `Z_UUID`, version hashes equal to the model's,
    /// hashes version 3 and the checksum (STORE-FORMAT.md, "Bookkeeping tables").
    @Test func metadataIsApples() throws {
        let url = directory.file("Company.sqlite")
        try open(url)
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: url, options: nil)
        #expect(metadata[NSStoreTypeKey] as? String == "SQLite")
        #expect(metadata[NSStoreUUIDKey] as? String == (try sqlite3(url, "SELECT Z_UUID FROM Z_METADATA")).first)
        #expect(
            metadata["NSStoreModelVersionHashes"] as? [String: Data] == CompanyModel.make().entityVersionHashesByName)
        #expect(metadata["NSStoreModelVersionHashesVersion"] as? Int == 3)
        #expect(metadata["_NSAutoVacuumLevel"] as? String == "2")
        #expect(metadata["NSStoreModelVersionChecksumKey"] is String)
        #expect(try sqlite3(url, "PRAGMA auto_vacuum") == ["2"])
        #expect(try sqlite3(url, "PRAGMA journal_mode") == ["wal"])
    }
}

/// Runs SQL with the sqlite3 tool (writing).
func sqlite3Write(_ url: URL, _ sql: String) throws -> [String] {
    try sqlite3(url, sql, readOnly: false)
}

/// Moves a WAL store's committed pages into the main file.
func checkpoint(_ url: URL) throws {
    _ = try sqlite3Write(url, "PRAGMA wal_checkpoint(TRUNCATE)")
}
