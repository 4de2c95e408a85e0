import CoreData

/// `Person` as Xcode's "Class Definition" code generation writes it: `@NSManaged` properties,
/// scalars for numbers and Booleans, optionals for object types. The plugin supplies the
/// accessors. Objects of ``BenchmarkModel/make(classes:)``'s `Person` entity are of this class.
public final class Person: NSManagedObject {
    @NSManaged public var id: Int64
    @NSManaged public var name: String?
    @NSManaged public var email: String?
    @NSManaged public var age: Int16
    @NSManaged public var salary: Double
    @NSManaged public var active: Bool
    @NSManaged public var created: Date?
    @NSManaged public var note: String?
}

/// `Department` as Xcode generates it: the to-many `employees` is an `NSSet`.
public final class Department: NSManagedObject {
    @NSManaged public var name: String?
    @NSManaged public var budget: Double
    @NSManaged public var employees: NSSet?
}

/// `Department` as an app that declares its to-many a Swift set writes it, which Apple allows
/// (bridging the relationship's `NSSet`, copied): the class of ``BenchmarkModel/make(classes:swiftSets:)``'s
/// `Department` with `swiftSets`.
public final class SetDepartment: NSManagedObject {
    @NSManaged public var name: String?
    @NSManaged public var budget: Double
    @NSManaged public var employees: Set<Employee>
}

/// `Employee` as Xcode generates it: the to-one `department` is an optional object.
public final class Employee: NSManagedObject {
    @NSManaged public var name: String?
    @NSManaged public var age: Int16
    @NSManaged public var department: Department?
}

extension BenchmarkModel {
    /// Inserts the relationship graph of ``insertGraph(count:into:)`` through the model classes'
    /// typed properties, and saves.
    public static func insertTypedGraph(count: Int, into context: NSManagedObjectContext) {
        let all = (0..<departments).map { index in
            let department = Department(context: context)
            department.name = "Department \(index)"
            department.budget = Double(index)
            return department
        }
        for index in 0..<count {
            let employee = Employee(context: context)
            employee.name = "Employee \(index)"
            employee.age = Int16(18 + index % 60)
            employee.department = all[index % departments]
        }
        try! context.save()
    }

    /// ``followToOne(in:)`` through the typed properties.
    public static func followTypedToOne(in context: NSManagedObjectContext) -> Int {
        try! context.fetch(NSFetchRequest<Employee>(entityName: "Employee")).reduce(0) { total, employee in
            total &+ Int(employee.department!.budget)
        }
    }

    /// ``followToMany(in:)`` through a to-many declared `Set<Employee>` (``SetDepartment``): no
    /// `NSSet` between the members and the walk.
    public static func followSwiftSetToMany(in context: NSManagedObjectContext) -> Int {
        try! context.fetch(NSFetchRequest<SetDepartment>(entityName: "Department")).reduce(0) { total, department in
            total &+ department.employees.reduce(0) { $0 &+ Int($1.age) }
        }
    }

    /// The departments' members, each department's as an array, read untimed for
    /// ``foundationSetsAlone(_:)``.
    public static func membersByDepartment(in context: NSManagedObjectContext) -> [[Employee]] {
        try! context.fetch(NSFetchRequest<Department>(entityName: "Department")).map { department in
            var group: [Employee] = []
            for case let member as Employee in department.employees ?? NSSet() { group.append(member) }
            return group
        }
    }

    /// What Foundation alone costs the typed to-many walk, on the same member objects: an `NSSet`
    /// made from each department's members (as the generated getter makes it) and enumerated as
    /// the walk enumerates it (`for case let … as Employee`), reading nothing from the members —
    /// the part of the walk no store can remove while the generated property is an `NSSet`.
    /// Answers the members enumerated.
    public static func foundationSetsAlone(_ members: [[Employee]]) -> Int {
        var count = 0
        for group in members {
            let set = group.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: AnyObject.self) { NSSet(objects: $0.baseAddress, count: $0.count) }
            }
            for case let member as Employee in set { count &+= member.isFault ? 2 : 1 }
        }
        return count
    }

    /// ``followToMany(in:)`` through the typed properties: the members come as Xcode's `NSSet`.
    public static func followTypedToMany(in context: NSManagedObjectContext) -> Int {
        try! context.fetch(NSFetchRequest<Department>(entityName: "Department")).reduce(0) { total, department in
            var ages = 0
            for case let member as Employee in department.employees ?? NSSet() { ages &+= Int(member.age) }
            return total &+ ages
        }
    }
}
