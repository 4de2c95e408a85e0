import CoreData

/// Insert + save and fetch of 100,000 objects on the in-memory store, against the same work done
/// by hand on plain Swift objects (the floor any object-graph layer sits on).
enum ObjectGraphBenchmarks {
    static let count = 100_000

    static func model() -> NSManagedObjectModel {
        let employee = NSEntityDescription()
        employee.name = "Employee"
        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        let salary = NSAttributeDescription()
        salary.name = "salary"
        salary.attributeType = .doubleAttributeType
        let age = NSAttributeDescription()
        age.name = "age"
        age.attributeType = .integer64AttributeType
        employee.properties = [name, salary, age]
        let model = NSManagedObjectModel()
        model.entities = [employee]
        return model
    }

    static func context(_ coordinator: NSPersistentStoreCoordinator) -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    static func filledCoordinator() -> NSPersistentStoreCoordinator {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model())
        _ = try! coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
        let context = context(coordinator)
        insert(into: context)
        try! context.save()
        return coordinator
    }

    static func insert(into context: NSManagedObjectContext) {
        for index in 0..<count {
            let object = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: context)
            object.setValue("Employee \(index)", forKey: "name")
            object.setValue(Double(index % 1000), forKey: "salary")
            object.setValue(index % 80, forKey: "age")
        }
    }

    final class Row {
        var name: String
        var salary: Double
        var age: Int
        init(name: String, salary: Double, age: Int) {
            self.name = name
            self.salary = salary
            self.age = age
        }
    }

    static func run() {
        print("\nObject graph, in-memory store, \(count) objects")
        let insert = measure("insert + save (insertNewObject, 3 × setValue, save)", repetitions: 3) {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model())
            _ = try! coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
            let context = context(coordinator)
            self.insert(into: context)
            try! context.save()
            return context.registeredObjects.count
        }
        let handInsert = measure("baseline: append \(count) Swift objects to a keyed table", repetitions: 3) {
            var table: [Int: Row] = [:]
            for index in 0..<count {
                table[index] = Row(name: "Employee \(index)", salary: Double(index % 1000), age: index % 80)
            }
            return table.count
        }
        print("  insert + save ratio to baseline: \(ratio(insert, handInsert))")

        let coordinator = filledCoordinator()
        let fetch = measure("fetch all as faults (fresh context)", repetitions: 3) {
            let context = context(coordinator)
            return try! context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee")).count
        }
        let fetchTouch = measure("fetch all + read salary of each (fires every fault)", repetitions: 3) {
            let context = context(coordinator)
            var total = 0.0
            // Objects do not retain their context: keep it alive while faults fire.
            withExtendedLifetime(context) {
                for object in try! context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee")) {
                    total += object.value(forKey: "salary") as! Double
                }
            }
            return Int(total)
        }
        let fetchPredicate = measure("fetch salary > 500 AND age < 40, sorted by name", repetitions: 3) {
            let context = context(coordinator)
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.predicate = NSPredicate(format: "salary > 500 AND age < 40")
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            return try! context.fetch(request).count
        }
        var rows: [Int: Row] = [:]
        for index in 0..<count {
            rows[index] = Row(name: "Employee \(index)", salary: Double(index % 1000), age: index % 80)
        }
        let handScan = measure("baseline: read salary of every Swift object", repetitions: 3) {
            var total = 0.0
            for row in rows.values { total += row.salary }
            return Int(total)
        }
        let handFilter = measure("baseline: same filter + sort by hand", repetitions: 3) {
            rows.values.filter { $0.salary > 500 && $0.age < 40 }.sorted { $0.name < $1.name }.count
        }
        print("  fetch + read ratio to baseline: \(ratio(fetchTouch, handScan))")
        print("  fetch with predicate + sort ratio to baseline: \(ratio(fetchPredicate, handFilter))")
        _ = fetch
    }
}
