import CoreData
import Foundation
import Testing

/// A process killed while it migrates a store leaves the store as it was or migrated, never in
/// between, and never unopenable. Core Data Model Versioning and Data Migration Programming Guide
/// ("Lightweight Migration": in situ, by SQL statements); issue 23: "a migration that fails or is
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
        let process = Process()
        process.executableURL = builtExecutable("ConflictWriter")
        process.arguments = ["migrate", url.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        Thread.sleep(forTimeInterval: Double(milliseconds) / 1000)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).contains("migrated")
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
}
