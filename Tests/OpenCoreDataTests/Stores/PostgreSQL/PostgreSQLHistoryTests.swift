import CoreData
import Foundation
import Testing

@testable import OpenCoreDataPostgres

/// Persistent history shared by every process of a PostgreSQL store ("Being told"):
/// history is recorded in the database, `NSPersistentStoreRemoteChange` carries the token of the
/// other process's transaction (`NSPersistentHistoryTokenKey`), and a process that pulls the
/// history after its last token ("Consuming Relevant Store Changes": fetch the history after the
/// last token processed) sees every other process's transaction exactly once.
///
/// The store-independent history tests run on PostgreSQL too, in `PersistentHistoryTests`.
@Suite(
    "PostgreSQL store: persistent history across processes", .enabled(if: PostgresTestServer.runsTests),
    .timeLimit(.minutes(2)))
struct PostgreSQLHistoryTests {
    typealias Listener = RemoteChangeTests.Listener

    static var tracking: [AnyHashable: Any] {
        [
            NSPersistentHistoryTrackingKey: true, NSPersistentStoreRemoteChangeNotificationPostOptionKey: true,
        ]
    }

    func coordinator(_ url: URL) throws -> NSPersistentStoreCoordinator {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: PostgreSQLProcessTests.model())
        try coordinator.addPersistentStore(
            ofType: NSPostgreSQLStoreType, configurationName: nil, at: url, options: Self.tracking)
        return coordinator
    }

    func history(_ coordinator: NSPersistentStoreCoordinator, after token: NSPersistentHistoryToken?) throws
        -> [NSPersistentHistoryTransaction]
    {
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let result = try context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: token))
        return try #require((result as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction])
    }

    @Test("a reader pulling after its last token while writers save sees every transaction exactly once")
    func pullingMissesNothing() throws {
        let url = PostgresTestServer.url(schema: PostgresTestServer.uniqueSchema("historyorder"))
        let writers = try (0..<2).map { _ in try coordinator(url) }
        let reader = try coordinator(url)
        let done = LockedFlag()
        let inserted = LockedIDs()
        let writing = Thread {
            DispatchQueue.concurrentPerform(iterations: 4) { index in
                let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
                context.persistentStoreCoordinator = writers[index % 2]
                context.performAndWait {
                    for round in 0..<15 {
                        let tag = NSEntityDescription.insertNewObject(forEntityName: "Tag", into: context)
                        tag.setValue("\(index)-\(round)", forKey: "key")
                        do {
                            try context.save()
                            inserted.add(tag.objectID)
                        } catch {
                            inserted.fail("\(error)")
                        }
                    }
                }
            }
            done.set()
        }
        writing.start()
        var token: NSPersistentHistoryToken?
        var seen: [NSManagedObjectID] = []
        var numbers: [Int64] = []
        var finished = false
        while !finished {
            finished = done.isSet
            for transaction in try history(reader, after: token) {
                numbers.append(transaction.transactionNumber)
                seen += (transaction.changes ?? []).map(\.changedObjectID)
                token = transaction.token
            }
        }
        #expect(inserted.failure == nil)
        #expect(inserted.ids.count == 60)
        #expect(seen.count == 60, "each insert seen once")
        #expect(Set(seen.map { $0.uriRepresentation() }) == Set(inserted.ids.map { $0.uriRepresentation() }))
        #expect(numbers == numbers.sorted() && Set(numbers).count == numbers.count)
    }

    @Test("another process's saves are posted with their history token; its history is pulled after the last token")
    func anotherProcessesHistory() throws {
        let url = PostgresTestServer.url(schema: PostgresTestServer.uniqueSchema("historyprocess"))
        let watcher = try coordinator(url)
        let seed = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        seed.persistentStoreCoordinator = watcher
        NSEntityDescription.insertNewObject(forEntityName: "Counter", into: seed).setValue("shared", forKey: "name")
        try seed.save()
        let start = try #require(watcher.currentPersistentHistoryToken(fromStores: nil))
        let listener = Listener(watcher)
        let output = try runConflictWriter(["hammer", url.absoluteString, "2", "3", "history"], killAfter: nil)
        #expect(output.hasPrefix("done 6 "), "\(output)")
        let last = try #require(watcher.currentPersistentHistoryToken(fromStores: nil))
        // Every save was posted, the last with the last transaction's token.
        let deadline = Date().addingTimeInterval(10)
        while listener.notifications.last?.userInfo?[NSPersistentHistoryTokenKey] as? NSPersistentHistoryToken
            != last, Date() < deadline
        {
            Thread.sleep(forTimeInterval: 0.05)
        }
        let tokens = listener.notifications.compactMap {
            $0.userInfo?[NSPersistentHistoryTokenKey] as? NSPersistentHistoryToken
        }
        #expect(tokens.last == last)
        #expect(tokens.count == listener.notifications.count, "every notification carries a token")
        #expect(zip(tokens, tokens.dropFirst()).allSatisfy { $0 < $1 }, "tokens arrive in commit order")

        let pulled = try history(watcher, after: start)
        #expect(pulled.last?.token == last)
        #expect(pulled.allSatisfy { $0.processID == "ConflictWriter" })
        let changes = pulled.flatMap { $0.changes ?? [] }
        let shared = try #require(
            try seed.fetch(NSFetchRequest<NSManagedObject>(entityName: "Counter")).first {
                $0.value(forKey: "name") as? String == "shared"
            })
        // Six increments of the shared counter, each one update in the history: no lost update.
        #expect(changes.filter { $0.changedObjectID == shared.objectID && $0.changeType == .update }.count == 6)
        // Ten extra counters (five per context) inserted.
        #expect(changes.filter { $0.changedObjectID.entity.name == "Counter" && $0.changeType == .insert }.count == 10)
    }
}

/// A flag set once, read from another thread.
final class LockedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

/// Object IDs collected from several threads, with the first failure.
final class LockedIDs: @unchecked Sendable {
    private let lock = NSLock()
    private var collected: [NSManagedObjectID] = []
    private var firstFailure: String?
    var ids: [NSManagedObjectID] { lock.withLock { collected } }
    var failure: String? { lock.withLock { firstFailure } }
    func add(_ id: NSManagedObjectID) { lock.withLock { collected.append(id) } }
    func fail(_ message: String) { lock.withLock { firstFailure = firstFailure ?? message } }
}
