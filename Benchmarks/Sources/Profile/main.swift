// A fixed predicate-evaluation workload for a profiler, without the benchmark's timing loop:
//   swift build -c release --package-path Benchmarks --product Profile
//   perf record -g Benchmarks/.build/release/Profile && perf report --no-children
import CoreData

let cities = ["London", "Paris", "Rome", "Zürich", "Tokyo"]
let people: [[String: Any]] = (0..<200_000).map { i in
    [
        "name": (i % 3 == 0 ? "Ada" : "bob") + String(i % 97), "age": i % 80, "city": cities[i % cities.count],
        "score": Double(i % 1000) / 10,
    ]
}
let predicate = NSPredicate(
    format: "age >= 18 AND age < 65 AND name BEGINSWITH[c] 'ada' AND city IN {'London', 'Paris', 'Zürich'}")
var matches = 0
for _ in 0..<3 {
    for person in people where predicate.evaluate(with: person) { matches += 1 }
}
print(matches)
