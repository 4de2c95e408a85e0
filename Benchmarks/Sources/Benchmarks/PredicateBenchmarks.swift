import CoreData

/// The predicate benchmark of the predicate issue: parse 10,000 formats; evaluate a compound
/// predicate over 1,000,000 dictionaries, against a hand-written Swift closure doing the same test.
enum PredicateBenchmarks {
    static let templates = [
        "age > %d AND name BEGINSWITH[c] 'a%d'",
        "ANY tags == 'tag%d' OR score BETWEEN {%d, 100}",
        "SUBQUERY(friends, $f, $f.age > %d).@count > %d",
        "name MATCHES 'n[0-9]+%d' AND NOT (city IN {'Paris', 'Rome', 'X%d'})",
        "department.employees.@sum.salary > %d OR manager.name ==[cd] 'Boss%d'",
        "(age + %d) * 2 > 50 AND email ENDSWITH '@example.com' AND %d < 3",
        "TERNARY(active == YES, age, 0) >= %d AND born > CAST(%d, 'NSDate')",
        "name LIKE[cd] '*a%d*' AND ALL scores > %d",
    ]

    static func formats() -> [String] {
        (0..<10_000).map { i in
            templates[i % templates.count]
                .replacingOccurrences(of: "%d", with: String(i))
        }
    }

    static func people(count: Int) -> [[String: Any]] {
        let cities = ["London", "Paris", "Rome", "Zürich", "Tokyo"]
        return (0..<count).map { i in
            [
                "name": (i % 3 == 0 ? "Ada" : "bob") + String(i % 97),
                "age": i % 80,
                "city": cities[i % cities.count],
                "score": Double(i % 1000) / 10,
            ]
        }
    }

    static func run() {
        print("Predicates")
        let formats = formats()
        let parse = measure("parse 10,000 formats (NSPredicate(format:))") {
            var total = 0
            for format in formats { total &+= NSPredicate(format: format).hash & 1 }
            return total
        }
        print("    per format: \(format(parse / 10_000))")

        let people = people(count: 1_000_000)
        let predicate = NSPredicate(
            format: "age >= 18 AND age < 65 AND name BEGINSWITH[c] 'ada' AND city IN {'London', 'Paris', 'Zürich'}")
        let ours = measure("evaluate compound predicate over 1,000,000 dictionaries") {
            var matches = 0
            for person in people where predicate.evaluate(with: person) { matches += 1 }
            return matches
        }
        let allowedCities: Set<String> = ["London", "Paris", "Zürich"]
        let baseline = measure("hand-written Swift closure, same test (baseline)") {
            var matches = 0
            for person in people {
                guard let age = person["age"] as? Int, age >= 18, age < 65,
                    let name = person["name"] as? String, name.lowercased().hasPrefix("ada"),
                    let city = person["city"] as? String, allowedCities.contains(city)
                else { continue }
                matches += 1
            }
            return matches
        }
        print("    predicate / hand-written: \(ratio(ours, baseline))")
    }
}
