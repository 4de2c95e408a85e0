import CoreData
import Foundation
import Testing

/// Two processes on one SQLite file: this test process and `ConflictWriter` (a helper executable
/// built with the tests) both read Ada; this process saves a change first, then the helper saves
/// its own with a merge policy. Rules: Core Data Programming Guide, "Change Management"
/// ("Conflict Detection and Optimistic Locking"); NSMergePolicy reference. The row version
/// (`Z_OPT`) is what tells the helper the row changed under it.
@Suite("Two processes")
struct TwoProcessTests {
    /// What the helper's save leaves in the store for each policy: the helper read salary 100 and
    /// start date `early`, then set name and salary 300; this process had saved salary 200 and start
    /// date `late` in between.
    struct Outcome: Sendable, CustomTestStringConvertible {
        let policy: String
        let helperSays: String
        let name: String
        let salary: Double
        let startDate: Date

        var testDescription: String { policy }
    }

    static let early = Date(timeIntervalSinceReferenceDate: 0)
    static let late = Date(timeIntervalSinceReferenceDate: 86_400)
    static let helperName = "Ada (second process)"

    static let outcomes = [
        Outcome(policy: "error", helperSays: "error 133020", name: "Ada", salary: 200, startDate: late),
        Outcome(policy: "storeTrump", helperSays: "saved", name: helperName, salary: 200, startDate: late),
        Outcome(policy: "objectTrump", helperSays: "saved", name: helperName, salary: 300, startDate: late),
        Outcome(policy: "overwrite", helperSays: "saved", name: helperName, salary: 300, startDate: early),
        Outcome(policy: "rollback", helperSays: "saved", name: "Ada", salary: 200, startDate: late),
    ]

    /// The `ConflictWriter` executable built with the tests.
    static let helper = builtExecutable("ConflictWriter")

    /// A context on its own coordinator over the store at `url`.
    static func context(_ url: URL) throws -> NSManagedObjectContext {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// Reads from `handle` until a whole line has arrived or the other end closed.
    static func readLine(_ handle: FileHandle) -> String {
        var data = Data()
        while !data.contains(UInt8(ascii: "\n")) {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            data.append(chunk)
        }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("a conflicting save from a second process is resolved by its merge policy", arguments: outcomes)
    func conflictAcrossProcesses(_ expected: Outcome) throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Company.sqlite")
        let mine = try Self.context(url)
        let ada = mine.employee("Ada", salary: 100)
        ada.setValue(Self.early, forKey: "startDate")
        try mine.save()

        let process = Process()
        process.executableURL = Self.helper
        process.arguments = [url.path, ada.objectID.uriRepresentation().absoluteString, expected.policy, "300"]
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        #expect(Self.readLine(output.fileHandleForReading) == "read", "the helper read Ada before our save")

        ada.setValue(200.0, forKey: "salary")
        ada.setValue(Self.late, forKey: "startDate")
        try mine.save()

        input.fileHandleForWriting.write(Data("go\n".utf8))
        try input.fileHandleForWriting.close()
        let said = Self.readLine(output.fileHandleForReading)
        let complaint = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(complaint)")
        #expect(said == expected.helperSays)

        let reader = try Self.context(url)
        let stored = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee"))
        #expect(stored.count == 1)
        let row = try #require(stored.first)
        #expect(row.value(forKey: "name") as? String == expected.name)
        #expect(row.value(forKey: "salary") as? Double == expected.salary)
        #expect(row.value(forKey: "startDate") as? Date == expected.startDate)
    }
}
