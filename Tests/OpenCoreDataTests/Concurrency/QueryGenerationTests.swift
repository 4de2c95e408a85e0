import CoreData
import Testing

/// Query generations over a SQLite store in WAL mode. Rules: "Accessing data when the store
/// changes" (Core Data documentation: a pinned context sees the same generation until it is told
/// to advance; saving, resetting and merging advance it); NSManagedObjectContext reference,
/// `queryGenerationToken` and `setQueryGenerationFrom(_:)`; NSQueryGenerationToken reference.
/// A context given ``NSQueryGenerationToken/current`` pins the generation lazily, at its next
/// read, as Apple's does: the helpers read right after pinning.
@Suite("Query generations")
struct QueryGenerationTests {
    static let setups: [TwoWriters.Setup] = [.sqlite, .sqliteTwoCoordinators]

    /// Pins `context` to the current generation: the token, then a read, which takes it.
    func pinNow(_ context: NSManagedObjectContext) throws {
        try context.setQueryGenerationFrom(.current)
        _ = try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Employee"))
    }

    /// Ada (salary 100) saved; the first context pinned to the current generation; then the
    /// second context raises Ada to 200 and inserts Bob. Returns Ada's ID.
    func pinnedThenChanged(_ writers: TwoWriters) throws -> NSManagedObjectID {
        let id = try writers.seed(name: "Ada", salary: 100)
        try pinNow(writers.first)
        let theirs = try writers.object(id, in: writers.second)
        theirs.setValue(200.0, forKey: "salary")
        writers.second.employee("Bob")
        try writers.second.save()
        return id
    }

    func employees(_ context: NSManagedObjectContext) throws -> [String: Double] {
        var result: [String: Double] = [:]
        for employee in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee")) {
            result[employee.value(forKey: "name") as? String ?? ""] = employee.value(forKey: "salary") as? Double
        }
        return result
    }

    @Test("a context reads the latest state by default: its token is nil")
    func unpinnedByDefault() throws {
        let writers = try TwoWriters(.sqlite)
        #expect(writers.first.queryGenerationToken == nil)
        try writers.first.setQueryGenerationFrom(.current)
        #expect(writers.first.queryGenerationToken != nil)
        try writers.first.setQueryGenerationFrom(nil)
        #expect(writers.first.queryGenerationToken == nil)
    }

    @Test("a pinned context's fetches, counts and faults do not see later saves", arguments: setups)
    func pinnedReadsStayPut(_ setup: TwoWriters.Setup) throws {
        let writers = try TwoWriters(setup)
        let id = try pinnedThenChanged(writers)
        #expect(try employees(writers.first) == ["Ada": 100], "fetch at the pinned generation")
        #expect(try writers.first.count(for: NSFetchRequest<NSManagedObject>(entityName: "Employee")) == 1)
        writers.first.reset()
        // reset moved the context on: pin again before the other writer's next change.
        try pinNow(writers.first)
        let ada = try writers.object(id, in: writers.second)
        ada.setValue(300.0, forKey: "salary")
        try writers.second.save()
        let fault = try writers.object(id, in: writers.first)
        #expect(fault.value(forKey: "salary") as? Double == 200, "a fault fires at the pinned generation")
        #expect(try employees(writers.makeReader()) == ["Ada": 300, "Bob": 0], "an unpinned context sees the latest")
    }

    /// A fetched fault holds its row, and fires from it while its context reads the latest state
    /// (without loading the context). Pinning the context after the fetch must change
    /// that: the fault fires at the pinned generation, not with the row that another context's
    /// save has since replaced in the shared cache ("Accessing data when the store changes").
    @Test("a context pinned after fetching: its fetched faults fire at the pinned generation")
    func pinnedAfterFetching() throws {
        let writers = try TwoWriters(.sqlite)
        let id = try writers.seed(name: "Ada", salary: 100)
        let fault = try #require(
            try writers.first.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee")).first)
        try #require(fault.isFault && fault.objectID == id)
        try pinNow(writers.first)
        let theirs = try writers.object(id, in: writers.second)
        theirs.setValue(200.0, forKey: "salary")
        try writers.second.save()
        #expect(fault.value(forKey: "salary") as? Double == 100, "the fault fired at the pinned generation")
        try writers.first.setQueryGenerationFrom(nil)
        writers.first.refresh(fault, mergeChanges: false)
        #expect(fault.value(forKey: "salary") as? Double == 200, "unpinned, it reads the latest state")
    }

    @Test("saving moves a pinned context to the latest generation")
    func saveAdvances() throws {
        let writers = try TwoWriters(.sqlite)
        _ = try pinnedThenChanged(writers)
        let before = writers.first.queryGenerationToken
        writers.first.employee("Cy")
        try writers.first.save()
        #expect(writers.first.queryGenerationToken != nil, "still pinned")
        #expect(writers.first.queryGenerationToken != before, "to a new generation")
        #expect(try employees(writers.first) == ["Ada": 200, "Bob": 0, "Cy": 0])
    }

    @Test("reset moves a pinned context to the latest generation")
    func resetAdvances() throws {
        let writers = try TwoWriters(.sqlite)
        _ = try pinnedThenChanged(writers)
        writers.first.reset()
        #expect(writers.first.queryGenerationToken != nil)
        #expect(try employees(writers.first) == ["Ada": 200, "Bob": 0])
    }

    @Test("merging another context's save moves a pinned context on and refreshes its objects")
    func mergeAdvances() throws {
        let writers = try TwoWriters(.sqlite)
        let id = try writers.seed(name: "Ada", salary: 100)
        try writers.first.setQueryGenerationFrom(.current)
        let mine = try writers.first.existingObject(with: id)
        let recorder = NotificationRecorder([.NSManagedObjectContextDidSave], object: writers.second)
        let theirs = try writers.second.existingObject(with: id)
        theirs.setValue(200.0, forKey: "salary")
        try writers.second.save()
        let saved = try #require(recorder.notes.first)
        writers.first.mergeChanges(fromContextDidSave: saved)
        #expect(mine.value(forKey: "salary") as? Double == 200)
    }

    @Test("another context pinned with a context's token shares its generation")
    func sharedToken() throws {
        let writers = try TwoWriters(.sqlite)
        _ = try pinnedThenChanged(writers)
        let token = try #require(writers.first.queryGenerationToken)
        // The second context shares the first one's coordinator (and saved the change).
        writers.second.reset()
        try writers.second.setQueryGenerationFrom(token)
        #expect(writers.second.queryGenerationToken == token)
        #expect(try employees(writers.second) == ["Ada": 100])
    }

    @Test("a token of another coordinator is refused with 134070")
    func foreignToken() throws {
        let writers = try TwoWriters(.sqliteTwoCoordinators)
        try writers.first.setQueryGenerationFrom(.current)
        let token = try #require(writers.first.queryGenerationToken)
        let error = #expect(throws: NSError.self) { try writers.second.setQueryGenerationFrom(token) }
        #expect(error?.code == NSPersistentStoreOperationError)
    }

    @Test("a pinned context's change to a row saved after its generation is an optimistic-locking conflict")
    func pinnedSaveConflicts() throws {
        let writers = try TwoWriters(.sqlite)
        let id = try pinnedThenChanged(writers)
        let stale = try writers.first.existingObject(with: id)
        #expect(stale.value(forKey: "salary") as? Double == 100)
        stale.setValue(150.0, forKey: "salary")
        let error = #expect(throws: NSError.self) { try writers.first.save() }
        #expect(error?.code == NSManagedObjectMergeError)
    }

    /// Apple's `current` token pins lazily: a context given it reads the generation that is
    /// current at its next read, not at the call. A save made in between is seen; one made after
    /// that read is not.
    @Test("setQueryGenerationFrom(.current) pins at the next read, not at the call")
    func currentPinsAtTheNextRead() throws {
        let writers = try TwoWriters(.sqlite)
        let id = try writers.seed(name: "Ada", salary: 100)
        try writers.first.setQueryGenerationFrom(.current)
        let theirs = try writers.object(id, in: writers.second)
        theirs.setValue(200.0, forKey: "salary")
        try writers.second.save()
        #expect(try employees(writers.first) == ["Ada": 200], "the first read takes the generation, after the save")
        theirs.setValue(300.0, forKey: "salary")
        try writers.second.save()
        #expect(try employees(writers.first) == ["Ada": 200], "and keeps it")
        #expect(writers.first.queryGenerationToken != nil)
    }

    /// `destroyPersistentStore(at:type:options:)` after `remove(_:)` while a context is still
    /// pinned: the removed store holds no read open on its file, so the destroy runs at once.
    /// Regression: the pinned read kept the file locked, and the destroy waited out its timeout.
    @Test("a store removed while a context is pinned to it is destroyed at once")
    func removedWhilePinned() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Pinned.sqlite")
        let context = try sqliteStack(url)
        context.employee("Ada")
        try context.save()
        try pinNow(context)
        let coordinator = try #require(context.persistentStoreCoordinator)
        try coordinator.remove(try #require(coordinator.persistentStores.first))
        let started = Date()
        try coordinator.destroyPersistentStore(at: url, type: .sqlite)
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(try sqlite3(url, "SELECT count(*) FROM sqlite_master") == ["0"])
        withExtendedLifetime(context) {}
    }
}
