import CoreData
import GRDB
import GRDBSQLite

/// The SQLite store against two baselines, on the same 8-attribute entity and N rows: the SQLite C
/// API by hand (reused prepared statements, one transaction per write), and GRDB records.
/// Operations and targets: issue 4; results: BENCHMARKS.md.
enum SQLiteBenchmarks {
    static let count = 100_000
    static let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-bench")

    struct Row {
        let id: Int
        let name: String
        let email: String
        let age: Int
        let salary: Double
        let active: Bool
        let created: Date
        let note: String?
    }

    static func run() {
        print("\nSQLite store vs hand-written SQLite C API and GRDB records (N = \(count))")
        try? FileManager.default.removeItem(at: directory)
        try! FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let engines = makeEngines()
        var results: [String: [String: Duration]] = [:]
        let operations = [
            "insert N + save", "fetch N realized", "fetch N faults + fire", "query (×10)", "update 10% + save",
            "delete 10% + save", "1,000 single-insert saves", "query sorted by name (×10)",
        ]
        var memory: [String: String] = [:]
        for (index, engine) in engines.enumerated() {
            print(" \(engine.name)")
            var times: [String: Duration] = [:]
            times[operations[0]] = measure("\(engine.name): \(operations[0])", repetitions: 3) {
                engine.reset()
                return engine.insertAll()
            }
            times[operations[1]] = measure("\(engine.name): \(operations[1])", repetitions: 3) { engine.fetchAll() }
            times[operations[2]] = measure("\(engine.name): \(operations[2])", repetitions: 3) {
                engine.fetchFaultsAndFire()
            }
            times[operations[3]] = measure("\(engine.name): \(operations[3])", repetitions: 3) { engine.query() }
            times[operations[7]] = measure("\(engine.name): \(operations[7])", repetitions: 3) {
                engine.queryByName()
            }
            times[operations[4]] = measure("\(engine.name): \(operations[4])", repetitions: 3) { engine.updateTenth() }
            times[operations[5]] = measure("\(engine.name): \(operations[5])", repetitions: 3) {
                engine.reset()
                _ = engine.insertAll()
                return engine.deleteTenth()
            }
            times[operations[6]] = measure("\(engine.name): \(operations[6])", repetitions: 3) {
                engine.singleInserts()
            }
            engine.reset()
            _ = engine.insertAll()
            memory[engine.name] = residentGrowthInChild(engineIndex: index)
            print("  \(engine.name): resident memory after fetching N: +\(memory[engine.name] ?? "?") MiB")
            results[engine.name] = times
        }
        print("\n  | operation | hand-written SQLite | GRDB records | OpenCoreData | ratio to SQLite | ratio to GRDB |")
        print("  |---|---|---|---|---|---|")
        for operation in operations {
            let raw = results["SQLite C API"]![operation]!
            let grdb = results["GRDB records"]![operation]!
            let ours = results["OpenCoreData"]![operation]!
            print(
                "  | \(operation) | \(format(raw)) | \(format(grdb)) | \(format(ours)) | \(ratio(ours, raw)) | \(ratio(ours, grdb)) |"
            )
        }
        let names = ["SQLite C API", "GRDB records", "OpenCoreData"]
        let megabytes = names.map { memory[$0].flatMap(Double.init) }
        let ratios = [megabytes[0], megabytes[1]].map { base in
            guard let base, let ours = megabytes[2], base > 0 else { return "?" }
            return String(format: "%.2f×", ours / base)
        }
        print(
            "  | resident memory after fetching N (MiB) | "
                + names.map { memory[$0] ?? "?" }.joined(separator: " | ") + " | "
                + ratios.joined(separator: " | ") + " |")
    }

    static func makeEngines() -> [Engine] { [RawSQLite(), GRDBRecords(), CoreDataStore()] }

    /// Resident memory grows little in a process that has already freed memory (the allocator
    /// reuses its pages), so each engine fetches in a fresh child process: `Benchmarks
    /// sqlite-memory <engine>` opens the file the parent just filled, fetches N rows, keeps them,
    /// and prints its resident-memory growth in MiB.
    static func residentGrowthInChild(engineIndex: Int) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["sqlite-memory", String(engineIndex)]
        let pipe = Pipe()
        process.standardOutput = pipe
        guard (try? process.run()) != nil else { return "?" }
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The child side of ``residentGrowthInChild(engineIndex:)``.
    static func measureMemory(engineIndex: Int) {
        let engine = makeEngines()[engineIndex]
        engine.reopen()
        let before = residentBytes()
        let kept = engine.keepAll()
        let after = residentBytes()
        precondition(kept == count, "the store holds \(kept) rows, not \(count)")
        print(String(format: "%.1f", Double(after - before) / 1_048_576))
    }

    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        return (fields.count > 1 ? Int(fields[1]) ?? 0 : 0) * 4096
    }
}

/// One implementation of the benchmark's operations. Each returns a checksum so no work is skipped.
protocol Engine: AnyObject {
    var name: String { get }
    func reset()
    /// Opens the file an earlier `reset()` and `insertAll()` wrote, as a fresh process would.
    func reopen()
    func insertAll() -> Int
    func fetchAll() -> Int
    func fetchFaultsAndFire() -> Int
    func query() -> Int
    /// The query sorted by a string (`name`), the most common sort.
    func queryByName() -> Int
    func updateTenth() -> Int
    func deleteTenth() -> Int
    func singleInserts() -> Int
    func keepAll() -> Int
}

// MARK: Hand-written SQLite

final class RawSQLite: Engine {
    let name = "SQLite C API"
    let path = SQLiteBenchmarks.directory.appendingPathComponent("raw.sqlite").path
    var db: OpaquePointer?
    var statements: [String: OpaquePointer] = [:]
    var nextID = 0

    func reset() {
        for statement in statements.values { sqlite3_finalize(statement) }
        statements = [:]
        if db != nil { sqlite3_close(db) }
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        sqlite3_open(path, &db)
        exec("PRAGMA journal_mode = WAL")
        exec(
            "CREATE TABLE person (id INTEGER PRIMARY KEY, name TEXT, email TEXT, age INTEGER, salary REAL, active INTEGER, created REAL, note TEXT)"
        )
        nextID = 0
    }

    func reopen() { sqlite3_open(path, &db) }

    func exec(_ sql: String) { sqlite3_exec(db, sql, nil, nil, nil) }

    func statement(_ sql: String) -> OpaquePointer {
        if let cached = statements[sql] {
            sqlite3_reset(cached)
            return cached
        }
        var statement: OpaquePointer?
        sqlite3_prepare_v2(db, sql, -1, &statement, nil)
        statements[sql] = statement!
        return statement!
    }

    func bindText(_ statement: OpaquePointer, _ index: Int32, _ text: String?) {
        guard let text else {
            sqlite3_bind_null(statement, index)
            return
        }
        sqlite3_bind_text(statement, index, text, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
    }

    func insert(_ row: SQLiteBenchmarks.Row) {
        let statement = statement(
            "INSERT INTO person (id, name, email, age, salary, active, created, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
        sqlite3_bind_int64(statement, 1, Int64(row.id))
        bindText(statement, 2, row.name)
        bindText(statement, 3, row.email)
        sqlite3_bind_int64(statement, 4, Int64(row.age))
        sqlite3_bind_double(statement, 5, row.salary)
        sqlite3_bind_int64(statement, 6, row.active ? 1 : 0)
        sqlite3_bind_double(statement, 7, row.created.timeIntervalSinceReferenceDate)
        bindText(statement, 8, row.note)
        sqlite3_step(statement)
    }

    func insertAll() -> Int {
        exec("BEGIN IMMEDIATE")
        for index in 0..<SQLiteBenchmarks.count { insert(SQLiteBenchmarks.Row(index)) }
        exec("COMMIT")
        nextID = SQLiteBenchmarks.count
        return SQLiteBenchmarks.count
    }

    func readAll(_ sql: String) -> [SQLiteBenchmarks.Row] {
        let statement = statement(sql)
        var rows: [SQLiteBenchmarks.Row] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            rows.append(read(statement))
        }
        return rows
    }

    func read(_ statement: OpaquePointer) -> SQLiteBenchmarks.Row {
        SQLiteBenchmarks.Row(
            id: Int(sqlite3_column_int64(statement, 0)), name: String(cString: sqlite3_column_text(statement, 1)),
            email: String(cString: sqlite3_column_text(statement, 2)), age: Int(sqlite3_column_int64(statement, 3)),
            salary: sqlite3_column_double(statement, 4), active: sqlite3_column_int64(statement, 5) != 0,
            created: Date(timeIntervalSinceReferenceDate: sqlite3_column_double(statement, 6)),
            note: sqlite3_column_text(statement, 7).map { String(cString: $0) })
    }

    func fetchAll() -> Int {
        readAll("SELECT id, name, email, age, salary, active, created, note FROM person").reduce(0) { $0 &+ $1.age }
    }

    func fetchFaultsAndFire() -> Int {
        // By hand, a "fault" is a key fetched first and its row read by key afterwards.
        let keys = statement("SELECT id FROM person")
        var ids: [Int64] = []
        while sqlite3_step(keys) == SQLITE_ROW { ids.append(sqlite3_column_int64(keys, 0)) }
        var total = 0
        for id in ids {
            let statement = statement(
                "SELECT id, name, email, age, salary, active, created, note FROM person WHERE id = ?")
            sqlite3_bind_int64(statement, 1, id)
            if sqlite3_step(statement) == SQLITE_ROW { total &+= read(statement).age }
        }
        return total
    }

    func query() -> Int { query(orderBy: "salary DESC, id") }

    func queryByName() -> Int { query(orderBy: "name, id") }

    /// The benchmark's query, ten times, sorted by `orderBy` (a constant of this file, not a value).
    private func query(orderBy: String) -> Int {
        var total = 0
        for _ in 0..<10 {
            let statement = statement(
                "SELECT id, name, email, age, salary, active, created, note FROM person WHERE age >= ? AND active = 1 AND salary > ? ORDER BY \(orderBy) LIMIT 100"
            )
            sqlite3_bind_int64(statement, 1, 30)
            sqlite3_bind_double(statement, 2, 1000)
            while sqlite3_step(statement) == SQLITE_ROW { total &+= read(statement).id }
        }
        return total
    }

    func updateTenth() -> Int {
        exec("BEGIN IMMEDIATE")
        let statement = statement("UPDATE person SET salary = salary + 1, note = ? WHERE id = ?")
        for id in stride(from: 0, to: SQLiteBenchmarks.count, by: 10) {
            sqlite3_reset(statement)
            bindText(statement, 1, "raised")
            sqlite3_bind_int64(statement, 2, Int64(id))
            sqlite3_step(statement)
        }
        exec("COMMIT")
        return SQLiteBenchmarks.count / 10
    }

    func deleteTenth() -> Int {
        exec("BEGIN IMMEDIATE")
        let statement = statement("DELETE FROM person WHERE id = ?")
        for id in stride(from: 0, to: SQLiteBenchmarks.count, by: 10) {
            sqlite3_reset(statement)
            sqlite3_bind_int64(statement, 1, Int64(id))
            sqlite3_step(statement)
        }
        exec("COMMIT")
        return SQLiteBenchmarks.count / 10
    }

    func singleInserts() -> Int {
        for _ in 0..<1000 {
            exec("BEGIN IMMEDIATE")
            insert(SQLiteBenchmarks.Row(nextID))
            nextID += 1
            exec("COMMIT")
        }
        return 1000
    }

    var kept: [SQLiteBenchmarks.Row] = []
    func keepAll() -> Int {
        kept = readAll("SELECT id, name, email, age, salary, active, created, note FROM person")
        return kept.count
    }
}

extension SQLiteBenchmarks.Row {
    /// Row `index` of the benchmark's data (an extension, so the memberwise initializer stays).
    init(_ index: Int) {
        self.init(
            id: index, name: "Person \(index)", email: "person\(index)@example.com", age: 18 + index % 60,
            salary: Double(index % 5000) * 10.5, active: index % 3 != 0,
            created: Date(timeIntervalSinceReferenceDate: Double(index) * 60),
            note: index % 4 == 0 ? nil : "note \(index)")
    }
}

// MARK: GRDB records

struct PersonRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "person"
    var id: Int64
    var name: String
    var email: String
    var age: Int
    var salary: Double
    var active: Bool
    var created: Date
    var note: String?

    init(_ row: SQLiteBenchmarks.Row) {
        id = Int64(row.id)
        name = row.name
        email = row.email
        age = row.age
        salary = row.salary
        active = row.active
        created = row.created
        note = row.note
    }
}

final class GRDBRecords: Engine {
    let name = "GRDB records"
    let path = SQLiteBenchmarks.directory.appendingPathComponent("grdb.sqlite").path
    var queue: DatabaseQueue!
    var nextID = 0

    func reset() {
        queue = nil
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        queue = try! DatabaseQueue(path: path)
        try! queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.create(table: "person") { table in
                table.primaryKey("id", .integer)
                table.column("name", .text)
                table.column("email", .text)
                table.column("age", .integer)
                table.column("salary", .double)
                table.column("active", .boolean)
                table.column("created", .datetime)
                table.column("note", .text)
            }
        }
        nextID = 0
    }

    func reopen() { queue = try! DatabaseQueue(path: path) }

    func insertAll() -> Int {
        try! queue.write { db in
            for index in 0..<SQLiteBenchmarks.count { try PersonRecord(SQLiteBenchmarks.Row(index)).insert(db) }
        }
        nextID = SQLiteBenchmarks.count
        return SQLiteBenchmarks.count
    }

    func fetchAll() -> Int {
        try! queue.read { db in try PersonRecord.fetchAll(db) }.reduce(0) { $0 &+ $1.age }
    }

    func fetchFaultsAndFire() -> Int {
        try! queue.read { db in
            let ids = try Int64.fetchAll(db, sql: "SELECT id FROM person")
            var total = 0
            for id in ids { total &+= try PersonRecord.fetchOne(db, key: id)?.age ?? 0 }
            return total
        }
    }

    func query() -> Int { query(orderBy: "salary DESC, id") }

    func queryByName() -> Int { query(orderBy: "name, id") }

    private func query(orderBy: String) -> Int {
        try! queue.read { db in
            var total = 0
            for _ in 0..<10 {
                let records = try PersonRecord.filter(
                    sql: "age >= ? AND active = 1 AND salary > ?", arguments: [30, 1000]
                )
                .order(sql: orderBy).limit(100).fetchAll(db)
                total &+= records.reduce(0) { $0 &+ Int($1.id) }
            }
            return total
        }
    }

    func updateTenth() -> Int {
        try! queue.write { db in
            for id in stride(from: 0, to: SQLiteBenchmarks.count, by: 10) {
                guard var record = try PersonRecord.fetchOne(db, key: Int64(id)) else { continue }
                record.salary += 1
                record.note = "raised"
                try record.update(db)
            }
        }
        return SQLiteBenchmarks.count / 10
    }

    func deleteTenth() -> Int {
        try! queue.write { db in
            for id in stride(from: 0, to: SQLiteBenchmarks.count, by: 10) {
                _ = try PersonRecord.deleteOne(db, key: Int64(id))
            }
        }
        return SQLiteBenchmarks.count / 10
    }

    func singleInserts() -> Int {
        for _ in 0..<1000 {
            let record = PersonRecord(SQLiteBenchmarks.Row(nextID))
            nextID += 1
            try! queue.write { db in try record.insert(db) }
        }
        return 1000
    }

    var kept: [PersonRecord] = []
    func keepAll() -> Int {
        kept = try! queue.read { db in try PersonRecord.fetchAll(db) }
        return kept.count
    }
}

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
            return attribute
        }
        let model = NSManagedObjectModel()
        model.entities = [person]
        return model
    }()
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

    func query() -> Int { query(sortedBy: NSSortDescriptor(key: "salary", ascending: false)) }

    func queryByName() -> Int { query(sortedBy: NSSortDescriptor(key: "name", ascending: true)) }

    private func query(sortedBy sort: NSSortDescriptor) -> Int {
        let context = context()
        return withExtendedLifetime(context) {
            var total = 0
            for _ in 0..<10 {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
                request.predicate = NSPredicate(format: "age >= %d AND active == YES AND salary > %f", 30, 1000.0)
                request.sortDescriptors = [sort]
                request.fetchLimit = 100
                request.returnsObjectsAsFaults = false
                total &+= try! context.fetch(request).reduce(0) { $0 &+ ($1.value(forKey: "id") as! Int) }
            }
            return total
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
