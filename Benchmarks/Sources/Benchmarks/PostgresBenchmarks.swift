import BenchmarkModel
import CoreData
import Foundation
import OpenCoreDataPostgres

/// The PostgreSQL store against postgres-nio code written by hand and against Fluent, in one run
/// on the same server, with the SQLite suite's entity, rows and operations. Start a server first
/// (`Scripts/postgres-server.sh start`) or set `OPENCOREDATA_POSTGRES_URL`; results: BENCHMARKS.md.
enum PostgresBenchmarks {
    static let count = SQLiteBenchmarks.count
    static let url = URL(
        string: ProcessInfo.processInfo.environment["OPENCOREDATA_POSTGRES_URL"]
            ?? "postgres://postgres@127.0.0.1:54329/postgres")!
    static var host: String { url.host ?? "127.0.0.1" }
    static var port: Int { url.port ?? 5432 }
    static var user: String { url.user ?? "postgres" }
    static var database: String { String(url.path.dropFirst()).isEmpty ? user : String(url.path.dropFirst()) }

    static func run() {
        print("\nPostgreSQL store vs hand-written postgres-nio (N = \(count), server \(host):\(port))")
        let byHand = RawPostgres()
        let engines: [any PostgresBenchmarkEngine] = [
            byHand, FluentPostgres(), PostgresCoreDataEngine(), PostgresCoreDataEngine(typed: true),
        ]
        let operations = [
            "insert N + save", "fetch N realized", "query (×10)", "query sorted by name (×10)", "count (×10)",
            "indexed lookup (×1,000)", "update 10% + save", "delete 10% + save", "1,000 single-insert saves",
            "to-one of N objects (faults)", "to-many of 1,000 objects (N members)",
        ]
        var results: [String: [String: Duration]] = [:]
        // Every operation is measured on each engine in turn, round after round, rather than
        // engine after engine: this VM's speed drifts over minutes, and a fixed order gave the
        // engines measured last a slower machine.
        func inTurn(
            _ operation: String, setup: (any PostgresBenchmarkEngine) -> Void = { _ in },
            _ body: (any PostgresBenchmarkEngine) -> Int
        ) {
            for (engine, time) in zip(engines, measureInTurn(operation, engines, setup: setup, body)) {
                results[engine.name, default: [:]][operation] = time
            }
        }
        // Each engine's rows are vacuumed and analyzed once written (untimed), so autovacuum has
        // nothing to do while another engine is measured and every engine's queries are planned
        // with statistics.
        let server = RawPostgresAdmin()
        inTurn(operations[0], setup: { $0.reset() }) { $0.insertAll() }
        server.settle()
        inTurn(operations[1]) { $0.fetchAll() }
        inTurn(operations[2]) { $0.query() }
        inTurn(operations[3]) { $0.queryByName() }
        inTurn(operations[4]) { $0.countMatching() }
        inTurn(operations[5]) { $0.indexedLookups() }
        for engine in engines { engine.prepareGraph() }
        server.settle()
        inTurn(operations[9]) { $0.followToOne() }
        inTurn(operations[10]) { $0.followToMany() }
        inTurn(operations[6]) { $0.updateTenth() }
        inTurn(
            operations[7],
            setup: {
                $0.reset()
                _ = $0.insertAll()
                server.settle()
            }
        ) { $0.deleteTenth() }
        inTurn(operations[8]) { $0.singleInserts() }
        // What every save of the store sends and the baseline's do not: the notification that
        // tells other coordinators of the change (Apple posts a remote change for every write).
        // Measured beside the plain inserts again, as the server's state at the end of the run
        // is not its state when the by-hand engine ran.
        let (plain, notifying) = notificationFloor(byHand)
        print(
            "\n  | operation | postgres-nio by hand | Fluent | generic | typed | generic / by hand"
                + " | typed / by hand | generic / Fluent | typed / Fluent |")
        print("  |---|---|---|---|---|---|---|---|---|")
        for operation in operations {
            let raw = results[engines[0].name]![operation]!
            let fluent = results[engines[1].name]![operation]!
            let generic = results[engines[2].name]![operation]!
            let typed = results[engines[3].name]![operation]!
            print(
                "  | \(operation) | \(format(raw)) | \(format(fluent)) | \(format(generic)) | \(format(typed))"
                    + " | \(ratio(generic, raw)) | \(ratio(typed, raw)) | \(ratio(generic, fluent))"
                    + " | \(ratio(typed, fluent)) |")
        }
        let saves = operations[8]
        print(
            "\n  \(singleInsertsNotifying): \(format(notifying)), \(ratio(notifying, plain)) the plain ones beside"
                + " it (\(format(plain))); generic \(ratio(results[engines[2].name]![saves]!, notifying))"
                + " it, typed \(ratio(results[engines[3].name]![saves]!, notifying)) it")
    }

    /// `body` on each of `engines` in turn, `setup` untimed before each run: a warm-up round, then
    /// three timed rounds; the median of each engine's three, in `engines`' order.
    static func measureInTurn(
        _ operation: String, _ engines: [any PostgresBenchmarkEngine],
        setup: (any PostgresBenchmarkEngine) -> Void, _ body: (any PostgresBenchmarkEngine) -> Int
    ) -> [Duration] {
        var times = Array(repeating: [Duration](), count: engines.count)
        var sink = 0
        let clock = ContinuousClock()
        for round in 0...3 {
            for (index, engine) in engines.enumerated() {
                setup(engine)
                let start = clock.now
                sink &+= body(engine)
                if round > 0 { times[index].append(clock.now - start) }
            }
        }
        let medians = times.map { $0.sorted()[$0.count / 2] }
        for (engine, median) in zip(engines, medians) {
            print(
                "  \("\(engine.name): \(operation)".padding(toLength: 58, withPad: " ", startingAt: 0))"
                    + " median \(format(median))  (checksum \(sink % 1000))")
        }
        return medians
    }

    /// The hand-written single inserts without and with the notification, each timed in turn
    /// (a warm-up of both, then three of each alternated): their medians.
    static func notificationFloor(_ byHand: RawPostgres) -> (plain: Duration, notifying: Duration) {
        _ = byHand.singleInserts()
        _ = byHand.singleInsertsNotifying()
        var plain: [Duration] = []
        var notifying: [Duration] = []
        for _ in 0..<3 {
            for notify in [false, true] {
                let start = ContinuousClock.now
                _ = notify ? byHand.singleInsertsNotifying() : byHand.singleInserts()
                let elapsed = ContinuousClock.now - start
                if notify { notifying.append(elapsed) } else { plain.append(elapsed) }
            }
        }
        print(
            "  \(byHand.name): 1,000 single-insert saves, plain \(plain.map(format).joined(separator: ", ")); notifying \(notifying.map(format).joined(separator: ", "))"
        )
        return (plain.sorted()[1], notifying.sorted()[1])
    }

    static let singleInsertsNotifying = "1,000 single-insert saves, each notifying (by hand)"
}

extension PostgresBenchmarks {
    /// `postgres-once [typed] fill` empties a Core Data engine's schema, inserts N rows and the
    /// graph and vacuums the database, as the suite does after each engine's rows are written;
    /// `postgres-once [typed] <operation>` then runs one operation of the suite five times on
    /// them, for `perf` to profile (`fetch`, `query-by-name`, `count`, `lookups`,
    /// `single-inserts`, `to-one`, `to-many`). `typed` is the engine of the model classes.
    /// `postgres-once notify-floor` empties the hand-written engine's schema and measures its
    /// single inserts without and with the notification, alternated.
    static func runOnce(_ operation: String, typed: Bool = false) {
        let engine = PostgresCoreDataEngine(typed: typed)
        if operation == "fill" {
            engine.reset()
            print("inserted \(engine.insertAll())")
            engine.prepareGraph()
            RawPostgresAdmin().settle()
            return
        }
        if operation == "notify-floor" {
            let byHand = RawPostgres()
            byHand.reset()
            let (plain, notifying) = notificationFloor(byHand)
            print("by hand, notifying: \(format(notifying)), \(ratio(notifying, plain)) the plain \(format(plain))")
            return
        }
        engine.reopen()
        let body: () -> Int
        switch operation {
        case "fetch": body = engine.fetchAll
        case "query-by-name": body = engine.queryByName
        case "lookups": body = engine.indexedLookups
        case "single-inserts": body = engine.singleInserts
        case "count": body = engine.countMatching
        case "to-one": body = engine.followToOne
        case "to-many": body = engine.followToMany
        default:
            print("unknown operation \(operation)")
            return
        }
        for _ in 0..<5 {
            let start = ContinuousClock.now
            let checksum = body()
            print("\(operation): \(format(ContinuousClock.now - start)) (checksum \(checksum % 1000))")
        }
    }
}

/// The operations of the PostgreSQL suite, a subset of ``Engine``'s.
protocol PostgresBenchmarkEngine: AnyObject {
    var name: String { get }
    func reset()
    func insertAll() -> Int
    func fetchAll() -> Int
    func query() -> Int
    func queryByName() -> Int
    func countMatching() -> Int
    func indexedLookups() -> Int
    func updateTenth() -> Int
    func deleteTenth() -> Int
    func singleInserts() -> Int
    /// The SQLite suite's graph, untimed: ``SQLiteBenchmarks/departments`` departments, each with
    /// `count / departments` employees.
    func prepareGraph()
    /// Every employee fetched, and each one's department's budget read (a department read once).
    func followToOne() -> Int
    /// Every department fetched, and each one's employees read, summing their ages.
    func followToMany() -> Int
}

/// The SQLite suite's Core Data engine on a PostgreSQL store in schema `bench_ocd`, emptied at
/// each reset; `typed`, the typed engine (generated `@NSManaged` classes) in `bench_ocd_typed`.
final class PostgresCoreDataEngine: PostgresBenchmarkEngine {
    let name: String
    private let store: CoreDataStore
    private let engine: any Engine
    private let schema: String
    private let raw = RawPostgresAdmin()

    init(typed: Bool = false) {
        schema = typed ? "bench_ocd_typed" : "bench_ocd"
        var components = URLComponents(url: PostgresBenchmarks.url, resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "schema", value: schema)]
        store = CoreDataStore(type: NSPostgreSQLStoreType, url: components.url!, classes: typed)
        engine = typed ? TypedCoreDataStore(store: store) : store
        name = typed ? "OpenCoreData typed" : "OpenCoreData"
    }

    func reset() {
        store.close()
        raw.dropSchema(schema)
        engine.reset()
    }

    /// Opens the schema an earlier run filled, as a fresh process would.
    func reopen() { engine.reopen() }

    func insertAll() -> Int { engine.insertAll() }
    func fetchAll() -> Int { engine.fetchAll() }
    func query() -> Int { engine.query() }
    func queryByName() -> Int { engine.queryByName() }
    func countMatching() -> Int { engine.countMatching() }
    func indexedLookups() -> Int { engine.indexedLookups() }
    func updateTenth() -> Int { engine.updateTenth() }
    func deleteTenth() -> Int { engine.deleteTenth() }
    func singleInserts() -> Int { engine.singleInserts() }
    func prepareGraph() { engine.prepareGraph() }
    func followToOne() -> Int { engine.followToOne() }
    func followToMany() -> Int { engine.followToMany() }
}
