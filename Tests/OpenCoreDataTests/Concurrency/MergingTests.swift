import CoreData
import Testing

/// An employee class whose transient `nickname` is derived in `awakeFromFetch`, to observe the
/// documented order of a merging refresh.
final class NicknamedEmployee: NSManagedObject {
    override func awakeFromFetch() {
        super.awakeFromFetch()
        setPrimitiveValue("derived", forKey: "nickname")
    }
}

/// Taking in what other contexts saved. Rules: NSManagedObjectContext reference
/// (`mergeChanges(fromContextDidSave:)`, `mergeChanges(fromRemoteContextSave:into:)`,
/// `refresh(_:mergeChanges:)`, `refreshAllObjects()`, `stalenessInterval`); Core Data Programming
/// Guide, "Change Management" and "Communicating Changes Between Contexts".
@Suite("Merging", .serialized)
struct MergingTests {
    /// Two contexts of one coordinator over a SQLite store.
    func pair(_ model: NSManagedObjectModel = CompanyModel.make()) throws -> (
        NSManagedObjectContext, NSManagedObjectContext, TemporaryDirectory
    ) {
        let directory = TemporaryDirectory()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: directory.file("Company.sqlite"), options: nil)
        let mine = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        mine.persistentStoreCoordinator = coordinator
        let theirs = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        theirs.persistentStoreCoordinator = coordinator
        return (mine, theirs, directory)
    }

    @Test(
        "mergeChanges(fromContextDidSave:) refreshes updated objects keeping local changes, faults in inserted ones and removes deleted ones"
    )
    func mergeDidSave() throws {
        let (mine, theirs, directory) = try pair()
        // The store's file must outlive its readers: the directory is removed when released.
        defer { withExtendedLifetime(directory) {} }
        let (kept, gone) = try theirs.performAndWait {
            let kept = theirs.employee("Ada", salary: 1)
            let gone = theirs.employee("Old")
            try theirs.save()
            return (kept.objectID, gone.objectID)
        }
        let ada = try mine.existingObject(with: kept)
        let old = try mine.existingObject(with: gone)
        ada.setValue("Ada L.", forKey: "name")  // a local, unsaved change
        let saves = NotificationRecorder([.NSManagedObjectContextDidSave], object: theirs)
        let newID = try theirs.performAndWait {
            try theirs.existingObject(with: kept).setValue(2.0, forKey: "salary")
            theirs.delete(try theirs.existingObject(with: gone))
            let grace = theirs.employee("Grace")
            try theirs.save()
            return grace.objectID
        }
        let recorder = NotificationRecorder([.NSManagedObjectContextObjectsDidChange], object: mine)
        mine.mergeChanges(fromContextDidSave: try #require(saves.notes.last))
        #expect(ada.value(forKey: "salary") as? Double == 2, "the saved value")
        #expect(ada.value(forKey: "name") as? String == "Ada L.", "the local change stays on top")
        #expect(ada.isUpdated)
        #expect(mine.registeredObject(for: newID) != nil, "the inserted object is faulted in")
        #expect(old.managedObjectContext == nil, "the deleted object left the context")
        #expect(!mine.deletedObjects.contains(old), "and is no pending delete here")
        #expect(recorder.objects(.NSManagedObjectContextObjectsDidChange, NSRefreshedObjectsKey) == [ada])
        #expect(recorder.objects(.NSManagedObjectContextObjectsDidChange, NSDeletedObjectsKey) == [old])
        try mine.save()  // nothing conflicts: the refresh based Ada on the saved version
    }

    @Test("refresh(_:mergeChanges: true) restores a transient's pre-refresh value after awakeFromFetch")
    func refreshKeepsTransient() throws {
        let model = CompanyModel.make()
        model.entitiesByName["Employee"]?.managedObjectClassName = NSStringFromClass(NicknamedEmployee.self)
        let (mine, theirs, directory) = try pair(model)
        // The store's file must outlive its readers: the directory is removed when released.
        defer { withExtendedLifetime(directory) {} }
        let id = try theirs.performAndWait {
            let ada = theirs.employee("Ada")
            try theirs.save()
            return ada.objectID
        }
        let ada = try mine.existingObject(with: id)
        #expect(ada.value(forKey: "nickname") as? String == "derived")
        ada.setValue("Countess", forKey: "nickname")
        mine.refresh(ada, mergeChanges: true)
        #expect(ada.value(forKey: "nickname") as? String == "Countess")
        mine.refresh(ada, mergeChanges: false)
        #expect(ada.isFault)
        #expect(ada.value(forKey: "nickname") as? String == "derived", "flag false disposes of transients")
    }

    @Test("refreshAllObjects() reloads every registered object and keeps unsaved changes")
    func refreshAll() throws {
        let (mine, theirs, directory) = try pair()
        // The store's file must outlive its readers: the directory is removed when released.
        defer { withExtendedLifetime(directory) {} }
        let ids = try theirs.performAndWait {
            let objects = [theirs.employee("A", salary: 1), theirs.employee("B", salary: 1)]
            try theirs.save()
            return objects.map(\.objectID)
        }
        let objects = try ids.map { try mine.existingObject(with: $0) }
        objects[0].setValue("A2", forKey: "name")
        try theirs.performAndWait {
            for id in ids { try theirs.existingObject(with: id).setValue(7.0, forKey: "salary") }
            try theirs.save()
        }
        mine.refreshAllObjects()
        #expect(objects.map { $0.value(forKey: "salary") as? Double } == [7, 7])
        #expect(objects[0].value(forKey: "name") as? String == "A2")
    }

    /// Two coordinators on one file, as two processes: the second's row cache does not see the
    /// first's saves until the staleness interval says so or the save is merged.
    func twoCoordinators() throws -> (NSManagedObjectContext, NSManagedObjectContext, TemporaryDirectory) {
        let directory = TemporaryDirectory()
        let model = CompanyModel.make()
        func context() throws -> NSManagedObjectContext {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: directory.file("Company.sqlite"), options: nil)
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            return context
        }
        return (try context(), try context(), directory)
    }

    func uri(_ id: NSManagedObjectID, in context: NSManagedObjectContext) throws -> NSManagedObjectID {
        try #require(context.persistentStoreCoordinator?.managedObjectID(forURIRepresentation: id.uriRepresentation()))
    }

    @Test("stalenessInterval: a negative interval reuses any cached row; 0 refetches the row on refresh")
    func staleness() throws {
        let (writer, reader, directory) = try twoCoordinators()
        // The store's file must outlive its readers: the directory is removed when released.
        defer { withExtendedLifetime(directory) {} }
        let id = try writer.performAndWait {
            let ada = writer.employee("Ada", salary: 1)
            try writer.save()
            return ada.objectID
        }
        let ada = try reader.existingObject(with: try uri(id, in: reader))
        try writer.performAndWait {
            try writer.existingObject(with: id).setValue(2.0, forKey: "salary")
            try writer.save()
        }
        #expect(reader.stalenessInterval < 0, "infinite by default")
        reader.refresh(ada, mergeChanges: false)
        #expect(ada.value(forKey: "salary") as? Double == 1, "the cached row is reused")
        reader.stalenessInterval = 0
        reader.refresh(ada, mergeChanges: false)
        #expect(ada.value(forKey: "salary") as? Double == 2, "no staleness acceptable: the row is refetched")
    }

    /// Saves employees Ada and Bob, each earning `salary`, in `context`.
    func saveAdaAndBob(earning salary: Double, in context: NSManagedObjectContext) throws {
        try context.performAndWait {
            context.employee("Ada", salary: salary)
            context.employee("Bob", salary: salary)
            try context.save()
        }
    }

    /// Every employee of `context`'s store by name, fetched as faults are by default.
    func employeesByName(in context: NSManagedObjectContext) throws -> [NSManagedObject] {
        try context.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            return try context.fetch(request)
        }
    }

    /// Sets every employee's salary to `salary` in `context` and saves.
    func setEverySalary(to salary: Double, in context: NSManagedObjectContext) throws {
        try context.performAndWait {
            for employee in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee")) {
                employee.setValue(salary, forKey: "salary")
            }
            try context.save()
        }
    }

    /// NSManagedObjectContext `stalenessInterval`: how long may have passed since the store last
    /// fetched data "before fulfilling a fault issues a new fetch". A fetched fault holds its row
    /// and fires from it without loading its context; an interval set after the fetch
    /// must still apply to it.
    @Test("stalenessInterval set after a fetch: the fetched faults refetch rows older than it")
    func stalenessAfterFetching() throws {
        let (writer, reader, directory) = try twoCoordinators()
        defer { withExtendedLifetime(directory) {} }
        try saveAdaAndBob(earning: 1, in: writer)
        let faults = try employeesByName(in: reader)
        try #require(faults.count == 2 && faults.allSatisfy(\.isFault))
        try setEverySalary(to: 2, in: writer)
        reader.performAndWait {
            #expect(faults[0].value(forKey: "salary") as? Double == 1, "any age: the row read by the fetch")
            reader.stalenessInterval = 0
            #expect(faults[1].value(forKey: "salary") as? Double == 2, "no age: the row is fetched again")
        }
    }

    /// Core Data Programming Guide, "Faulting and Uniquing" and NSManagedObjectContext
    /// `stalenessInterval`: a fault fires from the data its coordinator has cached, and a save
    /// through the coordinator caches the rows it wrote. A fault fetched before another context of
    /// the same coordinator saved a change to its row, fired after, shows the saved values; an
    /// object realized before the save keeps its values until it is refreshed.
    @Test("a fault fetched before another context of its coordinator saved its row fires with the saved row")
    func faultFiresWithTheRowSavedSince() throws {
        let (mine, theirs, directory) = try pair()
        defer { withExtendedLifetime(directory) {} }
        try saveAdaAndBob(earning: 1, in: theirs)
        let fetched = try employeesByName(in: mine)
        try #require(fetched.count == 2 && fetched.allSatisfy(\.isFault))
        let bobBefore = mine.performAndWait { fetched[1].value(forKey: "salary") as? Double }
        #expect(bobBefore == 1)
        try setEverySalary(to: 2, in: theirs)
        mine.performAndWait {
            #expect(fetched[0].isFault, "not fired before the other save")
            #expect(fetched[0].value(forKey: "salary") as? Double == 2, "the fault fires with the row saved since")
            #expect(
                fetched[1].value(forKey: "salary") as? Double == 1, "a realized object keeps its values until refreshed"
            )
        }
    }

    @Test("mergeChanges(fromRemoteContextSave:into:) takes IDs or URIs saved by another coordinator")
    func remoteSave() throws {
        let (writer, reader, directory) = try twoCoordinators()
        // The store's file must outlive its readers: the directory is removed when released.
        defer { withExtendedLifetime(directory) {} }
        let (adaID, oldID) = try writer.performAndWait {
            let ada = writer.employee("Ada", salary: 1)
            let old = writer.employee("Old")
            try writer.save()
            return (ada.objectID, old.objectID)
        }
        let ada = try reader.existingObject(with: try uri(adaID, in: reader))
        let old = try reader.existingObject(with: try uri(oldID, in: reader))
        let graceURI = try writer.performAndWait {
            try writer.existingObject(with: adaID).setValue(3.0, forKey: "salary")
            writer.delete(try writer.existingObject(with: oldID))
            let grace = writer.employee("Grace")
            try writer.save()
            return grace.objectID.uriRepresentation()
        }
        let recorder = NotificationRecorder([.NSManagedObjectContextObjectsDidChange], object: reader)
        NSManagedObjectContext.mergeChanges(
            fromRemoteContextSave: [
                NSUpdatedObjectsKey: [adaID.uriRepresentation()], NSDeletedObjectsKey: [oldID.uriRepresentation()],
                NSInsertedObjectsKey: [graceURI],
            ], into: [reader])
        #expect(ada.value(forKey: "salary") as? Double == 3)
        #expect(old.managedObjectContext == nil)
        let grace = try #require(
            reader.persistentStoreCoordinator?.managedObjectID(forURIRepresentation: graceURI))
        // The inserted object is faulted in and reported; the notification holds it, so it stays
        // registered while an observer keeps it (the context itself holds unchanged objects weakly).
        let reported = recorder.objects(.NSManagedObjectContextObjectsDidChange, NSInsertedObjectsKey)
        #expect(reported?.map(\.objectID) == [grace])
        #expect(reader.registeredObject(for: grace) != nil)
    }

    /// Communicating Changes Between Contexts: after another context deletes and saves an object
    /// this context holds, (1) merging the save removes it here, (2) a fault of it fires as an
    /// empty deleted object (`shouldDeleteInaccessibleFaults`), (3) saving a change to it
    /// conflicts — and re-deleting it succeeds.
    @Test("the three outcomes after an object is deleted in another context")
    func deletedElsewhere() throws {
        let (mine, theirs, directory) = try pair()
        // The store's file must outlive its readers: the directory is removed when released.
        defer { withExtendedLifetime(directory) {} }
        let ids = try theirs.performAndWait {
            let objects = (0..<3).map { theirs.employee("E\($0)") }
            try theirs.save()
            return objects.map(\.objectID)
        }
        let realized = try mine.existingObject(with: ids[0])
        let fault = mine.object(with: ids[1])
        let changed = try mine.existingObject(with: ids[2])
        let saves = NotificationRecorder([.NSManagedObjectContextDidSave], object: theirs)
        try theirs.performAndWait {
            for id in ids { theirs.delete(try theirs.existingObject(with: id)) }
            try theirs.save()
        }
        // (3) first, before any merge: the change conflicts with the deleted row.
        changed.setValue(1.0, forKey: "salary")
        let error = #expect(throws: NSError.self) { try mine.save() }
        #expect(error?.code == NSManagedObjectMergeError)
        mine.rollback()
        mine.delete(changed)
        try mine.save()
        // (2) the fault fires as an empty deleted object.
        #expect(fault.value(forKey: "name") == nil)
        #expect(fault.isDeleted)
        // (1) merging removes the realized object.
        mine.mergeChanges(fromContextDidSave: try #require(saves.notes.last))
        #expect(realized.managedObjectContext == nil)
    }
}
