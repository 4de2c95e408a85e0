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

    /// ``followToMany(in:)`` through the typed properties: the members come as Xcode's `NSSet`.
    public static func followTypedToMany(in context: NSManagedObjectContext) -> Int {
        try! context.fetch(NSFetchRequest<Department>(entityName: "Department")).reduce(0) { total, department in
            var ages = 0
            for case let member as Employee in department.employees ?? NSSet() { ages &+= Int(member.age) }
            return total &+ ages
        }
    }
}
