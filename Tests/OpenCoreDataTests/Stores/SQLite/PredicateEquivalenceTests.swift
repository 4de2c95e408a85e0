import CoreData
import Foundation
import Testing

/// The same company, saved once in an in-memory store, once in an SQLite store and — when a
/// PostgreSQL server runs (``PostgresTestServer``) — once in a PostgreSQL store.
final class TwinStores: @unchecked Sendable {
    let directory = TemporaryDirectory()
    let memory: NSManagedObjectContext
    let sqlite: NSManagedObjectContext
    let postgres: NSManagedObjectContext?

    /// The stores whose answers must equal the in-memory store's.
    var sqlStores: [NSManagedObjectContext] { [sqlite] + (postgres.map { [$0] } ?? []) }

    init() throws {
        memory = try CompanyModel.stack()
        sqlite = try sqliteStack(directory.file("Twin.sqlite"))
        postgres = PostgresTestServer.runsTests ? try postgresStack("twins") : nil
        for context in [memory] + sqlStores { try Self.fill(context) }
        // Fresh contexts: every answer comes from the store, none from pending changes.
        for context in [memory] + sqlStores { context.reset() }
    }

    static let names = [
        "Ada", "ada", "Ådne", "Émile", "emile", "Zoë", "Bob", "Bea", "Carl", "Dora", "Eve", "Finn", "Gus", "Hana",
        "Ivo", "Jo", "Kai", "Lea", "Mo", "Nils", "Ola", "Pia", "Quinn", "Rhea", "Sam", "Tom", "Uma", "Vik", "Wes",
        "Xia",
    ]

    private static func fill(_ context: NSManagedObjectContext) throws {
        let departments = ["Sales", "R&D", "Ops"].map { context.department($0) }
        let projects = ["Apollo", "Artemis", "Gemini", "Mercury"].map { title -> NSManagedObject in
            let project = NSEntityDescription.insertNewObject(forEntityName: "Project", into: context)
            project.setValue(title, forKey: "title")
            return project
        }
        var people: [NSManagedObject] = []
        for (index, name) in names.enumerated() {
            let entity = index % 7 == 0 ? "Manager" : "Employee"
            let person = context.employee(name, salary: Double(index * 10 % 130) + 0.5, entity: entity)
            if index % 9 == 4 { person.setValue(nil, forKey: "salary") }
            if index % 4 != 3 {
                person.setValue(Date(timeIntervalSinceReferenceDate: Double(index) * 86_400), forKey: "startDate")
            }
            if index % 5 != 2 { person.setValue(departments[index % 3], forKey: "department") }
            if entity == "Manager" { person.setValue(index / 7 + 1, forKey: "budget") }
            if index > 0, index % 3 != 0 { person.setValue(people[(index - 1) / 7 * 7], forKey: "manager") }
            if index % 2 == 0 {
                let badge = NSEntityDescription.insertNewObject(forEntityName: "Badge", into: context)
                badge.setValue(index, forKey: "number")
                person.setValue(badge, forKey: "badge")
            }
            let memberships = projects.enumerated().filter { (offset, _) in (index + offset) % 3 == 0 }.map(\.element)
            person.mutableSetValue(forKey: "projects").addObjects(from: memberships)
            people.append(person)
        }
        try context.save()
    }

    func names(_ context: NSManagedObjectContext, _ request: NSFetchRequest<NSManagedObject>) throws -> [String] {
        try context.fetch(request).map { $0.value(forKey: "name") as? String ?? "?" }
    }
}

/// Fetching from SQLite — and from PostgreSQL, through the same SQL layer in its own dialect —
/// gives the same objects as evaluating in memory, predicate by predicate.
/// Related documentation: Predicate Programming Guide ("Predicate Format String Syntax", "Using
/// Predicates with Core Data"); NSFetchRequest reference (sort descriptors, fetchLimit, fetchOffset).
@Suite("SQL stores: predicates give the same objects as in memory", .serialized)
struct PredicateEquivalenceTests {
    /// Shared by the suite's tests, which therefore run one at a time: a context is used by one
    /// thread at a time.
    private static let twins = Result { try TwinStores() }

    static let predicates: [String] = [
        "TRUEPREDICATE", "FALSEPREDICATE",
        "salary == 10.5", "salary != 10.5", "salary < 50", "salary <= 50.5", "salary > 100", "salary >= 100.5",
        "salary == nil", "salary != nil", "NOT (salary > 50)", "NOT (salary == nil)", "salary BETWEEN {20, 60}",
        "salary IN {0.5, 10.5, 20.5, 999}", "NOT (salary IN {0.5, 10.5})", "salary > 20 AND salary < 90",
        "salary < 20 OR salary > 110", "NOT (salary < 20 OR salary > 110)", "salary > 1000", "salary > -1",
        "salary == 'x'", "salary + 10 > 50", "-salary < -50",
        "name == 'Ada'", "name == 'ada'", "name ==[c] 'ADA'", "name ==[cd] 'emile'", "name ==[d] 'Emile'",
        "name != 'Ada'", "name !=[c] 'ada'", "name < 'M'", "name <= 'Bob'", "name > 'Z'", "name >= 'ada'",
        "name <[c] 'b'", "name BEGINSWITH 'A'", "name BEGINSWITH[c] 'a'", "name BEGINSWITH[cd] 'a'",
        "name ENDSWITH 'a'", "name ENDSWITH[c] 'A'", "name ENDSWITH[cd] 'e'", "name CONTAINS 'i'",
        "name CONTAINS[c] 'I'", "name CONTAINS[cd] 'e'", "name CONTAINS ''", "name LIKE 'A*'", "name LIKE[c] 'a?a'",
        "name LIKE '*o*'", "name LIKE[cd] '*e'", "name LIKE 'A%'", "name LIKE '_da'", "name LIKE '*ë'",
        "name LIKE 'É*e'", "name LIKE ''", "name LIKE '*'", "name LIKE '*a*a'", "NOT (name LIKE 'A*')",
        "name MATCHES '[A-E].*'", "name MATCHES[c] '[a-e].*'",
        "name MATCHES '.{3}'", "name IN {'Ada', 'Bob', 'Nobody'}", "name IN[c] {'ada', 'BOB'}", "name IN {}",
        "NOT (name BEGINSWITH 'A')", "NOT (name CONTAINS[c] 'a')", "name == nil", "name != nil",
        "name BEGINSWITH 'A' OR name ENDSWITH 'a'", "name BEGINSWITH 'A' AND salary > 5",
        "startDate == nil", "startDate != nil", "startDate > CAST(864000, 'NSDate')",
        "startDate <= CAST(864000, 'NSDate')", "startDate BETWEEN {CAST(86400, 'NSDate'), CAST(1728000, 'NSDate')}",
        "NOT (startDate > CAST(864000, 'NSDate'))",
        "department == nil", "department != nil", "department.name == 'Sales'", "department.name != 'Sales'",
        "department.name BEGINSWITH[c] 'r'", "department.name IN {'Sales', 'Ops'}", "NOT (department.name == 'Sales')",
        "department.name == nil", "manager == nil", "manager != nil", "manager.name == 'Ada'",
        "manager.name BEGINSWITH 'H'", "manager.salary > 50", "manager.department.name == 'Sales'",
        "manager.manager == nil", "manager.manager.name == 'Ada'", "badge == nil", "badge.number > 10",
        "badge.number IN {0, 2, 4, 40}", "badge.number BETWEEN {4, 20}", "NOT (badge.number > 10)",
        "ANY projects.title == 'Apollo'", "ANY projects.title BEGINSWITH 'A'", "ALL projects.title BEGINSWITH 'A'",
        "NONE projects.title == 'Apollo'", "ANY projects.title IN {'Gemini', 'Mercury'}",
        "NOT (ANY projects.title == 'Apollo')", "projects.@count == 0", "projects.@count > 1",
        "projects.@count >= 2 AND salary > 30", "directReports.@count >= 2", "directReports.@count == 0",
        "directReports.@sum.salary > 100", "ANY directReports.name BEGINSWITH 'B'", "ANY directReports.salary > 100",
        "ALL directReports.salary > 10", "department.employees.@count > 9",
        "SUBQUERY(projects, $p, $p.title BEGINSWITH 'A').@count > 0",
        "SUBQUERY(directReports, $r, $r.salary > 50).@count >= 1", "salary > manager.salary",
        "name == manager.name", "(salary > 50 OR badge != nil) AND NOT (department.name == 'Ops')",
        "name BEGINSWITH 'A' OR (salary < 30 AND startDate != nil)", "NOT (NOT (salary > 50))",
        "salary > 10 AND salary > 20 AND salary > 30", "badge.holder.name == name", "projects.@count == 4",
        // Regression: constants an integer column cannot hold were truncated in SQL
        // (`== 4.5` matched 4) or trapped (`1e300`); they compare by value, as in memory.
        "badge.number == 4.5", "badge.number != 4.5", "badge.number < 4.5", "badge.number >= 4.5",
        "badge.number BETWEEN {3.5, 8.5}", "badge.number IN {4.5, 6}", "badge.number > 1e300",
        "badge.number < 1e300", "badge.number == 1e300", "badge.number > -1e300", "badge.number < 9.3e18",
        "badge.number == 9223372036854775807", "badge.number > 0.5 AND badge.number < 2.5",
    ]

    /// At least 100 predicates, each giving the same set of employees from every store.
    @Test func everyPredicateMatchesTheInMemoryAnswer() throws {
        let twins = try Self.twins.get()
        #expect(Self.predicates.count >= 100)
        for format in Self.predicates {
            let predicate = NSPredicate(format: format)
            var answers: [[String]] = []
            for context in [twins.memory] + twins.sqlStores {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
                request.predicate = predicate
                answers.append(try twins.names(context, request).sorted())
            }
            for (store, answer) in answers.enumerated().dropFirst() {
                #expect(answer == answers[0], "\(format) (store \(store))")
                let count = NSFetchRequest<NSManagedObject>(entityName: "Employee")
                count.predicate = predicate
                #expect(try twins.sqlStores[store - 1].count(for: count) == answers[0].count, "count of \(format)")
            }
        }
    }

    /// Sort descriptors, limits and offsets give the same sequence from both stores: nil sorts
    /// first ascending, ties keep store order, and case-insensitive selectors apply.
    @Test(
        arguments: [
            ("salary", true, nil), ("salary", false, nil), ("name", true, nil), ("name", false, nil),
            ("name", true, "caseInsensitiveCompare:"), ("name", true, "localizedStandardCompare:"),
            ("startDate", true, nil), ("department.name", true, nil), ("manager.salary", false, nil),
        ] as [(String, Bool, String?)])
    func sortAndWindowMatchTheInMemoryAnswer(key: String, ascending: Bool, selector: String?) throws {
        let twins = try Self.twins.get()
        for (offset, limit) in [(0, 0), (0, 5), (3, 7), (28, 10)] {
            var answers: [[String]] = []
            for context in [twins.memory] + twins.sqlStores {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
                request.predicate = NSPredicate(format: "salary > 5 OR salary == nil")
                request.sortDescriptors = [
                    NSSortDescriptor(key: key, ascending: ascending, selector: selector.map { Selector($0) }),
                    NSSortDescriptor(key: "name", ascending: true),
                ]
                request.fetchOffset = offset
                request.fetchLimit = limit
                answers.append(try twins.names(context, request))
            }
            for answer in answers.dropFirst() {
                #expect(answer == answers[0], "\(key) \(ascending) \(selector ?? "") offset \(offset) limit \(limit)")
            }
        }
    }

    /// Sub-entities: a fetch of the parent includes them unless `includesSubentities` is false.
    @Test func subentitiesFollowIncludesSubentities() throws {
        let twins = try Self.twins.get()
        for includes in [true, false] {
            var answers: [[String]] = []
            for context in [twins.memory] + twins.sqlStores {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
                request.includesSubentities = includes
                answers.append(try twins.names(context, request).sorted())
            }
            for answer in answers.dropFirst() { #expect(answer == answers[0]) }
            #expect(answers[1].count == (includes ? TwinStores.names.count : TwinStores.names.count - 5))
        }
        let managers = NSFetchRequest<NSManagedObject>(entityName: "Manager")
        managers.predicate = NSPredicate(format: "budget >= 2")
        for store in twins.sqlStores {
            #expect(try twins.names(store, managers).sorted() == twins.names(twins.memory, managers).sorted())
        }
    }
}
