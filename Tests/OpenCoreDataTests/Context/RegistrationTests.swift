import Foundation
import Testing

@testable import OpenCoreData

/// Which objects a context keeps alive, and how long the coordinator keeps their rows.
///
/// Rules from the Core Data Programming Guide, "Managed Objects and References": references between
/// a context and its objects are weak by default ("just because you fetched an object doesn't
/// mean it will stay around"), except that changed objects are kept until saved or discarded;
/// `retainsRegisteredObjects` true makes the context keep every object; relationships are strong,
/// so related objects form cycles that `refresh(_:mergeChanges:)` with false breaks. Apple's objects
/// go when the autorelease pool drains, at the end of the event — the `perform`/`performAndWait`
/// block — and not before: code relies on a fetched object staying registered until then. Here
/// too. The coordinator's snapshots are counted by the objects that use them and dropped when none
/// does.
@Suite("Registration and snapshots")
struct RegistrationTests {
    static let people = 50

    /// A SQLite store with `people` saved employees, and a fresh context on it.
    static func savedStore() throws -> (NSManagedObjectContext, TemporaryDirectory) {
        let directory = TemporaryDirectory()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
        try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: directory.file("People.sqlite"), options: nil)
        let seed = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        seed.persistentStoreCoordinator = coordinator
        try seed.performAndWait {
            let dept = seed.department("R&D")
            for index in 0..<people { seed.employee("Person \(index)").setValue(dept, forKey: "department") }
            try seed.save()
        }
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return (context, directory)
    }

    /// A SQLite store of `count` saved employees named `E0`, `E1`… with salaries 0, 1…, and the
    /// context that saved them, reset (it holds no object).
    static func savedEmployees(
        _ count: Int
    ) throws -> (NSManagedObjectContext, NSPersistentStoreCoordinator, TemporaryDirectory) {
        let directory = TemporaryDirectory()
        let context = try sqliteStack(directory.file("Employees.sqlite"))
        for index in 0..<count { context.employee("E\(index)", salary: Double(index)) }
        try context.save()
        let coordinator = try #require(context.persistentStoreCoordinator)
        context.reset()
        return (context, coordinator, directory)
    }

    /// Fetches every employee with its values, and hands back only weak references to them.
    static func fetchAndDrop(_ context: NSManagedObjectContext) throws -> [WeakBox] {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.returnsObjectsAsFaults = false
        return try context.fetch(request).map(WeakBox.init)
    }

    /// A request for the first saved employee.
    static func firstPerson() -> NSFetchRequest<NSManagedObject> {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.predicate = NSPredicate(format: "name == 'Person 0'")
        return request
    }

    final class WeakBox {
        weak var object: NSManagedObject?
        init(_ object: NSManagedObject) { self.object = object }
    }

    @Test("retainsRegisteredObjects false (the default): fetched unchanged objects the app drops are released")
    func weakByDefault() throws {
        let (context, directory) = try Self.savedStore()
        // The store's file must outlive its readers: the directory is removed when released.
        defer { withExtendedLifetime(directory) {} }
        let probes = try context.performAndWait {
            #expect(context.retainsRegisteredObjects == false)
            let probes = try Self.fetchAndDrop(context)
            #expect(probes.count == Self.people)
            context.processPendingChanges()
            // Not yet the end of the event: the fetched objects stay registered until the block
            // returns, as Apple's autoreleased ones do.
            #expect(probes.allSatisfy { $0.object != nil })
            #expect(context.registeredObjects.count == Self.people)
            let first = try #require(probes.first?.object?.objectID)
            #expect(context.registeredObject(for: first) != nil)
            return probes
        }
        #expect(probes.allSatisfy { $0.object == nil }, "the objects' memory was released when the event ended")
        context.performAndWait { #expect(context.registeredObjects.isEmpty) }
    }

    @Test("an object looked up with object(with:) stays registered until the end of the event, then goes")
    func lookedUpObjectsLiveUntilTheEventEnds() throws {
        let (context, directory) = try Self.savedStore()
        defer { withExtendedLifetime(directory) {} }
        let id = try context.performAndWait { try #require(try context.fetch(Self.firstPerson()).first?.objectID) }
        let probe = context.performAndWait {
            let probe = WeakBox(context.object(with: id))
            #expect(context.registeredObject(for: id) != nil, "registered for the rest of the event")
            return probe
        }
        #expect(probe.object == nil)
        context.performAndWait { #expect(context.registeredObject(for: id) == nil) }
    }

    @Test("retainsRegisteredObjects true: the context keeps every registered object until it is reset")
    func retained() throws {
        let (context, directory) = try Self.savedStore()
        // The store's file must outlive its readers: the directory is removed when released.
        defer { withExtendedLifetime(directory) {} }
        let probes = try context.performAndWait {
            context.retainsRegisteredObjects = true
            return try Self.fetchAndDrop(context)
        }
        context.performAndWait {
            #expect(probes.allSatisfy { $0.object != nil }, "the context keeps them past the event")
            #expect(context.registeredObjects.count == Self.people)
            #expect(probes.first?.object?.value(forKey: "name") as? String != nil)
            // Turned off again, the context lets go of the unchanged objects.
            context.retainsRegisteredObjects = false
            #expect(probes.allSatisfy { $0.object == nil })
            #expect(context.registeredObjects.isEmpty)
        }
    }

    @Test("changed objects stay registered until the save, even when the app drops them")
    func changedObjectsAreKept() throws {
        let (context, directory) = try Self.savedStore()
        // The store's file must outlive its readers: the directory is removed when released.
        defer { withExtendedLifetime(directory) {} }
        let probes = try context.performAndWait { try Self.fetchAndDrop(context) }
        #expect(probes.allSatisfy { $0.object == nil })
        let probe = try context.performAndWait {
            let probe = try { () throws -> WeakBox in
                let ada = try #require(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee")).first)
                ada.setValue(10.0, forKey: "salary")
                return WeakBox(ada)
            }()
            #expect(probe.object != nil, "an updated object is held until it is saved")
            context.processPendingChanges()
            #expect(probe.object != nil, "still held at the end of the event")
            #expect(context.updatedObjects.count == 1)
            try context.save()
            context.processPendingChanges()
            #expect(probe.object != nil, "saved, it is unchanged and stays until the event ends")
            return probe
        }
        #expect(probe.object == nil, "saved and unreferenced, it is released when the event ends")
        context.performAndWait { #expect(context.registeredObjects.isEmpty) }
    }

    @Test("relationships are strong: refresh(_:mergeChanges: false) breaks the cycle so the objects are released")
    func refreshBreaksCycles() throws {
        let (context, directory) = try Self.savedStore()
        // The store's file must outlive its readers: the directory is removed when released.
        defer { withExtendedLifetime(directory) {} }
        func fireBothSides(cut: Bool) throws -> (WeakBox, WeakBox) {
            try context.performAndWait {
                let ada = try #require(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee")).first)
                let dept = try #require(ada.value(forKey: "department") as? NSManagedObject)
                let colleagues = try #require(dept.value(forKey: "employees") as? Set<NSManagedObject>)
                #expect(colleagues.contains(ada))
                if cut { context.refresh(dept, mergeChanges: false) }
                return (WeakBox(ada), WeakBox(dept))
            }
        }
        let (ada, dept) = try fireBothSides(cut: false)
        #expect(ada.object != nil && dept.object != nil, "employee and department hold each other past the event")
        try context.performAndWait {
            context.refresh(try #require(dept.object), mergeChanges: false)
            context.processPendingChanges()
        }
        #expect(ada.object == nil && dept.object == nil, "the refreshed fault let go of its employees")

        let (ada2, dept2) = try fireBothSides(cut: true)
        #expect(ada2.object == nil && dept2.object == nil)
        context.performAndWait { #expect(context.registeredObjects.isEmpty) }
    }

    @Test("snapshot reference counting: a row's snapshot lives while some context's object uses it")
    func snapshotReferenceCounting() throws {
        let (first, directory) = try Self.savedStore()
        let coordinator = try #require(first.persistentStoreCoordinator)
        let second = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        second.persistentStoreCoordinator = coordinator
        let request = Self.firstPerson()
        let inFirst = try first.performAndWait { try #require(try first.fetch(request).first) }
        let id = inFirst.objectID
        var inSecond: NSManagedObject? = try second.performAndWait { try second.fetch(request).first }
        #expect(coordinator.rowCache.uses(of: id) == 2, "one use per context")
        // A fault keeps its snapshot: it fires from the cache.
        first.performAndWait { first.refresh(inFirst, mergeChanges: false) }
        #expect(coordinator.rowCache.uses(of: id) == 2)
        first.performAndWait { first.reset() }
        #expect(coordinator.rowCache.uses(of: id) == 1)
        #expect(coordinator.rowCache[id] != nil, "the second context still uses the snapshot")
        inSecond = nil
        #expect(inSecond == nil)
        second.performAndWait { second.processPendingChanges() }  // the end of its event
        #expect(coordinator.rowCache.uses(of: id) == 0)
        #expect(coordinator.rowCache[id] == nil, "no context uses the row: its snapshot is dropped")
        _ = directory
    }

    /// Snapshot reference counting across a save elsewhere: the coordinator's snapshot of a row is
    /// replaced by the saved version, and the objects that held the old one count on the new one
    /// (Core Data Programming Guide, "Change Management": the snapshot is what the store last
    /// said). A fault of such an object fires with the saved values (NSManagedObjectContext
    /// reference, `refresh(_:mergeChanges:)`: with `false` the object's values are reloaded "from
    /// the persistent store or the last cached state"). Issue 21: a cached row is now its snapshot's
    /// own storage, so a newer version is another row, which takes over the holders.
    @Test("a row saved elsewhere: its holders count on the new version, and a refreshed object fires with it")
    func holdersMoveToTheSavedVersion() throws {
        let (first, directory) = try Self.savedStore()
        let coordinator = try #require(first.persistentStoreCoordinator)
        let (held, id) = try first.performAndWait {
            let object = try #require(try first.fetch(Self.firstPerson()).first)
            _ = object.value(forKey: "salary")
            return (object, object.objectID)
        }
        #expect(coordinator.rowCache.uses(of: id) == 1)
        let writer = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        writer.persistentStoreCoordinator = coordinator
        try writer.performAndWait {
            writer.object(with: id).setValue(123.0, forKey: "salary")
            try writer.save()
            writer.reset()
        }
        let salarySlot = try #require(held.layout.slotByName["salary"])
        #expect(coordinator.rowCache[id]?.values[salarySlot] as? Double == 123, "the cache holds the saved row")
        #expect(coordinator.rowCache.uses(of: id) == 1, "the first context's object now counts on the saved row")
        let salary = first.performAndWait {
            first.refresh(held, mergeChanges: false)
            return held.value(forKey: "salary") as? Double
        }
        #expect(salary == 123, "the fault fired with the saved version")
        let holdsCurrentRow = first.performAndWait { held.heldRow.map { !$0.isSuperseded } }
        #expect(holdsCurrentRow == true, "having fired, the object holds the saved row and lets the older one go")
        let third = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        third.persistentStoreCoordinator = coordinator
        let inThird = try third.performAndWait { try #require(try third.fetch(Self.firstPerson()).first) }
        #expect(coordinator.rowCache.uses(of: id) == 2, "one use per context, on one row")
        withExtendedLifetime(inThird) {}
        first.performAndWait { first.reset() }
        #expect(coordinator.rowCache.uses(of: id) == 1)
        third.performAndWait { third.reset() }
        #expect(coordinator.rowCache.uses(of: id) == 0)
        #expect(coordinator.rowCache[id] == nil, "no context uses the row: its snapshot is dropped")
        _ = directory
    }

    /// Snapshot reference counting across a change of coordinator (`persistentStoreCoordinator` is
    /// settable, NSManagedObjectContext reference): an object holds its row of the cache of the
    /// coordinator that read it, and gives it back there, whatever coordinator its context has
    /// since. (Issue 21: the cache an object holds its row of is named by its context's link.)
    @Test("a context given another coordinator: each object gives its row back to the cache that holds it")
    func rowsGoBackToTheirCacheAfterACoordinatorChange() throws {
        let (context, directory) = try Self.savedStore()
        let first = try #require(context.persistentStoreCoordinator)
        let second = NSPersistentStoreCoordinator(managedObjectModel: first.managedObjectModel)
        try second.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: directory.file("People.sqlite"), options: nil)
        let other = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        other.predicate = NSPredicate(format: "name == 'Person 1'")
        try context.performAndWait {
            let early = try #require(try context.fetch(Self.firstPerson()).first)
            #expect(first.rowCache.uses(of: early.objectID) == 1)
            context.persistentStoreCoordinator = second
            let late = try #require(try context.fetch(other).first)
            #expect(second.rowCache.uses(of: late.objectID) == 1, "read through the new coordinator")
            #expect(first.rowCache.uses(of: early.objectID) == 1, "the early object still holds its row")
            context.reset()
            #expect(first.rowCache.uses(of: early.objectID) == 0, "given back to the first cache")
            #expect(second.rowCache.uses(of: late.objectID) == 0, "given back to the second cache")
        }
    }

    /// Snapshot reference counting when a whole context lets go at once (its deinit releases
    /// every hold in one call): once no context uses a row, the cache answers as if it never held
    /// it — its count is 0 and a fault fired afterwards reads the store, so a change another
    /// process made in between is seen. (Issue 21: the guard for any change to how holds are kept.)
    @Test("rows let go of in bulk are dropped at once: a later fault reads the store, not a stale cache")
    func bulkReleaseDropsSnapshots() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Bulk.sqlite")
        let writer = try sqliteStack(url)
        for index in 0..<3000 { writer.employee("E\(index)", salary: Double(index)) }
        try writer.save()
        let coordinator = try #require(writer.persistentStoreCoordinator)
        writer.reset()
        var ids: [NSManagedObjectID] = []
        do {
            let reader = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            reader.persistentStoreCoordinator = coordinator
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.returnsObjectsAsFaults = false
            let all = try reader.fetch(request)
            ids = all.map(\.objectID)
            #expect(coordinator.rowCache.count == 3000)
            #expect(ids.allSatisfy { coordinator.rowCache.uses(of: $0) == 1 })
        }
        #expect(coordinator.rowCache.count == 0, "the reader is gone: no row is in use")
        #expect(ids.allSatisfy { coordinator.rowCache.uses(of: $0) == 0 && coordinator.rowCache[$0] == nil })
        _ = try sqlite3(url, "UPDATE ZEMPLOYEE SET ZSALARY = -1, Z_OPT = Z_OPT + 1", readOnly: false)
        let later = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        later.persistentStoreCoordinator = coordinator
        let fault = later.object(with: ids[1234])
        #expect(fault.value(forKey: "salary") as? Double == -1, "the fault read the store")
        #expect(coordinator.rowCache.uses(of: ids[1234]) == 1)
    }

    /// A context going away lets go of its objects a chunk at a time, and that must not
    /// change what the app sees: objects the app still holds stay alive with the values they were
    /// fetched with, though their context is gone (Core Data Programming Guide, "Managed Objects
    /// and References": the context does not own the objects the app references); every other
    /// object is freed; no row is held any more, so the cache drops them all (snapshot reference
    /// counting) and gives back the memory of its table.
    @Test(
        "a context going away: the app's objects keep their values, the rest are freed, the cache empties and shrinks")
    func contextTeardownLetsGoInChunks() throws {
        let (_, coordinator, directory) = try Self.savedEmployees(5_000)
        defer { withExtendedLifetime(directory) {} }
        var kept: [NSManagedObject] = []
        var dropped: [WeakBox] = []
        var grownBuckets = 0
        do {
            let reader = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            reader.persistentStoreCoordinator = coordinator
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.returnsObjectsAsFaults = false
            for object in try reader.fetch(request) {
                let salary = try #require(object.value(forKey: "salary") as? Double)
                if Int(salary).isMultiple(of: 7) { kept.append(object) } else { dropped.append(WeakBox(object)) }
            }
            grownBuckets = coordinator.rowCache.bucketCount
        }
        #expect(kept.count == 715 && dropped.count == 4_285)
        #expect(dropped.allSatisfy { $0.object == nil }, "objects only the context held are freed with it")
        #expect(kept.allSatisfy { $0.managedObjectContext == nil })
        #expect(kept.allSatisfy { Int($0.value(forKey: "salary") as? Double ?? -1).isMultiple(of: 7) })
        #expect(kept.allSatisfy { ($0.value(forKey: "name") as? String)?.hasPrefix("E") == true })
        #expect(coordinator.rowCache.count == 0, "no row is held once the context is gone")
        #expect(
            grownBuckets >= 8_192 && coordinator.rowCache.bucketCount < grownBuckets / 8,
            "the table gave its memory back")
    }

    /// `reset()` lets go of its objects a chunk at a time too; what Apple documents for
    /// it must hold across chunks: every registered object is forgotten — the app's references
    /// are faults with no context, their unsaved changes gone — the `ObjectsDidChange`
    /// notification names every one of them under `NSInvalidatedAllObjectsKey` (NSManagedObjectContext
    /// `reset()`; NSManagedObjectContext, "NSInvalidatedAllObjectsKey"), and no row stays held.
    @Test("reset() across several chunks: every object forgotten and named in invalidatedAll, no row held")
    func resetAcrossChunks() throws {
        let (context, coordinator, directory) = try Self.savedEmployees(2_500)
        defer { withExtendedLifetime(directory) {} }
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.returnsObjectsAsFaults = false
        let fetched = try context.fetch(request)
        let changed = fetched[1_234]
        let saved = try #require(changed.value(forKey: "salary") as? Double)
        changed.setValue(-1.0, forKey: "salary")
        let inserted = context.employee("New")
        let registered = Set(context.registeredObjects.map(\.objectID))
        #expect(registered.count == 2_501)
        let recorder = NotificationRecorder([.NSManagedObjectContextObjectsDidChange], object: context)
        context.reset()
        let named = try #require(recorder.notes.last?.userInfo?[NSInvalidatedAllObjectsKey] as? [NSManagedObjectID])
        #expect(named.count == 2_501 && Set(named) == registered)
        #expect(context.registeredObjects.isEmpty && !context.hasChanges)
        #expect(fetched.allSatisfy { $0.managedObjectContext == nil && $0.isFault })
        #expect(inserted.managedObjectContext == nil)
        #expect(coordinator.rowCache.count == 0, "no object holds a row")
        let again = context.object(with: changed.objectID)
        #expect(again !== changed && again.value(forKey: "salary") as? Double == saved, "the change was discarded")
    }

    /// A fetch answers one object per row, in the store's order, however many chunks it caches
    /// and registers its rows in (a chunk's rows are cached just before its objects are
    /// made). An object the context already has is the one answered (Core Data Programming Guide,
    /// "Faulting and Uniquing": one object per record in a context) and keeps its unsaved change
    /// (NSFetchRequest, `shouldRefreshRefetchedObjects`, false by default: fetched objects
    /// "maintain their current property values"); the rest come back with the store's values,
    /// not as faults (`returnsObjectsAsFaults` false); and every row is cached once and held
    /// once, by its object.
    @Test("a fetch of several registration chunks: one object per row in order, registered objects kept with changes")
    func aFetchOfSeveralChunks() throws {
        let count = NSManagedObjectContext.registrationChunk * 2 + 10
        let directory = TemporaryDirectory()
        let context = try sqliteStack(directory.file("Chunks.sqlite"))
        for index in 0..<count { context.employee(String(format: "e%05d", index), salary: Double(index)) }
        try context.save()
        let coordinator = try #require(context.persistentStoreCoordinator)
        context.reset()
        let names = [3, NSManagedObjectContext.registrationChunk + 5].map { String(format: "e%05d", $0) }
        let ahead = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        ahead.predicate = NSPredicate(format: "name IN %@", names)
        ahead.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        let registered = try context.fetch(ahead)
        try #require(registered.count == 2)
        registered[0].setValue(-1.0, forKey: "salary")

        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        request.returnsObjectsAsFaults = false
        let all = try context.fetch(request)
        #expect(all.count == count)
        #expect(all.map { $0.value(forKey: "name") as? String } == (0..<count).map { String(format: "e%05d", $0) })
        #expect(all[3] === registered[0] && all[NSManagedObjectContext.registrationChunk + 5] === registered[1])
        #expect(all[3].value(forKey: "salary") as? Double == -1 && all[3].hasChanges)
        #expect(all.allSatisfy { !$0.isFault })
        #expect(all[count - 1].value(forKey: "salary") as? Double == Double(count - 1))
        #expect(coordinator.rowCache.count == count)
        #expect(all.allSatisfy { coordinator.rowCache.uses(of: $0.objectID) == 1 })
    }

    @Test("a child's change is based on the version it read, though no one else holds the parent's object")
    func childKeepsParentVersion() throws {
        let (parent, directory) = try Self.savedStore()
        let coordinator = try #require(parent.persistentStoreCoordinator)
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = parent
        let request = Self.firstPerson()
        let ada = try child.performAndWait { try #require(try child.fetch(request).first) }
        let name = child.performAndWait { ada.value(forKey: "name") as? String }
        #expect(name == "Person 0")
        #expect(parent.performAndWait { parent.registeredObjects.count } == 1, "the child's object holds the parent's")

        // Another context of the coordinator changes the row in between.
        let other = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        other.persistentStoreCoordinator = coordinator
        try other.performAndWait {
            try other.fetch(request).first?.setValue(5.0, forKey: "salary")
            try other.save()
        }
        try child.performAndWait {
            ada.setValue(7.0, forKey: "salary")
            try child.save()
        }
        let error = parent.performAndWait { () -> NSError? in
            do {
                try parent.save()
                return nil
            } catch {
                return error as NSError
            }
        }
        #expect(error?.code == NSManagedObjectMergeError, "optimistic locking sees the other save")
        _ = directory
    }

    /// A fault fires with its own row's values, whatever order the app fires faults in (Core
    /// Data Programming Guide, "Faulting and Uniquing": firing a fault loads the object's data from
    /// the row cache or the store). Each row read by a fetch names a row read a few rows after it,
    /// for the cache to ask the processor for as the fault fires; the hint must never
    /// stand for the row itself, nor be read through once that other row is gone. Here the rows a
    /// context holds were last read by another context's fetch of every row, which has gone away
    /// with the rows only it held: the first context's faults then fire in order, backwards and
    /// scattered, each with its own values.
    @Test("faults fire with their own rows in any order, after rows read with theirs are gone")
    func faultsFireWithTheirOwnRowsInAnyOrder() throws {
        let (_, coordinator, directory) = try Self.savedEmployees(3_000)
        defer { withExtendedLifetime(directory) {} }
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let every = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        every.sortDescriptors = [NSSortDescriptor(key: "salary", ascending: false)]
        let third = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        third.predicate = NSPredicate(format: "salary IN %@", (0..<1_000).map { Double($0 * 3) })
        third.sortDescriptors = [NSSortDescriptor(key: "salary", ascending: true)]
        let held = try context.fetch(third)
        try #require(held.count == 1_000 && held.allSatisfy(\.isFault))
        do {
            let other = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            other.persistentStoreCoordinator = coordinator
            #expect(try other.fetch(every).count == 3_000)
            #expect(coordinator.rowCache.count == 3_000)
        }
        #expect(coordinator.rowCache.count == 1_000, "the rows only the other context held are gone")
        let scattered = (0..<1_000).map { $0 * 7 % 1_000 }
        for index in Array(0..<500) + (500..<1_000).reversed() + scattered {
            let object = held[index]
            #expect(object.value(forKey: "salary") as? Double == Double(index * 3))
            #expect(object.value(forKey: "name") as? String == "E\(index * 3)")
        }
        #expect(held.allSatisfy { !$0.isFault })
    }
}
