import BenchmarkModel
import CoreData
import GRDB
import GRDBSQLite

/// The SQLite store against two baselines, on the same 8-attribute entity and N rows: the SQLite C
/// API by hand (reused prepared statements, one transaction per write), and GRDB records. The
/// store runs twice: through key-value coding (`CoreDataStore`) and through Xcode-style model
/// classes (`TypedCoreDataStore`). Operations and targets: issue 4; results: BENCHMARKS.md.
enum SQLiteBenchmarks {
    static let count = 100_000
    /// The departments of the relationship graph (``Engine/prepareGraph()``), `count / departments` employees each.
    static let departments = BenchmarkModel.departments
    static let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-bench")

    struct Row {
        let id: Int
        let name: String
        let email: String
        let age: Int
        let salary: Double
        let active: Bool
        let created: Date
        let note: String?
    }

    /// The suite's rows, in the table's order.
    static let operations = [
        "insert N + save", "fetch N realized", "fetch N faults + fire", "query (×10)", "update 10% + save",
        "delete 10% + save", "1,000 single-insert saves", "query sorted by name (×10)", "count (×10)",
        "indexed lookup (×1,000)", "fetchBatchSize iteration over N", "to-one of N objects (faults)",
        "to-many of 1,000 objects (N members)",
    ]
    /// The typed store's two rows beside the to-many walk: the walk
    /// through a to-many declared `Set<Employee>`, and Foundation's `NSSet` alone on the same
    /// members — made and enumerated as the typed walk's `NSSet` is — whose time added to GRDB's
    /// walk is the bound the typed `NSSet` walk is held to.
    static let swiftSetWalk = "to-many through Set<Employee>"
    static let foundationAlone = "NSSets of the same members, made and enumerated"
    /// The generic store's floor: what Foundation alone costs `value(forKey:) as! Int` on N
    /// `NSNumber`s like those an integer attribute reads as (corelibs Foundation checks the
    /// number is exact by making a second `NSNumber` and comparing the two).
    static let numberCasts = "N NSNumbers cast to Int"
    /// The typed store's rows of what each walk's context costs as it goes away (the walk run
    /// untimed first): its objects and their rows let go of and freed, where GRDB's walk frees
    /// arrays of structs. The walk's row minus this is the walk's own work.
    static let toOneTeardown = "the to-one walk's context going away"
    static let toManyTeardown = "the to-many walk's context going away"
    /// The typed store's rows of hand-written SQLite on its own file (``ByHandOnAppleFormat``):
    /// the query, sorted query, count and single-insert saves against Apple's tables, beside
    /// the same rows of the store, whose SQL is that.
    static let byHandQuery = "by hand on Apple's format: query (×10)"
    static let byHandSorted = "by hand on Apple's format: query sorted by name (×10)"
    static let byHandCount = "by hand on Apple's format: count (×10)"
    static let byHandSaves = "by hand on Apple's format: 1,000 single-insert saves"

    /// The engines' names, in ``makeEngines()``'s order.
    static let engineNames = ["SQLite C API", "GRDB records", "OpenCoreData", "OpenCoreData typed"]

    /// Each engine runs in a child process of its own (`Benchmarks sqlite-engine <index> <file>`):
    /// run one after another in one process, an engine's times depended on what the engines
    /// before it had allocated and freed (the same fetch of N took 174 ms first and 302 ms last,
    /// BENCHMARKS-JOURNAL.md), so the table compared heap histories as much as code.
    static func run() {
        print("\nSQLite store vs hand-written SQLite C API and GRDB records (N = \(count))")
        emptyDirectory()
        var results: [String: [String: Duration]] = [:]
        var memory: [String: String] = [:]
        var left: [String: [String]] = [:]
        for (index, name) in engineNames.enumerated() {
            print(" \(name)")
            results[name] = timesInChild(engineIndex: index)
            let growth = residentGrowthInChild(engineIndex: index).split(separator: " ").map(String.init)
            memory[name] = growth.first
            left[name] = Array(growth.dropFirst())
            print(
                "  \(name): resident memory after fetching N: +\(memory[name] ?? "?") MiB;"
                    + " still resident after letting go (\(name.hasPrefix("OpenCoreData") ? "reset, released" : "freed")):"
                    + " +\(left[name]?.joined(separator: ", +") ?? "?") MiB")
        }
        guard engineNames.allSatisfy({ name in operations.allSatisfy { results[name]?[$0] != nil } }) else {
            print("  an engine's child process did not report every operation; no table")
            return
        }
        // "typed": the same store read and written through model classes (TypedCoreDataStore).
        print(
            "\n  | operation | hand-written SQLite | GRDB records | OpenCoreData | typed | ratio to SQLite | ratio to GRDB | typed to SQLite | typed to GRDB |"
        )
        print("  |---|---|---|---|---|---|---|---|---|")
        for operation in operations {
            let raw = results["SQLite C API"]![operation]!
            let grdb = results["GRDB records"]![operation]!
            let ours = results["OpenCoreData"]![operation]!
            let typed = results["OpenCoreData typed"]![operation]!
            print(
                "  | \(operation) | \(format(raw)) | \(format(grdb)) | \(format(ours)) | \(format(typed)) | \(ratio(ours, raw)) | \(ratio(ours, grdb)) | \(ratio(typed, raw)) | \(ratio(typed, grdb)) |"
            )
        }
        let grdbWalk = results["GRDB records"]![operations[12]]!
        if let swiftSets = results["OpenCoreData typed"]![swiftSetWalk],
            let foundation = results["OpenCoreData typed"]![foundationAlone]
        {
            let typedWalk = results["OpenCoreData typed"]![operations[12]]!
            print(
                "  | \(swiftSetWalk) (typed) | | | | \(format(swiftSets)) | | | | \(ratio(swiftSets, grdbWalk)) |")
            print(
                "  Foundation alone (\(foundationAlone)): \(format(foundation)); GRDB's walk + that: "
                    + "\(format(grdbWalk + foundation)); the typed NSSet walk against it: "
                    + "\(ratio(typedWalk, grdbWalk + foundation))")
        }
        let walks = [(operations[11], toOneTeardown), (operations[12], toManyTeardown)]
        for (walk, teardown) in walks {
            guard let going = results["OpenCoreData typed"]![teardown] else { continue }
            let typedWalk = results["OpenCoreData typed"]![walk]!
            print(
                "  Typed, \(teardown): \(format(going)); the walk without it: "
                    + "\(format(typedWalk - going)), \(ratio(typedWalk - going, results["GRDB records"]![walk]!)) GRDB's"
            )
        }
        // Where the store runs the baselines' statement on Apple's tables: the same SQL by hand
        // on the same file, and the store and GRDB against it.
        let byHand = [
            (operations[3], byHandQuery), (operations[7], byHandSorted), (operations[8], byHandCount),
            (operations[6], byHandSaves),
        ]
        for (operation, row) in byHand {
            guard let floor = results["OpenCoreData typed"]![row] else { continue }
            print(
                "  \(row): \(format(floor)); typed against it: "
                    + "\(ratio(results["OpenCoreData typed"]![operation]!, floor)), GRDB against it: "
                    + "\(ratio(results["GRDB records"]![operation]!, floor))")
        }
        if let casts = results["OpenCoreData"]![numberCasts] {
            print("  Foundation alone (\(numberCasts), one per object the generic door reads): \(format(casts))")
        }
        let megabytes = engineNames.map { memory[$0].flatMap(Double.init) }
        // Each of the store's two engines against each baseline, in the columns' order.
        let ratios = [megabytes[2], megabytes[3]].flatMap { ours in
            [megabytes[0], megabytes[1]].map { base in
                guard let base, let ours, base > 0 else { return "?" }
                return String(format: "%.2f×", ours / base)
            }
        }
        print(
            "  | resident memory after fetching N (MiB) | "
                + engineNames.map { memory[$0] ?? "?" }.joined(separator: " | ") + " | "
                + ratios.joined(separator: " | ") + " |")
        // What stays resident once the objects are let go of: the store's context reset, then
        // released; the baselines' arrays freed.
        for (step, index) in [("reset", 0), ("released", 1)] {
            print(
                "  | still resident after the context is \(step) (MiB) | "
                    + engineNames.map { name in
                        name.hasPrefix("OpenCoreData")
                            ? left[name].flatMap { $0.count > index ? $0[index] : nil } ?? "?"
                            : step == "released" ? left[name]?.first ?? "?" : ""
                    }.joined(separator: " | ") + " | | | | |")
        }
    }

    /// The child side of ``run()``: engine `engineIndex` runs every operation (medians of three
    /// after a warm-up), printing each as it goes and writing `operation<TAB>nanoseconds` lines
    /// to `resultsPath`; it leaves the engine's file filled for ``residentGrowthInChild(engineIndex:)``.
    static func measureEngine(engineIndex: Int, resultsPath: String) {
        let engine = makeEngines()[engineIndex]
        var times: [String: Duration] = [:]
        func timed(_ operation: Int, _ body: () -> Int) {
            times[operations[operation]] = measure("\(engine.name): \(operations[operation])", repetitions: 3, body)
        }
        timed(0) {
            engine.reset()
            return engine.insertAll()
        }
        timed(1) { engine.fetchAll() }
        timed(2) { engine.fetchFaultsAndFire() }
        timed(3) { engine.query() }
        timed(7) { engine.queryByName() }
        timed(8) { engine.countMatching() }
        timed(9) { engine.indexedLookups() }
        timed(10) { engine.iterateInBatches() }
        engine.prepareGraph()
        timed(11) { engine.followToOne() }
        timed(12) { engine.followToMany() }
        for row in engine.extraRows() {
            times[row.name] =
                if let setup = row.setup {
                    measure("\(engine.name): \(row.name)", repetitions: 3, setup: setup, row.body)
                } else {
                    measure("\(engine.name): \(row.name)", repetitions: 3, row.body)
                }
        }
        engine.letGoOfExtras()
        timed(4) { engine.updateTenth() }
        // The table is filled again before each delete, untimed: the row measures the delete.
        times[operations[5]] = measure(
            "\(engine.name): \(operations[5])", repetitions: 3,
            setup: {
                engine.reset()
                _ = engine.insertAll()
            }
        ) { engine.deleteTenth() }
        timed(6) { engine.singleInserts() }
        engine.reset()
        _ = engine.insertAll()
        let lines = times.map { operation, time in
            "\(operation)\t\(time.components.seconds * 1_000_000_000 + time.components.attoseconds / 1_000_000_000)"
        }
        guard FileManager.default.createFile(atPath: resultsPath, contents: Data(lines.joined(separator: "\n").utf8))
        else {
            print("  could not write \(resultsPath)")
            exit(1)
        }
    }

    /// Runs ``measureEngine(engineIndex:resultsPath:)`` in a child process (its output goes to this
    /// process's) and reads back its times; an empty answer when the child fails.
    static func timesInChild(engineIndex: Int) -> [String: Duration] {
        let resultsURL = directory.appendingPathComponent("times-\(engineIndex).tsv")
        let process = ownChild(["sqlite-engine", String(engineIndex), resultsURL.path])
        fflush(nil)  // the child writes to the same output; ours first
        guard (try? process.run()) != nil else { return [:] }
        process.waitUntilExit()
        guard process.terminationStatus == 0, let data = FileManager.default.contents(atPath: resultsURL.path) else {
            return [:]
        }
        var times: [String: Duration] = [:]
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: "\t")
            if fields.count == 2, let nanoseconds = Int64(fields[1]) {
                times[String(fields[0])] = .nanoseconds(nanoseconds)
            }
        }
        return times
    }

    /// `Benchmarks sqlite-once <engine> <operation> [after-graph] [repeat]`: fills a fresh file
    /// untimed (and the relationship graph, for the walks, as the suite does), runs one operation
    /// once as the suite's warm-up does, then once more inside ``counted(_:)``, so that
    /// `valgrind --tool=callgrind --toggle-collect='*SQLiteA0O7counted*'` (the mangled name) counts
    /// the instructions of that operation alone, and prints its time and the page faults it took.
    /// Engines: `sqlite`, `grdb`, `coredata`, `coredata-typed`. Operations: `fetch`, `query`, `sorted`, `count`, `lookups`,
    /// `batches`, `to-one`, `to-many`, `to-many-set`, `foundation-sets`, `to-one-teardown`, `to-many-teardown` and `by-hand-query`, `by-hand-sorted`, `by-hand-count`, `by-hand-saves` (`coredata-typed` only), `number-casts` (`coredata` only), `insert` (a fresh file, then N inserts and one save), `saves` (1,000 saves of one insert each), `update` (10 % changed, one save), `delete` (10 % deleted, one
    /// save; the table filled again before each run, untimed, as the suite does). `after-graph` makes the graph before any operation (the
    /// state of the counts before the fourteenth session: the process has made and freed N
    /// other objects first); `repeat` runs the counted operation seven times and prints the median.
    /// Instruction counts are the same on every run, where this machine's wall time is not, so the
    /// rows can be compared across engines exactly.
    static func runOnce(engineName: String, operation: String, options: [String]) {
        let names = ["sqlite": 0, "grdb": 1, "coredata": 2, "coredata-typed": 3]
        let operations: [String: (Engine) -> Int] = [
            "fetch": { $0.fetchAll() }, "query": { $0.query() }, "sorted": { $0.queryByName() },
            "count": { $0.countMatching() }, "lookups": { $0.indexedLookups() }, "batches": { $0.iterateInBatches() },
            "to-one": { $0.followToOne() }, "to-many": { $0.followToMany() },
            "insert": {
                $0.reset()
                return $0.insertAll()
            },
            "saves": { $0.singleInserts() }, "update": { $0.updateTenth() }, "delete": { $0.deleteTenth() },
        ]
        // An engine's own rows, run as the suite runs them: the row's setup untimed.
        let extraRows = [
            "to-many-set": swiftSetWalk, "foundation-sets": foundationAlone, "number-casts": numberCasts,
            "to-one-teardown": toOneTeardown, "to-many-teardown": toManyTeardown, "by-hand-query": byHandQuery,
            "by-hand-sorted": byHandSorted, "by-hand-count": byHandCount, "by-hand-saves": byHandSaves,
        ]
        // The suite fills the table again before each delete, untimed; so does this.
        let setup: (Engine) -> Void =
            if let row = extraRows[operation] {
                { extra(row, of: $0).setup?() }
            } else if operation == "delete" {
                {
                    $0.reset()
                    _ = $0.insertAll()
                }
            } else {
                { _ in }
            }
        guard let index = names[engineName],
            let body = operations[operation] ?? extraRows[operation].map({ row in { extra(row, of: $0).body() } }),
            Set(options).isSubset(of: ["after-graph", "repeat"])
        else {
            print(
                "usage: Benchmarks sqlite-once sqlite|grdb|coredata|coredata-typed fetch|query|sorted|count|lookups|batches|to-one|to-many|insert|saves|update|delete"
                    + " (coredata-typed also to-many-set|foundation-sets|to-one-teardown|to-many-teardown|by-hand-query|by-hand-sorted|by-hand-count|by-hand-saves, coredata also number-casts)"
                    + " [after-graph] [repeat]")
            exit(2)
        }
        emptyDirectory()
        let engine = makeEngines()[index]
        engine.reset()
        _ = engine.insertAll()
        if options.contains("after-graph") || operation.hasPrefix("to-") || operation.hasPrefix("foundation") {
            engine.prepareGraph()
        }
        setup(engine)
        _ = body(engine)
        setup(engine)
        let faultsBefore = minorFaults()
        let start = ContinuousClock.now
        let checksum = counted { body(engine) }
        var times = [ContinuousClock.now - start]
        let faults = minorFaults() - faultsBefore
        if options.contains("repeat") {
            for _ in 1..<7 {
                setup(engine)
                let start = ContinuousClock.now
                _ = body(engine)
                times.append(ContinuousClock.now - start)
            }
        }
        let time = times.sorted()[times.count / 2]
        print(
            "\(engine.name) \(operation): \(format(time))\(times.count > 1 ? " (median of \(times.count))" : ""),"
                + " checksum \(checksum), page faults \(faults)")
    }

    /// The engine's extra row `name`; stops the program when the engine has none.
    static func extra(_ name: String, of engine: Engine) -> ExtraRow {
        guard let row = engine.extraRows().first(where: { $0.name == name }) else {
            print("\(engine.name) has no row \"\(name)\"")
            exit(2)
        }
        return row
    }

    /// Removes the engines' files from an earlier run and makes their directory again.
    static func emptyDirectory() {
        try? FileManager.default.removeItem(at: directory)
        try! FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// Runs `body`; never inlined, so `callgrind` can collect exactly its instructions.
    @inline(never)
    static func counted(_ body: () -> Int) -> Int { body() }

    static func makeEngines() -> [Engine] { [RawSQLite(), GRDBRecords(), CoreDataStore(), TypedCoreDataStore()] }

    /// Resident memory grows little in a process that has already freed memory (the allocator
    /// reuses its pages), so each engine fetches in a fresh child process: `Benchmarks
    /// sqlite-memory <engine>` opens the file the parent just filled, fetches N rows, keeps them,
    /// and prints its resident-memory growth in MiB; then lets go of them (``Engine/letGoOfAll()``)
    /// and prints, after each step, the growth still resident.
    static func residentGrowthInChild(engineIndex: Int) -> String {
        let process = ownChild(["sqlite-memory", String(engineIndex)])
        let pipe = Pipe()
        process.standardOutput = pipe
        guard (try? process.run()) != nil else { return "?" }
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// This benchmark program as a child process with `arguments` (the suite's children).
    static func ownChild(_ arguments: [String]) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = arguments
        return process
    }

    /// The child side of ``residentGrowthInChild(engineIndex:)``.
    static func measureMemory(engineIndex: Int) {
        let engine = makeEngines()[engineIndex]
        engine.reopen()
        let before = residentBytes()
        let kept = engine.keepAll()
        let after = residentBytes()
        precondition(kept == count, "the store holds \(kept) rows, not \(count)")
        let left = engine.letGoOfAll()
        print(([after] + left).map { String(format: "%.1f", Double($0 - before) / 1_048_576) }.joined(separator: " "))
    }

    /// The process's minor page faults so far (`getrusage`): pages the kernel had to map in.
    static func minorFaults() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_minflt
    }

    /// What a store engine's ``Engine/letGoOfAll()`` answers once it dropped its objects: the
    /// resident memory after `context` is reset, then after it is released.
    static func residentAfterLettingGo(of context: inout NSManagedObjectContext?) -> [Int] {
        context?.reset()
        let afterReset = residentAfterAMoment()
        context = nil
        return [afterReset, residentAfterAMoment()]
    }

    /// The resident memory three seconds after letting go of something: the store gives freed
    /// memory back to the system once large releases have been quiet for two.
    static func residentAfterAMoment() -> Int {
        Thread.sleep(forTimeInterval: 3)
        return residentBytes()
    }

    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        return (fields.count > 1 ? Int(fields[1]) ?? 0 : 0) * 4096
    }
}

/// One implementation of the benchmark's operations. Each returns a checksum so no work is skipped.
protocol Engine: AnyObject {
    var name: String { get }
    func reset()
    /// Opens the file an earlier `reset()` and `insertAll()` wrote, as a fresh process would.
    func reopen()
    func insertAll() -> Int
    func fetchAll() -> Int
    func fetchFaultsAndFire() -> Int
    func query() -> Int
    /// The query sorted by a string (`name`), the most common sort.
    func queryByName() -> Int
    /// `count(for:)` of the query's predicate, ten times.
    func countMatching() -> Int
    /// 1,000 fetches of one row by an indexed attribute (`email`).
    func indexedLookups() -> Int
    /// Every row, read a batch at a time (`fetchBatchSize` 1,000; a cursor for the baselines).
    func iterateInBatches() -> Int
    /// Untimed: a second graph of ``SQLiteBenchmarks/departments`` departments and N employees,
    /// each employee in one department (a to-one and its inverse to-many).
    func prepareGraph()
    /// Every employee fetched, and each one's department read through the to-one, as an app
    /// walking a list does (Core Data: a fault per department, fired once).
    func followToOne() -> Int
    /// Every department fetched, and each one's employees read through the to-many (Core Data:
    /// the relationship fault, then each member's fault).
    func followToMany() -> Int
    /// Rows only this engine measures, after the walks while the graph is there: the typed
    /// store's walk through a to-many declared `Set<Employee>` and the Foundation floors.
    func extraRows() -> [ExtraRow]
    /// Lets go of what the extra rows held (the members a floor was measured on).
    func letGoOfExtras()
    func updateTenth() -> Int
    func deleteTenth() -> Int
    func singleInserts() -> Int
    func keepAll() -> Int
    /// Lets go of what ``keepAll()`` kept, as an app that is done with it does: the rows' array
    /// dropped, and for the store the context reset first, then released. Answers the resident
    /// memory left after each step (one value where there is one step).
    func letGoOfAll() -> [Int]
}

extension Engine {
    func extraRows() -> [ExtraRow] { [] }
    func letGoOfExtras() {}
}

/// A row one engine measures beside the suite's operations (``Engine/extraRows()``): `body`
/// timed, after `setup` untimed before each run when there is one.
struct ExtraRow {
    let name: String
    var setup: (() -> Void)? = nil
    let body: () -> Int
}

extension SQLiteBenchmarks.Row {
    /// Row `index` of the benchmark's data (an extension, so the memberwise initializer stays).
    init(_ index: Int) {
        self.init(
            id: index, name: "Person \(index)", email: "person\(index)@example.com", age: 18 + index % 60,
            salary: Double(index % 5000) * 10.5, active: index % 3 != 0,
            created: Date(timeIntervalSinceReferenceDate: Double(index) * 60),
            note: index % 4 == 0 ? nil : "note \(index)")
    }
}
