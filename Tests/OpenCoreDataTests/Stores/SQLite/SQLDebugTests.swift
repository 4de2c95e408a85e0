import Foundation
import Logging
import Testing

@testable import OpenCoreData
@testable import OpenCoreDataSQLite

/// `COREDATA_SQLDEBUG`, the counterpart of Apple's `-com.apple.CoreData.SQLDebug 1` launch
/// argument (Core Data Programming Guide, "Debugging Core Data": level 1 logs the SQL sent to
/// SQLite with its time; higher levels add the bound values).
@Suite("SQLite store: SQL debug logging", .serialized)
struct SQLDebugTests {
    let directory = TemporaryDirectory()

    private func fetchLogged(level: Int) throws -> [String] {
        try CapturedLog.sqlDebug(level: level).capture { lines in
            let context = try sqliteStack(directory.file("Debug\(level).sqlite"))
            context.employee("Ada", salary: 10)
            try context.save()
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.predicate = NSPredicate(format: "salary > %d", 7)
            #expect(try context.fetch(request).count == 1)
            return lines.logged(on: pthread_self())
        }
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

    /// A save of new objects is one transaction: the keys of `Z_PRIMARYKEY` are taken and the
    /// rows that use them written between one `BEGIN IMMEDIATE` and one `COMMIT`, so each save
    /// flushes the disk once (Apple's SQLDebug output of a save shows the same: the
    /// `Z_PRIMARYKEY` update inside the save's transaction). Issue 21: it was two.
    @Test func aSaveIsOneTransaction() throws {
        let context = try sqliteStack(directory.file("OneTransaction.sqlite"))
        context.employee("Ada", salary: 10)
        try context.save()
        try CapturedLog.sqlDebug(level: 1).capture { lines in
            context.employee("Grace", salary: 20)
            context.department("R&D")
            try context.save()
            let logged = lines.logged(on: pthread_self()).filter { $0.hasPrefix("sql: ") }
            #expect(logged.filter { $0 == "sql: BEGIN IMMEDIATE" }.count == 1)
            #expect(logged.filter { $0 == "sql: COMMIT" }.count == 1)
            let begin = try #require(logged.firstIndex(of: "sql: BEGIN IMMEDIATE"))
            let commit = try #require(logged.firstIndex(of: "sql: COMMIT"))
            let keys = try #require(logged.firstIndex { $0.hasPrefix("sql: UPDATE Z_PRIMARYKEY") })
            let insert = try #require(logged.firstIndex { $0.hasPrefix("sql: INSERT INTO ZEMPLOYEE") })
            #expect(begin < keys && keys < insert && insert < commit)
            #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Employee")) == 2)
        }
    }

    /// Level 2 adds the values bound to each statement.
    @Test func levelTwoAddsBoundValues() throws {
        let lines = try fetchLogged(level: 2)
        let select = try #require(lines.firstIndex { $0.hasPrefix("sql: SELECT") && $0.contains("ZSALARY >") })
        #expect(lines[select + 1] == "details: SQLite bind[0] = 7.0")
        #expect(lines.contains { $0.hasPrefix("details: SQLite bind[") && $0.hasSuffix("= \"Ada\"") })
    }

    /// Issue 21: a fetch sorted by a string attribute — the most common sort — sorted every row in
    /// memory, so `LIMIT 10` realized them all. Each string selector Apple's sort descriptors take
    /// (NSSortDescriptor: `compare:`, `caseInsensitiveCompare:`, `localizedCompare:`,
    /// `localizedCaseInsensitiveCompare:`, `localizedStandardCompare:`) now sorts and windows in
    /// SQL through a collation running the in-memory comparison: the log shows the `ORDER BY …
    /// COLLATE` and `LIMIT`, only the window's rows come back, in the order an in-memory sort gives.
    @Test(
        arguments: [
            "compare:", "caseInsensitiveCompare:", "localizedCompare:", "localizedCaseInsensitiveCompare:",
            "localizedStandardCompare:",
        ])
    func stringSortsRunInSQL(selector: String) throws {
        let names = [
            "bob", "Bob", "ada", "Ada", "Ådne", "Émile", "emile", "Zoë", "zed", "file10", "file9", "file1", "",
            "Ångström", "ß", "ss", "a-b", "ab", "Ab", "ä",
        ]
        try CapturedLog.sqlDebug(level: 1).capture { lines in
            let context = try sqliteStack(directory.file("Sort-\(selector.dropLast()).sqlite"))
            for name in names { context.employee(name) }
            try context.save()
            let sort = NSSortDescriptor(key: "name", ascending: true, selector: Selector(selector))
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.sortDescriptors = [sort]
            request.fetchLimit = 10
            let fetched = try context.fetch(request).compactMap { $0.value(forKey: "name") as? String }
            // The in-memory answer: the same descriptor sorting the plain strings.
            let expected = names.map { ["name": $0] }.sorted { sort.compare($0, to: $1) == .orderedAscending }
                .prefix(10).compactMap { $0["name"] }
            #expect(fetched.count == 10)
            if selector == "compare:" { #expect(fetched == expected) }
            // Ties (equal under the selector) may come in either order; compare the sort keys.
            for (got, want) in zip(fetched, expected) {
                #expect(sort.compare(["name": got], to: ["name": want]) == .orderedSame, "\(got) vs \(want)")
            }
            let thread = pthread_self()
            let select = lines.logged(on: thread).first { $0.hasPrefix("sql: SELECT") && $0.contains("ZNAME COLLATE") }
            #expect(select?.contains("LIMIT ?") == true, "\(lines.logged(on: thread))")
            let rows = lines.logged(on: thread).first { $0.hasPrefix("annotation:") && $0.hasSuffix("rows: 10") }
            #expect(rows != nil, "only the window's rows come back from SQL")
        }
    }

    /// Issue 21: a windowed fetch with pending changes (NSFetchRequest `fetchLimit` with
    /// `includesPendingChanges`, the default) read every row of the entity and sorted them all in
    /// memory, firing every fault. The store now runs one statement with a `LIMIT` of offset +
    /// limit + one row per pending saved object, and only the objects compared while the pending
    /// ones are placed are fired.
    @Test func aWindowWithPendingChangesIsOneWindowedStatement() throws {
        let context = try sqliteStack(directory.file("PendingWindow.sqlite"))
        for index in 0..<500 { context.employee(String(format: "e%03d", index), salary: Double(index)) }
        try context.save()
        context.reset()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        request.fetchLimit = 5
        request.fetchOffset = 2
        let first = try context.fetch(request)
        first[0].setValue("zzz", forKey: "name")  // e002 leaves the window
        context.delete(first[1])  // e003 leaves the results
        context.employee("e0045", salary: 1)  // a new object inside the window
        context.processPendingChanges()  // the delete rules read the deleted object's relationships
        try CapturedLog.sqlDebug(level: 1).capture { lines in
            let names = try context.fetch(request).compactMap { $0.value(forKey: "name") as? String }
            #expect(names == ["e004", "e0045", "e005", "e006", "e007"])
            let logged = lines.logged(on: pthread_self())
            let selects = logged.filter { $0.hasPrefix("sql: SELECT") }
            #expect(selects.count == 1, "\(selects)")
            #expect(logged.contains { $0.hasPrefix("sql: SELECT") && $0.contains("LIMIT ?") })
            #expect(
                logged.contains { $0.hasPrefix("annotation:") && $0.hasSuffix("rows: 9") }, "2 + 5 + 2 saved pending")
            let realized = context.registeredObjects.filter { !$0.isFault }.count
            #expect(realized < 20, "\(realized) objects realized; the window and a binary search's few")
        }
    }

    /// Walking a to-many — `department.employees`, then each member's values — once read the
    /// member IDs and then each member's row with a statement of its own (N + 2 statements;
    /// Core Data Programming Guide, "Faulting": firing a member fault reads its row unless the
    /// row is cached, and `stalenessInterval`'s default lets a fault fire from data fetched
    /// before). Firing the to-many now reads its members' rows with their IDs, in one statement
    /// by the owner's key, and the members fire from those rows. The values are the store's,
    /// as before.
    @Test func walkingAToManyReadsItsMembersTogether() throws {
        let context = try sqliteStack(directory.file("ToMany.sqlite"))
        let department = context.department("R&D")
        for index in 0..<40 {
            context.employee("E\(index)", salary: Double(index)).setValue(department, forKey: "department")
        }
        try context.save()
        context.reset()
        try CapturedLog.sqlDebug(level: 1).capture { lines in
            let fetched = try #require(
                try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Department")).first)
            let members = try #require(fetched.value(forKey: "employees") as? Set<NSManagedObject>)
            let total = members.reduce(0.0) { $0 + ($1.value(forKey: "salary") as? Double ?? 0) }
            #expect(members.count == 40)
            #expect(total == Double((0..<40).reduce(0, +)))
            let selects = lines.logged(on: pthread_self()).filter { $0.hasPrefix("sql: SELECT") }
            #expect(selects.count == 2, "the department, then its members' IDs and rows: \(selects)")
            #expect(selects.last?.contains("ZDEPARTMENT IN (") == true, "read by the owner's key: \(selects)")
        }
    }

    /// Off (the default), nothing is logged.
    @Test func offLogsNothing() throws {
        #expect(try fetchLogged(level: 0).isEmpty)
    }

    /// Metadata is written with the save after `setMetadata(_:for:)` and not with saves that did
    /// not change it (NSPersistentStoreCoordinator, `setMetadata(_:for:)`: "the metadata is
    /// saved with the next save"); the SQL log shows which saves write `Z_METADATA`.
    @Test func metadataIsWrittenOnlyAfterItChanged() throws {
        try CapturedLog.sqlDebug(level: 1).capture { lines in
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
}
