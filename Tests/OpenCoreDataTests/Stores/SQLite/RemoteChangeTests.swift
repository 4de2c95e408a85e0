import CoreData
import Foundation
import Testing

/// Remote-change notifications: with `NSPersistentStoreRemoteChangeNotificationPostOptionKey`
/// a coordinator posts `NSPersistentStoreRemoteChange` for every write to its store — when another
/// coordinator or process commits to it, and for its own saves and batch requests; the userInfo
/// holds the store's URL, UUID and, with history, the token of the write. Related documentation:
/// NSPersistentStoreRemoteChangeNotificationPostOptionKey; "Consuming Relevant Store Changes".
@Suite("Remote-change notifications", .timeLimit(.minutes(1)))
struct RemoteChangeTests {
    let directory = TemporaryDirectory()

    /// Collects the remote-change notifications one coordinator posts.
    final class Listener: @unchecked Sendable {
        private let lock = NSLock()
        private var received: [Notification] = []
        private var observer: NSObjectProtocol?

        init(_ coordinator: NSPersistentStoreCoordinator) {
            observer = NotificationCenter.default.addObserver(
                forName: .NSPersistentStoreRemoteChange, object: coordinator, queue: nil
            ) { [weak self] notification in
                guard let self else { return }
                lock.lock()
                received.append(notification)
                lock.unlock()
            }
        }

        deinit { observer.map(NotificationCenter.default.removeObserver) }

        var count: Int {
            lock.lock()
            defer { lock.unlock() }
            return received.count
        }

        var last: Notification? {
            lock.lock()
            defer { lock.unlock() }
            return received.last
        }

        /// Every notification received, in order.
        var notifications: [Notification] {
            lock.lock()
            defer { lock.unlock() }
            return received
        }

        /// Waits up to `seconds` for at least `count` notifications.
        func wait(for count: Int, seconds: Double = 10) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while self.count < count, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            return self.count >= count
        }
    }

    func coordinator(_ url: URL, model: NSManagedObjectModel, remote: Bool) throws -> NSPersistentStoreCoordinator {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        var options: [AnyHashable: Any] = [NSPersistentHistoryTrackingKey: true]
        if remote { options[NSPersistentStoreRemoteChangeNotificationPostOptionKey] = true }
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: options)
        return coordinator
    }

    func context(_ coordinator: NSPersistentStoreCoordinator) -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    @Test(
        "another coordinator's save is posted, with the store's URL, UUID and history token; the coordinator's own once"
    )
    func otherCoordinators() throws {
        let url = directory.file("remote.sqlite")
        let model = CompanyModel.make()
        let watched = try coordinator(url, model: model, remote: true)
        let listener = Listener(watched)
        let other = context(try coordinator(url, model: model, remote: false))
        other.employee("Ada")
        try other.save()
        #expect(listener.wait(for: 1))
        let info = try #require(listener.last?.userInfo)
        #expect(info[NSPersistentStoreURLKey] as? URL == url)
        #expect(info[NSStoreUUIDKey] as? String == watched.persistentStores.first?.identifier)
        let token = try #require(info[NSPersistentHistoryTokenKey] as? NSPersistentHistoryToken)
        #expect(token == watched.currentPersistentHistoryToken(fromStores: nil))

        // The option's documentation: a notification for every write to the store, this
        // coordinator's own saves included — once each, with the save's history token, the one its
        // did-save notification carries under `newChangeToken`.
        let own = context(watched)
        own.employee("Grace")
        let didSave = NotificationRecorder([.NSManagedObjectContextDidSave], object: own)
        try own.save()
        let saveToken =
            didSave.notes.last?.userInfo?[NSManagedObjectContext.NotificationKey.newChangeToken.rawValue]
            as? NSPersistentHistoryToken
        #expect(listener.wait(for: 2))
        Thread.sleep(forTimeInterval: 0.5)
        #expect(listener.count == 2)
        let ownToken = try #require(listener.last?.userInfo?[NSPersistentHistoryTokenKey] as? NSPersistentHistoryToken)
        #expect(ownToken == watched.currentPersistentHistoryToken(fromStores: nil))
        #expect(saveToken == ownToken)
        #expect(ownToken != token)
    }

    @Test("a batch request of the coordinator itself is posted")
    func batchRequests() throws {
        let url = directory.file("batch.sqlite")
        let watched = try coordinator(url, model: CompanyModel.make(), remote: true)
        let listener = Listener(watched)
        try context(watched).execute(NSBatchInsertRequest(entityName: "Employee", objects: [["name": "Ada"]]))
        #expect(listener.wait(for: 1))
        #expect(listener.last?.userInfo?[NSPersistentHistoryTokenKey] is NSPersistentHistoryToken)
    }

    @Test("two processes: an observed fetch (changes(for:)) follows the other process's saves")
    func observedFetchFollowsAnotherProcess() async throws {
        let url = directory.file("observed.sqlite")
        let watched = try coordinator(url, model: KillTests.model(), remote: true)
        let view = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        view.persistentStoreCoordinator = watched
        let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
        request.sortDescriptors = [
            NSSortDescriptor(key: "batch", ascending: true), NSSortDescriptor(key: "index", ascending: true),
        ]
        var iterator = view.changes(for: request).makeAsyncIterator()
        #expect(try await iterator.next()?.objectIDs.isEmpty == true)
        let output = try runConflictWriter(["history-batches", url.path, "2"], killAfter: nil)
        #expect(output.contains("batch 2"))
        var seen = 0
        while seen < 20, let change = try await iterator.next() {
            #expect(change.objectIDs.count > seen)
            seen = change.objectIDs.count
        }
        #expect(seen == 20)
    }

    @Test("two processes: one saves, the other is told, fetches the history after its token and merges it")
    func twoProcesses() throws {
        let url = directory.file("shared.sqlite")
        let model = KillTests.model()
        let watched = try coordinator(url, model: model, remote: true)
        let listener = Listener(watched)
        let view = context(watched)
        let start = watched.currentPersistentHistoryToken(fromStores: nil)
        #expect(try view.count(for: NSFetchRequest<NSManagedObject>(entityName: "Item")) == 0)

        let output = try runConflictWriter(["history-batches", url.path, "2"], killAfter: nil)
        #expect(output.contains("batch 2"))
        #expect(listener.wait(for: 1))

        let request = NSPersistentHistoryChangeRequest.fetchHistory(after: start)
        let transactions = try #require(
            (try view.execute(request) as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction])
        #expect(transactions.count == 2)
        #expect(transactions.allSatisfy { $0.processID == "ConflictWriter" })
        for transaction in transactions { view.mergeChanges(fromContextDidSave: transaction.objectIDNotification()) }
        let items = try view.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
        #expect(items.count == 20)
    }
}
