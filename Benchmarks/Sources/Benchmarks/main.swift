// OpenCoreData benchmarks. Results and how to read them: BENCHMARKS.md.
// Arguments pick suites: `predicate`, `graph`, `typed`, `sqlite`, `swiftdata`, `stores`, `results`, `batch` (default: all),
// and `postgres` (only when named: it needs a PostgreSQL server); `postgres-load [processes contexts
// seconds]` is the PostgreSQL store under load (PostgresLoadRun). `sqlite-once <engine> <operation>`
// runs one row of the `sqlite` suite once, for `callgrind` to count (SQLiteBenchmarks.runOnce).
// `sqlite-engine` and `sqlite-memory` are the `sqlite` suite's own child processes.
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "sqlite-memory", arguments.count == 2, let engine = Int(arguments[1]) {
    // A child process of the `sqlite` suite, measuring one engine's memory (SQLiteBenchmarks).
    SQLiteBenchmarks.measureMemory(engineIndex: engine)
    exit(0)
}
if arguments.first == "sqlite-engine", arguments.count == 3, let engine = Int(arguments[1]) {
    // A child process of the `sqlite` suite, measuring one engine's operations (SQLiteBenchmarks).
    SQLiteBenchmarks.measureEngine(engineIndex: engine, resultsPath: arguments[2])
    exit(0)
}
if arguments.first == "swiftdata-engine", arguments.count == 3, let engine = Int(arguments[1]) {
    // A child process of the `swiftdata` suite, measuring one engine (SwiftDataBenchmarks).
    SwiftDataBenchmarks.measureEngine(engineIndex: engine, resultsPath: arguments[2])
    exit(0)
}
if arguments.first == "sqlite-once", arguments.count >= 3 {
    // One engine's one operation, once, for `callgrind` to count (SQLiteBenchmarks.runOnce).
    SQLiteBenchmarks.runOnce(engineName: arguments[1], operation: arguments[2], options: Array(arguments.dropFirst(3)))
    exit(0)
}
if arguments.first == "postgres-load-process", arguments.count == 6, let index = Int(arguments[1]),
    let contexts = Int(arguments[2]), let workers = Int(arguments[3]), let seconds = Double(arguments[4])
{
    // A child process of the PostgreSQL load run (PostgresLoadRun).
    PostgresLoadRun.runProcess(
        index: index, contexts: contexts, workers: workers, seconds: seconds, reportPath: arguments[5])
    exit(0)
}
if arguments.first == "postgres-once", arguments.count == 2 || (arguments.count == 3 && arguments[1] == "typed") {
    // One operation of the `postgres` suite on a Core Data engine (`typed`: the model classes'),
    // for `perf` (PostgresBenchmarks).
    PostgresBenchmarks.runOnce(arguments.last!, typed: arguments.count == 3)
    exit(0)
}
if arguments.first == "postgres-load" {
    // Needs a PostgreSQL server; `postgres-load [processes contexts seconds]` (PostgresLoadRun).
    PostgresLoadRun.run(Array(arguments.dropFirst()))
    exit(0)
}
let suites = Set(arguments)
print("OpenCoreData benchmarks (release build, median of several runs after a warm-up)")
if suites.isEmpty || suites.contains("predicate") { PredicateBenchmarks.run() }
if suites.isEmpty || suites.contains("graph") { ObjectGraphBenchmarks.run() }
if suites.isEmpty || suites.contains("typed") { TypedAccessorBenchmarks.run() }
if suites.isEmpty || suites.contains("sqlite") { SQLiteBenchmarks.run() }
if suites.isEmpty || suites.contains("swiftdata") { SwiftDataBenchmarks.run() }
if suites.isEmpty || suites.contains("stores") { StoreTypeBenchmarks.run() }
if suites.isEmpty || suites.contains("results") { FetchedResultsBenchmarks.run() }
if suites.isEmpty || suites.contains("batch") { BatchBenchmarks.run() }
// Needs a PostgreSQL server (Scripts/postgres-server.sh start), so only when asked for.
if suites.contains("postgres") { PostgresBenchmarks.run() }
