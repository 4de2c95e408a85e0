import CoreData
import Testing

/// Collects values from blocks that run on other queues.
final class Collector<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Value] = []

    func append(_ value: Value) {
        lock.lock()
        defer { lock.unlock() }
        storage.append(value)
    }

    var values: [Value] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }
}

/// A context's queue. Rules: NSManagedObjectContext reference, "Concurrency" (`perform(_:)`,
/// `performAndWait(_:)`, `perform(schedule:_:)`, `ScheduledTaskType`); Core Data Programming Guide,
/// "Using Core Data in the Background" (the concurrency debug switch).
@Suite("Context queues")
struct QueueTests {
    @Test("perform runs blocks asynchronously, in the order they were enqueued, on the context's queue")
    func performOrder() throws {
        let context = try CompanyModel.stack()
        let order = Collector<Int>()
        let done = DispatchSemaphore(value: 0)
        for index in 0..<20 {
            context.perform {
                order.append(index)
                if index == 19 { done.signal() }
            }
        }
        done.wait()
        #expect(order.values == Array(0..<20))
    }

    @Test("performAndWait is re-entrant, returns the block's value and rethrows its error")
    func performAndWait() throws {
        let context = try CompanyModel.stack()
        let inner = context.performAndWait {
            context.performAndWait { context.employee("Ada").value(forKey: "name") as? String }
        }
        #expect(inner == "Ada")
        struct Refused: Error {}
        #expect(throws: Refused.self) { try context.performAndWait { throw Refused() } }
    }

    @Test("perform(schedule: .immediate) runs at once on the queue; .enqueued waits behind queued blocks")
    func scheduled() async throws {
        let context = try CompanyModel.stack()
        let order = Collector<String>()
        let gate = DispatchSemaphore(value: 0)
        let onQueue = await context.perform(schedule: .enqueued) { () -> Bool in
            // On the queue: an `.immediate` block scheduled now would run inline; here we queue work.
            context.perform { order.append("queued") }
            return true
        }
        #expect(onQueue)
        let value = await context.perform(schedule: .enqueued) {
            order.append("enqueued")
            gate.signal()
            return 42
        }
        gate.wait()
        #expect(value == 42)
        #expect(order.values == ["queued", "enqueued"], "the enqueued block ran after the earlier one")
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await context.perform { () throws(Refused) -> Int in throw Refused() }
        }
    }

    @Test("with COREDATA_CONCURRENCY_DEBUG=1, touching a context off its queue traps")
    func debugTrapsOffQueue() async {
        await #expect(processExitsWith: .failure) {
            setenv("COREDATA_CONCURRENCY_DEBUG", "1", 1)
            let context = try? CompanyModel.stack()
            context?.employee("Off the queue")
        }
    }

    @Test("with COREDATA_CONCURRENCY_DEBUG=1, touching an object off its context's queue traps")
    func debugTrapsObjectOffQueue() async {
        await #expect(processExitsWith: .failure) {
            setenv("COREDATA_CONCURRENCY_DEBUG", "1", 1)
            guard let context = try? CompanyModel.stack() else { return }
            let ada = context.performAndWait { context.employee("Ada") }
            _ = ada.value(forKey: "name")
        }
    }

    @Test("with COREDATA_CONCURRENCY_DEBUG=1, work inside perform and performAndWait runs normally")
    func debugAllowsQueueWork() async {
        await #expect(processExitsWith: .success) {
            setenv("COREDATA_CONCURRENCY_DEBUG", "1", 1)
            guard let context = try? CompanyModel.stack() else { exit(2) }
            let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            child.parent = context
            let saved: Bool = child.performAndWait {
                let ada = child.employee("Ada")
                ada.setValue(3.0, forKey: "salary")
                do {
                    try child.save()
                    return true
                } catch { return false }
            }
            let count = context.performAndWait {
                (try? context.save()).map { _ in
                    (try? context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Employee"))) ?? 0
                }
            }
            exit(saved && count == 1 ? 0 : 3)
        }
    }
}
