import BenchmarkModel
import CoreData

// MARK: OpenCoreData through model classes

/// OpenCoreData as an app with Xcode-generated model classes uses it: the same model, store and
/// operations as ``CoreDataStore``, each value read and written through the classes' `@NSManaged`
/// properties (``Person``, ``Department``, ``Employee``) instead of key-value coding. GRDB's
/// records are typed too; this is the like-for-like row against them.
final class TypedCoreDataStore: Engine {
    let name = "OpenCoreData typed"
    /// The store and its contexts; this engine only reads and writes differently.
    let store: CoreDataStore

    /// The engine on `store`, whose model has the model classes: by default an SQLite store in
    /// the benchmark's folder (the PostgreSQL suite passes its own).
    init(
        store: CoreDataStore = CoreDataStore(
            url: SQLiteBenchmarks.directory.appendingPathComponent("coredata-typed.sqlite"), classes: true)
    ) {
        self.store = store
    }

    func reset() { store.reset() }
    func reopen() { store.reopen() }

    func insert(_ row: SQLiteBenchmarks.Row, into context: NSManagedObjectContext) {
        let person = Person(context: context)
        person.id = Int64(row.id)
        person.name = row.name
        person.email = row.email
        person.age = Int16(row.age)
        person.salary = row.salary
        person.active = row.active
        person.created = row.created
        person.note = row.note
    }

    func insertAll() -> Int {
        let context = store.context()
        withExtendedLifetime(context) {
            for index in 0..<SQLiteBenchmarks.count { insert(SQLiteBenchmarks.Row(index), into: context) }
            try! context.save()
        }
        store.nextID = SQLiteBenchmarks.count
        return SQLiteBenchmarks.count
    }

    /// Every `Person`, the sum of `value` over them.
    private func sum(_ request: NSFetchRequest<Person>, _ value: (Person) -> Int) -> Int {
        let context = store.context()
        return withExtendedLifetime(context) { try! context.fetch(request).reduce(0) { $0 &+ value($1) } }
    }

    func fetchAll() -> Int {
        let request = NSFetchRequest<Person>(entityName: "Person")
        request.returnsObjectsAsFaults = false
        return sum(request) { Int($0.age) }
    }

    func fetchFaultsAndFire() -> Int { sum(NSFetchRequest<Person>(entityName: "Person")) { Int($0.age) } }

    func query() -> Int { query(sortedBy: NSSortDescriptor(key: "salary", ascending: false)) }

    func queryByName() -> Int { query(sortedBy: NSSortDescriptor(key: "name", ascending: true)) }

    private func query(sortedBy sort: NSSortDescriptor) -> Int {
        let context = store.context()
        return withExtendedLifetime(context) {
            var total = 0
            for _ in 0..<10 {
                let request = NSFetchRequest<Person>(entityName: "Person")
                request.predicate = CoreDataStore.matchingRequest().predicate
                request.sortDescriptors = [sort]
                request.fetchLimit = 100
                request.returnsObjectsAsFaults = false
                total &+= try! context.fetch(request).reduce(0) { $0 &+ Int($1.id) }
            }
            return total
        }
    }

    func countMatching() -> Int { store.countMatching() }

    func indexedLookups() -> Int {
        let context = store.context()
        return withExtendedLifetime(context) {
            var total = 0
            for index in stride(from: 0, to: SQLiteBenchmarks.count, by: SQLiteBenchmarks.count / 1000) {
                let request = NSFetchRequest<Person>(entityName: "Person")
                request.predicate = NSPredicate(format: "email == %@", "person\(index)@example.com")
                request.returnsObjectsAsFaults = false
                total &+= try! context.fetch(request).reduce(0) { $0 &+ Int($1.id) }
            }
            return total
        }
    }

    func iterateInBatches() -> Int {
        let request = NSFetchRequest<Person>(entityName: "Person")
        request.fetchBatchSize = 1000
        return sum(request) { Int($0.age) }
    }

    /// The persons whose `id` is a multiple of ten.
    private func tenth() -> NSFetchRequest<Person> {
        let request = NSFetchRequest<Person>(entityName: "Person")
        request.predicate = NSPredicate(format: "id IN %@", Array(stride(from: 0, to: SQLiteBenchmarks.count, by: 10)))
        return request
    }

    func updateTenth() -> Int {
        let context = store.context()
        return withExtendedLifetime(context) {
            let persons = try! context.fetch(tenth())
            for person in persons {
                person.salary += 1
                person.note = "raised"
            }
            try! context.save()
            return persons.count
        }
    }

    func deleteTenth() -> Int {
        let context = store.context()
        return withExtendedLifetime(context) {
            let persons = try! context.fetch(tenth())
            for person in persons { context.delete(person) }
            try! context.save()
            return persons.count
        }
    }

    func singleInserts() -> Int {
        let context = store.context()
        withExtendedLifetime(context) {
            for _ in 0..<1000 {
                insert(SQLiteBenchmarks.Row(store.nextID), into: context)
                store.nextID += 1
                try! context.save()
            }
        }
        return 1000
    }

    func prepareGraph() {
        let context = store.context()
        withExtendedLifetime(context) { BenchmarkModel.insertTypedGraph(count: SQLiteBenchmarks.count, into: context) }
    }

    func followToOne() -> Int {
        let context = store.context()
        return withExtendedLifetime(context) { BenchmarkModel.followTypedToOne(in: context) }
    }

    func followToMany() -> Int {
        let context = store.context()
        return withExtendedLifetime(context) { BenchmarkModel.followTypedToMany(in: context) }
    }

    /// The same file through a second coordinator whose model makes departments
    /// ``SetDepartment``s (a to-many declared `Set<Employee>`); opened at first use.
    private lazy var swiftSetStore: NSPersistentStoreCoordinator = {
        let coordinator = NSPersistentStoreCoordinator(
            managedObjectModel: BenchmarkModel.make(classes: true, swiftSets: true))
        _ = try! coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: store.url)
        return coordinator
    }()

    func extraRows() -> [ExtraRow] {
        [
            ExtraRow(name: SQLiteBenchmarks.swiftSetWalk) { self.followToManyAsSwiftSet() },
            ExtraRow(name: SQLiteBenchmarks.foundationAlone) { self.foundationSetsAlone() },
            ExtraRow(
                name: SQLiteBenchmarks.toOneTeardown,
                setup: { self.walkKeepingContext(BenchmarkModel.followTypedToOne) }, body: letGoOfWalk),
            ExtraRow(
                name: SQLiteBenchmarks.toManyTeardown,
                setup: { self.walkKeepingContext(BenchmarkModel.followTypedToMany) }, body: letGoOfWalk),
        ] + byHand.rows()
    }

    /// Hand-written SQLite on this engine's file.
    private lazy var byHand = ByHandOnAppleFormat(path: store.url.path)

    /// The context of a walk ``walkKeepingContext(_:)`` ran, kept until ``letGoOfWalk()``.
    private var walkedContext: NSManagedObjectContext?

    /// Runs `walk` in a new context, as the walk's row does, and keeps the context.
    private func walkKeepingContext(_ walk: (NSManagedObjectContext) -> Int) {
        let context = store.context()
        _ = walk(context)
        walkedContext = context
    }

    /// Lets go of the walked context, as the walk's row does at its end; answers 1 when there
    /// was one.
    private func letGoOfWalk() -> Int {
        let walked = walkedContext != nil ? 1 : 0
        walkedContext = nil
        return walked
    }

    /// ``followToMany()`` through a to-many declared `Set<Employee>`.
    func followToManyAsSwiftSet() -> Int {
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = swiftSetStore
        return withExtendedLifetime(context) { BenchmarkModel.followSwiftSetToMany(in: context) }
    }

    /// The members ``foundationSetsAlone()`` makes sets of, and the context that holds them.
    private var members: (context: NSManagedObjectContext, groups: [[Employee]])?

    /// Foundation alone on the walk's members: an `NSSet` made of each department's members and
    /// enumerated, as the typed walk does (the members read, and then held, the first time).
    func foundationSetsAlone() -> Int {
        if members == nil {
            let context = store.context()
            members = (context, BenchmarkModel.membersByDepartment(in: context))
        }
        return BenchmarkModel.foundationSetsAlone(members?.groups ?? [])
    }

    func letGoOfExtras() {
        members = nil
        byHand.close()
    }

    var kept: [Person] = []
    var keptContext: NSManagedObjectContext?
    func keepAll() -> Int {
        let context = store.context()
        keptContext = context
        let request = NSFetchRequest<Person>(entityName: "Person")
        request.returnsObjectsAsFaults = false
        kept = try! context.fetch(request)
        return kept.count
    }

    func letGoOfAll() -> [Int] {
        kept = []
        return SQLiteBenchmarks.residentAfterLettingGo(of: &keptContext)
    }
}
