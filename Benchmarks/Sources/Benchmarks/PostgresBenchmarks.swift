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
        let engines: [any PostgresBenchmarkEngine] = [RawPostgres(), FluentPostgres(), PostgresCoreDataEngine()]
        let operations = [
            "insert N + save", "fetch N realized", "query (×10)", "query sorted by name (×10)", "count (×10)",
            "indexed lookup (×1,000)", "update 10% + save", "delete 10% + save", "1,000 single-insert saves",
            "to-one of N objects (faults)", "to-many of 1,000 objects (N members)",
        ]
        var results: [String: [String: Duration]] = [:]
        for engine in engines {
            print(" \(engine.name)")
            var times: [String: Duration] = [:]
            times[operations[0]] = measure("\(engine.name): \(operations[0])", repetitions: 3) {
                engine.reset()
                return engine.insertAll()
            }
            times[operations[1]] = measure("\(engine.name): \(operations[1])", repetitions: 3) { engine.fetchAll() }
            times[operations[2]] = measure("\(engine.name): \(operations[2])", repetitions: 3) { engine.query() }
            times[operations[3]] = measure("\(engine.name): \(operations[3])", repetitions: 3) {
                engine.queryByName()
            }
            times[operations[4]] = measure("\(engine.name): \(operations[4])", repetitions: 3) {
                engine.countMatching()
            }
            times[operations[5]] = measure("\(engine.name): \(operations[5])", repetitions: 3) {
                engine.indexedLookups()
            }
            engine.prepareGraph()
            times[operations[9]] = measure("\(engine.name): \(operations[9])", repetitions: 3) {
                engine.followToOne()
            }
            times[operations[10]] = measure("\(engine.name): \(operations[10])", repetitions: 3) {
                engine.followToMany()
            }
            times[operations[6]] = measure("\(engine.name): \(operations[6])", repetitions: 3) { engine.updateTenth() }
            times[operations[7]] = measure(
                "\(engine.name): \(operations[7])", repetitions: 3,
                setup: {
                    engine.reset()
                    _ = engine.insertAll()
                }
            ) { engine.deleteTenth() }
            times[operations[8]] = measure("\(engine.name): \(operations[8])", repetitions: 3) {
                engine.singleInserts()
            }
            results[engine.name] = times
        }
        print("\n  | operation | postgres-nio by hand | Fluent | OpenCoreData | to by hand | to Fluent |")
        print("  |---|---|---|---|---|---|")
        for operation in operations {
            let raw = results[engines[0].name]![operation]!
            let fluent = results[engines[1].name]![operation]!
            let ours = results[engines[2].name]![operation]!
            print(
                "  | \(operation) | \(format(raw)) | \(format(fluent)) | \(format(ours)) | \(ratio(ours, raw))"
                    + " | \(ratio(ours, fluent)) |")
        }
    }
}

extension PostgresBenchmarks {
    /// `postgres-once fill` empties the Core Data engine's schema and inserts N rows and the
    /// graph; `postgres-once <operation>` then runs one operation of the suite five times on
    /// them, for `perf` to profile (`fetch`, `query-by-name`, `count`, `lookups`,
    /// `single-inserts`, `to-one`, `to-many`).
    static func runOnce(_ operation: String) {
        let engine = PostgresCoreDataEngine()
        if operation == "fill" {
            engine.reset()
            print("inserted \(engine.insertAll())")
            engine.prepareGraph()
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
/// each reset.
final class PostgresCoreDataEngine: PostgresBenchmarkEngine {
    let name = "OpenCoreData"
    private let engine: CoreDataStore
    private let raw = RawPostgresAdmin()

    init() {
        var components = URLComponents(url: PostgresBenchmarks.url, resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "schema", value: "bench_ocd")]
        engine = CoreDataStore(type: NSPostgreSQLStoreType, url: components.url!)
    }

    func reset() {
        engine.close()
        raw.dropSchema("bench_ocd")
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
