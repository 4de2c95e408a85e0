import CoreData
import Testing

/// Eight contexts at once, each on its own thread, over one SQLite store: root writers, nested
/// writers and readers (one pinned to query generations, reading row by row — without the pin its
/// totals come out inconsistent), with a bounded number of operations. Every writer moves money between accounts (employees'
/// salaries), so the total is an invariant each committed transaction preserves; conflicts are
/// resolved the documented way — the save fails with 133020, the writer rolls back, refreshes and
/// tries again.
///
/// Rules: NSManagedObjectContext reference, "Concurrency"; Core Data Programming Guide, "Change
/// Management" (optimistic locking) and "Using Core Data in the Background".
@Suite("Concurrency stress")
struct StressTests {
    static let accounts = 16
    static let opening = 100.0
    static let transfersPerWriter = 25

    /// The sum of all balances, in one SQL statement (a consistent read).
    static func total(_ context: NSManagedObjectContext) throws -> Double {
        let request = NSFetchRequest<NSDictionary>(entityName: "Employee")
        request.resultType = .dictionaryResultType
        let sum = NSExpressionDescription()
        sum.name = "total"
        sum.expression = NSExpression(forFunction: "sum:", arguments: [NSExpression(forKeyPath: "salary")])
        request.propertiesToFetch = [sum]
        return (try context.fetch(request).first?["total"] as? NSNumber)?.doubleValue ?? .nan
    }

    /// The sum of all balances read one row at a time — each fault its own query — by a context
    /// pinned to the current query generation, so writers committing in between are not seen.
    static func pinnedTotal(_ context: NSManagedObjectContext) throws -> Double {
        context.reset()
        // No cached row is good enough: every fault reads the store (at the generation).
        context.stalenessInterval = 0
        try context.setQueryGenerationFrom(.current)
        defer { try? context.setQueryGenerationFrom(nil) }
        let request = NSFetchRequest<NSManagedObjectID>(entityName: "Employee")
        request.resultType = .managedObjectIDResultType
        var total = 0.0
        // Writers commit between these reads; only the generation keeps them consistent.
        for id in try context.fetch(request) {
            total += try context.existingObject(with: id).value(forKey: "salary") as? Double ?? .nan
            usleep(200)
        }
        return total
    }

    /// Moves `amount` between two accounts and saves `saving` (the context itself, or a child's
    /// parent after the child's save), retrying after conflicts.
    static func transfer(
        in context: NSManagedObjectContext, saving root: NSManagedObjectContext, ids: [NSManagedObjectID],
        from: Int, to: Int, amount: Double
    ) throws -> Int {
        var conflicts = 0
        while true {
            let saved = try context.performAndWait { () -> Bool in
                let source = try context.existingObject(with: ids[from])
                let target = try context.existingObject(with: ids[to])
                source.setValue((source.value(forKey: "salary") as? Double ?? 0) - amount, forKey: "salary")
                target.setValue((target.value(forKey: "salary") as? Double ?? 0) + amount, forKey: "salary")
                if context === root { return try saveOrRollBack(root) }
                try context.save()  // into the parent: never a conflict
                return try root.performAndWait { try saveOrRollBack(root) }
            }
            if saved { return conflicts }
            conflicts += 1
            context.performAndWait {
                context.rollback()
                for object in context.registeredObjects { context.refresh(object, mergeChanges: false) }
            }
        }
    }

    /// Saves `context`; after an optimistic-locking conflict, discards its changes and turns its
    /// objects into faults so the next attempt reads the rows again. Returns whether it saved.
    static func saveOrRollBack(_ context: NSManagedObjectContext) throws -> Bool {
        do {
            try context.save()
            return true
        } catch let error as NSError where error.code == NSManagedObjectMergeError {
            context.rollback()
            for object in context.registeredObjects { context.refresh(object, mergeChanges: false) }
            return false
        }
    }

    @Test("8 concurrent contexts keep the total of all balances, during the run and after reopening")
    func eightContexts() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Bank.sqlite")
        let model = CompanyModel.make()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        @Sendable func context(parent: NSManagedObjectContext? = nil) -> NSManagedObjectContext {
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            if let parent { context.parent = parent } else { context.persistentStoreCoordinator = coordinator }
            return context
        }
        let seed = context()
        let ids = try seed.performAndWait {
            let objects = (0..<Self.accounts).map { seed.employee("Account \($0)", salary: Self.opening) }
            try seed.save()
            return objects.map(\.objectID)
        }
        let expected = Double(Self.accounts) * Self.opening
        let readings = Collector<Double>()
        let outcomes = Collector<Result<Int, NSError>>()

        // One thread per context, all started together: `concurrentPerform` would run only as
        // many at once as the machine has cores.
        let done = DispatchGroup()
        @Sendable func work(_ worker: Int) {
            do {
                switch worker {
                case 0..<3:  // root writers
                    let writer = context()
                    var conflicts = 0
                    for step in 0..<Self.transfersPerWriter {
                        let from = (worker * 7 + step) % Self.accounts
                        let to = (from + 1 + step % (Self.accounts - 1)) % Self.accounts
                        conflicts += try Self.transfer(
                            in: writer, saving: writer, ids: ids, from: from, to: to, amount: Double(step % 5 + 1))
                    }
                    outcomes.append(.success(conflicts))
                case 3..<5:  // nested writers: a child saves into its own root, which saves to the store
                    let root = context()
                    let child = context(parent: root)
                    var conflicts = 0
                    for step in 0..<Self.transfersPerWriter {
                        let from = (worker * 5 + step * 3) % Self.accounts
                        let to = (from + 3) % Self.accounts
                        conflicts += try Self.transfer(
                            in: child, saving: root, ids: ids, from: from, to: to, amount: 2)
                    }
                    outcomes.append(.success(conflicts))
                case 7:  // a reader pinned to a query generation, reading row by row
                    let reader = context()
                    for _ in 0..<Self.transfersPerWriter {
                        readings.append(try reader.performAndWait { try Self.pinnedTotal(reader) })
                    }
                default:  // readers
                    let reader = context()
                    for _ in 0..<Self.transfersPerWriter {
                        readings.append(try reader.performAndWait { try Self.total(reader) })
                        let count = try reader.performAndWait {
                            try reader.count(for: NSFetchRequest<NSManagedObject>(entityName: "Employee"))
                        }
                        if count != Self.accounts { readings.append(-Double(count)) }
                    }
                }
            } catch {
                outcomes.append(.failure(error as NSError))
            }
        }
        for worker in 0..<8 {
            done.enter()
            Thread {
                work(worker)
                done.leave()
            }.start()
        }
        done.wait()

        let failures = outcomes.values.compactMap { if case .failure(let error) = $0 { error } else { nil } }
        #expect(failures.isEmpty, "no writer failed: \(failures)")
        #expect(outcomes.values.count == 5, "every writer finished")
        #expect(readings.values.count == 3 * Self.transfersPerWriter)
        #expect(readings.values.allSatisfy { $0 == expected }, "every read saw a consistent total")
        let after = context()
        #expect(try after.performAndWait { try Self.total(after) } == expected)

        // Reopened by a new coordinator: nothing lost.
        let reopened = NSPersistentStoreCoordinator(managedObjectModel: model)
        try reopened.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        let fresh = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        fresh.persistentStoreCoordinator = reopened
        try fresh.performAndWait {
            #expect(try Self.total(fresh) == expected)
            let count = try fresh.count(for: NSFetchRequest<NSManagedObject>(entityName: "Employee"))
            #expect(count == Self.accounts)
        }
    }
}
