import Foundation
import Logging
import Testing

@testable import OpenCoreData

/// `COREDATA_SQLDEBUG`, the counterpart of Apple's `-com.apple.CoreData.SQLDebug 1` launch
/// argument (Core Data Programming Guide, "Debugging Core Data": level 1 logs the SQL sent to
/// SQLite with its time; higher levels add the bound values).
@Suite("SQLite store: SQL debug logging", .serialized)
struct SQLDebugTests {
    let directory = TemporaryDirectory()

    private func fetchLogged(level: Int) throws -> [String] {
        let lines = CapturedLines()
        SQLDebug.configure(
            level: level, logger: Logger(label: "test") { _ in CapturingHandler(lines: lines) })
        defer { SQLDebug.configure(level: 0) }
        let context = try sqliteStack(directory.file("Debug\(level).sqlite"))
        context.employee("Ada", salary: 10)
        try context.save()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.predicate = NSPredicate(format: "salary > %d", 7)
        #expect(try context.fetch(request).count == 1)
        return lines.logged(on: pthread_self())
    }

    /// Level 1: each statement is logged with its execution time and row count, values are not.
    @Test func levelOneLogsStatementsAndTimes() throws {
        let lines = try fetchLogged(level: 1)
        let select = try #require(lines.firstIndex { $0.hasPrefix("sql: SELECT") && $0.contains("ZSALARY") })
        #expect(lines.contains { $0.hasPrefix("sql: INSERT INTO ZEMPLOYEE") })
        #expect(lines.contains("sql: BEGIN IMMEDIATE"))
        #expect(lines[select + 1].hasPrefix("annotation: sql execution time: "))
        #expect(lines[select + 1].hasSuffix("rows: 1"))
        #expect(!lines.contains { $0.hasPrefix("details:") })
    }

    /// Level 2 adds the values bound to each statement.
    @Test func levelTwoAddsBoundValues() throws {
        let lines = try fetchLogged(level: 2)
        let select = try #require(lines.firstIndex { $0.hasPrefix("sql: SELECT") && $0.contains("ZSALARY >") })
        #expect(lines[select + 1] == "details: SQLite bind[0] = 7.0")
        #expect(lines.contains { $0.hasPrefix("details: SQLite bind[") && $0.hasSuffix("= \"Ada\"") })
    }

    /// Off (the default), nothing is logged.
    @Test func offLogsNothing() throws {
        #expect(try fetchLogged(level: 0).isEmpty)
    }

    /// Metadata is written with the save after `setMetadata(_:for:)` and not with saves that did
    /// not change it (NSPersistentStoreCoordinator, `setMetadata(_:for:)`: "the metadata is
    /// saved with the next save"); the SQL log shows which saves write `Z_METADATA`.
    @Test func metadataIsWrittenOnlyAfterItChanged() throws {
        let lines = CapturedLines()
        SQLDebug.configure(level: 1, logger: Logger(label: "test") { _ in CapturingHandler(lines: lines) })
        defer { SQLDebug.configure(level: 0) }
        let thread = pthread_self()
        let url = directory.file("Metadata.sqlite")
        let context = try sqliteStack(url)
        let coordinator = try #require(context.persistentStoreCoordinator)
        let store = try #require(coordinator.persistentStores.first)
        func metadataWrites(_ body: () throws -> Void) rethrows -> Int {
            let before = lines.logged(on: thread).filter { $0.hasPrefix("sql: UPDATE Z_METADATA") }.count
            try body()
            return lines.logged(on: thread).filter { $0.hasPrefix("sql: UPDATE Z_METADATA") }.count - before
        }
        context.employee("Ada")
        #expect(try metadataWrites { try context.save() } == 0)
        var metadata = coordinator.metadata(for: store)
        metadata["AppSchemaRevision"] = 7
        coordinator.setMetadata(metadata, for: store)
        context.employee("Bob")
        #expect(try metadataWrites { try context.save() } == 1)
        context.employee("Cy")
        #expect(try metadataWrites { try context.save() } == 0)
        let saved = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(saved["AppSchemaRevision"] as? Int == 7)
    }
}
