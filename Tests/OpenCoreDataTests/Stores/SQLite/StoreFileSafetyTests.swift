import CSQLite
import CoreData
import Foundation
import Testing

/// What the SQLite store may touch on disk. Related documentation: NSPersistentStoreCoordinator,
/// `destroyPersistentStore(at:type:options:)` ("Deletes (or truncates) the target persistent store
/// in accordance with the store class's requirements"); Core Data Programming Guide, "Persistent
/// Store Types and Behaviors", and NSPersistentStoreDescription (`/dev/null` as an SQLite store's
/// URL is an in-memory database); SQLite's documentation, "In-Memory Databases".
@Suite("SQLite store: destroy touches only stores; /dev/null is in memory; devices are refused")
struct StoreFileSafetyTests {
    let directory = TemporaryDirectory()

    private func coordinator() -> NSPersistentStoreCoordinator {
        NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
    }

    private func names(_ context: NSManagedObjectContext) throws -> [String] {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        return try context.fetch(request).compactMap { $0.value(forKey: "name") as? String }
    }

    private func code(of body: () throws -> Void) -> Int? {
        do {
            try body()
            return nil
        } catch {
            return (error as NSError).code
        }
    }

    private func isCharacterDevice(_ path: String) -> Bool {
        (try? FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType)
            == .typeCharacterSpecial
    }

    private func makeFIFO(_ name: String) throws -> URL {
        let url = directory.file(name)
        #expect(mkfifo(url.path, 0o600) == 0)
        return url
    }

    /// Regression: `destroyPersistentStore` unlinked whatever was at the URL. A file
    /// that is not an SQLite database is not a store: the call fails and the file is unchanged.
    @Test func destroyLeavesAFileThatIsNotAStoreUntouched() throws {
        let url = directory.file("notes.sqlite")
        let text = Data("my thesis, chapter 1".utf8)
        try text.write(to: url)
        #expect(code { try coordinator().destroyPersistentStore(at: url, type: .sqlite) } == 134_070)
        #expect(try Data(contentsOf: url) == text)
    }

    /// Reported from a real library's tests: `destroyPersistentStore` right after `remove(_:)`
    /// failed with "it is not an SQLite store" when another connection held the file for a moment
    /// (SQLite's "database is locked"). The destroy waits for the lock, as the store's own
    /// connections do (`NSPersistentStoreTimeoutOption`, 120 seconds by default), and empties the
    /// store; the file that is not a store still fails with the message that says so.
    @Test func destroyWaitsForAnotherConnectionsLock() throws {
        let url = directory.file("Company.sqlite")
        do {
            let writer = try sqliteStack(url)
            writer.employee("Ada")
            try writer.save()
        }
        // Another connection takes the file's exclusive lock and keeps it for 300 ms: in exclusive
        // locking mode even a WAL reader must wait.
        var handle: OpaquePointer?
        #expect(sqlite3_open_v2(url.path, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK)
        #expect(
            sqlite3_exec(handle, "PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; COMMIT;", nil, nil, nil)
                == SQLITE_OK)
        let held = UncheckedBox(handle)
        let released = DispatchSemaphore(value: 0)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) {
            sqlite3_close_v2(held.value)
            released.signal()
        }
        try coordinator().destroyPersistentStore(at: url, type: .sqlite)
        released.wait()
        #expect(try sqlite3(url, "SELECT count(*) FROM sqlite_master") == ["0"], "the store was emptied")
    }

    /// An SQLite database of another program (no `Z_METADATA`) is not a Core Data store either.
    @Test func destroyLeavesAnotherProgramsSQLiteDatabaseUntouched() throws {
        let url = directory.file("other.sqlite")
        _ = try sqlite3(url, "CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('keep me')", readOnly: false)
        let before = try Data(contentsOf: url)
        #expect(code { try coordinator().destroyPersistentStore(at: url, type: .sqlite) } == 134_070)
        #expect(try Data(contentsOf: url) == before)
        #expect(try sqlite3(url, "SELECT body FROM notes") == ["keep me"])
    }

    /// Regression: run as root, destroying "a store" at a device path deleted the
    /// device. A device, a FIFO or a directory is never a store: nothing is removed or created.
    @Test func destroyNeverTouchesDevicesFIFOsOrDirectories() throws {
        #expect(
            code { try coordinator().destroyPersistentStore(at: URL(fileURLWithPath: "/dev/zero"), type: .sqlite) }
                == 134_070)
        #expect(isCharacterDevice("/dev/zero"))
        let fifo = try makeFIFO("pipe.sqlite")
        #expect(code { try coordinator().destroyPersistentStore(at: fifo, type: .sqlite) } == 134_070)
        #expect(FileManager.default.fileExists(atPath: fifo.path))
        let folder = directory.file("Folder.sqlite")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        #expect(code { try coordinator().destroyPersistentStore(at: folder, type: .sqlite) } == 134_070)
        #expect(FileManager.default.fileExists(atPath: folder.path))
    }

    /// Another store type is held to the same rule: the coordinator removes only a regular file
    /// the store class reads as a store of that type (its metadata names the type).
    @Test func otherStoreTypesRemoveOnlyTheirOwnFiles() throws {
        NSPersistentStoreCoordinator.registerStoreClass(PlistFileStore.self, forStoreType: PlistFileStore.typeName)
        let type = NSPersistentStore.StoreType(rawValue: PlistFileStore.typeName)
        let fifo = try makeFIFO("pipe.plist")
        #expect(code { try coordinator().destroyPersistentStore(at: fifo, type: type) } == 134_070)
        #expect(FileManager.default.fileExists(atPath: fifo.path))
        #expect(
            code { try coordinator().destroyPersistentStore(at: URL(fileURLWithPath: "/dev/zero"), type: type) }
                == 134_070)
        #expect(isCharacterDevice("/dev/zero"))
        let text = directory.file("notes.plist")
        try Data("not a plist".utf8).write(to: text)
        #expect(code { try coordinator().destroyPersistentStore(at: text, type: type) } == 134_070)
        #expect(FileManager.default.fileExists(atPath: text.path))
        let foreign = directory.file("foreign.plist")
        try PlistFileStore.write([NSStoreTypeKey: "Other"], to: foreign)
        #expect(code { try coordinator().destroyPersistentStore(at: foreign, type: type) } == 134_070)
        #expect(FileManager.default.fileExists(atPath: foreign.path))
        let own = directory.file("own.plist")
        try PlistFileStore.write([NSStoreTypeKey: PlistFileStore.typeName], to: own)
        try coordinator().destroyPersistentStore(at: own, type: type)
        #expect(!FileManager.default.fileExists(atPath: own.path))
    }

    /// `/dev/null` is the in-memory SQLite store's URL, so destroying it succeeds and leaves the
    /// device as it was; so does destroying an in-memory store, which has no file.
    @Test func destroyingDevNullOrAnInMemoryStoreTouchesNoFile() throws {
        let devNull = URL(fileURLWithPath: "/dev/null")
        try coordinator().destroyPersistentStore(at: devNull, type: .sqlite)
        try coordinator().destroyPersistentStore(at: devNull, type: .inMemory)
        #expect(isCharacterDevice("/dev/null"))
        let file = directory.file("keep.txt")
        try Data("x".utf8).write(to: file)
        try coordinator().destroyPersistentStore(at: file, type: .inMemory)
        #expect(FileManager.default.fileExists(atPath: file.path))
    }

    /// A missing store is already destroyed; an unknown type is `NSPersistentStoreInvalidTypeError`.
    /// Destroying an SQLite store whose file is gone succeeds and leaves an empty file, as Apple's
    /// does (its store opens the path through SQLite, which creates it; real code written against
    /// Apple's removes that file next, and failed when it was missing). An unknown type fails.
    @Test func destroyingAMissingStoreSucceedsAndAnUnknownTypeFails() throws {
        try coordinator().destroyPersistentStore(at: directory.file("Never.sqlite"), type: .sqlite)
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.file("Never.sqlite").path)
        #expect(attributes[.size] as? Int == 0)
        try FileManager.default.removeItem(at: directory.file("Never.sqlite"))
        #expect(
            code {
                try coordinator().destroyPersistentStore(
                    at: directory.file("x"), type: NSPersistentStore.StoreType(rawValue: "NoSuchType"))
            } == 134_000)
    }

    /// Apple's SQLite store reads `/dev/null` as a private in-memory database: it saves and
    /// fetches, two stores at `/dev/null` share nothing, and no file appears beside the device.
    @Test func devNullIsAPrivateInMemoryDatabase() throws {
        let devNull = URL(fileURLWithPath: "/dev/null")
        let first = try sqliteStack(devNull)
        first.employee("Ada")
        try first.save()
        #expect(try names(first) == ["Ada"])
        first.reset()
        #expect(try names(first) == ["Ada"])
        let second = try sqliteStack(devNull)
        #expect(try names(second).isEmpty)
        for suffix in ["-journal", "-wal", "-shm"] {
            #expect(!FileManager.default.fileExists(atPath: "/dev/null" + suffix))
        }
        #expect(!FileManager.default.fileExists(atPath: "/dev/.null_SUPPORT"))
        #expect(isCharacterDevice("/dev/null"))
    }

    /// Opening a store at a device or FIFO fails with `NSPersistentStoreOpenError` before SQLite
    /// reads it (a FIFO would block) and creates nothing beside it.
    @Test func openingADeviceOrFIFOFailsAndCreatesNothing() throws {
        #expect(code { _ = try sqliteStack(URL(fileURLWithPath: "/dev/zero")) } == 134_080)
        for suffix in ["-journal", "-wal", "-shm"] {
            #expect(!FileManager.default.fileExists(atPath: "/dev/zero" + suffix))
        }
        let fifo = try makeFIFO("pipe.sqlite")
        #expect(code { _ = try sqliteStack(fifo) } == 134_080)
        #expect(
            code { _ = try NSPersistentStoreCoordinator.metadataForPersistentStore(type: .sqlite, at: fifo) }
                == 134_080)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["pipe.sqlite"])
    }

    /// Regression: a REAL where an integer column is expected (`1e300`, from a damaged or
    /// foreign file) trapped converting it; it reads as its integer part, saturated.
    @Test func aRealInAnIntegerColumnReadsWithoutATrap() throws {
        let url = directory.file("Company.sqlite")
        do {
            let writer = try sqliteStack(url)
            let ada = writer.employee("Ada")
            for number in [1, 2] {
                let badge = NSEntityDescription.insertNewObject(forEntityName: "Badge", into: writer)
                badge.setValue(number, forKey: "number")
                if number == 1 { ada.setValue(badge, forKey: "badge") }
            }
            try writer.save()
        }
        _ = try sqlite3(url, "UPDATE ZBADGE SET ZNUMBER = 1e300 WHERE ZNUMBER = 1", readOnly: false)
        _ = try sqlite3(url, "UPDATE ZBADGE SET ZNUMBER = -2.75 WHERE ZNUMBER = 2", readOnly: false)
        let reader = try sqliteStack(url)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Badge")
        let numbers = try reader.fetch(request).compactMap { ($0.value(forKey: "number") as? NSNumber)?.int64Value }
        #expect(numbers.sorted() == [-2, Int64.max])
    }

    /// A store of Ada and Bob in Sales, Bob managing Ada, and the name of `ZEMPLOYEE`'s entity
    /// column for `manager` (which can point at an Employee or a Manager, so its entity number has
    /// a column): the store the damaged-column tests damage.
    private func salesWithAdaManagedByBob() throws -> (url: URL, entityColumn: String) {
        let url = directory.file("Company.sqlite")
        do {
            let writer = try sqliteStack(url)
            let sales = writer.department("Sales")
            let ada = writer.employee("Ada")
            let bob = writer.employee("Bob")
            ada.setValue(sales, forKey: "department")
            bob.setValue(sales, forKey: "department")
            ada.setValue(bob, forKey: "manager")
            try writer.save()
        }
        let columns = try sqlite3(url, "SELECT name FROM pragma_table_info('ZEMPLOYEE')")
        return (url, try #require(columns.first { $0.hasSuffix("MANAGER") && $0 != "ZMANAGER" }))
    }

    /// Regression: a to-one column holding a REAL, or whose `Z<n>` entity column names
    /// an entity the destination cannot be, trapped when the relationship was read.
    @Test func damagedToOneColumnsReadWithoutATrap() throws {
        let (url, entityColumn) = try salesWithAdaManagedByBob()
        let badge = try #require(try sqlite3(url, "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Badge'").first)
        _ = try sqlite3(url, "UPDATE ZEMPLOYEE SET \(entityColumn) = \(badge) WHERE ZNAME = 'Ada'", readOnly: false)
        _ = try sqlite3(url, "UPDATE ZEMPLOYEE SET ZDEPARTMENT = 1.0 WHERE ZNAME = 'Bob'", readOnly: false)
        let reader = try sqliteStack(url)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        let people = try reader.fetch(request)
        let departments = people.map {
            ($0.value(forKey: "department") as? NSManagedObject)?.value(forKey: "name") as? String
        }
        #expect(departments == ["Sales", "Sales"])
        let manager = people.first?.value(forKey: "manager") as? NSManagedObject
        #expect(manager?.entity.name == "Employee")
        #expect(manager?.value(forKey: "name") as? String == "Bob")
    }

    /// Reported from a real library's tests: a to-one column holding a value of another kind trapped.
    /// Every kind of damage to one row's columns — a real with a fraction, text or a blob in a
    /// to-one, its `Z<n>` entity column, `Z_ENT`, `Z_PK`, `Z_OPT` or an attribute; a key no row of
    /// the destination has; an unrelated table's entity number — is read, faulted, prefetched,
    /// fetched as dictionaries, deleted through, exported and checked without a trap, and the
    /// other rows read as saved.
    @Test(
        "a to-one column of the wrong kind reads without a trap",
        arguments: [
            "ZDEPARTMENT = 1.5", "ZDEPARTMENT = 'Sales'", "ZDEPARTMENT = x'0102'", "ZDEPARTMENT = 999",
            "ZDEPARTMENT = -1", "ZDEPARTMENT = 9.9e300", "ENTITY = DEPARTMENT", "ENTITY = 999", "ENTITY = 'x'",
            "ENTITY = 2.5", "Z_ENT = DEPARTMENT", "Z_ENT = 'x'", "Z_ENT = 2.5", "Z_OPT = 'x'", "Z_OPT = 1.5",
            "Z_PK = 1.5", "Z_PK = 'x'", "ZMANAGER = 1.5", "ZMANAGER = 'x'", "ZMANAGER = 2", "ZMANAGER = 1",
            "ZNAME = 5", "ZSALARY = 'x'", "ZSTARTDATE = 'x'", "ZSTARTDATE = x'00'",
        ])
    func wrongKindsInAToOneColumn(_ damage: String) throws {
        let (url, entityColumn) = try salesWithAdaManagedByBob()
        let department = try #require(
            try sqlite3(url, "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Department'").first)
        let assignment = damage.replacingOccurrences(of: "ENTITY", with: entityColumn)
            .replacingOccurrences(of: "= DEPARTMENT", with: "= \(department)")
        _ = try sqlite3(url, "UPDATE ZEMPLOYEE SET \(assignment) WHERE ZNAME = 'Ada'", readOnly: false)
        let reader = try sqliteStack(url)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        for prefetching in [false, true] {
            reader.reset()
            if prefetching { request.relationshipKeyPathsForPrefetching = ["department", "manager"] }
            guard let people = try? reader.fetch(request) else { continue }
            // The damage stays in Ada's row: Bob reads as saved.
            let bob = people.first { $0.value(forKey: "name") as? String == "Bob" }
            if let bob {
                #expect(
                    (bob.value(forKey: "department") as? NSManagedObject)?.value(forKey: "name") as? String == "Sales")
            }
            for person in people {
                for key in ["department", "manager"] {
                    if let destination = person.value(forKey: key) as? NSManagedObject {
                        _ = try? reader.existingObject(with: destination.objectID)
                        _ = destination.isFault ? nil : destination.value(forKey: "name")
                    }
                }
            }
            let dictionaries = NSFetchRequest<NSDictionary>(entityName: "Employee")
            dictionaries.resultType = .dictionaryResultType
            dictionaries.propertiesToFetch = ["name", "department", "manager"]
            _ = try? reader.fetch(dictionaries)
        }
        reader.reset()
        request.fetchBatchSize = 1
        request.returnsObjectsAsFaults = false
        request.predicate = NSPredicate(format: "department.name == 'Sales' OR manager != nil")
        for person in (try? reader.fetch(request)) ?? [] {
            _ = (person.value(forKey: "department") as? NSManagedObject)?.value(forKey: "name")
            _ = (person.value(forKey: "directReports") as? Set<NSManagedObject>)?.count
        }
        let sales = NSFetchRequest<NSManagedObject>(entityName: "Department")
        for department in (try? reader.fetch(sales)) ?? [] {
            _ = (department.value(forKey: "employees") as? Set<NSManagedObject>)?.map { $0.value(forKey: "name") }
            reader.delete(department)
        }
        for person in (try? reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee"))) ?? [] {
            person.setValue(nil, forKey: "manager")
        }
        try? reader.save()
        for command in ["export", "check", "info"] {
            let result = try Tool.run([command, url.path])
            #expect(!result.error.contains("Fatal error"), "coredata \(command): \(result.error)")
        }
    }

    /// Reported from a real library's tests: a megabyte `Z_UUID` in `Z_METADATA` (the store
    /// identifier, which every object ID's URI carries) made a query spin for 20 seconds. Core
    /// Data writes a 36-character UUID there, so such a file is refused at open with an error
    /// that says why; an identifier of a few hundred characters still opens.
    @Test func aHugeStoreIdentifierIsRefusedAtOpen() throws {
        let url = directory.file("Company.sqlite")
        do {
            let writer = try sqliteStack(url)
            writer.employee("Ada")
            try writer.save()
        }
        _ = try sqlite3(url, "UPDATE Z_METADATA SET Z_UUID = printf('%.*c', 300, 'u')", readOnly: false)
        let reader = try sqliteStack(url)
        #expect(reader.persistentStoreCoordinator?.persistentStores.first?.identifier?.count == 300)
        #expect(try reader.count(for: NSFetchRequest<NSManagedObject>(entityName: "Employee")) == 1)
        _ = try sqlite3(url, "UPDATE Z_METADATA SET Z_UUID = printf('%.*c', 1000000, 'u')", readOnly: false)
        let error = #expect(throws: NSError.self) { try sqliteStack(url) }
        #expect(error?.domain == NSCocoaErrorDomain)
        #expect(error?.code == NSPersistentStoreOpenError)
        #expect(error?.localizedDescription.contains("store identifier (Z_UUID) of 1000000 bytes") == true)
    }

    /// Regression: a process killed while creating a store left an SQLite file with no
    /// tables that was "not a Core Data SQLite store" forever. Such a file is a new store.
    @Test func anSQLiteFileWithNoTablesOpensAsANewStore() throws {
        let url = directory.file("Half.sqlite")
        _ = try sqlite3(url, "PRAGMA auto_vacuum = 2; PRAGMA journal_mode = WAL", readOnly: false)
        #expect(try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int ?? 0 > 0)
        let context = try sqliteStack(url)
        context.employee("Ada")
        try context.save()
        #expect(try names(try sqliteStack(url)) == ["Ada"])
        // Read-only, the same file has no store to read.
        let empty = directory.file("Empty.sqlite")
        _ = try sqlite3(empty, "PRAGMA journal_mode = WAL", readOnly: false)
        #expect(code { _ = try sqliteStack(empty, options: [NSReadOnlyPersistentStoreOption: true]) } == 134_080)
    }
}

/// A store type whose file is a property list of its metadata: enough for the coordinator to
/// tell its files from others'.
private final class PlistFileStore: NSPersistentStore, @unchecked Sendable {
    static let typeName = "StoreFileSafetyTests.PlistFile"

    static func write(_ metadata: [String: Any], to url: URL) throws {
        try PropertyListSerialization.data(fromPropertyList: metadata, format: .xml, options: 0).write(to: url)
    }

    override class func metadataForPersistentStore(with url: URL) throws -> [String: Any] {
        let data = try Data(contentsOf: url)
        guard let plist = try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any] else {
            throw NSError(domain: NSCocoaErrorDomain, code: NSPersistentStoreInvalidTypeError)
        }
        return plist
    }
}
