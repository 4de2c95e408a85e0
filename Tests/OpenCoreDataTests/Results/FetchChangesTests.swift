import CoreData
import Foundation
import Testing

/// `NSManagedObjectContext.changes(for:sectionNameKeyPath:)` ("observe a fetch as an
/// async sequence", an addition to Apple's API): the current results first, then one value per
/// save that changes them — from this context or another of the coordinator — with the
/// difference; cancelling the task ends the sequence.
@Suite("Observing a fetch as an async sequence", .timeLimit(.minutes(1)))
struct FetchChangesTests {
    func stack() throws -> (NSManagedObjectContext, NSManagedObjectContext) {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: FetchedResultsControllerTests.model)
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
        func context() -> NSManagedObjectContext {
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            return context
        }
        return (context(), context())
    }

    static func request() -> NSFetchRequest<NSManagedObject> {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
        request.predicate = NSPredicate(format: "score < 90")
        request.sortDescriptors = [
            NSSortDescriptor(key: "group", ascending: true), NSSortDescriptor(key: "score", ascending: true),
        ]
        return request
    }

    /// Inserts an item in `context` and saves, on its queue; answers its permanent ID.
    @discardableResult
    func insert(_ name: String, group: String, score: Int, in context: NSManagedObjectContext) throws
        -> NSManagedObjectID
    {
        try context.performAndWait {
            let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
            item.setValue(name, forKey: "name")
            item.setValue(group, forKey: "group")
            item.setValue(Int64(score), forKey: "score")
            try context.save()
            return item.objectID
        }
    }

    @Test("The first value is the current results; saves of this and other contexts follow, with the difference")
    func followsSaves() async throws {
        let (mine, theirs) = try stack()
        let first = try insert("a", group: "alpha", score: 10, in: mine)
        var iterator = mine.changes(for: Self.request(), sectionNameKeyPath: "group").makeAsyncIterator()
        let initial = try #require(try await iterator.next())
        #expect(initial.objectIDs == [first])
        #expect(initial.sections.map(\.name) == ["alpha"])
        #expect(initial.difference == nil)
        // Another context's save.
        let second = try insert("b", group: "beta", score: 20, in: theirs)
        let afterTheirs = try #require(try await iterator.next())
        #expect(afterTheirs.objectIDs == [first, second])
        #expect(afterTheirs.sections.map(\.name) == ["alpha", "beta"])
        #expect(afterTheirs.difference?.insertions.count == 1)
        // This context's own save: a change that moves the object out of the results.
        try mine.performAndWait {
            try mine.existingObject(with: first).setValue(Int64(95), forKey: "score")
            try mine.save()
        }
        let afterMine = try #require(try await iterator.next())
        #expect(afterMine.objectIDs == [second])
        #expect(afterMine.difference?.removals.count == 1)
        #expect([first, second].applying(try #require(afterMine.difference)) == afterMine.objectIDs)
    }

    @Test(
        "Saves of another coordinator and batch requests reach the sequence through remote-change notifications, with or without history",
        arguments: [true, false])
    func followsOtherCoordinators(history: Bool) async throws {
        let directory = TemporaryDirectory()
        let url = directory.file("observed.sqlite")
        func coordinator(remote: Bool) throws -> NSPersistentStoreCoordinator {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: FetchedResultsControllerTests.model)
            var options: [AnyHashable: Any] = [:]
            if history { options[NSPersistentHistoryTrackingKey] = true }
            if remote { options[NSPersistentStoreRemoteChangeNotificationPostOptionKey] = true }
            try coordinator.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: options)
            return coordinator
        }
        let watched = try coordinator(remote: true)
        let mine = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        mine.persistentStoreCoordinator = watched
        let theirs = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        theirs.persistentStoreCoordinator = try coordinator(remote: false)
        var iterator = mine.changes(for: Self.request()).makeAsyncIterator()
        let initial = try #require(try await iterator.next())
        #expect(initial.objectIDs.isEmpty)
        try insert("a", group: "alpha", score: 10, in: theirs)
        let afterTheirs = try #require(try await iterator.next())
        #expect(afterTheirs.objectIDs.count == 1)
        #expect(afterTheirs.difference?.insertions.count == 1)
        try mine.performAndWait {
            let insert = NSBatchInsertRequest(
                entityName: "Item", objects: [["name": "b", "group": "beta", "score": 20]])
            _ = try mine.execute(insert)
        }
        let afterBatch = try #require(try await iterator.next())
        #expect(afterBatch.objectIDs.count == 2)
        #expect(afterBatch.sections.count == 1)
    }

    @Test("Cancelling the iterating task ends the sequence, and later saves are not observed")
    func cancellation() async throws {
        let (mine, theirs) = try stack()
        try insert("a", group: "alpha", score: 10, in: mine)
        let stream = mine.changes(for: Self.request())
        let started = AsyncStream<Void>.makeStream()
        let task = Task {
            var values = 0
            for try await _ in stream {
                values += 1
                started.continuation.yield()
            }
            return values
        }
        var signals = started.stream.makeAsyncIterator()
        _ = await signals.next()
        task.cancel()
        let values = try await task.value
        #expect(values >= 1)
        try insert("b", group: "beta", score: 20, in: theirs)
    }

    @Test("A request without sort descriptors ends the sequence with an error")
    func invalidRequest() async throws {
        let (mine, _) = try stack()
        let stream = mine.changes(for: NSFetchRequest<NSManagedObject>(entityName: "Item"))
        await #expect(throws: (any Error).self) {
            for try await _ in stream {}
        }
    }
}
