import CoreData
import Foundation
import Testing

/// `NSAsynchronousFetchRequest`. Rules from its reference and NSManagedObjectContext's
/// `execute(_:)`: executing returns the result object at once; the fetch runs on the context's
/// queue and the completion block is called there with `finalResult`; `cancel()` on the result
/// stops a fetch that has not run (`operationError` is `NSUserCancelledError`).
@Suite("Asynchronous fetch requests")
struct AsynchronousFetchTests {
    let directory = TemporaryDirectory()

    @Test("execute returns at once; the completion runs on the context's queue with the objects")
    func fetchesOnTheContextsQueue() throws {
        let context = try sqliteStack(directory.file("Company.sqlite"))
        for name in ["Ada", "Bob", "Cy"] { context.employee(name) }
        try context.save()
        let queueContext = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        queueContext.persistentStoreCoordinator = context.persistentStoreCoordinator
        let names = Collector<String>()
        let onQueue = Collector<Bool>()
        let done = DispatchSemaphore(value: 0)
        let fetch = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        fetch.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        let request = NSAsynchronousFetchRequest(fetchRequest: fetch) { result in
            for object in result.finalResult ?? [] { names.append(object.value(forKey: "name") as? String ?? "?") }
            onQueue.append(result.finalResult?.first?.managedObjectContext === queueContext)
            done.signal()
        }
        let result = try #require(try queueContext.execute(request) as? NSAsynchronousFetchResult<NSManagedObject>)
        #expect(result.fetchRequest === request)
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(names.values == ["Ada", "Bob", "Cy"])
        #expect(onQueue.values == [true])
        #expect(result.operationError == nil)
        // NSAsynchronousFetchResult.progress counts the objects fetched: 3 of 3, not 1 of 1.
        #expect(result.progress?.completedUnitCount == 3)
        #expect(result.progress?.totalUnitCount == 3)
    }

    @Test("a result cancelled before the fetch runs ends with NSUserCancelledError and no objects")
    func cancelBeforeTheFetchRuns() throws {
        let context = try sqliteStack(directory.file("Company.sqlite"))
        let queueContext = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        queueContext.persistentStoreCoordinator = context.persistentStoreCoordinator
        let gate = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        queueContext.perform { gate.wait() }
        let request = NSAsynchronousFetchRequest(fetchRequest: NSFetchRequest<NSManagedObject>(entityName: "Employee"))
        {
            _ in done.signal()
        }
        let result = try #require(try queueContext.execute(request) as? NSAsynchronousFetchResult<NSManagedObject>)
        result.cancel()
        gate.signal()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(result.finalResult == nil)
        #expect((result.operationError as? NSError)?.code == CocoaError.userCancelled.rawValue)
    }

    @Test("requests the context cannot run are NSPersistentStoreUnsupportedRequestTypeError")
    func unsupportedRequests() throws {
        let context = try sqliteStack(directory.file("Company.sqlite"))
        let request = NSAsynchronousFetchRequest(
            fetchRequest: NSFetchRequest<NSManagedObject>(entityName: "Employee"), completionBlock: nil)
        #expect(throws: NSError.self) { try context.execute(request) }
        let error = #expect(throws: NSError.self) { try context.execute(NSPersistentStoreRequest()) }
        #expect(error?.code == NSPersistentStoreUnsupportedRequestTypeError)
    }
}
