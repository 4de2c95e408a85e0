// Fixed workloads for a profiler, without the benchmark's timing loop:
//   swift build -c release --package-path Benchmarks --product Profile
//   perf record -g Benchmarks/.build/release/Profile [predicate|insert|fetch|sqlite-insert|sqlite-delete|sqlite-fetch|sqlite-saves|sqlite-parallel|sqlite-realize|xml-load|binary-load|person-insert|person-fetch|person-reset|person-sorted|person-memory|person-batches|person-update|person-delete|person-saves|graph-to-one|graph-to-many|graph-phases|graph-to-many-phases|person-fetch-sizes]
//   perf report --no-children
import BenchmarkModel
import CoreData
import Foundation

let workload = CommandLine.arguments.dropFirst().first ?? "predicate"

func predicateWorkload() {
    let cities = ["London", "Paris", "Rome", "Zürich", "Tokyo"]
    let people: [[String: Any]] = (0..<200_000).map { i in
        [
            "name": (i % 3 == 0 ? "Ada" : "bob") + String(i % 97), "age": i % 80, "city": cities[i % cities.count],
            "score": Double(i % 1000) / 10,
        ]
    }
    let predicate = NSPredicate(
        format: "age >= 18 AND age < 65 AND name BEGINSWITH[c] 'ada' AND city IN {'London', 'Paris', 'Zürich'}")
    var matches = 0
    for _ in 0..<3 {
        for person in people where predicate.evaluate(with: person) { matches += 1 }
    }
    print(matches)
}

func objectGraphModel() -> NSManagedObjectModel {
    let employee = NSEntityDescription()
    employee.name = "Employee"
    employee.properties = [("name", NSAttributeType.stringAttributeType), ("salary", .doubleAttributeType)].map {
        let attribute = NSAttributeDescription()
        attribute.name = $0.0
        attribute.attributeType = $0.1
        return attribute
    }
    let model = NSManagedObjectModel()
    model.entities = [employee]
    return model
}

/// A coordinator on a new store of `type` holding `count` saved employees.
func insertAndSave(_ count: Int, type: String, at url: URL?) -> NSPersistentStoreCoordinator {
    let coordinator = NSPersistentStoreCoordinator(managedObjectModel: objectGraphModel())
    _ = try! coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url)
    let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
    context.persistentStoreCoordinator = coordinator
    for index in 0..<count {
        let object = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: context)
        object.setValue("Employee \(index)", forKey: "name")
        object.setValue(Double(index % 1000), forKey: "salary")
    }
    try! context.save()
    return coordinator
}

func objectGraphWorkload(fetch: Bool, type: String = NSInMemoryStoreType, at url: URL? = nil) {
    let coordinator = insertAndSave(200_000, type: type, at: url)
    guard fetch else { return }
    for _ in 0..<3 {
        let reader = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        reader.persistentStoreCoordinator = coordinator
        var total = 0.0
        withExtendedLifetime(reader) {
            for object in try! reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee")) {
                total += object.value(forKey: "salary") as! Double
            }
        }
        print(total)
    }
}

/// Inserts 100,000 objects into a new SQLite store and saves; `delete` then deletes every tenth
/// (in a new context, as the benchmark does) and saves again.
func sqliteWorkload(delete: Bool) {
    let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("profile-\(UUID().uuidString).sqlite")
    defer {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
    }
    let coordinator = insertAndSave(100_000, type: NSSQLiteStoreType, at: url)
    guard delete else { return }
    let deleter = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
    deleter.persistentStoreCoordinator = coordinator
    let start = Date()
    for (index, object) in try! deleter.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee")).enumerated()
    where index % 10 == 0 {
        deleter.delete(object)
    }
    try! deleter.save()
    print("delete:", Date().timeIntervalSince(start))
}

/// 2,000 saves of one inserted object each into a new SQLite store (the benchmark's "1,000
/// single-insert saves"), timed.
func sqliteSavesWorkload() {
    let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("profile-\(UUID().uuidString).sqlite")
    defer {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
    }
    let coordinator = insertAndSave(10, type: NSSQLiteStoreType, at: url)
    let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
    context.persistentStoreCoordinator = coordinator
    let start = Date()
    for index in 0..<2_000 {
        let object = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: context)
        object.setValue("e\(index)", forKey: "name")
        object.setValue(Double(index), forKey: "salary")
        try! context.save()
    }
    print("saves:", Date().timeIntervalSince(start))
}

/// 80 fetches of one SQL-heavy query (`name LIKE[c] '*99*'` over 50,000 rows, judged by the
/// in-memory string rules inside SQL): one after another on one thread, then 8 contexts on 8
/// threads running 10 each at once. Prints both times and their ratio.
func sqliteParallelWorkload() {
    let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("profile-\(UUID().uuidString).sqlite")
    defer {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
    }
    let coordinator = insertAndSave(50_000, type: NSSQLiteStoreType, at: url)
    @Sendable func count() -> Int {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.predicate = NSPredicate(format: "name LIKE[c] %@", "*99*")
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return try! context.count(for: request)
    }
    var start = Date()
    var total = 0
    for _ in 0..<80 { total += count() }
    let serial = Date().timeIntervalSince(start)
    start = Date()
    DispatchQueue.concurrentPerform(iterations: 8) { _ in
        for _ in 0..<10 { _ = count() }
    }
    let parallel = Date().timeIntervalSince(start)
    print("serial:", serial, "8 threads:", parallel, "speed-up:", serial / parallel, "matches:", total / 80)
}

/// Fetches 100,000 saved objects with their values (`returnsObjectsAsFaults = false`) five times
/// into fresh contexts; prints the fastest.
func sqliteRealizeWorkload() {
    let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("profile-\(UUID().uuidString).sqlite")
    defer {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
    }
    let coordinator = insertAndSave(100_000, type: NSSQLiteStoreType, at: url)
    var best = Double.infinity
    for _ in 0..<5 {
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.returnsObjectsAsFaults = false
        let start = Date()
        let count = withExtendedLifetime(context) { try! context.fetch(request).count }
        best = min(best, Date().timeIntervalSince(start))
        precondition(count == 100_000)
    }
    print("fetch realized, best of 5:", best)
}

/// The benchmark's own model (BenchmarkModel), so a profile sees the work the table measures:
/// `person-insert` inserts 100,000 people and saves; `person-fetch` then fetches them realized
/// three times; `person-memory` prints, from a fresh child process, the resident memory each
/// realized person adds; `person-sorted` runs the benchmark's string-sorted query 30 times;
/// `person-batches` iterates them three times with `fetchBatchSize` 1,000; `person-update` changes
/// every tenth (fetched by `id IN %@`) and saves; `person-delete` deletes every tenth and saves;
/// `person-saves` makes 1,000 saves of one insert
/// each; `graph-to-one` / `graph-to-many` insert the department graph and walk it three times.
/// Each prints its time. Two print a walk or a fetch by parts: `graph-phases` times the to-one
/// walk's steps five times, the context's teardown among them; `person-fetch-sizes` the cost a
/// row of realized fetches of 1,000, 10,000 and 100,000 rows (from the processor's caches, and not);
/// `person-reset` times five `reset()`s of a context, each after fetching every person realized.
func personWorkload(_ operation: String) {
    let model = BenchmarkModel.make(classes: operation == "graph-to-many-phases")
    let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("profile-\(UUID().uuidString).sqlite")
    defer {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
    }
    let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
    _ = try! coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url)
    func context() -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }
    func insert(_ index: Int, into context: NSManagedObjectContext) {
        let object = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
        object.setValue(index, forKey: "id")
        object.setValue("Person \(index)", forKey: "name")
        object.setValue("person\(index)@example.com", forKey: "email")
        object.setValue(18 + index % 60, forKey: "age")
        object.setValue(Double(index % 5000) * 10.5, forKey: "salary")
        object.setValue(index % 3 != 0, forKey: "active")
        object.setValue(Date(timeIntervalSinceReferenceDate: Double(index) * 60), forKey: "created")
        object.setValue(index % 4 == 0 ? nil : "note \(index)", forKey: "note")
    }
    /// Fetches every person into a fresh context three times, reading each one's age.
    func fetchAllThreeTimes(_ configure: (NSFetchRequest<NSManagedObject>) -> Void) {
        for _ in 0..<3 {
            let reader = context()
            let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
            configure(request)
            let total = withExtendedLifetime(reader) {
                try! reader.fetch(request).reduce(0) { $0 &+ ($1.value(forKey: "age") as! Int) }
            }
            precondition(total > 0)
        }
    }
    let clock = ContinuousClock()
    var start = clock.now
    let count = operation == "person-saves" ? 10 : 100_000
    if operation.hasPrefix("graph-") {
        // Saved by a context that is gone before the walks, as in the benchmark: their rows are
        // not in the row cache.
        do {
            let inserter = context()
            BenchmarkModel.insertGraph(count: count, into: inserter)
        }
    } else {
        let inserter = context()
        withExtendedLifetime(inserter) {
            for index in 0..<count { insert(index, into: inserter) }
            try! inserter.save()
        }
    }
    print("insert + save:", clock.now - start)
    start = clock.now
    switch operation {
    case "person-fetch-sizes":
        for limit in [1_000, 10_000, 100_000, 1_000, 10_000, 100_000] {
            var best = Duration.seconds(100)
            for _ in 0..<5 {
                let reader = context()
                let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
                request.returnsObjectsAsFaults = false
                request.fetchLimit = limit
                let begin = clock.now
                let total = withExtendedLifetime(reader) { try! reader.fetch(request).count }
                best = min(best, clock.now - begin)
                precondition(total == limit)
            }
            let nanoseconds = Double((best / limit).components.attoseconds) / 1e9
            print("fetch of \(limit) realized (best of 5): \(Int(nanoseconds)) ns a row")
        }
    case "person-reset":
        // A context reused by `reset()`, as import and sync loops do: the time a reset and the
        // app's results array going away take to let go of 100,000 realized objects.
        let reader = context()
        var resets: [Duration] = []
        withExtendedLifetime(reader) {
            for _ in 0..<5 {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
                request.returnsObjectsAsFaults = false
                var objects: [NSManagedObject]? = try! reader.fetch(request)
                precondition(objects?.count == count)
                let begin = clock.now
                reader.reset()
                objects = nil
                resets.append(clock.now - begin)
            }
        }
        print("reset of \(count) realized objects:", resets.map { "\($0)" }.joined(separator: ", "))
    case "person-fetch":
        fetchAllThreeTimes { $0.returnsObjectsAsFaults = false }
        print("fetch realized ×3:", clock.now - start)
    case "person-sorted":
        let reader = context()
        withExtendedLifetime(reader) {
            for _ in 0..<30 {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
                request.predicate = NSPredicate(format: "age >= %d AND active == YES AND salary > %f", 30, 1000.0)
                request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
                request.fetchLimit = 100
                request.returnsObjectsAsFaults = false
                precondition(try! reader.fetch(request).count == 100)
            }
        }
        print("query sorted by name ×30:", clock.now - start)
    case "person-memory":
        // In a fresh process (the allocator here reuses what the insert freed), as the benchmark's
        // `sqlite-memory` child: resident memory per realized object kept in its context.
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments = ["person-memory-child", url.path]
        try! child.run()
        child.waitUntilExit()
    case "person-batches":
        fetchAllThreeTimes { $0.fetchBatchSize = 1000 }
        print("fetchBatchSize iteration ×3:", clock.now - start)
    case "person-update":
        let updater = context()
        withExtendedLifetime(updater) {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
            request.predicate = NSPredicate(format: "id IN %@", Array(stride(from: 0, to: count, by: 10)))
            for object in try! updater.fetch(request) {
                object.setValue((object.value(forKey: "salary") as! Double) + 1, forKey: "salary")
                object.setValue("raised", forKey: "note")
            }
            try! updater.save()
        }
        print("update 10% + save:", clock.now - start)
    case "person-delete":
        let deleter = context()
        withExtendedLifetime(deleter) {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
            request.predicate = NSPredicate(format: "id IN %@", Array(stride(from: 0, to: count, by: 10)))
            for object in try! deleter.fetch(request) { deleter.delete(object) }
            try! deleter.save()
        }
        print("delete 10% + save:", clock.now - start)
    case "person-saves":
        let saver = context()
        withExtendedLifetime(saver) {
            for index in count..<(count + 1000) {
                insert(index, into: saver)
                try! saver.save()
            }
        }
        print("1,000 single-insert saves:", clock.now - start)
    case "graph-phases":
        for _ in 0..<5 {
            var reader: NSManagedObjectContext? = context()
            var departments: [NSManagedObject] = []
            let fetched = clock.now
            let employees = try! reader!.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee"))
            let fired = clock.now
            for employee in employees { departments.append(employee.value(forKey: "department") as! NSManagedObject) }
            let read = clock.now
            let total = departments.reduce(0) { $0 &+ Int($1.value(forKey: "budget") as! Double) }
            precondition(total > 0)
            let released = clock.now
            (departments, reader) = ([], nil)
            _ = consume employees
            print(
                "fetch as faults: \(fired - fetched); fire + follow the to-one: \(read - fired);",
                "read each budget: \(released - read); context and objects go away: \(clock.now - released)")
        }
    case "graph-to-many-phases":
        for _ in 0..<5 { toManyPhases(context) }
    case "graph-to-one", "graph-to-many":
        for _ in 0..<3 {
            let reader = context()
            let total = withExtendedLifetime(reader) {
                operation == "graph-to-one"
                    ? BenchmarkModel.followToOne(in: reader) : BenchmarkModel.followToMany(in: reader)
            }
            precondition(total > 0)
        }
        print("\(operation) ×3:", clock.now - start)
    default:
        break
    }
}

/// The benchmark's typed to-many walk (`BenchmarkModel.followTypedToMany`) timed by parts, in a
/// new context: the departments fetched; each one's `employees` read (the members' keys, their
/// faults, the `NSSet`); the sets enumerated as the walk does (`for case let … as Employee`),
/// firing nothing; each member's `age` read (its fault fired); the context going away. Then, on
/// the same member objects, what Foundation alone costs: an `NSSet` made from each department's
/// members (an array), and that set enumerated the same way (`BenchmarkModel.foundationSetsAlone`).
func toManyPhases(_ context: () -> NSManagedObjectContext) {
    let clock = ContinuousClock()
    var reader: NSManagedObjectContext? = context()
    let start = clock.now
    let departments = try! reader!.fetch(NSFetchRequest<Department>(entityName: "Department"))
    let fetched = clock.now
    let sets = departments.map { $0.employees ?? NSSet() }
    let read = clock.now
    var members: [[Employee]] = []
    members.reserveCapacity(sets.count)
    for set in sets {
        var group: [Employee] = []
        for case let member as Employee in set { group.append(member) }
        members.append(group)
    }
    let enumerated = clock.now
    var ages = 0
    for group in members { for member in group { ages &+= Int(member.age) } }
    precondition(ages > 0)
    let fired = clock.now
    // Foundation's part, on the same objects: a set made from each group, and enumerated.
    let walked = BenchmarkModel.foundationSetsAlone(members)
    precondition(walked == members.reduce(0) { $0 + $1.count }, "every member enumerated, fired")
    let foundation = clock.now
    members = []
    _ = consume sets
    _ = consume departments
    let dropped = clock.now
    reader = nil
    print(
        "fetch departments: \(fetched - start); read employees: \(read - fetched);",
        "enumerate (no fire): \(enumerated - read); fire members (age): \(fired - enumerated);",
        "context goes away: \(clock.now - dropped); Foundation alone — NSSets made and enumerated:",
        "\(foundation - fired)")
}

/// Saves 100,000 `Person`s to an XML or binary store, then adds the store in a new coordinator and
/// fetches them realized three times: the atomic stores' load path (issue 25).
func atomicLoadWorkload(type: String) {
    let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("profile-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: url) }
    let model = BenchmarkModel.make()
    do {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        _ = try! coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        for index in 0..<100_000 {
            let object = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
            object.setValue(index, forKey: "id")
            object.setValue("Person \(index)", forKey: "name")
            object.setValue("person\(index)@example.com", forKey: "email")
            object.setValue(18 + index % 60, forKey: "age")
            object.setValue(Double(index), forKey: "salary")
            object.setValue(index % 3 != 0, forKey: "active")
            object.setValue(Date(timeIntervalSinceReferenceDate: Double(index)), forKey: "created")
        }
        try! context.save()
    }
    let clock = ContinuousClock()
    let start = clock.now
    for _ in 0..<3 {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        _ = try! coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
        request.returnsObjectsAsFaults = false
        precondition(try! context.fetch(request).count == 100_000)
    }
    print("load ×3:", clock.now - start)
}

/// 20 batch updates of the rows with `age > 76` among 100,000 `Person` rows (the `batch` suite's
/// update), timed. `PROFILE_SYNCHRONOUS=OFF` (or `NORMAL`) sets the store's `synchronous` pragma, to
/// tell the commits' syncs from the rest: on the 2-core VM, 26 ms an update with the default, 16.5 ms
/// without syncs.
func batchUpdateWorkload() {
    let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("profile-\(UUID().uuidString).sqlite")
    defer {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
    }
    let coordinator = NSPersistentStoreCoordinator(managedObjectModel: BenchmarkModel.make())
    let pragmas = ProcessInfo.processInfo.environment["PROFILE_SYNCHRONOUS"].map { ["synchronous": $0] }
    _ = try! coordinator.addPersistentStore(
        ofType: NSSQLiteStoreType, configurationName: nil, at: url,
        options: pragmas.map { [NSSQLitePragmasOption: $0] })
    let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
    context.persistentStoreCoordinator = coordinator
    let rows = (0..<100_000).map { index -> [String: Any] in
        [
            "id": index, "name": "n\(index)", "email": "e\(index)", "age": 18 + index % 60, "salary": 1.0,
            "active": true, "created": Date(),
        ]
    }
    _ = try! context.execute(NSBatchInsertRequest(entityName: "Person", objects: rows))
    let start = Date()
    for _ in 0..<20 {
        let request = NSBatchUpdateRequest(entityName: "Person")
        request.predicate = NSPredicate(format: "age > 76")
        request.propertiesToUpdate = ["note": "batch"]
        _ = try! context.execute(request)
    }
    print("batch update ×20:", Date().timeIntervalSince(start))
}

/// Resident memory of this process, from `/proc/self/statm`.
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    return (fields.count > 1 ? Int(fields[1]) ?? 0 : 0) * 4096
}

/// glibc's usable size of a heap block (not exported by the `Glibc` module).
@_silgen_name("malloc_stats")
func malloc_stats()

@_silgen_name("malloc_usable_size")
func malloc_usable_size(_ pointer: UnsafeMutableRawPointer?) -> Int

/// The child of `person-memory`: opens the store at `path`, fetches every person realized, and
/// prints the resident memory they add per object, and the heap blocks of one object and its ID.
func personMemoryChild(path: String) {
    let coordinator = NSPersistentStoreCoordinator(managedObjectModel: BenchmarkModel.make())
    _ = try! coordinator.addPersistentStore(
        ofType: NSSQLiteStoreType, configurationName: nil, at: URL(fileURLWithPath: path))
    let reader = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
    reader.persistentStoreCoordinator = coordinator
    let before = residentBytes()
    if ProcessInfo.processInfo.environment["MALLOC_STATS"] != nil { malloc_stats() }
    let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
    request.returnsObjectsAsFaults = false
    let kept = try! reader.fetch(request)
    let after = residentBytes()
    print("resident bytes per realized object:", (after - before) / kept.count)
    if ProcessInfo.processInfo.environment["MALLOC_STATS"] != nil { malloc_stats() }
    if let first = kept.first {
        let object = malloc_usable_size(Unmanaged.passUnretained(first).toOpaque())
        let id = malloc_usable_size(Unmanaged.passUnretained(first.objectID).toOpaque())
        print("object:", object, "bytes; its ID:", id, "bytes")
    }
    withExtendedLifetime((reader, kept)) {}
}

switch workload {
case "person-memory-child": personMemoryChild(path: CommandLine.arguments[2])
case "batch-update": batchUpdateWorkload()
case "xml-load": atomicLoadWorkload(type: NSXMLStoreType)
case "binary-load": atomicLoadWorkload(type: NSBinaryStoreType)
case "person-insert", "person-fetch", "person-fetch-sizes", "person-reset", "person-sorted", "person-memory",
    "person-batches",
    "person-update",
    "person-delete",
    "person-saves",
    "graph-to-one", "graph-to-many", "graph-phases", "graph-to-many-phases":
    personWorkload(workload)
case "sqlite-realize": sqliteRealizeWorkload()
case "sqlite-saves": sqliteSavesWorkload()
case "sqlite-parallel": sqliteParallelWorkload()
case "sqlite-insert": sqliteWorkload(delete: false)
case "sqlite-delete": sqliteWorkload(delete: true)
case "insert": objectGraphWorkload(fetch: false)
case "fetch": objectGraphWorkload(fetch: true)
case "sqlite-fetch":
    let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("profile-\(UUID().uuidString).sqlite")
    defer {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
    }
    objectGraphWorkload(fetch: true, type: NSSQLiteStoreType, at: url)
default: predicateWorkload()
}
