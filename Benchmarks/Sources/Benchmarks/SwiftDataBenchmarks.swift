import Foundation
import SwiftData

/// The benchmark's person as an app declares it with SwiftData: the same eight properties as the
/// Core Data model's `Person`.
@Model
final class SwiftDataPerson {
    var id: Int
    var name: String
    var email: String
    var age: Int
    var salary: Double
    var active: Bool
    var created: Date
    var note: String?

    init(_ row: SQLiteBenchmarks.Row) {
        id = row.id
        name = row.name
        email = row.email
        age = row.age
        salary = row.salary
        active = row.active
        created = row.created
        note = row.note
    }
}

/// SwiftData's API over the SQLite store, beside the Core Data rows it stands on and the same
/// baselines: N inserts and one save, N models fetched, and the `sqlite` suite's string-sorted
/// query written as a `#Predicate` and a `SortDescriptor` (which run as one SQL statement).
enum SwiftDataBenchmarks {
    static let operations = ["insert N + save", "fetch N realized", "#Predicate query sorted by name (×10)"]
    static let engineNames = ["SQLite C API", "GRDB records", "OpenCoreData typed", "SwiftData"]

    /// An engine's three operations: fill a fresh file, fetch every row, the sorted query.
    struct Subject {
        let insertAll: () -> Int
        let fetchAll: () -> Int
        let queryByName: () -> Int
    }

    static func subject(_ index: Int) -> Subject {
        guard index < 3 else { return swiftData() }
        let engine: Engine = [RawSQLite(), GRDBRecords(), TypedCoreDataStore()][index]
        return Subject(
            insertAll: {
                engine.reset()
                return engine.insertAll()
            }, fetchAll: engine.fetchAll, queryByName: engine.queryByName)
    }

    /// SwiftData on an SQLite store in the benchmark's folder; each operation uses a new context,
    /// as the Core Data engines use a new context per operation.
    static func swiftData() -> Subject {
        let url = SQLiteBenchmarks.directory.appendingPathComponent("swiftdata.store")
        nonisolated(unsafe) var container: ModelContainer?
        func open() -> ModelContainer {
            if let container { return container }
            let opened = try! ModelContainer(for: SwiftDataPerson.self, configurations: ModelConfiguration(url: url))
            container = opened
            return opened
        }
        return Subject(
            insertAll: {
                container = nil
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
                let context = ModelContext(open())
                for index in 0..<SQLiteBenchmarks.count { context.insert(SwiftDataPerson(SQLiteBenchmarks.Row(index))) }
                try! context.save()
                return SQLiteBenchmarks.count
            },
            fetchAll: {
                try! ModelContext(open()).fetch(FetchDescriptor<SwiftDataPerson>()).reduce(0) { $0 &+ $1.age }
            },
            queryByName: {
                let context = ModelContext(open())
                var total = 0
                for _ in 0..<10 {
                    var descriptor = FetchDescriptor<SwiftDataPerson>(
                        predicate: #Predicate { $0.age >= 30 && $0.active && $0.salary > 1000 },
                        sortBy: [SortDescriptor(\.name)])
                    descriptor.fetchLimit = 100
                    total &+= try! context.fetch(descriptor).reduce(0) { $0 &+ $1.id }
                }
                return total
            })
    }

    /// Each engine in a child process of its own, as the `sqlite` suite runs them, then the table.
    static func run() {
        print(
            "\nSwiftData vs the Core Data store, hand-written SQLite C API and GRDB records (N = \(SQLiteBenchmarks.count))"
        )
        SQLiteBenchmarks.emptyDirectory()
        var results: [[String: Duration]] = []
        for (index, name) in engineNames.enumerated() {
            print(" \(name)")
            let resultsURL = SQLiteBenchmarks.directory.appendingPathComponent("swiftdata-times-\(index).tsv")
            let process = SQLiteBenchmarks.ownChild(["swiftdata-engine", String(index), resultsURL.path])
            fflush(nil)
            guard (try? process.run()) != nil else { return }
            process.waitUntilExit()
            guard process.terminationStatus == 0, let data = FileManager.default.contents(atPath: resultsURL.path)
            else {
                print("  \(name) did not report its times; no table")
                return
            }
            var times: [String: Duration] = [:]
            for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
                let fields = line.split(separator: "\t")
                if fields.count == 2, let nanoseconds = Int64(fields[1]) {
                    times[String(fields[0])] = .nanoseconds(nanoseconds)
                }
            }
            results.append(times)
        }
        print(
            "\n  | operation | hand-written SQLite | GRDB records | OpenCoreData typed | SwiftData | SwiftData to SQLite | SwiftData to GRDB | SwiftData to typed |"
        )
        print("  |---|---|---|---|---|---|---|---|")
        for operation in operations {
            guard let raw = results[0][operation], let grdb = results[1][operation], let typed = results[2][operation],
                let swiftData = results[3][operation]
            else { continue }
            print(
                "  | \(operation) | \(format(raw)) | \(format(grdb)) | \(format(typed)) | \(format(swiftData)) | \(ratio(swiftData, raw)) | \(ratio(swiftData, grdb)) | \(ratio(swiftData, typed)) |"
            )
        }
    }

    /// The child side of ``run()``: medians of three after a warm-up, written as
    /// `operation<TAB>nanoseconds` lines to `resultsPath`.
    static func measureEngine(engineIndex: Int, resultsPath: String) {
        let subject = subject(engineIndex)
        let name = engineNames[engineIndex]
        let bodies = [subject.insertAll, subject.fetchAll, subject.queryByName]
        var lines: [String] = []
        for (operation, body) in zip(operations, bodies) {
            let time = measure("\(name): \(operation)", repetitions: 3, body)
            lines.append(
                "\(operation)\t\(time.components.seconds * 1_000_000_000 + time.components.attoseconds / 1_000_000_000)"
            )
        }
        guard FileManager.default.createFile(atPath: resultsPath, contents: Data(lines.joined(separator: "\n").utf8))
        else { exit(1) }
    }
}
