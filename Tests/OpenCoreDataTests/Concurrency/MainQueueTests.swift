import CoreData
import Foundation
import Testing

/// Main-queue contexts. NSManagedObjectContext reference, "Concurrency": a context with
/// `mainQueueConcurrencyType` is used on the main thread, and `performAndWait(_:)` may be called
/// from any thread; `automaticallyMergesChangesFromParent` merges a parent's saves into a child.
/// No documented use may deadlock.
@Suite("Main-queue contexts")
struct MainQueueTests {
    let directory = TemporaryDirectory()

    /// Regression: the child's merge read its main-queue parent with `performAndWait`
    /// from the child's queue while the main thread waited on the child: a deadlock.
    @Test("a child merging from its main-queue parent while the main queue waits on it does not deadlock")
    func childMergeWhileMainQueueWaits() throws {
        let outcome = Collector<String>()
        let done = DispatchSemaphore(value: 0)
        let url = directory.file("Company.sqlite")
        DispatchQueue.main.async {
            do {
                try Self.mergeWhileWaiting(url, outcome)
            } catch {
                outcome.append("error \(error)")
            }
            done.signal()
        }
        // A regression deadlocks the main queue, and the test runner waits for it forever: end
        // the run with a message instead.
        guard done.wait(timeout: .now() + 60) == .success else {
            fatalError("MainQueueTests: deadlock between a child context and its main-queue parent")
        }
        #expect(outcome.values == (1...20).map { "salary \(100 + $0)" } + ["name Ada (draft)"])
    }

    /// On the main queue: 20 rounds of the parent saving a change and the main queue reading the
    /// child with `performAndWait` while the child merges it.
    private static func mergeWhileWaiting(_ url: URL, _ outcome: Collector<String>) throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        let parent = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        parent.persistentStoreCoordinator = coordinator
        let ada = parent.employee("Ada", salary: 100)
        try parent.save()
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = parent
        child.automaticallyMergesChangesFromParent = true
        let id = ada.objectID
        child.performAndWait {
            // A local change makes the merge re-read the object from the parent.
            child.object(with: id).setValue("Ada (draft)", forKey: "name")
        }
        for round in 1...20 {
            ada.setValue(Double(100 + round), forKey: "salary")
            try parent.save()
            let salary = child.performAndWait { child.object(with: id).value(forKey: "salary") as? Double }
            outcome.append("salary \(salary.map { String(Int($0)) } ?? "nil")")
        }
        // The child's own change survives the merges.
        let name = child.performAndWait { child.object(with: id).value(forKey: "name") as? String }
        outcome.append("name \(name ?? "nil")")
    }

    /// Core Data Programming Guide, "Change Management": a main-queue context processes its pending
    /// changes at the end of each run-loop event, so observers hear of an insert without an explicit
    /// `processPendingChanges()`.
    @Test("a main-queue context posts ObjectsDidChange at the end of the main queue's event")
    func endOfEventOnTheMainQueue() throws {
        let context = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        context.persistentStoreCoordinator = try CompanyModel.stack().persistentStoreCoordinator
        let heard = Collector<String>()
        let done = DispatchSemaphore(value: 0)
        let token = NotificationCenter.default.addObserver(
            forName: .NSManagedObjectContextObjectsDidChange, object: context, queue: nil
        ) { note in
            let inserted = note.userInfo?[NSInsertedObjectsKey] as? Set<NSManagedObject> ?? []
            for object in inserted { heard.append(object.value(forKey: "name") as? String ?? "?") }
            done.signal()
        }
        defer { NotificationCenter.default.removeObserver(token) }
        DispatchQueue.main.async {
            context.employee("Ada")
            heard.append("event ends")
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(heard.values == ["event ends", "Ada"])
    }

    /// NSManagedObjectContext reference, `performAndWait(_:)`: "synchronously performs a given
    /// block on the context's queue"; Apple runs the block on the calling thread, so a main-queue
    /// caller's block — and the notifications a save inside it posts — run there, as code that
    /// updates its interface from a did-save observer relies on. The block is still on the
    /// context's queue: a block queued before it runs first, and a nested `performAndWait` runs at
    /// once. (Under `swift test` the main queue may be drained by a thread other than the process's
    /// first, so the test compares threads, not `Thread.isMainThread`.)
    @Test("performAndWait called from the main queue runs a private-queue context's block on the caller's thread")
    func performAndWaitFromTheMainQueueRunsThere() throws {
        let context = try CompanyModel.stack()
        let seen = Collector<String>()
        let caller = Collector<Thread>()
        let token = NotificationCenter.default.addObserver(
            forName: .NSManagedObjectContextDidSave, object: context, queue: nil
        ) { _ in seen.append("did save on the caller's thread: \(Thread.current === caller.values.first)") }
        defer { NotificationCenter.default.removeObserver(token) }
        // A block queued ahead of the caller's: the caller waits for it, then runs its own.
        let ahead = DispatchSemaphore(value: 0)
        context.perform {
            ahead.wait()
            seen.append("queued block")
        }
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.main.async {
            caller.append(Thread.current)
            ahead.signal()
            context.performAndWait {
                seen.append("block on the caller's thread: \(Thread.current === caller.values.first)")
                context.employee("Ada")
                try? context.save()
                context.performAndWait { seen.append("nested block runs at once") }
            }
            // The queue is the context's again: a later block runs on it. The caller's thread stays
            // busy until then, so the block cannot be handed the same pooled thread by chance —
            // only a `perform` that ran it inline would put it there.
            let later = DispatchSemaphore(value: 0)
            context.perform {
                seen.append("later block on the caller's thread: \(Thread.current === caller.values.first)")
                later.signal()
            }
            _ = later.wait(timeout: .now() + 60)
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 60) == .success)
        context.performAndWait {}
        #expect(
            seen.values == [
                "queued block", "block on the caller's thread: true", "did save on the caller's thread: true",
                "nested block runs at once", "later block on the caller's thread: false",
            ])
    }
}
