// OpenCoreData benchmarks. Results and how to read them: BENCHMARKS.md.
// Arguments pick suites: `predicate`, `graph`, `sqlite` (default: all).
let suites = Set(CommandLine.arguments.dropFirst())
print("OpenCoreData benchmarks (release build, median of several runs after a warm-up)")
if suites.isEmpty || suites.contains("predicate") { PredicateBenchmarks.run() }
if suites.isEmpty || suites.contains("graph") { ObjectGraphBenchmarks.run() }
if suites.isEmpty || suites.contains("sqlite") { SQLiteBenchmarks.run() }
