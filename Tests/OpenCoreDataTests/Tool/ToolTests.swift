import Foundation
import Testing

/// The built `coredata` executable, run as a user would run it.
enum Tool {
    /// wibosco's `Post` with `color` an Integer 64 (it is a String in every version): a model no
    /// store of the lineage can be migrated to by inference.
    static func wiboscoModelWithColorAsInteger(in directory: TemporaryDirectory) throws -> URL {
        let changed = directory.url.appendingPathComponent("Changed.xcdatamodel")
        try FileManager.default.createDirectory(at: changed, withIntermediateDirectories: true)
        try """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Post" representedClassName="Post" syncable="YES">
                <attribute name="color" optional="YES" attributeType="Integer 64" syncable="YES"/>
            </entity>
        </model>
        """.write(to: changed.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        return changed
    }

    /// The `coredata` executable built with the tests.
    static let executable = builtExecutable("coredata")
    /// `coredata-postgres`: the same tool with the PostgreSQL store.
    static let postgresExecutable = builtExecutable("coredata-postgres")

    struct Result {
        let status: Int32
        let output: String
        let error: String
    }

    /// Starts the tool with `arguments`, its standard output and error on pipes.
    static func start(_ arguments: [String], executable: URL = executable) throws -> (
        process: Process, output: Pipe, error: Pipe
    ) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        return (process, output, error)
    }

    static func run(_ arguments: [String], executable: URL = executable) throws -> Result {
        let (process, output, error) = try start(arguments, executable: executable)
        // Read both pipes before waiting, so a full pipe cannot stall the tool.
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, output: String(decoding: outputData, as: UTF8.self),
            error: String(decoding: errorData, as: UTF8.self))
    }

    /// Runs `coredata-postgres` with `arguments`.
    static func runPostgres(_ arguments: [String]) throws -> Result {
        try run(arguments, executable: postgresExecutable)
    }

    /// The names and contents of every file in `directory`, to show a command wrote nothing.
    static func snapshot(_ directory: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            files[name] = try Data(contentsOf: directory.appendingPathComponent(name))
        }
        return files
    }
}

/// `coredata` on every Apple-written fixture store: `info`, `model`, `query` and `check` succeed,
/// counts match what `sqlite3` reported in INSPECTION.txt, and nothing is written beside the
/// store. Related documentation: Core Data Programming Guide, "Persistent Store Types and
/// Behaviors" (`NSReadOnlyPersistentStoreOption`).
@Suite("coredata tool: Apple-written fixture stores")
struct ToolFixtureTests {
    let directory = TemporaryDirectory()

    /// Table row counts per store file, from the fixtures' INSPECTION.txt (`#### row counts`).
    static func inspectedCounts(_ root: URL, store: String) throws -> [String: Int] {
        let folder = root.appendingPathComponent("stores")
            .appendingPathComponent(String(store.split(separator: "/").first ?? ""))
        let text = try String(contentsOf: folder.appendingPathComponent("INSPECTION.txt"), encoding: .utf8)
        let name = (store as NSString).lastPathComponent
        guard let start = text.range(of: "sqlite3 '\(name)' .schema") else { return [:] }
        let section = text[start.upperBound...]
        let end = section.range(of: "================")?.lowerBound ?? section.endIndex
        guard let counts = section[..<end].range(of: "#### row counts\n") else { return [:] }
        var result: [String: Int] = [:]
        for line in section[counts.upperBound..<end].split(separator: "\n") {
            if line.hasPrefix("####") { break }
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            if parts.count == 2, let count = Int(parts[1]) { result[String(parts[0])] = count }
        }
        return result
    }

    @Test(arguments: FixtureStores.cases)
    func readCommandsSucceed(_ fixture: FixtureStores.Case) throws {
        guard let root = Fixtures.root() else { return }
        let store = try FixtureStores.copy(fixture.store, root: root, to: directory)
        let before = try Tool.snapshot(directory.url)

        let info = try Tool.run(["info", store.path])
        #expect(info.status == 0, "\(info.error)")
        #expect(info.output.contains("Type:               SQLite"))

        let model = try Tool.run(["model", store.path])
        #expect(model.status == 0, "\(model.error)")
        #expect(model.output.contains("entity "))

        let check = try Tool.run(["check", store.path])
        #expect(check.status == 0, "\(check.output)\(check.error)")

        // Each root entity's count is its table's row count as sqlite3 read it.
        let counts = try Self.inspectedCounts(root, store: fixture.store)
        #expect(!counts.isEmpty, "INSPECTION.txt has the row counts of \(fixture.store)")
        let roots = model.output.split(separator: "\n").filter { $0.hasPrefix("entity ") && !$0.contains(" : ") }
        for line in roots {
            let entity = String(line.dropFirst("entity ".count).split(separator: " ")[0])
            guard let expected = counts["Z" + entity.uppercased()] else { continue }
            let query = try Tool.run(["query", store.path, entity, "--count"])
            #expect(query.status == 0, "\(query.error)")
            #expect(Int(query.output.trimmingCharacters(in: .whitespacesAndNewlines)) == expected, "\(entity)")
            let rows = try Tool.run(["query", store.path, entity, "--format", "json", "--limit", "3"])
            #expect(rows.status == 0, "\(rows.error)")
            let decoded = try JSONSerialization.jsonObject(with: Data(rows.output.utf8)) as? [[String: Any]]
            #expect(decoded?.count == min(3, expected))
        }
        // No file appears, and the store and its -wal are unchanged. (A reader of a WAL database
        // maintains the -shm wal-index that already exists: that is SQLite's shared memory.)
        let after = try Tool.snapshot(directory.url)
        #expect(Set(after.keys) == Set(before.keys), "read commands created no file beside the store")
        #expect(after.filter { !$0.key.hasSuffix("-shm") } == before.filter { !$0.key.hasSuffix("-shm") })
    }
}

/// `info --model` says whether a model's version hashes are the store's, and which entities differ.
@Suite("coredata tool: info against a model")
struct ToolInfoTests {
    let directory = TemporaryDirectory()

    @Test func infoNamesTheEntitiesThatDiffer() throws {
        guard let root = Fixtures.root() else { return }
        let store = try FixtureStores.copy(
            "coredataplus-samplemodel/SampleModel/Fixtures/SampleModel_V1.sqlite", root: root, to: directory)
        let models = root.appendingPathComponent("stores/coredataplus-samplemodel/SampleModel/SampleModel.xcdatamodeld")
        // The versioned model: the version that wrote the store is found.
        let matching = try Tool.run(["info", store.path, "--model", models.path])
        #expect(matching.status == 0)
        #expect(matching.output.contains("matches the store"))
        // A later version: every entity's hash differs (LuxuryCar is the renamed ExpensiveSportCar).
        let later = models.appendingPathComponent("SampleModel2.xcdatamodel")
        let differing = try Tool.run(["info", store.path, "--model", later.path])
        #expect(differing.status == 0)
        #expect(
            differing.output.contains(
                "does not match the store; entities that differ: Car, ExpensiveSportCar, LuxuryCar, Person, SportCar"))
        #expect(differing.output.contains("(from the model cached in the store)"))
    }

    /// Issue 23: "`coredata info` says whether a model can open a store and, if not, what migration
    /// it needs" — the inferred mapping of "Migrating your data model automatically", entity by
    /// entity, or why it cannot be inferred.
    @Test func infoSaysWhatMigrationTheCurrentVersionNeeds() throws {
        guard let root = Fixtures.root() else { return }
        let store = try FixtureStores.copy(
            "wibosco-migration/CoreDataMigration_Example_1.sqlite", root: root, to: directory)
        let models = root.appendingPathComponent("stores/wibosco-migration/CoreDataMigration_Example.xcdatamodeld")
        // Version 1 wrote the store; version 4 is current. Version 2 renamed `color` to `hexColor`
        // through a renaming identifier, but version 4's `hexColor` has none, so straight from 1
        // to 4 it is a new attribute and `color` is dropped (the app migrates one version at a
        // time); `content` is gone, `softDeleted` and `sections` are new, Section is new.
        let result = try Tool.run(["info", store.path, "--model", models.path])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("matches the store"))
        #expect(result.output.contains("by lightweight migration (an inferred mapping)"))
        #expect(
            result.output.contains(
                "  Post: new hexColor, new softDeleted, new sections, dropped color, dropped content"))
        #expect(result.output.contains("  Section: new entity"))
        // SampleModel's store against version 2 alone: the renamed entity, from the model cached in the store.
        let sample = try FixtureStores.copy(
            "coredataplus-samplemodel/SampleModel/Fixtures/SampleModel_V1.sqlite", root: root, to: directory)
        let later = root.appendingPathComponent(
            "stores/coredataplus-samplemodel/SampleModel/SampleModel.xcdatamodeld/SampleModel2.xcdatamodel")
        let renamed = try Tool.run(["info", sample.path, "--model", later.path])
        #expect(renamed.output.contains("  ExpensiveSportCar → LuxuryCar: "), "\(renamed.output)")
        // A type change cannot be inferred: the reason, and that a mapping model is needed.
        let changed = try Tool.wiboscoModelWithColorAsInteger(in: directory)
        let refused = try Tool.run(["info", store.path, "--model", changed.path])
        #expect(refused.status == 0, "\(refused.error)")
        #expect(
            refused.output.contains(
                "not by lightweight migration (Source and destination attribute types are incompatible"))
        #expect(refused.output.contains("it needs a mapping model"))
    }
}

/// `coredata demo` and the commands on the store it leaves, and bad input: each is one line on
/// standard error with exit status 2 (usage) or 1 (data), never a crash, and the store unchanged.
/// Related documentation: the tool's `--help`.
@Suite("coredata tool: demo, queries and bad input")
struct ToolTests {
    private static let demo = Result { () throws -> (TemporaryDirectory, URL) in
        let directory = TemporaryDirectory()
        let store = directory.file("Company.sqlite")
        let result = try Tool.run(["demo", "--store", store.path, "--count", "300"])
        guard result.status == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: ["output": result.error]) }
        return (directory, store)
    }

    @Test func demoFillsAStoreTheOtherCommandsRead() throws {
        let (_, store) = try Self.demo.get()
        #expect(try Tool.run(["query", store.path, "Employee", "--count"]).output == "300\n")
        #expect(try Tool.run(["query", store.path, "Department", "--count"]).output == "10\n")
        let info = try Tool.run(["info", store.path])
        #expect(info.output.contains("Employee    300"))
        #expect(try Tool.run(["check", store.path]).status == 0)
    }

    @Test func queryFiltersSortsAndWindowsInEveryFormat() throws {
        let (_, store) = try Self.demo.get()
        let arguments = [
            "query", store.path, "Employee", "--where", "salary >= 100000 AND department.name == 'Sales'", "--sort",
            "salary:desc,email", "--limit", "4", "--offset", "1", "--fields", "email,salary,department.name,department",
        ]
        let json = try Tool.run(arguments + ["--format", "json"])
        #expect(json.status == 0, "\(json.error)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]])
        #expect(rows.count == 4)
        let salaries = rows.compactMap { $0["salary"] as? Double }
        #expect(salaries == salaries.sorted(by: >) && salaries.allSatisfy { $0 >= 100_000 })
        #expect(rows.allSatisfy { $0["department.name"] as? String == "Sales" })
        #expect(rows.allSatisfy { ($0["department"] as? String)?.hasPrefix("x-coredata://") == true })

        let csv = try Tool.run(arguments + ["--format", "csv"])
        let lines = csv.output.split(separator: "\n")
        #expect(lines.first == "email,salary,department.name,department")
        #expect(lines.count == 5)

        let table = try Tool.run(arguments)
        #expect(table.output.hasSuffix("(4 rows)\n"))
    }

    @Test func modelAsGraphviz() throws {
        let (_, store) = try Self.demo.get()
        let dot = try Tool.run(["model", store.path, "--dot"])
        #expect(dot.status == 0)
        #expect(dot.output.hasPrefix("digraph model {"))
        #expect(dot.output.contains("\"Department\" -> \"Employee\" [label=\"employees / department\""))
    }

    @Test func checkReportsEachProblemOnItsOwnLine() throws {
        let (directory, store) = try Self.demo.get()
        let broken = directory.file("Broken.sqlite")
        try? FileManager.default.removeItem(at: broken)
        try FileManager.default.copyItem(at: store, to: broken)
        _ = try sqlite3(
            broken,
            "UPDATE ZEMPLOYEE SET ZDEPARTMENT = 999 WHERE Z_PK = 3; UPDATE ZEMPLOYEE SET Z_ENT = 42 WHERE Z_PK = 4",
            readOnly: false)
        let check = try Tool.run(["check", broken.path])
        #expect(check.status == 1)
        let findings = check.output.split(separator: "\n")
        #expect(findings.count == 2)
        #expect(findings.contains { $0.contains("ZEMPLOYEE.ZDEPARTMENT: 1 row refers to a missing Department") })
        #expect(findings.contains { $0.contains("Z_ENT 42") })
    }

    /// One case of bad input: the arguments, the exit status, and a phrase of the message.
    struct BadInput: CustomTestStringConvertible, Sendable {
        let label: String
        let arguments: @Sendable (_ store: String, _ directory: TemporaryDirectory) throws -> [String]
        let status: Int32
        let message: String
        var testDescription: String { label }
    }

    static let badInputs: [BadInput] = [
        BadInput(
            label: "missing file", arguments: { _, _ in ["info", "/nonexistent/Store.sqlite"] }, status: 2,
            message: "no such file"),
        BadInput(
            label: "unknown entity", arguments: { store, _ in ["query", store, "Employe"] }, status: 2,
            message: "unknown entity 'Employe'"),
        BadInput(
            label: "unknown key", arguments: { store, _ in ["query", store, "Employee", "--where", "wage > 1"] },
            status: 2, message: "unknown key 'wage'"),
        BadInput(
            label: "unknown sort key", arguments: { store, _ in ["query", store, "Employee", "--sort", "x:desc"] },
            status: 2, message: "unknown key 'x'"),
        BadInput(
            label: "malformed predicate",
            arguments: { store, _ in ["query", store, "Employee", "--where", "salary >> 1"] }, status: 2,
            message: "malformed predicate"),
        BadInput(
            label: "unknown option", arguments: { store, _ in ["query", store, "Employee", "--colour"] },
            status: 2, message: "--colour"),
        BadInput(
            label: "not a Core Data store",
            arguments: { _, directory in
                let file = directory.file("notes.sqlite")
                try Data("just text\n".utf8).write(to: file)
                return ["info", file.path]
            }, status: 1, message: "notes.sqlite"),
        BadInput(
            label: "truncated store",
            arguments: { store, directory in
                let file = directory.file("Truncated.sqlite")
                try Data(try Data(contentsOf: URL(fileURLWithPath: store)).prefix(3000)).write(to: file)
                return ["query", file.path, "Employee"]
            }, status: 1, message: "Truncated.sqlite"),
    ]

    @Test(arguments: badInputs)
    func badInputIsOneLineAndAnExitStatus(_ bad: BadInput) throws {
        let (directory, store) = try Self.demo.get()
        let before = try Data(contentsOf: store)
        let result = try Tool.run(try bad.arguments(store.path, directory))
        #expect(result.status == bad.status, "\(result.error)")
        #expect(result.error.contains(bad.message), "\(result.error)")
        #expect(!result.error.contains("Fatal error") && !result.error.contains("Backtrace"))
        if bad.label != "malformed predicate" && bad.label != "unknown option" {
            #expect(result.error.split(separator: "\n").count == 1, "\(result.error)")
        } else {
            #expect(result.error.contains("^") || bad.label == "unknown option")
        }
        #expect(try Data(contentsOf: store) == before)
    }
}

/// Help, as a newcomer asks for it, and output into a pipe that closes early. Related
/// documentation: the tool's promises ("`coredata --help` … print usage and exit 0", "`coredata info STORE |
/// head -1` ends quietly"); swift-argument-parser's documented `--help`, `-h` and `help <command>`.
@Suite("coredata tool: help and pipes")
struct ToolHelpTests {
    static let commands = ["info", "model", "query", "export", "import", "check", "migrate", "demo"]

    /// Regression: each of these failed with "ArgumentParser.CommandError error 1".
    @Test(arguments: [["--help"], ["-h"], ["help"]])
    func helpForTheToolPrintsUsageAndExitsZero(_ arguments: [String]) throws {
        let result = try Tool.run(arguments)
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("USAGE: coredata <subcommand>"))
        for command in Self.commands { #expect(result.output.contains(command)) }
        #expect(result.error.isEmpty)
    }

    @Test(arguments: commands)
    func helpForEachCommandPrintsItsUsageAndExitsZero(_ command: String) throws {
        for arguments in [[command, "--help"], [command, "-h"], ["help", command]] {
            let result = try Tool.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.error)")
            #expect(result.output.contains("USAGE: coredata \(command)"), "\(arguments)")
            #expect(result.error.isEmpty, "\(arguments)")
        }
    }

    /// A reader that stops early (`| head -1`) ends the tool as it ends `cat`: no message.
    @Test func aPipeClosedEarlyEndsTheToolQuietly() throws {
        let directory = TemporaryDirectory()
        let store = directory.file("Company.sqlite")
        #expect(try Tool.run(["demo", "--store", store.path, "--count", "2000"]).status == 0)
        for arguments in [["export", store.path], ["query", store.path, "Employee"], ["info", store.path]] {
            let (process, output, error) = try Tool.start(arguments)
            let first = output.fileHandleForReading.availableData
            #expect(!first.isEmpty, "\(arguments)")
            try output.fileHandleForReading.close()
            let message = error.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(message.isEmpty, "\(arguments): \(String(decoding: message, as: UTF8.self))")
            let quiet =
                process.terminationStatus == 0
                || (process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGPIPE)
            #expect(quiet, "\(arguments): status \(process.terminationStatus)")
        }
    }
}
