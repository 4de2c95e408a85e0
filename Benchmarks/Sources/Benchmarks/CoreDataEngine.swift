import BenchmarkModel
import CoreData

// MARK: OpenCoreData

final class CoreDataStore: Engine {
    let name = "OpenCoreData"
    let type: String
    let url: URL
    let model: NSManagedObjectModel
    var coordinator: NSPersistentStoreCoordinator!
    var nextID = 0

    /// The engine on an SQLite store in the benchmark's folder, or on a store of `type` at `url`
    /// (the PostgreSQL suite's), with the benchmark's model (its objects of the model classes
    /// with `classes`).
    init(
        type: String = NSSQLiteStoreType,
        url: URL = SQLiteBenchmarks.directory.appendingPathComponent("coredata.sqlite"), classes: Bool = false
    ) {
        self.type = type
        self.url = url
        self.model = BenchmarkModel.make(classes: classes)
    }

    func reset() {
        coordinator = nil
        if url.isFileURL {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        }
        coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        _ = try! coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url)
        nextID = 0
    }

    /// Removes the store from its coordinator (closing its connections).
    func close() {
        if let coordinator { for store in coordinator.persistentStores { try? coordinator.remove(store) } }
        coordinator = nil
    }

    func reopen() {
        coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        _ = try! coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url)
    }

    func context() -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    func insert(_ row: SQLiteBenchmarks.Row, into context: NSManagedObjectContext) {
        Self.insert(row, into: context)
    }

    /// Inserts `row` as a new `Person` through key-value coding (also the store-type suite's insert).
    static func insert(_ row: SQLiteBenchmarks.Row, into context: NSManagedObjectContext) {
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

    func extraRows() -> [ExtraRow] { [ExtraRow(name: SQLiteBenchmarks.numberCasts) { self.numberCastsAlone() }] }

    /// The ages of every `Person` as `value(forKey:)` answers them, read untimed the first time.
    private var ages: [Any] = []

    /// Foundation alone on the generic fetch's numbers: each age `value(forKey:)` answered, cast
    /// to `Int` as the fetch's sum casts it.
    func numberCastsAlone() -> Int {
        if ages.isEmpty {
            let context = context()
            let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
            request.returnsObjectsAsFaults = false
            ages = withExtendedLifetime(context) { try! context.fetch(request).map { $0.value(forKey: "age") as Any } }
        }
        return ages.reduce(0) { $0 &+ ($1 as! Int) }
    }

    func letGoOfExtras() { ages = [] }

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
        withExtendedLifetime(context) { BenchmarkModel.insertGraph(count: SQLiteBenchmarks.count, into: context) }
    }

    func followToOne() -> Int {
        let context = context()
        return withExtendedLifetime(context) { BenchmarkModel.followToOne(in: context) }
    }

    func followToMany() -> Int {
        let context = context()
        return withExtendedLifetime(context) { BenchmarkModel.followToMany(in: context) }
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

    func letGoOfAll() -> [Int] {
        kept = []
        return SQLiteBenchmarks.residentAfterLettingGo(of: &keptContext)
    }
}
