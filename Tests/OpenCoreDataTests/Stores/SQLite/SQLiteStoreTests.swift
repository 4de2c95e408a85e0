import CoreData
import Foundation
import Testing

/// A coordinator and context on an SQLite store at `url`.
func sqliteStack(
    _ url: URL, model: NSManagedObjectModel = CompanyModel.make(), options: [AnyHashable: Any]? = nil
) throws -> NSManagedObjectContext {
    let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
    try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: options)
    let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
    context.persistentStoreCoordinator = coordinator
    return context
}

/// Rows as the sqlite3 tool reads them, to check the store against SQLite itself.
func sqlite3(_ url: URL, _ sql: String, readOnly: Bool = true) throws -> [String] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
    process.arguments = (readOnly ? ["-readonly"] : []) + [url.path, sql]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
}

/// The SQLite store's round trip and layout. Related documentation: Core Data Programming Guide,
/// "Persistent Store Types and Behaviors" (SQLite store); NSPersistentStoreCoordinator reference.
@Suite("SQLite store: saving and reading back")
struct SQLiteStoreTests {
    let directory = TemporaryDirectory()

    /// Saved objects come back, in a new coordinator, with their attribute values and
    /// relationships (to-one, to-many by inverse, ordered many-to-many).
    @Test func savedObjectsReadBackInANewCoordinator() throws {
        let url = directory.file("Company.sqlite")
        do {
            let context = try sqliteStack(url)
            let sales = context.department("Sales")
            let ada = context.employee("Ada", salary: 120)
            ada.setValue(Date(timeIntervalSinceReferenceDate: 1000), forKey: "startDate")
            ada.setValue(sales, forKey: "department")
            let bob = context.employee("Bob", salary: 80, entity: "Manager")
            bob.setValue(7, forKey: "budget")
            bob.setValue(sales, forKey: "department")
            ada.setValue(bob, forKey: "manager")
            let project = NSEntityDescription.insertNewObject(forEntityName: "Project", into: context)
            project.setValue("Apollo", forKey: "title")
            project.mutableOrderedSetValue(forKey: "members").addObjects(from: [bob, ada])
            try context.save()
        }
        let context = try sqliteStack(url)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.sortDescriptors = [NSSortDescriptor(key: "salary", ascending: false)]
        let employees = try context.fetch(request)
        #expect(employees.map { $0.value(forKey: "name") as? String } == ["Ada", "Bob"])
        let ada = employees[0]
        #expect(ada.value(forKey: "salary") as? Double == 120)
        #expect(ada.value(forKey: "startDate") as? Date == Date(timeIntervalSinceReferenceDate: 1000))
        let bob = try #require(ada.value(forKey: "manager") as? NSManagedObject)
        #expect(bob === employees[1])
        #expect(bob.entity.name == "Manager")
        #expect(bob.value(forKey: "budget") as? Int == 7)
        let sales = try #require(ada.value(forKey: "department") as? NSManagedObject)
        #expect(sales.value(forKey: "name") as? String == "Sales")
        #expect((sales.value(forKey: "employees") as? Set<NSManagedObject>)?.count == 2)
        let projects = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Project"))
        let members = projects.first?.value(forKey: "members") as? NSOrderedSet
        #expect(
            members?.array.compactMap { ($0 as? NSManagedObject)?.value(forKey: "name") as? String } == ["Bob", "Ada"])
        #expect((bob.value(forKey: "projects") as? Set<NSManagedObject>)?.count == 1)
    }

    /// `NSPersistentContainer`'s default store type is SQLite; loading creates the store's folder
    /// when it is missing (NSPersistentContainer reference, `loadPersistentStores`), and a second
    /// container on the same file sees what the first saved.
    @Test func containerDefaultsToSQLiteAndCreatesTheFolder() throws {
        let url = directory.url.appendingPathComponent("nested/deeper/Company.sqlite")
        for round in 0..<2 {
            let container = NSPersistentContainer(name: "Company", managedObjectModel: CompanyModel.make())
            #expect(container.persistentStoreDescriptions.first?.type == NSSQLiteStoreType)
            container.persistentStoreDescriptions.first?.url = url
            var failure: (any Error)?
            container.loadPersistentStores { _, error in failure = error }
            #expect(failure == nil)
            let context = container.viewContext
            if round == 0 {
                context.department("Sales")
                try context.save()
            } else {
                #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Department")) == 1)
            }
        }
    }

    /// Keys are numbered per root entity's table (STORE-FORMAT.md, "Bookkeeping tables": `Z_MAX`
    /// of the root's `Z_PRIMARYKEY` row is the highest key given): objects of several entities
    /// saved at once, interleaved — a sub-entity sharing its root's table among them — each get a
    /// key of their table not given before, the keys of a table run from 1 without a gap, `Z_MAX`
    /// is the highest, and the next save goes on from there. Issue 21 took keys a run of one
    /// entity at a time.
    @Test func permanentKeysAreNumberedPerRootTable() throws {
        let url = directory.file("Keys.sqlite")
        let context = try sqliteStack(url)
        var employees: [NSManagedObject] = []
        var departments: [NSManagedObject] = []
        for index in 0..<30 {
            employees.append(context.employee("E\(index)", entity: index % 4 == 1 ? "Manager" : "Employee"))
            if index % 3 == 0 { departments.append(context.department("D\(index)")) }
        }
        try context.save()
        func keys(_ objects: [NSManagedObject]) -> [Int64] {
            // Apple's URI form names the key last: `x-coredata://<store>/<Entity>/p<key>`.
            objects.compactMap { Int64($0.objectID.uriRepresentation().lastPathComponent.dropFirst()) }
        }
        #expect(keys(employees).sorted() == Array(1...30), "employees and managers share ZEMPLOYEE's keys")
        #expect(keys(departments).sorted() == Array(1...10))
        #expect(keys(employees) == keys(employees).sorted(), "in the order the objects were inserted")
        #expect(
            try sqlite3(url, "SELECT Z_NAME, Z_MAX FROM Z_PRIMARYKEY WHERE Z_SUPER = 0 AND Z_MAX > 0 ORDER BY Z_NAME")
                == ["Department|10", "Employee|30"])
        let later = [context.employee("Late", entity: "Manager"), context.department("Late")]
        try context.save()
        #expect(keys(later) == [31, 11], "the next save goes on from Z_MAX")
    }

    /// The same rule with more root entities in one save than its key allocation counts in a
    /// short list (up to eight roots are found by a scan, more through a dictionary,
    /// and each object's block by a binary search): twelve root entities, interleaved, each
    /// numbered from 1 without a gap in insertion order, `Z_MAX` the highest of each, and the
    /// next save going on from there.
    @Test func permanentKeysAreNumberedPerRootTableAcrossManyEntities() throws {
        let model = NSManagedObjectModel()
        model.entities = (0..<12).map { index in
            let entity = NSEntityDescription()
            entity.name = "Kind\(index)"
            let label = NSAttributeDescription()
            label.name = "label"
            label.attributeType = .stringAttributeType
            entity.properties = [label]
            return entity
        }
        let url = directory.file("ManyKeys.sqlite")
        let context = try sqliteStack(url, model: model)
        let objects = (0..<60).map { index in
            NSEntityDescription.insertNewObject(forEntityName: "Kind\(index % 12)", into: context)
        }
        try context.save()
        func key(_ object: NSManagedObject) -> Int64? {
            Int64(object.objectID.uriRepresentation().lastPathComponent.dropFirst())
        }
        for kind in 0..<12 {
            let keys = objects.filter { $0.entity.name == "Kind\(kind)" }.map(key)
            #expect(keys == [1, 2, 3, 4, 5], "Kind\(kind)")
        }
        #expect(
            try sqlite3(url, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME LIKE 'Kind%' ORDER BY Z_ENT")
                == Array(repeating: "5", count: 12))
        let later = ["Kind11", "Kind0", "Kind11"].map {
            NSEntityDescription.insertNewObject(forEntityName: $0, into: context)
        }
        try context.save()
        #expect(later.map(key) == [6, 6, 7], "the next save goes on from each Z_MAX")
    }

    /// The file has Apple's bookkeeping tables and one table per root entity, with `Z_PK`,
    /// `Z_ENT`, `Z_OPT` and `Z`-prefixed columns (STORE-FORMAT.md, "Bookkeeping tables", "Entity tables").
    @Test func newStoreHasApplesLayout() throws {
        let url = directory.file("Layout.sqlite")
        let context = try sqliteStack(url)
        context.employee("Ada")
        try context.save()
        let tables = try sqlite3(url, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        #expect(
            tables == [
                "ZBADGE", "ZDEPARTMENT", "ZEMPLOYEE", "ZPROJECT", "Z_3PROJECTS", "Z_METADATA", "Z_MODELCACHE",
                "Z_PRIMARYKEY",
            ])
        let primaryKeys = try sqlite3(url, "SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
        #expect(
            primaryKeys == ["1|Badge|0|0", "2|Department|0|0", "3|Employee|0|1", "4|Manager|3|0", "5|Project|0|0"])
        let columns = try sqlite3(url, "SELECT name || ' ' || type FROM pragma_table_info('ZEMPLOYEE')")
        #expect(
            columns == [
                "Z_PK INTEGER", "Z_ENT INTEGER", "Z_OPT INTEGER", "ZBUDGET INTEGER", "ZBADGE INTEGER",
                "ZDEPARTMENT INTEGER", "ZMANAGER INTEGER", "Z3_MANAGER INTEGER", "ZSALARY FLOAT",
                "ZSTARTDATE TIMESTAMP", "ZNAME VARCHAR",
            ])
        #expect(try sqlite3(url, "SELECT Z_ENT, Z_OPT, ZNAME FROM ZEMPLOYEE") == ["3|1|Ada"])
    }
}
