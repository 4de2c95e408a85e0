import CoreData
import Foundation
import Testing

@testable import OpenCoreData
@testable import OpenCoreDataSQLite

/// Reads in parallel: contexts on different queues fetch from one SQLite store at the
/// same time — each read on a pooled connection of its own (WAL lets readers read while the
/// writer writes) — instead of queueing behind one lock and one connection. Apple's store keeps
/// a pool of reading connections too; the rules checked are Core Data's own: every context sees
/// committed state only, and a context never sees a state older than one it already read
/// (Core Data Programming Guide, "Concurrency"; SQLite, "Write-Ahead Logging": "readers do not
/// block writers and a writer does not block readers").
@Suite("Parallel reads")
struct ParallelReadTests {
    static let rows = 4_000
    static let readers = 8
    static let readsEach = 6
    static let batches = 10
    static let batchSize = 10

    /// A predicate every row is judged by with the in-memory string rules inside SQL (a few
    /// milliseconds per fetch), so concurrent fetches have time to meet.
    static func request() -> NSFetchRequest<NSManagedObject> {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.predicate = NSPredicate(format: "name LIKE[cd] %@", "*é*")
        return request
    }

    /// Eight contexts on eight threads fetch at the same moment, each on a connection of its own.
    /// Then eight readers and one writer committing matching rows meanwhile: each count is a
    /// committed state, and each reader's counts never go back.
    @Test func eightContextsReadAtOnceWhileOneSaves() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Parallel.sqlite")
        let seed = try sqliteStack(url)
        for index in 0..<Self.rows { seed.employee(index % 4 == 0 ? "émile \(index)" : "ada \(index)") }
        try seed.save()
        let coordinator = try #require(seed.persistentStoreCoordinator)
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        // First, the overlap itself: each context's fetch waits inside the store, holding its
        // pooled connection, until all eight are inside (or 10 s pass — a store that serialized
        // reads would never get there).
        let inside = Barrier(parties: Self.readers)
        store.pooledReadStarted = { inside.arrive() }
        let fetched = Collector<Int>()
        // Threads of their own: `concurrentPerform` runs no more threads than there are cores.
        let done = DispatchGroup()
        for _ in 0..<Self.readers {
            done.enter()
            Thread {
                let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
                context.persistentStoreCoordinator = coordinator
                context.performAndWait { fetched.append((try? context.fetch(Self.request()).count) ?? -1) }
                done.leave()
            }.start()
        }
        done.wait()
        store.pooledReadStarted = nil
        #expect(inside.met, "eight fetches were inside the store at the same moment")
        #expect(store.readerPool.mostInUse == Self.readers)
        #expect(fetched.values == Array(repeating: Self.rows / 4, count: Self.readers))
        let base = Self.rows / 4
        let counts = Collector<[Int]>()
        DispatchQueue.concurrentPerform(iterations: Self.readers + 1) { index in
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            context.performAndWait {
                if index == Self.readers {
                    for batch in 0..<Self.batches {
                        for row in 0..<Self.batchSize { context.employee("émile new \(batch)-\(row)") }
                        try? context.save()
                    }
                    return
                }
                var seen: [Int] = []
                for _ in 0..<Self.readsEach {
                    seen.append((try? context.count(for: Self.request())) ?? -1)
                }
                let fetched = (try? context.fetch(Self.request()).count) ?? -1
                seen.append(fetched)
                counts.append(seen)
            }
        }
        let all = counts.values
        #expect(all.count == Self.readers)
        let final = base + Self.batches * Self.batchSize
        for seen in all {
            // Only whole batches: a count is a committed state, never part of a save.
            #expect(seen.allSatisfy { $0 >= base && $0 <= final && ($0 - base) % Self.batchSize == 0 }, "\(seen)")
            #expect(seen == seen.sorted(), "a reader never sees an older state than one it saw: \(seen)")
        }
        #expect(try seed.count(for: Self.request()) == final)
    }

    /// Two reads on two threads each hold a pooled connection of their own at the same moment:
    /// each waits inside its read until the other has started its own (with a time limit, so a
    /// store that serialized reads fails instead of hanging), and both run a query there.
    @Test func twoReadsHoldConnectionsAtOnce() throws {
        let directory = TemporaryDirectory()
        let context = try sqliteStack(directory.file("Overlap.sqlite"))
        for index in 0..<10 { context.employee("e\(index)") }
        try context.save()
        let store = try #require(context.persistentStoreCoordinator?.persistentStores.first as? SQLiteStore)
        #expect(store.readsConcurrently)
        let arrived = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
        let met = Collector<Bool>()
        let connections = Collector<ObjectIdentifier>()
        let done = DispatchGroup()
        for index in 0..<2 {
            done.enter()
            Thread {
                _ = try? store.withReadConnection(nil) {
                    let connection = store.connection!
                    connections.append(ObjectIdentifier(connection))
                    arrived[index].signal()
                    met.append(arrived[1 - index].wait(timeout: .now() + 10) == .success)
                    let rows = try connection.rows("SELECT COUNT(*) FROM ZEMPLOYEE")
                    #expect(rows.first?.first == .integer(10))
                }
                done.leave()
            }.start()
        }
        done.wait()
        #expect(met.values == [true, true], "each read saw the other begin while it held its connection")
        #expect(Set(connections.values).count == 2, "two connections, neither of them the writer")
        #expect(!connections.values.contains(ObjectIdentifier(store.writer)))
        #expect(store.readerPool.mostInUse >= 2)
    }

    /// A private in-memory SQLite database (`/dev/null`) cannot be shared between connections:
    /// its reads use the one connection, serialized with writes, and still answer.
    @Test func aPrivateInMemoryDatabaseReadsOnItsOneConnection() throws {
        let context = try sqliteStack(URL(fileURLWithPath: "/dev/null"))
        for index in 0..<100 { context.employee(index % 4 == 0 ? "émile \(index)" : "ada \(index)") }
        try context.save()
        let store = try #require(context.persistentStoreCoordinator?.persistentStores.first as? SQLiteStore)
        #expect(!store.readsConcurrently)
        let counts = Collector<Int>()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let reader = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            reader.persistentStoreCoordinator = context.persistentStoreCoordinator
            reader.performAndWait { counts.append((try? reader.count(for: Self.request())) ?? -1) }
        }
        #expect(counts.values == [25, 25, 25, 25])
        #expect(store.readerPool.mostInUse == 0)
    }
}

/// Lets `parties` threads wait until all have arrived, each for at most 10 seconds; `met` says
/// whether every one of them saw the others arrive.
final class Barrier: @unchecked Sendable {
    private let condition = NSCondition()
    private let parties: Int
    private var arrived = 0
    private var timedOut = false

    init(parties: Int) { self.parties = parties }

    func arrive() {
        condition.lock()
        defer { condition.unlock() }
        arrived += 1
        condition.broadcast()
        let deadline = Date(timeIntervalSinceNow: 10)
        while arrived < parties {
            if !condition.wait(until: deadline) {
                timedOut = true
                return
            }
        }
    }

    var met: Bool {
        condition.lock()
        defer { condition.unlock() }
        return arrived >= parties && !timedOut
    }
}
