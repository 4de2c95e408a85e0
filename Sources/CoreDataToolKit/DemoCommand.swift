import ArgumentParser
import CoreData

/// `coredata demo`: a company model built in code, a SQLite store filled with employees in
/// departments, and a handful of fetches, each with its time.
struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Build a company store and run a few fetches against it, with timings.",
        discussion: "The store stays behind for the other commands to explore; its path is printed at the end.")

    @Option(help: "Where to write the store (replaced if it exists); default: a new temporary directory.")
    var store: String?
    @Option(help: "How many employees to create.") var count = 10_000

    func validate() throws {
        if count < 1 { throw ValidationError("--count must be at least 1") }
    }

    static let departmentNames = [
        "Research", "Sales", "Operations", "Marketing", "Finance", "Legal", "Support", "Design", "Security", "Data",
    ]
    static let firstNames = [
        "Ada", "Alan", "Barbara", "Claude", "Dennis", "Edsger", "Frances", "Grace", "Hedy", "Ivan", "John", "Katherine",
        "Ken", "Linus", "Margaret", "Niklaus", "Radia", "Sophie", "Tim", "Yukihiro",
    ]
    static let lastNames = [
        "Lovelace", "Turing", "Liskov", "Shannon", "Ritchie", "Dijkstra", "Allen", "Hopper", "Lamarr", "Sutherland",
        "Backus", "Johnson", "Thompson", "Torvalds", "Hamilton", "Wirth", "Perlman", "Wilson", "Berners-Lee",
        "Matsumoto",
    ]

    /// Department (name, budget, employees) ⇄ Employee (name, email, age, salary, startDate,
    /// active, department), with an index on salary.
    static func makeModel() -> NSManagedObjectModel {
        func attribute(_ name: String, _ type: NSAttributeType, optional: Bool = false) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = optional
            return attribute
        }
        let department = NSEntityDescription()
        department.name = "Department"
        let employee = NSEntityDescription()
        employee.name = "Employee"
        let employees = NSRelationshipDescription()
        employees.name = "employees"
        employees.destinationEntity = employee
        employees.maxCount = 0
        employees.deleteRule = .cascadeDeleteRule
        let departmentOfEmployee = NSRelationshipDescription()
        departmentOfEmployee.name = "department"
        departmentOfEmployee.destinationEntity = department
        departmentOfEmployee.maxCount = 1
        departmentOfEmployee.deleteRule = .nullifyDeleteRule
        employees.inverseRelationship = departmentOfEmployee
        departmentOfEmployee.inverseRelationship = employees
        department.properties = [
            attribute("name", .stringAttributeType), attribute("budget", .doubleAttributeType), employees,
        ]
        let salary = attribute("salary", .doubleAttributeType)
        employee.properties = [
            attribute("name", .stringAttributeType), attribute("email", .stringAttributeType),
            attribute("age", .integer16AttributeType), salary, attribute("startDate", .dateAttributeType),
            attribute("active", .booleanAttributeType), attribute("note", .stringAttributeType, optional: true),
            departmentOfEmployee,
        ]
        let element = NSFetchIndexElementDescription(property: salary, collationType: .binary)
        employee.indexes = [NSFetchIndexDescription(name: "bySalary", elements: [element])]
        let model = NSManagedObjectModel()
        model.entities = [department, employee]
        return model
    }

    func run() throws {
        let url: URL
        if let store {
            url = URL(fileURLWithPath: store)
        } else {
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("coredata-demo-\(ProcessInfo.processInfo.processIdentifier)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            url = directory.appendingPathComponent("Company.sqlite")
        }
        let model = Self.makeModel()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        if FileManager.default.fileExists(atPath: url.path) {
            try coordinator.destroyPersistentStore(at: url, ofType: NSSQLiteStoreType, options: nil)
        }
        print("OpenCoreData demo: a company of \(count) employees in \(Self.departmentNames.count) departments")
        print("Store: \(url.path)\n")
        try Self.timed("create the SQLite store (Apple's file format)") {
            _ = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url)
            return "version hashes: \(model.entities.count) entities"
        }
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try Self.timed("insert \(count) employees and save once") {
            try fill(context)
            return "\(count + Self.departmentNames.count) objects saved in one transaction"
        }
        context.reset()
        try runFetches(context)
        print("\nExplore it:")
        print("  coredata info \(url.path)")
        print("  coredata model \(url.path)")
        print("  coredata query \(url.path) Employee --where \"salary > 150000\" --sort salary:desc --limit 5")
        print("  coredata check \(url.path)")
    }

    private func fill(_ context: NSManagedObjectContext) throws {
        var random = SplitMix(seed: 42)
        let departments = Self.departmentNames.map { name -> NSManagedObject in
            let department = NSEntityDescription.insertNewObject(forEntityName: "Department", into: context)
            department.setValue(name, forKey: "name")
            department.setValue(Double(random.next(in: 500...5_000) * 1_000), forKey: "budget")
            return department
        }
        let start = Date(timeIntervalSinceReferenceDate: 0)
        for index in 0..<count {
            let employee = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: context)
            let first = Self.firstNames[random.next(in: 0...Self.firstNames.count - 1)]
            let last = Self.lastNames[random.next(in: 0...Self.lastNames.count - 1)]
            employee.setValue("\(first) \(last)", forKey: "name")
            employee.setValue("\(first.lowercased()).\(last.lowercased()).\(index)@example.com", forKey: "email")
            employee.setValue(random.next(in: 20...66), forKey: "age")
            employee.setValue(Double(random.next(in: 30...200) * 1_000), forKey: "salary")
            employee.setValue(
                start.addingTimeInterval(Double(random.next(in: 0...9_000)) * 86_400), forKey: "startDate")
            employee.setValue(random.next(in: 0...9) != 0, forKey: "active")
            employee.setValue(departments[random.next(in: 0...departments.count - 1)], forKey: "department")
        }
        try context.save()
    }

    private func runFetches(_ context: NSManagedObjectContext) throws {
        try Self.timed("count employees earning more than 150,000") {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.predicate = NSPredicate(format: "salary > %d", 150_000)
            return "\(try context.count(for: request)) employees (SELECT COUNT(*) with a bound parameter)"
        }
        try Self.timed("top 5 salaries in Research, sorted and limited in SQL") {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.predicate = NSPredicate(format: "department.name == %@ AND active == YES", "Research")
            request.sortDescriptors = [NSSortDescriptor(key: "salary", ascending: false)]
            request.fetchLimit = 5
            let names = try context.fetch(request).map { object in
                "\(object.value(forKey: "name") ?? "?") (\(object.value(forKey: "salary") ?? "?"))"
            }
            return names.joined(separator: ", ")
        }
        try Self.timed("names beginning with 'a', case- and diacritic-insensitive, under 30") {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.predicate = NSPredicate(format: "name BEGINSWITH[cd] %@ AND age < 30", "a")
            return "\(try context.count(for: request)) employees"
        }
        try Self.timed("average salary per department (GROUP BY in SQL)") {
            let average = NSExpressionDescription()
            average.name = "average"
            average.expression = NSExpression(forFunction: "average:", arguments: [NSExpression(forKeyPath: "salary")])
            average.expressionResultType = .doubleAttributeType
            let request = NSFetchRequest<NSDictionary>(entityName: "Employee")
            request.resultType = .dictionaryResultType
            request.propertiesToFetch = ["department.name", average]
            request.propertiesToGroupBy = ["department.name"]
            request.sortDescriptors = [NSSortDescriptor(key: "department.name", ascending: true)]
            let rows = try context.fetch(request)
            return rows.prefix(3).map { row in
                let value = (row["average"] as? Double).map { String(format: "%.0f", $0) } ?? "?"
                return "\(row["department.name"] ?? "?") \(value)"
            }.joined(separator: ", ") + ", …"
        }
        try Self.timed("fetch every employee as faults, then fire each fault") {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            let objects = try context.fetch(request)
            let total = objects.reduce(0.0) { $0 + ($1.value(forKey: "salary") as? Double ?? 0) }
            return "\(objects.count) objects, payroll \(String(format: "%.0f", total))"
        }
        try Self.timed("a 5% raise for Sales, saved") {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.predicate = NSPredicate(format: "department.name == %@", "Sales")
            let objects = try context.fetch(request)
            for object in objects {
                object.setValue((object.value(forKey: "salary") as? Double ?? 0) * 1.05, forKey: "salary")
            }
            try context.save()
            return "\(objects.count) employees updated in one transaction"
        }
    }

    /// Runs `body`, printing what it did and how long it took.
    static func timed(_ label: String, _ body: () throws -> String) throws {
        let clock = ContinuousClock()
        let start = clock.now
        let result = try body()
        let elapsed = clock.now - start
        let milliseconds = Double(elapsed.components.seconds) * 1_000 + Double(elapsed.components.attoseconds) / 1e15
        print(String(format: "%9.1f ms  ", milliseconds) + label)
        print("             → " + result)
    }
}

/// A small deterministic generator, so every demo store holds the same company.
struct SplitMix {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next(in range: ClosedRange<Int>) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return range.lowerBound + Int(z % UInt64(range.count))
    }
}
