import CoreData
import Testing

/// Two writers over one store, each with its own context: the first to save wins the row, the
/// second meets an optimistic-locking conflict its merge policy resolves.
struct TwoWriters {
    /// Where the two contexts meet.
    enum Setup: String, CaseIterable, CustomTestStringConvertible, Sendable {
        /// Two contexts of one coordinator with an in-memory store.
        case inMemory
        /// Two contexts of one coordinator with a SQLite store.
        case sqlite
        /// Two coordinators on one SQLite file — as two processes would be.
        case sqliteTwoCoordinators

        var testDescription: String { rawValue }
    }

    let first: NSManagedObjectContext
    let second: NSManagedObjectContext
    let directory = TemporaryDirectory()
    /// A context that reads what the store holds, for checking outcomes.
    let makeReader: () -> NSManagedObjectContext

    init(_ setup: Setup, model: NSManagedObjectModel = CompanyModel.make()) throws {
        let url = directory.file("Company.sqlite")
        func coordinator() throws -> NSPersistentStoreCoordinator {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            let type = setup == .inMemory ? NSInMemoryStoreType : NSSQLiteStoreType
            try coordinator.addPersistentStore(
                ofType: type, configurationName: nil, at: setup == .inMemory ? nil : url, options: nil)
            return coordinator
        }
        func context(_ coordinator: NSPersistentStoreCoordinator) -> NSManagedObjectContext {
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            return context
        }
        let shared = try coordinator()
        first = context(shared)
        second = context(setup == .sqliteTwoCoordinators ? try coordinator() : shared)
        let readerCoordinator = setup == .inMemory ? shared : try coordinator()
        makeReader = { context(readerCoordinator) }
    }

    /// Saves one employee through the first context; returns its ID.
    func seed(name: String = "Ada", salary: Double = 100, startDate: Date? = nil) throws -> NSManagedObjectID {
        let ada = first.employee(name, salary: salary)
        ada.setValue(startDate, forKey: "startDate")
        try first.save()
        first.reset()
        return ada.objectID
    }

    /// `context`'s object for `id`, which may come from the other coordinator: object IDs are
    /// per coordinator, so it is looked up by its URI (NSManagedObjectID reference).
    func object(_ id: NSManagedObjectID, in context: NSManagedObjectContext) throws -> NSManagedObject {
        let coordinator = try #require(context.persistentStoreCoordinator)
        let local = try #require(coordinator.managedObjectID(forURIRepresentation: id.uriRepresentation()))
        return try context.existingObject(with: local)
    }

    /// The employee's stored name, salary and start date, read by a fresh context; `nil` when
    /// the row is gone.
    func stored(_ id: NSManagedObjectID) throws -> [String: Any]? {
        let reader = makeReader()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        let found = try reader.fetch(request).first { $0.objectID.uriRepresentation() == id.uriRepresentation() }
        return found?.dictionaryWithValues(forKeys: ["name", "salary", "startDate"])
    }
}

/// Optimistic locking and merge policies. Rules: Core Data Programming Guide, "Change
/// Management" ("Conflict Detection and Optimistic Locking"); NSMergePolicy and NSMergeConflict
/// references; NSManagedObjectContext reference, `detectConflicts(for:)`.
@Suite("Conflicts")
struct ConflictTests {
    static let setups = TwoWriters.Setup.allCases
    static let early = Date(timeIntervalSinceReferenceDate: 0)
    static let late = Date(timeIntervalSinceReferenceDate: 86_400)

    /// Both contexts read the employee; the second changes salary and start date and saves; the
    /// first changes name and salary. Returns the first context's object, ready to save.
    func conflict(_ writers: TwoWriters) throws -> NSManagedObject {
        let id = try writers.seed(startDate: Self.early)
        let mine = try writers.object(id, in: writers.first)
        let theirs = try writers.object(id, in: writers.second)
        theirs.setValue(200.0, forKey: "salary")
        theirs.setValue(Self.late, forKey: "startDate")
        try writers.second.save()
        mine.setValue("Ada Lovelace", forKey: "name")
        mine.setValue(300.0, forKey: "salary")
        return mine
    }

    @Test(
        "NSErrorMergePolicy fails the save with 133020 and a conflict list of NSMergeConflict",
        arguments: setups)
    func errorPolicy(_ setup: TwoWriters.Setup) throws {
        let writers = try TwoWriters(setup)
        let mine = try conflict(writers)
        let error = #expect(throws: NSError.self) { try writers.first.save() }
        #expect(error?.domain == NSCocoaErrorDomain)
        #expect(error?.code == NSManagedObjectMergeError)
        let list = error?.userInfo["conflictList"] as? [NSMergeConflict]
        #expect(list?.count == 1)
        let found = try #require(list?.first)
        #expect(found.sourceObject === mine)
        #expect(found.oldVersionNumber == 1, "the version the context read")
        #expect(found.newVersionNumber == 2, "the version in the store")
        #expect(found.cachedSnapshot?["salary"] as? Double == 100)
        #expect(found.persistedSnapshot?["salary"] as? Double == 200)
        #expect(found.persistedSnapshot?["startDate"] as? Date == Self.late)
        #expect(found.objectSnapshot?["name"] as? String == "Ada Lovelace")
        #expect(writers.first.hasChanges, "a failed save leaves the changes in place")
        let stored = try #require(try writers.stored(mine.objectID))
        #expect(stored["name"] as? String == "Ada", "nothing of the failed save was written")
        #expect(stored["salary"] as? Double == 200)
    }

    @Test(
        "mergeByPropertyStoreTrump: the store's changed properties win, the object's other changes stay",
        arguments: setups)
    func storeTrump(_ setup: TwoWriters.Setup) throws {
        let writers = try TwoWriters(setup)
        let mine = try conflict(writers)
        writers.first.mergePolicy = NSMergeByPropertyStoreTrumpMergePolicy
        try writers.first.save()
        let stored = try #require(try writers.stored(mine.objectID))
        #expect(stored["name"] as? String == "Ada Lovelace")
        #expect(stored["salary"] as? Double == 200)
        #expect(stored["startDate"] as? Date == Self.late)
        #expect(mine.value(forKey: "salary") as? Double == 200, "the context's object shows the merged values")
    }

    @Test("mergeByPropertyObjectTrump: the object's changed properties win, others take the store's", arguments: setups)
    func objectTrump(_ setup: TwoWriters.Setup) throws {
        let writers = try TwoWriters(setup)
        let mine = try conflict(writers)
        writers.first.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        try writers.first.save()
        let stored = try #require(try writers.stored(mine.objectID))
        #expect(stored["name"] as? String == "Ada Lovelace")
        #expect(stored["salary"] as? Double == 300)
        #expect(stored["startDate"] as? Date == Self.late, "a property only the store changed")
    }

    @Test("overwrite: the object's values are written over the row, the store's changes are lost", arguments: setups)
    func overwrite(_ setup: TwoWriters.Setup) throws {
        let writers = try TwoWriters(setup)
        let mine = try conflict(writers)
        writers.first.mergePolicy = NSOverwriteMergePolicy
        try writers.first.save()
        let stored = try #require(try writers.stored(mine.objectID))
        #expect(stored["salary"] as? Double == 300)
        #expect(stored["startDate"] as? Date == Self.early, "the object's unchanged value overwrites")
    }

    @Test("rollback: the object's changes are discarded for the store's values", arguments: setups)
    func rollback(_ setup: TwoWriters.Setup) throws {
        let writers = try TwoWriters(setup)
        let mine = try conflict(writers)
        writers.first.mergePolicy = NSRollbackMergePolicy
        try writers.first.save()
        #expect(!writers.first.hasChanges)
        #expect(mine.value(forKey: "name") as? String == "Ada")
        #expect(mine.value(forKey: "salary") as? Double == 200)
        let stored = try #require(try writers.stored(mine.objectID))
        #expect(stored["name"] as? String == "Ada")
        #expect(stored["salary"] as? Double == 200)
    }

    @Test(
        "the second save after a resolved conflict is based on the new version and does not conflict", arguments: setups
    )
    func versionAfterResolution(_ setup: TwoWriters.Setup) throws {
        let writers = try TwoWriters(setup)
        let mine = try conflict(writers)
        writers.first.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        try writers.first.save()
        writers.first.mergePolicy = NSErrorMergePolicy
        mine.setValue(400.0, forKey: "salary")
        try writers.first.save()
        #expect(try writers.stored(mine.objectID)?["salary"] as? Double == 400)
    }

    @Test(
        "an update of a row deleted elsewhere is a conflict with no persisted snapshot (version 0)", arguments: setups)
    func updateDeletedRow(_ setup: TwoWriters.Setup) throws {
        let writers = try TwoWriters(setup)
        let id = try writers.seed()
        let mine = try writers.object(id, in: writers.first)
        writers.second.delete(try writers.object(id, in: writers.second))
        try writers.second.save()
        mine.setValue(1.0, forKey: "salary")
        let error = #expect(throws: NSError.self) { try writers.first.save() }
        #expect(error?.code == NSManagedObjectMergeError)
        let found = (error?.userInfo["conflictList"] as? [NSMergeConflict])?.first
        #expect(found?.persistedSnapshot == nil)
        #expect(found?.newVersionNumber == 0)
        // Any other policy lets the store's delete stand: the object leaves the context.
        writers.first.mergePolicy = NSMergeByPropertyStoreTrumpMergePolicy
        try writers.first.save()
        #expect(mine.managedObjectContext == nil)
        #expect(try writers.stored(id) == nil)
    }

    @Test(
        "in a save of many updates, deletes and locked objects of two entities, exactly those whose rows changed are conflicts",
        arguments: setups)
    func conflictsAmongMany(_ setup: TwoWriters.Setup) throws {
        let writers = try TwoWriters(setup)
        let seeded = (0..<30).map { writers.first.employee("E\($0)", salary: Double($0)) }
        let departments = (0..<6).map { writers.first.department("D\($0)") }
        try writers.first.save()
        let ids = (seeded + departments).map(\.objectID)
        writers.first.reset()
        let mine = try ids.map { try writers.object($0, in: writers.first) }
        let theirs = try ids.map { try writers.object($0, in: writers.second) }
        // The other writer changes employees 3 and 21 and department 2, and deletes employee 7.
        theirs[3].setValue(1_000.0, forKey: "salary")
        theirs[21].setValue(1_000.0, forKey: "salary")
        theirs[30 + 2].setValue("Renamed", forKey: "name")
        writers.second.delete(theirs[7])
        try writers.second.save()
        // This writer changes every employee but 9, deletes 9 and department 4, and locks
        // departments 2 and 5: only the rows changed since it read them conflict.
        for (index, employee) in mine[..<30].enumerated() where index != 9 { employee.setValue("X", forKey: "name") }
        writers.first.delete(mine[9])
        writers.first.delete(mine[30 + 4])
        writers.first.detectConflicts(for: mine[30 + 2])
        writers.first.detectConflicts(for: mine[30 + 5])
        let error = #expect(throws: NSError.self) { try writers.first.save() }
        #expect(error?.code == NSManagedObjectMergeError)
        let list = error?.userInfo["conflictList"] as? [NSMergeConflict] ?? []
        let expected = [3, 7, 21, 30 + 2].map { ObjectIdentifier(mine[$0]) }
        #expect(Set(list.map { ObjectIdentifier($0.sourceObject) }) == Set(expected))
        #expect(list.count == 4)
        for conflict in list {
            let deletedThere = conflict.sourceObject === mine[7]
            #expect(conflict.oldVersionNumber == 1, "the version this writer read")
            #expect(conflict.newVersionNumber == (deletedThere ? 0 : 2), "the store's version; 0 for a deleted row")
        }
    }

    @Test("re-deleting an object deleted in another context succeeds", arguments: setups)
    func redelete(_ setup: TwoWriters.Setup) throws {
        let writers = try TwoWriters(setup)
        let id = try writers.seed()
        let mine = try writers.object(id, in: writers.first)
        writers.second.delete(try writers.object(id, in: writers.second))
        try writers.second.save()
        writers.first.delete(mine)
        try writers.first.save()
        #expect(try writers.stored(id) == nil)
    }

    @Test("detectConflicts(for:) makes an unchanged object's changed row fail the save", arguments: setups)
    func detectConflicts(_ setup: TwoWriters.Setup) throws {
        let writers = try TwoWriters(setup)
        let id = try writers.seed()
        let watched = try writers.object(id, in: writers.first)
        writers.first.detectConflicts(for: watched)
        let theirs = try writers.object(id, in: writers.second)
        theirs.setValue(5.0, forKey: "salary")
        try writers.second.save()
        writers.first.employee("Grace")
        let error = #expect(throws: NSError.self) { try writers.first.save() }
        #expect(error?.code == NSManagedObjectMergeError)
        #expect((error?.userInfo["conflictList"] as? [NSMergeConflict])?.first?.sourceObject === watched)
        // Without the mark, the same save goes through.
        writers.first.refresh(watched, mergeChanges: false)
        writers.first.rollback()
        writers.first.employee("Grace")
        try writers.first.save()
    }

    /// Adds both writers' raises: the amount the object added since it read the row, on top of
    /// the store's value — resolving a conflict in code by subclassing NSMergePolicy.
    final class AddRaisesPolicy: NSMergePolicy, @unchecked Sendable {
        init() { super.init(merge: .mergeByPropertyObjectTrumpMergePolicyType) }

        override func resolve(optimisticLockingConflicts list: [NSMergeConflict]) throws {
            for conflict in list {
                let mine = conflict.objectSnapshot?["salary"] as? Double ?? 0
                let read = conflict.cachedSnapshot?["salary"] as? Double ?? 0
                let stored = conflict.persistedSnapshot?["salary"] as? Double ?? 0
                conflict.sourceObject.setValue(stored + (mine - read), forKey: "salary")
            }
            try super.resolve(optimisticLockingConflicts: list)
        }
    }

    @Test("a subclass of NSMergePolicy resolves conflicts in code", arguments: setups)
    func subclassedPolicy(_ setup: TwoWriters.Setup) throws {
        let writers = try TwoWriters(setup)
        let mine = try conflict(writers)  // read 100; they saved 200; we set 300
        writers.first.mergePolicy = AddRaisesPolicy()
        try writers.first.save()
        #expect(try writers.stored(mine.objectID)?["salary"] as? Double == 400)
    }
}
