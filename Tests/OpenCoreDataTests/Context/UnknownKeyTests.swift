import CoreData
import Testing

/// A fetch naming a key its entity does not have is refused with an error, never a trap
/// (30 crashes from bad keys in fetches). Apple's SQLite store refuses such a fetch as well
/// ("keypath … not found in entity"); keys can come from users, so here it is a thrown Cocoa error.
@Suite("Fetches with unknown keys")
struct UnknownKeyTests {
    let directory = TemporaryDirectory()

    static let badPredicates: [(String, String, [String])] = [
        ("Employee", "nosuch == 1", []),
        ("Employee", "department.nosuch == 1", []),
        ("Department", "ANY employees.nosuch == 1", []),
        ("Department", "SUBQUERY(employees, $e, $e.nosuch == 1).@count > 0", []),
        ("Employee", "%K == 1", ["nosuch"]),
        ("Employee", "name == 'a' AND (salary > 1 OR manager.department.nosuch == 2)", []),
        ("Employee", "budget > 1", []),
        // Found by the predicate fuzz target: a key after a SUBQUERY, and after an operator
        // key-value coding does not have, reached the objects the subquery kept and trapped.
        ("Department", "SUBQUERY(employees, $e, $e.salary > 1).nosuch == 1", []),
        ("Department", "SUBQUERY(employees, $e, $e.salary > 1).@c.nosuch == 0", []),
    ]

    /// Found by the predicate fuzz target in CI: a key after an index (`friends[LAST].nama`) is
    /// met only by evaluation, in memory, where it trapped in key-value coding. While a fetch
    /// evaluates in memory an unknown key reads as nil (DEVIATIONS.md), so the comparison is
    /// false and the fetch answers.
    @Test(arguments: [
        "ANY directReports[LAST].nosuch BEGINSWITH[c] 'mi'", "projects[FIRST].nosuch == 1",
        "manager.directReports[0].nosuch != nil",
    ])
    func unknownKeysPastAnIndexReadAsNil(format: String) throws {
        for context in try contexts() {
            try context.performAndWait {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
                request.predicate = NSPredicate(format: format)
                let found = try context.fetch(request)
                #expect(found.isEmpty, "\(format)")
            }
        }
    }

    private func contexts() throws -> [NSManagedObjectContext] {
        let sqlite = try sqliteStack(directory.file("Company.sqlite"))
        let memory = try CompanyModel.stack()
        for context in [sqlite, memory] {
            let sales = context.department("Sales")
            context.employee("Ada", salary: 10).setValue(sales, forKey: "department")
            try context.performAndWait { try context.save() }
            context.employee("Bob", salary: 20)  // pending: judged in memory
        }
        return [sqlite, memory]
    }

    @Test("an unknown key in the predicate is NSCoreDataError naming the key path")
    func unknownKeysInPredicates() throws {
        for context in try contexts() {
            context.performAndWait {
                for (entity, format, arguments) in Self.badPredicates {
                    let request = NSFetchRequest<NSManagedObject>(entityName: entity)
                    request.predicate = NSPredicate(format: format, argumentArray: arguments)
                    let error = #expect(throws: NSError.self, "\(format)") { try context.fetch(request) }
                    #expect(error?.code == NSCoreDataError, "\(format)")
                    #expect(
                        error?.localizedDescription.contains("nosuch") == true || format == "budget > 1", "\(format)")
                    #expect(throws: NSError.self) { try context.count(for: request) }
                }
            }
        }
    }

    @Test("an unknown or empty sort key is an error; known paths still fetch")
    func sortKeysAndKnownPaths() throws {
        for context in try contexts() {
            try context.performAndWait { () throws -> Void in
                for key in ["nosuch", "department.nosuch", ""] {
                    let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
                    request.sortDescriptors = [NSSortDescriptor(key: key, ascending: true)]
                    #expect(throws: NSError.self, "\(key)") { try context.fetch(request) }
                }
                let good: [(String, String, Int)] = [
                    ("Employee", "department.name == 'Sales'", 1), ("Department", "employees.@count > 0", 1),
                    ("Department", "SUBQUERY(employees, $e, $e.salary > 5).@count > 0", 1),
                    ("Employee", "self != nil AND objectID != nil", 2),
                    ("Department", "ANY employees.name == 'Ada'", 1),
                ]
                for (entity, format, count) in good {
                    let request = NSFetchRequest<NSManagedObject>(entityName: entity)
                    request.predicate = NSPredicate(format: format)
                    request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
                    #expect(try context.fetch(request).count == count, "\(format)")
                }
            }
        }
    }

    /// Found by a real library's tests: a property the entity does not have, named in
    /// `propertiesToFetch`, `propertiesToGroupBy` or an expression description, trapped in key-value
    /// coding. Such a fetch is refused as a predicate's unknown key is.
    @Test("an unknown property to fetch or group by, or in an expression description, is NSCoreDataError")
    func unknownPropertiesToFetch() throws {
        func sum(of key: String) -> NSExpressionDescription {
            let description = NSExpressionDescription()
            description.name = "total"
            description.expression = NSExpression(
                forFunction: "sum:", arguments: [NSExpression(forKeyPath: key)])
            description.expressionResultType = .doubleAttributeType
            return description
        }
        let alien = CompanyModel.attribute("nosuch", .stringAttributeType)
        let requests: [(String, (NSFetchRequest<NSFetchRequestResult>) -> Void)] = [
            ("a name to fetch", { $0.propertiesToFetch = ["nosuch"] }),
            ("a key path to fetch", { $0.propertiesToFetch = ["department.nosuch"] }),
            ("a property description of no entity's", { $0.propertiesToFetch = [alien] }),
            ("an expression description", { $0.propertiesToFetch = [sum(of: "nosuch")] }),
            (
                "a name to group by",
                {
                    $0.propertiesToFetch = ["name"]; $0.propertiesToGroupBy = ["nosuch"]
                }
            ),
            ("an empty name", { $0.propertiesToFetch = [""] }),
        ]
        for context in try contexts() {
            context.performAndWait {
                for (label, configure) in requests {
                    for resultType in [NSFetchRequestResultType.dictionaryResultType, .managedObjectResultType] {
                        let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Employee")
                        request.resultType = resultType
                        configure(request)
                        let error = #expect(throws: NSError.self, "\(label)") { try context.fetch(request) }
                        #expect(error?.code == NSCoreDataError, "\(label)")
                    }
                }
                // The same shapes with the entity's own keys fetch.
                let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Employee")
                request.resultType = .dictionaryResultType
                request.propertiesToFetch = ["department.name", sum(of: "salary")]
                request.propertiesToGroupBy = ["department.name"]
                #expect((try? context.fetch(request))?.isEmpty == false)
            }
        }
    }
}
