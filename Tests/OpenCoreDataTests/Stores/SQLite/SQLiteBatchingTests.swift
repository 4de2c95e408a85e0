import Foundation
import OpenCoreDataSQL
import Testing

@testable import OpenCoreData
@testable import OpenCoreDataSQLite

/// How many queries reading costs: `fetchBatchSize` and `relationshipKeyPathsForPrefetching`.
/// Related documentation: NSFetchRequest, `fetchBatchSize` ("the identities of all matching
/// objects [are] recorded, but only data for objects up to the batchSize will be fetched from the
/// persistent store at a time") and `relationshipKeyPathsForPrefetching` (related objects are
/// obtained "in a single fetch … rather than incurring subsequent access to the store for each
/// individual record as their faults are tripped"); Core Data Programming Guide, "Faulting and
/// Uniquing" (batch faulting and prefetching).
@Suite("SQLite store: fetch batches and prefetching")
struct SQLiteBatchingTests {
    let directory = TemporaryDirectory()

    /// 3 departments, 100 employees (salary 0…99, every employee in department `index % 3`),
    /// 2 projects with ordered members; saved, then opened again in a fresh coordinator.
    private func reopenedCompany() throws -> (NSManagedObjectContext, SQLiteStore) {
        let url = directory.file("Company.sqlite")
        do {
            let context = try sqliteStack(url)
            let departments = (0..<3).map { context.department("D\($0)") }
            var employees: [NSManagedObject] = []
            for index in 0..<100 {
                let employee = context.employee("E\(index)", salary: Double(index))
                employee.setValue(departments[index % 3], forKey: "department")
                employees.append(employee)
            }
            for (title, members) in [("Apollo", [employees[7], employees[3], employees[5]]), ("Gemini", [])] {
                let project = NSEntityDescription.insertNewObject(forEntityName: "Project", into: context)
                project.setValue(title, forKey: "title")
                project.mutableOrderedSetValue(forKey: "members").addObjects(from: members)
            }
            try context.save()
        }
        let context = try sqliteStack(url)
        let store = try #require(context.persistentStoreCoordinator?.persistentStores.first as? SQLiteStore)
        return (context, store)
    }

    /// Statements run by `body` on the store's connection.
    private func statements(_ store: SQLiteStore, _ body: () throws -> Void) throws -> Int {
        let before = store.connection.statementsRun
        try body()
        return store.connection.statementsRun - before
    }

    /// A batched fetch reads the matching keys in one query and returns faults; touching a fault
    /// reads its whole batch in one more query, and touching the rest of that batch reads nothing.
    @Test func fetchBatchSizeReadsOneBatchPerQuery() throws {
        let (context, store) = try reopenedCompany()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.sortDescriptors = [NSSortDescriptor(key: "salary", ascending: false)]
        request.fetchBatchSize = 10
        var employees: [NSManagedObject] = []
        let fetching = try statements(store) { employees = try context.fetch(request) }
        #expect(fetching == 1)
        #expect(employees.count == 100)
        #expect(employees.allSatisfy { $0.isFault })
        let firstTouch = try statements(store) { _ = employees[0].value(forKey: "name") }
        #expect(firstTouch == 1)
        let restOfBatch = try statements(store) { for index in 1..<10 { _ = employees[index].value(forKey: "name") } }
        #expect(restOfBatch == 0)
        #expect(employees[10].isFault)
        let otherBatch = try statements(store) { _ = employees[95].value(forKey: "name") }
        #expect(otherBatch == 1)
        var names: [String] = []
        let rest = try statements(store) { names = employees.map { $0.value(forKey: "name") as? String ?? "" } }
        #expect(rest == 8)
        #expect(names == (0..<100).reversed().map { "E\($0)" })
    }

    /// A batch once read is not read again for its objects: a fault of it that fires later (its
    /// row let go meanwhile) reads its own row. But a new `fetchBatchSize` fetch of the same
    /// objects batches them again, read or not before ("only data for objects up to the
    /// batchSize will be fetched … at a time", every time). Issue 21: a read batch's entries are
    /// left in the store's table, counting as absent, until none is left unread.
    @Test func aReadBatchIsBatchedAgainByTheNextFetch() throws {
        let (context, store) = try reopenedCompany()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.sortDescriptors = [NSSortDescriptor(key: "salary", ascending: true)]
        request.fetchBatchSize = 10
        let first = try context.fetch(request)
        #expect(try statements(store) { for index in 0..<10 { _ = first[index].value(forKey: "name") } } == 1)
        context.reset()  // the objects that held the batch's rows let them go
        let second = try context.fetch(request)
        let firstBatch = try statements(store) {
            for index in 0..<10 { #expect(second[index].value(forKey: "name") as? String == "E\(index)") }
        }
        #expect(firstBatch == 1, "the batch read before is one batch again")
        let everything = try statements(store) {
            for index in 10..<100 { #expect(second[index].value(forKey: "name") as? String == "E\(index)") }
        }
        #expect(everything == 9)
        #expect(store.pendingBatches.isEmpty, "no batch is left unread: the store's table is emptied")
        context.reset()
        let third = try context.fetch(request)
        #expect(store.pendingBatches.count == 100, "a new fetch batches every object again")
        #expect(try statements(store) { _ = third[42].value(forKey: "name") } == 1)
    }

    /// Rows the coordinator's cache holds already (another context's objects hold them) are not
    /// read again: only the other objects of a `fetchBatchSize` fetch wait in batches, and the
    /// faults of cached rows fire from the cache ("Faulting and Uniquing": a fault fires from the
    /// row cache when it can). The fetched objects' IDs are the rows' IDs, equal to those the
    /// other context has. Issue 21: the fetch now hands its IDs on as values and asks the cache
    /// about all of them under one lock.
    @Test func aBatchedFetchWaitsOnlyForRowsNotCached() throws {
        let (context, store) = try reopenedCompany()
        let coordinator = try #require(context.persistentStoreCoordinator)
        let holder = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        holder.persistentStoreCoordinator = coordinator
        let held = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        held.predicate = NSPredicate(format: "salary < 50")
        held.returnsObjectsAsFaults = false
        let holding = try holder.fetch(held)
        #expect(holding.count == 50)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.sortDescriptors = [NSSortDescriptor(key: "salary", ascending: true)]
        request.fetchBatchSize = 10
        let employees = try context.fetch(request)
        #expect(employees.count == 100)
        #expect(store.pendingBatches.count == 50, "only the 50 rows not cached wait in batches")
        let cached = try statements(store) {
            for (index, employee) in employees.prefix(50).enumerated() {
                #expect(employee.value(forKey: "name") as? String == "E\(index)")
            }
        }
        #expect(cached == 0, "the held rows fire from the cache")
        let batched = try statements(store) {
            for (index, employee) in employees.enumerated().dropFirst(50) {
                #expect(employee.value(forKey: "name") as? String == "E\(index)")
            }
        }
        #expect(batched == 5, "five batches of ten")
        #expect(store.pendingBatches.isEmpty)
        let bySalary = holding.sorted {
            ($0.value(forKey: "salary") as? Double ?? 0) < ($1.value(forKey: "salary") as? Double ?? 0)
        }
        for (mine, theirs) in zip(employees.prefix(50), bySalary) {
            #expect(mine.objectID == theirs.objectID)
            #expect(mine.objectID.hashValue == theirs.objectID.hashValue)
            #expect(!mine.objectID.isTemporaryID)
        }
        withExtendedLifetime(holding) {}
    }

    /// Batches wait with their objects' IDs held as values, whose store part — the
    /// store's ID space — they hold unretained; a store makes a new space when its metadata
    /// change (`setMetadata(_:for:)`). Batches left waiting after their faults went away must
    /// keep the old space valid: the next batched fetch looks its IDs up among them and grows
    /// the table (hashing every waiting key again), and its faults still read their rows a batch
    /// at a time with the right values (NSFetchRequest, `fetchBatchSize`).
    @Test func waitingBatchesOutliveANewIDSpace() throws {
        let (context, store) = try reopenedCompany()
        let coordinator = try #require(context.persistentStoreCoordinator)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.sortDescriptors = [NSSortDescriptor(key: "salary", ascending: true)]
        request.fetchBatchSize = 10
        // Not kept by the test: only the waiting batches may keep the old space.
        let space = ObjectIdentifier(store.objectIDSpace)
        _ = try context.fetch(request)
        #expect(store.pendingBatches.count == 100)
        context.reset()  // the faults, and the IDs they held, go away; the batches wait on
        var metadata = coordinator.metadata(for: store)
        metadata["WaitingBatchesTest"] = "changed"
        coordinator.setMetadata(metadata, for: store)
        #expect(ObjectIdentifier(store.objectIDSpace) != space, "new metadata, a new ID space")
        let again = try context.fetch(request)
        let reads = try statements(store) {
            for (index, employee) in again.enumerated() {
                #expect(employee.value(forKey: "name") as? String == "E\(index)")
            }
        }
        #expect(reads == 10, "ten batches of ten")
    }

    /// Faults waiting in batches nobody touches must not grow the store's memory without bound
    /// (a large to-many's members past the first thousand wait in batches too). Past the store's maximum, the
    /// waiting ones are forgotten; their faults still fire, each reading its own row.
    @Test func waitingBatchesAreBounded() throws {
        let (context, store) = try reopenedCompany()
        store.maximumWaitingInBatches = 50
        let employees = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        employees.sortDescriptors = [NSSortDescriptor(key: "salary", ascending: true)]
        employees.fetchBatchSize = 10
        let people = try context.fetch(employees)
        #expect(store.pendingBatches.count == 100)
        let departments = NSFetchRequest<NSManagedObject>(entityName: "Department")
        departments.fetchBatchSize = 10
        #expect(try context.fetch(departments).count == 3)
        #expect(store.pendingBatches.count == 3, "the 100 waiting employees were forgotten")
        let reads = try statements(store) {
            #expect(people[0].value(forKey: "name") as? String == "E0")
            #expect(people[1].value(forKey: "name") as? String == "E1")
        }
        #expect(reads == 2, "each fault read its own row")
    }

    /// Issue 21: reading a batch (a `fetchBatchSize` batch, a to-many's members) decoded a new
    /// ID object for every row although the objects' IDs exist. The rows come back keyed by the
    /// very IDs asked for, and rows naming one department share one ID for it.
    @Test func aBatchReadReusesTheObjectsIDs() throws {
        let (context, store) = try reopenedCompany()
        let request = NSFetchRequest<NSManagedObjectID>(entityName: "Employee")
        request.resultType = .managedObjectIDResultType
        let ids = try context.fetch(request)
        #expect(ids.count == 100)
        let rows = try store.readRows(ids)
        #expect(rows.count == 100)
        #expect(Set(rows.keys.map { ObjectIdentifier($0.id) }) == Set(ids.map(ObjectIdentifier.init)))
        let employee = try #require(context.persistentStoreCoordinator?.managedObjectModel.entitiesByName["Employee"])
        let slot = try #require(employee.layout.slotByName["department"])
        let departments = rows.values.compactMap { $0.values[slot] as? NSManagedObjectID }
        #expect(departments.count == 100)
        #expect(Set(departments.map(ObjectIdentifier.init)).count == 3)
    }

    /// The table behind that sharing (a dictionary hashed each key with SipHash). One ID
    /// object per row a read names is uniquing's premise (Core Data Programming Guide, "Faulting
    /// and Uniquing"), so the table must find exactly the ID filed for each (entity, key): here
    /// keys of two entities that share key values, filed past several growths, keys never filed,
    /// and a key filed again.
    @Test func keyedIDsFindEveryFiledIDAndNoOther() throws {
        let (context, store) = try reopenedCompany()
        let model = try #require(context.persistentStoreCoordinator?.managedObjectModel)
        let employee = try #require(model.entitiesByName["Employee"]).layout
        let department = try #require(model.entitiesByName["Department"]).layout
        let space = store.objectIDSpace
        var table = KeyedIDs()
        #expect(table.id(employee, 1) == nil)
        var filed: [(EntityLayout, Int64, NSManagedObjectID)] = []
        // Keys spaced by a power of two as well as consecutive ones, negative and extreme keys.
        let keys: [Int64] = Array(1...300) + (0..<200).map { $0 << 12 } + [-1, -4096, .min, .max]
        for key in keys {
            for layout in [employee, department] {
                let id = NSManagedObjectID(layout: layout, integer: key, space: space)
                table.insert(id, layout, key)
                filed.append((layout, key, id))
            }
        }
        #expect(table.count == filed.count)
        for (layout, key, id) in filed { #expect(table.id(layout, key) === id, "\(key)") }
        for key: Int64 in [301, 4095, 4097, 1 << 40, -2] {
            #expect(table.id(employee, key) == nil && table.id(department, key) == nil, "\(key)")
        }
        let again = NSManagedObjectID(layout: employee, integer: 7, space: space)
        table.insert(again, employee, 7)
        #expect(table.count == filed.count)
        #expect(table.id(employee, 7) === again)
        #expect(table.id(department, 7) === filed.first { $0.0 === department && $0.1 == 7 }?.2)
        table.removeAll()
        #expect(table.count == 0 && table.id(employee, 7) == nil)
    }

    /// A to-many's members are its destination's rows whose inverse names the owner (Core Data
    /// Programming Guide, "Creating Managed Object Relationships"). Issue 21: when the destination
    /// has no sub-entities, the members' keys are read from the inverse's index alone, without a
    /// visit to each member's row; with sub-entities, each member's `Z_ENT` is still read, so a
    /// member of a sub-entity is an object of it.
    @Test func membersOfADestinationWithoutSubentitiesAreReadFromTheIndex() throws {
        let model = CompanyModel.owning(
            "Owner", [CompanyModel.attribute("name", .stringAttributeType)], toMany: "items",
            members: "Item", [CompanyModel.attribute("number", .integer64AttributeType)], toOne: "owner")
        let owner = try #require(model.entitiesByName["Owner"])
        let url = directory.file("Owners.sqlite")
        do {
            let context = try sqliteStack(url, model: model)
            for name in ["A", "B", "C"] {
                let object = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: context)
                object.setValue(name, forKey: "name")
                for number in 0..<10 {
                    let member = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                    member.setValue(number, forKey: "number")
                    member.setValue(object, forKey: "owner")
                }
            }
            try context.save()
        }
        let context = try sqliteStack(url, model: model)
        let store = try #require(context.persistentStoreCoordinator?.persistentStores.first as? SQLiteStore)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Owner")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        for object in try context.fetch(request) {
            let members = try #require(object.value(forKey: "items") as? Set<NSManagedObject>)
            #expect(members.count == 10)
            #expect(Set(members.map { $0.value(forKey: "number") as? Int }) == Set((0..<10).map { Optional($0) }))
            #expect(
                members.allSatisfy {
                    $0.entity.name == "Item" && $0.value(forKey: "owner") as? NSManagedObject === object
                })
        }
        let ownerSlot = try #require(owner.layout.slotByName["items"])
        let keys = try #require(store.reader(for: store.schema[owner]).memberSQL[ownerSlot]?.keys)
        #expect(!keys.contains("Z_ENT"), "\(keys)")
        let plan = try sqlite3(url, "EXPLAIN QUERY PLAN " + keys.replacingOccurrences(of: "?", with: "1"))
        #expect(plan.contains { $0.contains("COVERING INDEX") }, "\(plan)")

        // A destination with a sub-entity (the company's Employee, with Manager) reads `Z_ENT`.
        let (company, companyStore) = try reopenedCompany()
        let department = try #require(
            company.persistentStoreCoordinator?.managedObjectModel.entitiesByName["Department"])
        let employeesSlot = try #require(department.layout.slotByName["employees"])
        let employeeKeys = try #require(
            companyStore.reader(for: companyStore.schema[department]).memberSQL[employeesSlot]?.keys)
        #expect(employeeKeys.contains("Z_ENT"), "\(employeeKeys)")
    }

    /// A batched fetch honours the predicate, sort and window in SQL like any fetch.
    @Test func fetchBatchSizeKeepsPredicateSortAndWindow() throws {
        let (context, _) = try reopenedCompany()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.predicate = NSPredicate(format: "salary >= 50 AND department.name == 'D1'")
        request.sortDescriptors = [NSSortDescriptor(key: "salary", ascending: true)]
        request.fetchBatchSize = 4
        request.fetchOffset = 2
        request.fetchLimit = 5
        let salaries = try context.fetch(request).map { $0.value(forKey: "salary") as? Double ?? -1 }
        #expect(salaries == [58, 61, 64, 67, 70])
    }

    /// Prefetching a to-one reads every destination in one query: the departments of 100
    /// employees cost one statement, and reading their names none.
    @Test func prefetchingAToOne() throws {
        let (context, store) = try reopenedCompany()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.relationshipKeyPathsForPrefetching = ["department"]
        var employees: [NSManagedObject] = []
        let fetching = try statements(store) { employees = try context.fetch(request) }
        #expect(fetching == 2)
        var names: Set<String> = []
        let reads = try statements(store) {
            for employee in employees {
                names.insert(
                    (employee.value(forKey: "department") as? NSManagedObject)?.value(forKey: "name") as! String)
            }
        }
        #expect(reads == 0)
        #expect(names == ["D0", "D1", "D2"])
    }

    /// Prefetching a to-many (through its inverse's column) reads every member in one query;
    /// the relationship then resolves without the store.
    @Test func prefetchingAToMany() throws {
        let (context, store) = try reopenedCompany()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Department")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        request.relationshipKeyPathsForPrefetching = ["employees"]
        var departments: [NSManagedObject] = []
        let fetching = try statements(store) { departments = try context.fetch(request) }
        #expect(fetching == 2)
        var counts: [Int] = []
        var first: Set<String> = []
        let reads = try statements(store) {
            for department in departments {
                let members = department.value(forKey: "employees") as? Set<NSManagedObject> ?? []
                counts.append(members.count)
                if first.isEmpty { first = Set(members.compactMap { $0.value(forKey: "name") as? String }) }
            }
        }
        #expect(reads == 0)
        #expect(counts == [34, 33, 33])
        #expect(first == Set(stride(from: 0, to: 100, by: 3).map { "E\($0)" }))
    }

    /// Prefetching an ordered many-to-many (a join table with `Z_FOK_`) keeps the order; a
    /// project with no members gets an empty, resolved relationship.
    @Test func prefetchingAnOrderedManyToMany() throws {
        let (context, store) = try reopenedCompany()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Project")
        request.sortDescriptors = [NSSortDescriptor(key: "title", ascending: true)]
        request.relationshipKeyPathsForPrefetching = ["members"]
        let projects = try context.fetch(request)
        var members: [[String]] = []
        let reads = try statements(store) {
            members = projects.map { project in
                (project.value(forKey: "members") as? NSOrderedSet)?.array.compactMap {
                    ($0 as? NSManagedObject)?.value(forKey: "name") as? String
                } ?? []
            }
        }
        #expect(reads == 0)
        #expect(members == [["E7", "E3", "E5"], []])
    }

    /// A key path prefetches step by step, one query per relationship: employees → their
    /// departments → every employee of those departments.
    @Test func prefetchingAKeyPath() throws {
        let (context, store) = try reopenedCompany()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.predicate = NSPredicate(format: "salary == 4")
        request.relationshipKeyPathsForPrefetching = ["department.employees"]
        var employees: [NSManagedObject] = []
        let fetching = try statements(store) { employees = try context.fetch(request) }
        #expect(fetching == 3)
        let reads = try statements(store) {
            let department = employees.first?.value(forKey: "department") as? NSManagedObject
            let colleagues = department?.value(forKey: "employees") as? Set<NSManagedObject> ?? []
            #expect(colleagues.count == 33)
            #expect(colleagues.allSatisfy { ($0.value(forKey: "name") as? String)?.hasPrefix("E") == true })
        }
        #expect(reads == 0)
    }

    /// Core Data Programming Guide, "Faulting and Uniquing": a to-many's fault fires when it is
    /// touched and its members are faults; NSManagedObjectContext, `stalenessInterval`: "the
    /// maximum length of time that may have elapsed since the store previously fetched data
    /// before fulfilling a fault issues a new fetch rather than using the previously-fetched
    /// data" — infinite by default. Firing a to-many reads its members' IDs and rows in one
    /// statement by the owner's key; the members stay faults and fire from those rows with no
    /// statement, even after another writer changed one (the data fetched before, at the default
    /// interval). With an interval of 0, a member fired later reads its row again and has the
    /// other writer's values. An ordered many-to-many's members read the same way, in order;
    /// read again in a second context while the first holds their rows, only the keys are taken.
    @Test func aToManysMembersAreReadWithItAndFireFromThoseRows() throws {
        let (context, store) = try reopenedCompany()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Department")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        let departments = try context.fetch(request)
        var members: Set<NSManagedObject> = []
        let resolving = try statements(store) {
            members = departments[0].value(forKey: "employees") as? Set<NSManagedObject> ?? []
        }
        #expect(resolving == 1, "the members' IDs and rows, together")
        #expect(members.count == 34)
        #expect(members.allSatisfy { $0.isFault })
        // Another writer (its own coordinator, as another process would be) moves E3 to D1.
        let other = try sqliteStack(directory.file("Company.sqlite"))
        let otherEmployees = try other.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee"))
        let moved = try #require(otherEmployees.first { $0.value(forKey: "name") as? String == "E3" })
        let d1 = try #require(
            try other.fetch(NSFetchRequest<NSManagedObject>(entityName: "Department")).first {
                $0.value(forKey: "name") as? String == "D1"
            })
        moved.setValue(d1, forKey: "department")
        moved.setValue("E3 moved", forKey: "name")
        try other.save()
        let e3 = try #require(members.first { $0.objectID.uriRepresentation() == moved.objectID.uriRepresentation() })
        let names = try statements(store) {
            #expect(members.allSatisfy { ($0.value(forKey: "name") as? String)?.hasPrefix("E") == true })
        }
        #expect(names == 0, "every member fired from the rows read with the to-many")
        #expect(e3.value(forKey: "name") as? String == "E3", "the data fetched before")
        // With a staleness interval of 0, a member that fires reads its own row again.
        context.stalenessInterval = 0
        let d2Members = try #require(departments[2].value(forKey: "employees") as? Set<NSManagedObject>)
        let e5 = try #require(otherEmployees.first { $0.value(forKey: "name") as? String == "E5" })
        e5.setValue(d1, forKey: "department")
        e5.setValue("E5 moved", forKey: "name")
        try other.save()
        let leaver = try #require(
            d2Members.first { $0.objectID.uriRepresentation() == e5.objectID.uriRepresentation() })
        let leaving = try statements(store) { #expect(leaver.value(forKey: "name") as? String == "E5 moved") }
        #expect(leaving == 1, "its own row, read again")
        // An ordered many-to-many's members, in a context of their own: IDs and rows together.
        let fresh = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        fresh.persistentStoreCoordinator = context.persistentStoreCoordinator
        let apollo = try #require(
            try fresh.fetch(NSFetchRequest<NSManagedObject>(entityName: "Project")).first {
                $0.value(forKey: "title") as? String == "Apollo"
            })
        var crew: [NSManagedObject] = []
        let ordered = try statements(store) {
            crew = (apollo.value(forKey: "members") as? NSOrderedSet)?.array as? [NSManagedObject] ?? []
        }
        #expect(ordered == 1)
        let crewNames = try statements(store) {
            #expect(crew.map { $0.value(forKey: "name") as? String } == ["E7", "E3 moved", "E5 moved"])
        }
        #expect(crewNames == 0, "each fired from the row read with the relationship")
        // Read again in a third context while the second holds those rows: the same members, in
        // order, each firing from the row the second context holds.
        let cache = try #require(context.persistentStoreCoordinator).rowCache
        let holders = crew.map { cache.uses(of: $0.objectID) }
        let third = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        third.persistentStoreCoordinator = context.persistentStoreCoordinator
        let again = try #require(
            try third.existingObject(with: apollo.objectID).value(forKey: "members") as? NSOrderedSet)
        let shared = try statements(store) {
            #expect(
                again.array.map { ($0 as? NSManagedObject)?.value(forKey: "name") as? String } == [
                    "E7", "E3 moved", "E5 moved",
                ])
        }
        #expect(shared == 0)
        #expect(crew.map { cache.uses(of: $0.objectID) } == holders.map { $0 + 1 }, "one more holder each: its object")
    }

    /// NSManagedObjectContext reference, "Faulting": the members of a to-many are faults until
    /// touched. A to-many of more members than the store reads rows for when it fires
    /// (`SQLiteStore.membersReadWithRows`) holds the rows of the first ones only; the rest wait in
    /// batches of that size, each read with one statement when one of its members fires, so a
    /// to-many of any size is not read into memory at once. Every member fires with its own values.
    @Test func aLargeToManysLaterMembersWaitInBatches() throws {
        let url = directory.file("Large.sqlite")
        let count = SQLiteStore.membersReadWithRows * 2 + 500
        do {
            let context = try sqliteStack(url)
            let department = context.department("Everyone")
            for index in 0..<count {
                context.employee("E\(index)", salary: Double(index)).setValue(department, forKey: "department")
            }
            try context.save()
        }
        let context = try sqliteStack(url)
        let store = try #require(context.persistentStoreCoordinator?.persistentStores.first as? SQLiteStore)
        let cache = try #require(context.persistentStoreCoordinator).rowCache
        let department = try #require(
            try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Department")).first)
        var members: [NSManagedObject] = []
        let resolving = try statements(store) {
            members = (department.value(forKey: "employees") as? Set<NSManagedObject>).map(Array.init) ?? []
        }
        #expect(resolving == 1)
        #expect(members.count == count)
        #expect(members.allSatisfy { $0.isFault })
        let holding = members.filter { cache.uses(of: $0.objectID) == 1 }
        #expect(holding.count == SQLiteStore.membersReadWithRows, "only the first members' rows are held")
        let first = try statements(store) {
            #expect(
                holding.allSatisfy {
                    $0.value(forKey: "name") as? String == "E\(Int($0.value(forKey: "salary") as? Double ?? -1))"
                })
        }
        #expect(first == 0)
        let rest = try statements(store) {
            for member in members where !holding.contains(member) {
                #expect(
                    member.value(forKey: "name") as? String
                        == "E\(Int(member.value(forKey: "salary") as? Double ?? -1))")
            }
        }
        #expect(rest == 2, "two batches: \(SQLiteStore.membersReadWithRows) and 500 members")
    }

    /// A `fetchBatchSize` fetch of rows in the order they were saved has batches of consecutive
    /// keys: the first fault of a batch reads the batch's rows with one statement over their key
    /// range, not `IN` lists. Rows of the range that are not the batch's — ones the
    /// predicate did not match, managers (a sub-entity in the same table) — are not read into
    /// the cache, and every object fires with its own values.
    @Test func aBatchOfConsecutiveKeysIsReadAsOneRange() throws {
        let url = directory.file("Range.sqlite")
        do {
            let context = try sqliteStack(url)
            for index in 0..<1_000 {
                context.employee("E\(index)", salary: Double(index), entity: index % 50 == 7 ? "Manager" : "Employee")
            }
            try context.save()
        }
        let context = try sqliteStack(url)
        let coordinator = try #require(context.persistentStoreCoordinator)
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.includesSubentities = false
        request.predicate = NSPredicate(format: "NOT (salary IN %@)", Array(stride(from: 0.0, to: 1_000, by: 10)))
        // 600 keys would take two `IN` lists (of at most 500): one statement reads them.
        request.fetchBatchSize = 600
        let employees = try context.fetch(request)
        #expect(employees.count == 880)
        let first = try statements(store) { _ = employees[0].value(forKey: "name") }
        #expect(first == 1)
        #expect(coordinator.rowCache.count == 600, "only the batch's rows")
        let rest = try statements(store) {
            for employee in employees[1..<600] {
                let salary = try #require(employee.value(forKey: "salary") as? Double)
                #expect(employee.value(forKey: "name") as? String == "E\(Int(salary))")
                #expect(Int(salary) % 10 != 0 && Int(salary) % 50 != 7)
            }
        }
        #expect(rest == 0)
        let all = try statements(store) { #expect(employees.allSatisfy { $0.value(forKey: "name") != nil }) }
        #expect(all == 1, "the second batch")
    }

    /// Core Data Programming Guide, "Faulting and Uniquing": a fault fires when it is touched, and
    /// an object with unsaved changes keeps them. A to-many's members are read with their rows
    /// when it fires and stay faults (they hold their rows, as a fetch's faults do) until each
    /// is touched, and each then fires with its own row, with no statement; a member already
    /// changed in the context keeps its changes.
    @Test func aBatchsOtherMembersStayFaultsUntilTouchedAndChangedOnesKeepTheirChanges() throws {
        let (context, store) = try reopenedCompany()
        // E99, of D0, fetched and changed before its department's members are read.
        let byName = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        byName.predicate = NSPredicate(format: "name == %@", "E99")
        let changed = try #require(try context.fetch(byName).first)
        changed.setValue("renamed", forKey: "name")
        let request = NSFetchRequest<NSManagedObject>(entityName: "Department")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        let d0 = try #require(try context.fetch(request).first)
        var members: Set<NSManagedObject> = []
        let resolving = try statements(store) {
            members = d0.value(forKey: "employees") as? Set<NSManagedObject> ?? []
        }
        #expect(resolving == 1, "the members' IDs and rows, together")
        #expect(members.count == 34)
        #expect(members.contains(changed))
        let faults = members.filter { $0 !== changed }.sorted {
            $0.objectID.uriRepresentation().absoluteString < $1.objectID.uriRepresentation().absoluteString
        }
        #expect(faults.allSatisfy { $0.isFault })
        let first = try statements(store) { _ = faults[0].value(forKey: "salary") }
        #expect(first == 0, "fired from its row")
        #expect(faults.dropFirst().allSatisfy { $0.isFault }, "the other members are still faults")
        let rest = try statements(store) {
            for member in faults {
                let salary = try #require(member.value(forKey: "salary") as? Double)
                #expect(member.value(forKey: "name") as? String == "E\(Int(salary))")
                #expect(Int(salary) % 3 == 0, "a member of D0")
            }
        }
        #expect(rest == 0)
        #expect(changed.value(forKey: "name") as? String == "renamed")
        #expect(changed.changedValues()["name"] as? String == "renamed")
        #expect(changed.committedValues(forKeys: ["name"])["name"] as? String == "E99")
        // Each row is held once, by its object: none was given a second hold it would never let go.
        let cache = try #require(context.persistentStoreCoordinator).rowCache
        #expect(members.allSatisfy { cache.uses(of: $0.objectID) == 1 })
    }

    @Test func batchesPrefetchTheirRelationships() throws {
        let (context, store) = try reopenedCompany()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.sortDescriptors = [NSSortDescriptor(key: "salary", ascending: true)]
        request.fetchBatchSize = 50
        request.relationshipKeyPathsForPrefetching = ["department"]
        let employees = try context.fetch(request)
        let firstTouch = try statements(store) { _ = employees[0].value(forKey: "name") }
        #expect(firstTouch == 2)
        let reads = try statements(store) {
            for employee in employees.prefix(50) {
                _ = (employee.value(forKey: "department") as? NSManagedObject)?.value(forKey: "name")
            }
        }
        #expect(reads == 0)
    }
}
