import CoreData
import Foundation
import Testing

@testable import CompanyModel

/// Hand-written model classes with `@NSManaged` declarations (this package's `CompanyModel`, built
/// through the `CoreDataModelGenerator` plugin) work on Linux as on Apple platforms: typed
/// properties read and write the object's values, to-many accessors keep both sides of the
/// relationship, and everything goes through the same machinery as key-value coding.
///
/// Related documentation: NSManagedObject reference ("Subclassing Notes": "Core Data dynamically
/// generates efficient public and primitive get and set attribute accessor methods and
/// relationship accessor methods for properties that are defined in the entity of a managed
/// object's corresponding managed object model"); Core Data Programming Guide, "Creating and
/// Modifying Custom Managed Objects"; Xcode's "Generating code" article (the to-many accessors).
@Suite("@NSManaged accessors of hand-written classes")
struct NSManagedAccessorTests {
    private static func stack(_ url: URL) throws -> NSManagedObjectContext {
        try sqliteStack(url, model: CompanyModel.make())
    }

    @Test("every attribute type round-trips through typed properties on the SQLite store")
    func everyAttributeTypeRoundTrips() throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("typed.sqlite")
        let identifier = UUID()
        let hired = Date(timeIntervalSinceReferenceDate: 700_000_000.5)
        do {
            let context = try Self.stack(url)
            let employee = Employee(context: context)
            employee.name = "Ada"
            employee.nickname = "A"
            employee.age = 36
            employee.level = 70_000
            employee.badge = 9_000_000_000
            employee.rating = 4.5
            employee.score = 0.125
            employee.active = true
            employee.salary = NSDecimalNumber(string: "1234.56")
            employee.photo = Data([0, 1, 2, 255])
            employee.identifier = identifier
            employee.homepage = URL(string: "https://example.com/ada")
            employee.hired = hired
            employee.tags = ["math", "engines"]
            try context.save()
        }
        let context = try Self.stack(url)
        let fetched = try context.fetch(Employee.fetchRequest())
        let employee = try #require(fetched.first)
        #expect(fetched.count == 1)
        #expect(employee.name == "Ada")
        #expect(employee.nickname == "A")
        #expect(employee.age == 36)
        #expect(employee.level == 70_000)
        #expect(employee.badge == 9_000_000_000)
        #expect(employee.rating == 4.5)
        #expect(employee.score == 0.125)
        #expect(employee.active)
        #expect(employee.salary == NSDecimalNumber(string: "1234.56"))
        #expect(employee.photo == Data([0, 1, 2, 255]))
        #expect(employee.identifier == identifier)
        #expect(employee.homepage == URL(string: "https://example.com/ada"))
        #expect(employee.hired == hired)
        #expect(employee.tags == ["math", "engines"])
        // The typed properties read what key-value coding reads.
        #expect(employee.value(forKey: "name") as? String == employee.name)
        #expect((employee.value(forKey: "age") as? NSNumber)?.int16Value == employee.age)
        #expect(employee.value(forKey: "identifier") as? UUID == employee.identifier)
    }

    @Test("a scalar without a value reads as zero, an optional as nil, as Apple's accessors do")
    func missingValues() throws {
        let directory = TemporaryDirectory()
        let context = try Self.stack(directory.url.appendingPathComponent("missing.sqlite"))
        let employee = Employee(context: context)
        #expect(employee.age == 0 && employee.badge == 0 && employee.rating == 0 && !employee.active)
        #expect(employee.name == nil && employee.salary == nil && employee.department == nil)
        employee.name = "x"
        employee.name = nil
        #expect(employee.name == nil)
    }

    @Test("compound assignment, mutation through optional chaining and key paths go through the accessors")
    func mutationsAndKeyPaths() throws {
        let directory = TemporaryDirectory()
        let context = try Self.stack(directory.url.appendingPathComponent("mutations.sqlite"))
        let employee = Employee(context: context)
        employee.age = 30
        employee.age += 5
        employee.name = "Grace"
        employee.name?.append(" Hopper")
        let level = \Employee.level
        employee[keyPath: level] = 7
        employee[keyPath: level] *= 3
        #expect(employee.age == 35)
        #expect(employee.name == "Grace Hopper")
        #expect(employee.level == 21)
        #expect((employee.value(forKey: "level") as? NSNumber)?.int32Value == 21)
    }

    @Test("a typed change is a change: it is tracked, saved and undone like setValue(_:forKey:)")
    func typedChangesAreTracked() throws {
        let directory = TemporaryDirectory()
        let context = try Self.stack(directory.url.appendingPathComponent("tracked.sqlite"))
        let department = Department(context: context)
        department.name = "Research"
        try context.save()
        // Undo steps end with the event (Core Data Programming Guide, "Undo Management"); with no
        // run loop, the test closes the group itself.
        let undo = UndoManager()
        context.undoManager = undo
        department.budget = 1_000
        #expect(department.hasChanges)
        #expect(department.changedValues()["budget"] as? NSNumber == 1_000)
        context.processPendingChanges()
        if undo.groupingLevel > 0 { undo.endUndoGrouping() }
        undo.undo()
        #expect(department.budget == 0)
        #expect(department.name == "Research")
        #expect(!department.hasChanges)
    }

    @Test("to-one and to-many properties keep their inverses, both ways")
    func relationshipsKeepInverses() throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("relationships.sqlite")
        do {
            let context = try Self.stack(url)
            let department = Department(context: context)
            department.name = "R&D"
            let ada = Employee(context: context)
            ada.name = "Ada"
            ada.department = department
            let alan = Employee(context: context)
            alan.name = "Alan"
            department.addToEmployees(alan)
            alan.mentor = ada
            #expect(department.employees?.count == 2)
            #expect(alan.department === department)
            let grace = Employee(context: context)
            department.addToEmployees(NSSet(array: [grace]))
            department.removeFromEmployees(grace)
            #expect(grace.department == nil)
            department.addToEmployees(NSSet(array: [grace]))
            department.removeFromEmployees(NSSet(array: [grace]))
            #expect(department.employees?.count == 2)
            try context.save()
        }
        let context = try Self.stack(url)
        // As on Apple platforms, the typed fetchRequest() needs its type named (the inherited one is untyped).
        let request: NSFetchRequest<Employee> = Employee.fetchRequest()
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        let employees = try context.fetch(request).filter { $0.name != nil }
        #expect(employees.map(\.name) == ["Ada", "Alan"])
        #expect(employees[1].mentor === employees[0])
        let department = try #require(employees[0].department)
        #expect(department.name == "R&D")
        #expect(Set((department.employees as? Set<NSManagedObject>) ?? []) == Set(employees))
    }

    @Test("the ten ordered to-many accessors insert, remove and replace at positions, keeping owners")
    func orderedAccessors() throws {
        let directory = TemporaryDirectory()
        let context = try Self.stack(directory.url.appendingPathComponent("ordered.sqlite"))
        let department = Department(context: context)
        let projects = (0..<6).map { index -> Project in
            let project = Project(context: context)
            project.title = "p\(index)"
            return project
        }
        func titles() -> [String] {
            (department.projects?.array as? [Project] ?? []).map { $0.title ?? "" }
        }
        department.addToProjects(projects[0])
        department.addToProjects(NSOrderedSet(array: [projects[1], projects[2]]))
        department.insertIntoProjects(projects[3], at: 0)
        #expect(titles() == ["p3", "p0", "p1", "p2"])
        department.insertIntoProjects(
            [projects[4], projects[5]], at: NSIndexSet(indexesIn: NSRange(location: 1, length: 2)))
        #expect(titles() == ["p3", "p4", "p5", "p0", "p1", "p2"])
        department.removeFromProjects(at: 0)
        #expect(titles() == ["p4", "p5", "p0", "p1", "p2"])
        #expect(projects[3].owner == nil)
        department.removeFromProjects(at: NSIndexSet(indexesIn: NSRange(location: 0, length: 2)))
        #expect(titles() == ["p0", "p1", "p2"])
        department.replaceProjects(at: 1, with: projects[3])
        #expect(titles() == ["p0", "p3", "p2"])
        #expect(projects[1].owner == nil && projects[3].owner === department)
        department.replaceProjects(at: NSIndexSet(index: 0), with: [projects[4]])
        #expect(titles() == ["p4", "p3", "p2"])
        department.removeFromProjects(projects[3])
        department.removeFromProjects(NSOrderedSet(array: [projects[2]]))
        #expect(titles() == ["p4"])
        #expect(projects[4].owner === department)
        try context.save()
    }

    @Test("a many-to-many declared as a Swift Set and an internal class work like the others")
    func swiftSetsAndInternalClasses() throws {
        let directory = TemporaryDirectory()
        let context = try Self.stack(directory.url.appendingPathComponent("sets.sqlite"))
        let employee = Employee(context: context)
        let skill = Skill(context: context)
        skill.title = "Swift"
        employee.skills = [skill]
        #expect(employee.skills == [skill])
        #expect(skill.holders?.count == 1)
        #expect((skill.holders?.anyObject() as? Employee) === employee)
        employee.skills = nil
        #expect(employee.skills == [])
        #expect(skill.holders?.count == 0)
        try context.save()
    }

    /// Apple bridges a to-many's `NSSet` to a property declared `Set<Destination>`, optional or
    /// not ("Core Data WWDC 2020 FAQ": such an accessor copies the whole relationship). Read from
    /// the store, the set is the saved members as their class; set, the inverse follows.
    @Test("to-manys declared as Swift sets, optional or not, read their saved members and keep the inverse")
    func swiftSetsReadFromTheStore() throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("prerequisites.sqlite")
        do {
            let context = try Self.stack(url)
            let basics = Skill(context: context)
            basics.title = "Basics"
            let swift = Skill(context: context)
            swift.title = "Swift"
            let macros = Skill(context: context)
            macros.title = "Macros"
            #expect(swift.prerequisites.isEmpty, "no members: an empty set, not a trap")
            swift.prerequisites = [basics]
            macros.prerequisites = [basics, swift]
            #expect(basics.unlocks == [swift, macros], "the inverse follows")
            try context.save()
        }
        let context = try Self.stack(url)
        let request = NSFetchRequest<Skill>(entityName: "Skill")
        request.sortDescriptors = [NSSortDescriptor(key: "title", ascending: true)]
        let skills = try context.fetch(request)
        try #require(skills.map(\.title) == ["Basics", "Macros", "Swift"])
        let (basics, macros, swift) = (skills[0], skills[1], skills[2])
        #expect(macros.prerequisites == [basics, swift])
        #expect(basics.unlocks == [macros, swift])
        #expect(swift.unlocks == [macros])
        #expect(basics.prerequisites.isEmpty)
        macros.prerequisites.remove(basics)
        #expect(basics.unlocks == [swift], "a set changed and assigned back changes the relationship")
        try context.save()
    }

    @Test("one class serving two entities whose properties sit in different places reads and writes each right")
    func oneClassForTwoLayouts() throws {
        // "Subclassing Notes": the generated accessors are those of "the entity of a managed
        // object's corresponding managed object model" — so the same class serving another entity
        // (here with its properties in the opposite order, and on the in-memory store) reaches
        // that entity's values. Typed accessors remember a property's last slot; the two objects
        // are used in turn so that every access meets the other layout's slot first.
        let staff = NSEntityDescription()
        staff.name = "Staff"
        staff.managedObjectClassName = "CompanyModel.Employee"
        staff.properties = [
            ("score", NSAttributeType.doubleAttributeType), ("age", .integer16AttributeType),
            ("name", .stringAttributeType),
        ].map { name, type in
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            return attribute
        }
        let model = NSManagedObjectModel()
        model.entities = [staff]
        let other = try memoryStack(model)
        let directory = TemporaryDirectory()
        let context = try Self.stack(directory.url.appendingPathComponent("layouts.sqlite"))
        let first = Employee(context: context)
        let second = try #require(NSEntityDescription.insertNewObject(forEntityName: "Staff", into: other) as? Employee)
        for round in 1...3 {
            first.name = "first \(round)"
            second.name = "second \(round)"
            first.age = Int16(round)
            second.age = Int16(10 * round)
            first.score = Double(round) / 2
            second.score = Double(round) * 2
            #expect(first.name == "first \(round)" && second.name == "second \(round)")
            #expect(first.age == Int16(round) && second.age == Int16(10 * round))
            #expect(first.score == Double(round) / 2 && second.score == Double(round) * 2)
            #expect(second.value(forKey: "name") as? String == "second \(round)")
            #expect((second.value(forKey: "age") as? NSNumber)?.int16Value == Int16(10 * round))
            #expect(first.value(forKey: "score") as? Double == Double(round) / 2)
        }
        #expect(second.changedValues().keys.sorted() == ["age", "name", "score"], "typed sets are tracked changes")
    }

    /// NSManagedObject reference, "Subclassing Notes": Core Data generates "primitive get and set
    /// attribute accessor methods" for every modelled property, named `primitive<Key>`; declaring
    /// one `@NSManaged` is how Swift code reaches it. It reads and sets the primitive value of
    /// `<key>` (`primitiveValue(forKey:)`, `setPrimitiveValue(_:forKey:)`). Regression: it was
    /// taken for a property of its own name and trapped as an undefined key. `private(set)` on an
    /// `@NSManaged` property restricts its setter only, and was refused by the plugin.
    @Test("primitive<Key> accessors read and set <key>'s primitive value; private(set) properties work")
    func primitiveAccessorsAndPrivateSetters() throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("primitive.sqlite")
        do {
            let context = try Self.stack(url)
            let project = Project(context: context)
            project.primitiveTitle = "Engine"
            #expect(project.title == "Engine")
            #expect(project.primitiveValue(forKey: "title") as? String == "Engine")
            project.title = "Analytical Engine"
            #expect(project.primitiveTitle == "Analytical Engine")
            project.assign(code: "AE-1")
            #expect(project.code == "AE-1")
            try context.save()
        }
        let context = try Self.stack(url)
        let project = try #require(try context.fetch(NSFetchRequest<Project>(entityName: "Project")).first)
        #expect(project.primitiveTitle == "Analytical Engine")
        #expect(project.code == "AE-1")
    }
}

extension NSManagedAccessorTests {
    /// A non-optional object-typed `@NSManaged` property read while the object has no value for
    /// it stops the program naming the property (DEVIATIONS.md; Apple's runtime traps too).
    @Test("reading a non-optional String property that has no value traps")
    func nonOptionalPropertyWithoutValueTraps() async {
        await #expect(processExitsWith: .failure) {
            let model = CompanyModel.make()
            model.entitiesByName["Employee"]?.attributesByName["nickname"]?.defaultValue = nil
            let employee = Employee(context: try memoryStack(model))
            _ = employee.nickname
        }
        // The same read with the model's default value runs to the end.
        await #expect(processExitsWith: .success) {
            let employee = Employee(context: try memoryStack(CompanyModel.make()))
            _ = employee.nickname
        }
    }
}
