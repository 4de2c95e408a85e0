import CoreData

/// The benchmark's Core Data model and the relationship walks, shared by the `Benchmarks` and
/// `Profile` executables so a profile runs exactly what the table measures.
public enum BenchmarkModel {
    /// The departments of the relationship graph; the N employees are spread evenly over them.
    public static let departments = 1_000

    /// `Person` (8 attributes, `email` indexed), and `Department` / `Employee` joined by the
    /// to-many `employees` and its inverse to-one `department`; with `classes`, each entity's
    /// objects are of its model class (``Person``, ``Department``, ``Employee``), and with
    /// `swiftSets` as well, departments are ``SetDepartment``s. Class names do not change the
    /// model's version hashes: either model opens the other's stores.
    public static func make(classes: Bool = false, swiftSets: Bool = false) -> NSManagedObjectModel {
        let model = NSManagedObjectModel()
        model.entities = [person()] + graphEntities()
        if classes {
            for entity in model.entities {
                let name = swiftSets && entity.name == "Department" ? "SetDepartment" : entity.name!
                entity.managedObjectClassName = "BenchmarkModel.\(name)"
            }
        }
        return model
    }

    static func attribute(_ name: String, _ type: NSAttributeType, optional: Bool = false)
        -> NSAttributeDescription
    {
        let attribute = NSAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        attribute.isOptional = optional
        return attribute
    }

    private static func person() -> NSEntityDescription {
        let person = NSEntityDescription()
        person.name = "Person"
        let email = attribute("email", .stringAttributeType)
        email.isIndexed = true
        person.properties = [
            attribute("id", .integer64AttributeType), attribute("name", .stringAttributeType), email,
            attribute("age", .integer16AttributeType), attribute("salary", .doubleAttributeType),
            attribute("active", .booleanAttributeType), attribute("created", .dateAttributeType),
            attribute("note", .stringAttributeType, optional: true),
        ]
        return person
    }

    private static func graphEntities() -> [NSEntityDescription] {
        let department = NSEntityDescription()
        department.name = "Department"
        let employee = NSEntityDescription()
        employee.name = "Employee"
        let employees = NSRelationshipDescription()
        employees.name = "employees"
        employees.destinationEntity = employee
        employees.maxCount = 0
        employees.isOptional = true
        let worksIn = NSRelationshipDescription()
        worksIn.name = "department"
        worksIn.destinationEntity = department
        worksIn.maxCount = 1
        worksIn.isOptional = true
        employees.inverseRelationship = worksIn
        worksIn.inverseRelationship = employees
        department.properties = [
            attribute("name", .stringAttributeType), attribute("budget", .doubleAttributeType), employees,
        ]
        employee.properties = [
            attribute("name", .stringAttributeType), attribute("age", .integer16AttributeType), worksIn,
        ]
        return [department, employee]
    }

    /// Inserts ``departments`` departments and `count` employees, each in one department, and saves.
    public static func insertGraph(count: Int, into context: NSManagedObjectContext) {
        let all = (0..<departments).map { index in
            let department = NSEntityDescription.insertNewObject(forEntityName: "Department", into: context)
            department.setValue("Department \(index)", forKey: "name")
            department.setValue(Double(index), forKey: "budget")
            return department
        }
        for index in 0..<count {
            let employee = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: context)
            employee.setValue("Employee \(index)", forKey: "name")
            employee.setValue(18 + index % 60, forKey: "age")
            employee.setValue(all[index % departments], forKey: "department")
        }
        try! context.save()
    }

    /// Every employee fetched (as faults), and each one's department's budget read through the to-one.
    public static func followToOne(in context: NSManagedObjectContext) -> Int {
        try! context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee")).reduce(0) { total, employee in
            let department = employee.value(forKey: "department") as! NSManagedObject
            return total &+ Int(department.value(forKey: "budget") as! Double)
        }
    }

    /// Every department fetched, and each one's employees' ages read through the to-many.
    public static func followToMany(in context: NSManagedObjectContext) -> Int {
        try! context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Department")).reduce(0) { total, department in
            let members = department.value(forKey: "employees") as! Set<NSManagedObject>
            return total &+ members.reduce(0) { $0 &+ ($1.value(forKey: "age") as! Int) }
        }
    }
}
