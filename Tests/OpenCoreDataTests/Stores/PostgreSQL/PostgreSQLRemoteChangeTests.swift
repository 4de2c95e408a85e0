import CoreData
import Foundation
import Testing

@testable import OpenCoreDataPostgres

/// Remote-change notifications from a PostgreSQL store ("Being told"): with
/// `NSPersistentStoreRemoteChangeNotificationPostOptionKey`, a coordinator posts
/// `NSPersistentStoreRemoteChange` — with the store's URL and UUID — for every write to the store:
/// when another coordinator, in this process or another, commits to it, and for its own saves
/// (Apple: "posts a remote change notification for every write to the store, including writes by
/// other processes"; NSPersistentStoreRemoteChangeNotificationPostOptionKey). The wake-up is PostgreSQL's
/// `LISTEN`/`NOTIFY`; a listener whose connection drops connects again and posts once.
@Suite(
    "PostgreSQL store: remote-change notifications", .enabled(if: PostgresTestServer.runsTests),
    .timeLimit(.minutes(1)))
struct PostgreSQLRemoteChangeTests {
    typealias Listener = RemoteChangeTests.Listener

    func coordinator(_ url: URL, remote: Bool) throws -> NSPersistentStoreCoordinator {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: PostgreSQLProcessTests.model())
        try coordinator.addPersistentStore(
            ofType: NSPostgreSQLStoreType, configurationName: nil, at: url,
            options: remote ? [NSPersistentStoreRemoteChangeNotificationPostOptionKey: true] : nil)
        return coordinator
    }

    func insertTag(_ key: String, into coordinator: NSPersistentStoreCoordinator) throws {
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        NSEntityDescription.insertNewObject(forEntityName: "Tag", into: context).setValue(key, forKey: "key")
        try context.save()
    }

    @Test("another coordinator's save is posted with the store's URL and UUID; the coordinator's own once")
    func otherCoordinators() throws {
        let url = PostgresTestServer.url(schema: PostgresTestServer.uniqueSchema("remote"))
        let watcher = try coordinator(url, remote: true)
        let other = try coordinator(url, remote: false)
        let listener = Listener(watcher)
        try insertTag("own", into: watcher)
        #expect(listener.wait(for: 1), "the coordinator's own save")
        try insertTag("other", into: other)
        #expect(listener.wait(for: 2))
        let store = try #require(watcher.persistentStores.first)
        #expect(listener.last?.userInfo?[NSStoreUUIDKey] as? String == store.identifier)
        #expect(listener.last?.userInfo?[NSPersistentStoreURLKey] as? URL == url)
        // Each write once: the own save is not posted a second time by the listener.
        Thread.sleep(forTimeInterval: 0.3)
        #expect(listener.count == 2)
        // A coordinator without the option posts nothing.
        let quiet = Listener(other)
        try insertTag("again", into: watcher)
        #expect(listener.wait(for: 1))
        Thread.sleep(forTimeInterval: 0.3)
        #expect(quiet.count == 0)
    }

    @Test("another coordinator's updates and deletes are posted once each; a save a conflict refused, never")
    func updatesAndDeletes() throws {
        let url = PostgresTestServer.url(schema: PostgresTestServer.uniqueSchema("remoteupdate"))
        let watcher = try coordinator(url, remote: true)
        let other = try coordinator(url, remote: false)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = other
        let tag = NSEntityDescription.insertNewObject(forEntityName: "Tag", into: context)
        tag.setValue("first", forKey: "key")
        try context.save()
        let stale = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        stale.persistentStoreCoordinator = watcher
        let staleTag = try #require(try stale.existingObject(with: tag.objectID) as NSManagedObject?)
        _ = staleTag.value(forKey: "key")
        let listener = Listener(watcher)

        tag.setValue("second", forKey: "key")
        try context.save()
        #expect(listener.wait(for: 1), "an update")
        // The watcher's own save of a stale object is refused by the error policy: nothing was
        // written, so nothing is posted.
        staleTag.setValue("stale", forKey: "key")
        #expect(throws: (any Error).self) { try stale.save() }
        context.delete(tag)
        try context.save()
        #expect(listener.wait(for: 2), "a delete")
        Thread.sleep(forTimeInterval: 0.3)
        #expect(listener.count == 2)
    }

    @Test("another process's saves are posted")
    func anotherProcess() throws {
        let url = PostgresTestServer.url(schema: PostgresTestServer.uniqueSchema("remoteprocess"))
        let watcher = try coordinator(url, remote: true)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = watcher
        NSEntityDescription.insertNewObject(forEntityName: "Counter", into: context).setValue("shared", forKey: "name")
        try context.save()
        let listener = Listener(watcher)
        let output = try runConflictWriter(["hammer", url.absoluteString, "1", "2"], killAfter: nil)
        #expect(output.hasPrefix("done 2 "), "\(output)")
        // Two increments and ten tags: twelve saves, each one notification (some may arrive together).
        #expect(listener.wait(for: 1))
    }

    @Test("an observed fetch (changes(for:)) follows another process's saves")
    func observedFetchFollowsAnotherProcess() async throws {
        let url = PostgresTestServer.url(schema: PostgresTestServer.uniqueSchema("observed"))
        let watched = try coordinator(url, remote: true)
        let seed = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        seed.persistentStoreCoordinator = watched
        try seed.performAndWait {
            NSEntityDescription.insertNewObject(forEntityName: "Counter", into: seed).setValue("shared", forKey: "name")
            try seed.save()
        }
        let view = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        view.persistentStoreCoordinator = watched
        let request = NSFetchRequest<NSManagedObject>(entityName: "Tag")
        request.sortDescriptors = [NSSortDescriptor(key: "key", ascending: true)]
        var iterator = view.changes(for: request).makeAsyncIterator()
        #expect(try await iterator.next()?.objectIDs.isEmpty == true)
        // The other process inserts ten tags, one save each.
        let output = try runConflictWriter(["hammer", url.absoluteString, "1", "1"], killAfter: nil)
        #expect(output.hasPrefix("done 1 "), "\(output)")
        var seen = 0
        while seen < 10, let change = try await iterator.next() {
            #expect(change.objectIDs.count > seen)
            seen = change.objectIDs.count
        }
        #expect(seen == 10)
    }

    @Test("a listener whose connection the server closes connects again and posts once for what it missed")
    func reconnecting() throws {
        let schema = PostgresTestServer.uniqueSchema("reconnect")
        let url = PostgresTestServer.url(schema: schema)
        let watcher = try coordinator(url, remote: true)
        let other = try coordinator(url, remote: false)
        let listener = Listener(watcher)
        // The server ends the connection listening on the store's channel.
        let listen = "LISTEN \"" + PostgresChangeListener.channel(schema: schema) + "\""
        let terminated = try PostgresTestServer.run(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE query = $1", [.text(listen)])
        #expect(terminated >= 1)
        #expect(listener.wait(for: 1), "the reconnection is posted")
        let afterReconnect = listener.count
        try insertTag("after", into: other)
        #expect(listener.wait(for: afterReconnect + 1), "saves are heard again")
    }
}
