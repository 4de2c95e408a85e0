import CoreData

// MARK: OpenCoreData

final class CoreDataStore: Engine {
    let name = "OpenCoreData"
    let url = SQLiteBenchmarks.directory.appendingPathComponent("coredata.sqlite")
    let model: NSManagedObjectModel = {
        let person = NSEntityDescription()
        person.name = "Person"
        let attributes: [(String, NSAttributeType, Bool)] = [
            ("id", .integer64AttributeType, false), ("name", .stringAttributeType, false),
            ("email", .stringAttributeType, false), ("age", .integer16AttributeType, false),
            ("salary", .doubleAttributeType, false), ("active", .booleanAttributeType, false),
            ("created", .dateAttributeType, false), ("note", .stringAttributeType, true),
        ]
        person.properties = attributes.map { name, type, optional in
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = optional
            attribute.isIndexed = name == "email"
            return attribute
        }
        let model = NSManagedObjectModel()
        model.entities = [person] + CoreDataStore.graphEntities()
        return model
    }()

    /// Department (`name`, `budget`, to-many `employees`) and Employee (`name`, `age`, to-one
    /// `department`), inverses of each other: the relationship graph of ``Engine/prepareGraph()``.
    static func graphEntities() -> [NSEntityDescription] {
        func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
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
        let worksIn = NSRelationshipDescription()
        worksIn.name = "department"
        worksIn.destinationEntity = department
        worksIn.maxCount = 1
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
    var coordinator: NSPersistentStoreCoordinator!
    var nextID = 0

    func reset() {
        coordinator = nil
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        _ = try! coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url)
        nextID = 0
    }

    func reopen() {
        coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        _ = try! coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url)
    }

    func context() -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    func insert(_ row: SQLiteBenchmarks.Row, into context: NSManagedObjectContext) {
        let object = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
        object.setValue(row.id, forKey: "id")
        object.setValue(row.name, forKey: "name")
        object.setValue(row.email, forKey: "email")
        object.setValue(row.age, forKey: "age")
        object.setValue(row.salary, forKey: "salary")
        object.setValue(row.active, forKey: "active")
        object.setValue(row.created, forKey: "created")
        object.setValue(row.note, forKey: "note")
    }

    func insertAll() -> Int {
        let context = context()
        withExtendedLifetime(context) {
            for index in 0..<SQLiteBenchmarks.count { insert(SQLiteBenchmarks.Row(index), into: context) }
            try! context.save()
        }
        nextID = SQLiteBenchmarks.count
        return SQLiteBenchmarks.count
    }

    func fetchAll() -> Int {
        let context = context()
        return withExtendedLifetime(context) {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
            request.returnsObjectsAsFaults = false
            return try! context.fetch(request).reduce(0) { $0 &+ ($1.value(forKey: "age") as! Int) }
        }
    }

    func fetchFaultsAndFire() -> Int {
        let context = context()
        return withExtendedLifetime(context) {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
            return try! context.fetch(request).reduce(0) { $0 &+ ($1.value(forKey: "age") as! Int) }
        }
    }

    /// The benchmark's query: `age >= 30 AND active == YES AND salary > 1000`.
    static func matchingRequest() -> NSFetchRequest<NSManagedObject> {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
        request.predicate = NSPredicate(format: "age >= %d AND active == YES AND salary > %f", 30, 1000.0)
        return request
    }

    func query() -> Int { query(sortedBy: NSSortDescriptor(key: "salary", ascending: false)) }

    func queryByName() -> Int { query(sortedBy: NSSortDescriptor(key: "name", ascending: true)) }

    private func query(sortedBy sort: NSSortDescriptor) -> Int {
        let context = context()
        return withExtendedLifetime(context) {
            var total = 0
            for _ in 0..<10 {
                let request = Self.matchingRequest()
                request.sortDescriptors = [sort]
                request.fetchLimit = 100
                request.returnsObjectsAsFaults = false
                total &+= try! context.fetch(request).reduce(0) { $0 &+ ($1.value(forKey: "id") as! Int) }
            }
            return total
        }
    }

    func countMatching() -> Int {
        let context = context()
        return withExtendedLifetime(context) {
            var total = 0
            for _ in 0..<10 {
                let request = Self.matchingRequest()
                total &+= try! context.count(for: request)
            }
            return total
        }
    }

    func indexedLookups() -> Int {
        let context = context()
        return withExtendedLifetime(context) {
            var total = 0
            for index in stride(from: 0, to: SQLiteBenchmarks.count, by: SQLiteBenchmarks.count / 1000) {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
                request.predicate = NSPredicate(format: "email == %@", "person\(index)@example.com")
                request.returnsObjectsAsFaults = false
                total &+= try! context.fetch(request).reduce(0) { $0 &+ ($1.value(forKey: "id") as! Int) }
            }
            return total
        }
    }

    func iterateInBatches() -> Int {
        let context = context()
        return withExtendedLifetime(context) {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
            request.fetchBatchSize = 1000
            return try! context.fetch(request).reduce(0) { $0 &+ ($1.value(forKey: "age") as! Int) }
        }
    }

    func updateTenth() -> Int {
        let context = context()
        return withExtendedLifetime(context) {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
            request.predicate = NSPredicate(
                format: "id IN %@", Array(stride(from: 0, to: SQLiteBenchmarks.count, by: 10)))
            let objects = try! context.fetch(request)
            for object in objects {
                object.setValue((object.value(forKey: "salary") as! Double) + 1, forKey: "salary")
                object.setValue("raised", forKey: "note")
            }
            try! context.save()
            return objects.count
        }
    }

    func deleteTenth() -> Int {
        let context = context()
        return withExtendedLifetime(context) {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
            request.predicate = NSPredicate(
                format: "id IN %@", Array(stride(from: 0, to: SQLiteBenchmarks.count, by: 10)))
            let objects = try! context.fetch(request)
            for object in objects { context.delete(object) }
            try! context.save()
            return objects.count
        }
    }

    func singleInserts() -> Int {
        let context = context()
        withExtendedLifetime(context) {
            for _ in 0..<1000 {
                insert(SQLiteBenchmarks.Row(nextID), into: context)
                nextID += 1
                try! context.save()
            }
        }
        return 1000
    }

    func prepareGraph() {
        let context = context()
        withExtendedLifetime(context) {
            let departments = (0..<SQLiteBenchmarks.departments).map { index in
                let department = NSEntityDescription.insertNewObject(forEntityName: "Department", into: context)
                department.setValue("Department \(index)", forKey: "name")
                department.setValue(Double(index), forKey: "budget")
                return department
            }
            for index in 0..<SQLiteBenchmarks.count {
                let employee = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: context)
                employee.setValue("Employee \(index)", forKey: "name")
                employee.setValue(18 + index % 60, forKey: "age")
                employee.setValue(departments[index % SQLiteBenchmarks.departments], forKey: "department")
            }
            try! context.save()
        }
    }

    func followToOne() -> Int {
        let context = context()
        return withExtendedLifetime(context) {
            try! context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee")).reduce(0) { total, employee in
                let department = employee.value(forKey: "department") as! NSManagedObject
                return total &+ Int(department.value(forKey: "budget") as! Double)
            }
        }
    }

    func followToMany() -> Int {
        let context = context()
        return withExtendedLifetime(context) {
            try! context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Department")).reduce(0) {
                total, department in
                let members = department.value(forKey: "employees") as! Set<NSManagedObject>
                return total &+ members.reduce(0) { $0 &+ ($1.value(forKey: "age") as! Int) }
            }
        }
    }

    var kept: [NSManagedObject] = []
    var keptContext: NSManagedObjectContext?
    func keepAll() -> Int {
        let context = context()
        keptContext = context
        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
        request.returnsObjectsAsFaults = false
        kept = try! context.fetch(request)
        return kept.count
    }
}
