import CoreData
import Foundation
import Testing

@testable import OpenCoreDataPostgres

/// Persistent history on the SQLite store: with `NSPersistentHistoryTrackingKey`,
/// every save and batch request records a transaction in Apple's tables (`ATRANSACTION`,
/// `ACHANGE`, `ATRANSACTIONSTRING`), read back with `NSPersistentHistoryChangeRequest`.
/// Related documentation: NSPersistentHistoryChangeRequest, NSPersistentHistoryTransaction,
/// NSPersistentHistoryChange, NSPersistentHistoryToken; "Consuming Relevant Store Changes".
///
/// The PostgreSQL store records the same history in the same tables ("Being told"):
/// the tests that do not read the SQLite file itself run on both stores.
@Suite("Persistent history")
struct PersistentHistoryTests {
    let directory = TemporaryDirectory()
    /// The prefix of this test's PostgreSQL schemas.
    let schemas = PostgresTestServer.uniqueSchema("history")

    static var tracking: [AnyHashable: Any] { [NSPersistentHistoryTrackingKey: true] }

    /// The stores that record history: SQLite, and PostgreSQL when its tests run.
    enum Kind: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case sqlite, postgres
        static var allCases: [Kind] { [.sqlite] + (PostgresTestServer.runsTests ? [.postgres] : []) }
        var testDescription: String { rawValue }
    }

    /// A context on a history-tracking store of the company model (Employee.name kept in
    /// tombstones): a SQLite file `name`, or the PostgreSQL schema of this test named after it.
    func stack(_ kind: Kind = .sqlite, name: String = "history.sqlite", options: [AnyHashable: Any]? = tracking)
        throws -> NSManagedObjectContext
    {
        let model = CompanyModel.make()
        model.entitiesByName["Employee"]?.attributesByName["name"]?.preservesValueInHistoryOnDeletion = true
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        switch kind {
        case .sqlite:
            try coordinator.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: directory.file(name), options: options)
        case .postgres:
            let schema = schemas + "_" + (name.split(separator: ".").first.map(String.init) ?? name)
            try coordinator.addPersistentStore(
                ofType: NSPostgreSQLStoreType, configurationName: nil, at: PostgresTestServer.url(schema: schema),
                options: options)
        }
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    func transactions(_ context: NSManagedObjectContext, after token: NSPersistentHistoryToken? = nil) throws
        -> [NSPersistentHistoryTransaction]
    {
        let result = try context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: token))
        return try #require((result as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction])
    }

    @Test("each save records one transaction with its author, context name and changes", arguments: Kind.allCases)
    func savesAreRecorded(_ kind: Kind) throws {
        let context = try stack(kind)
        context.transactionAuthor = "importer"
        context.name = "background"
        let ada = context.employee("Ada", salary: 10)
        let grace = context.employee("Grace", salary: 20)
        try context.save()
        context.transactionAuthor = "editor"
        ada.setValue(11.0, forKey: "salary")
        context.delete(grace)
        try context.save()

        let all = try transactions(context)
        #expect(all.count == 2)
        #expect(all.map(\.author) == ["importer", "editor"])
        #expect(all.allSatisfy { $0.contextName == "background" })
        #expect(all.allSatisfy { $0.processID == ProcessInfo.processInfo.processName && !$0.bundleID.isEmpty })
        #expect(all[0].transactionNumber < all[1].transactionNumber)
        #expect(all[0].timestamp <= all[1].timestamp)
        let inserts = try #require(all[0].changes)
        #expect(inserts.count == 2)
        #expect(inserts.allSatisfy { $0.changeType == .insert && $0.transaction === all[0] })
        #expect(Set(inserts.map(\.changedObjectID)) == [ada.objectID, grace.objectID])
        let second = try #require(all[1].changes)
        let update = try #require(second.first { $0.changeType == .update })
        #expect(update.changedObjectID == ada.objectID)
        #expect(update.updatedProperties?.map(\.name) == ["salary"])
        let delete = try #require(second.first { $0.changeType == .delete })
        #expect(delete.changedObjectID == grace.objectID)
        // `name` is marked preservesValueInHistoryOnDeletion: the tombstone keeps it.
        #expect(delete.tombstone?["name"] as? String == "Grace")
        #expect(delete.tombstone?["salary"] == nil)
    }

    @Test(
        "fetchHistory(after:) answers only later transactions; tokens archive securely and order",
        arguments: Kind.allCases)
    func tokens(_ kind: Kind) throws {
        let context = try stack(kind)
        context.employee("Ada")
        try context.save()
        let first = try #require(context.persistentStoreCoordinator?.currentPersistentHistoryToken(fromStores: nil))
        context.employee("Grace")
        try context.save()
        let second = try #require(context.persistentStoreCoordinator?.currentPersistentHistoryToken(fromStores: nil))
        #expect(first < second)
        #expect(try transactions(context).last?.token == second)

        let archived = try NSKeyedArchiver.archivedData(withRootObject: first, requiringSecureCoding: true)
        let restored = try #require(
            try NSKeyedUnarchiver.unarchivedObject(ofClass: NSPersistentHistoryToken.self, from: archived))
        #expect(restored == first)
        let later = try transactions(context, after: restored)
        #expect(later.count == 1)
        #expect(later.first?.changes?.first?.changedObjectID.entity.name == "Employee")
        #expect(try transactions(context, after: second).isEmpty)
    }

    @Test(
        "deleteHistory(before:) removes what a token covers; a token before the history kept is expired (134301)",
        arguments: Kind.allCases)
    func deleting(_ kind: Kind) throws {
        let context = try stack(kind)
        var tokens: [NSPersistentHistoryToken] = []
        for name in ["a", "b", "c"] {
            context.employee(name)
            try context.save()
            tokens.append(
                try #require(context.persistentStoreCoordinator?.currentPersistentHistoryToken(fromStores: nil)))
        }
        try context.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: tokens[1]))
        let left = try transactions(context)
        #expect(left.count == 1)
        #expect(left.first?.token == tokens[2])
        // After tokens[1]: nothing was lost, the token is still good.
        #expect(try transactions(context, after: tokens[1]).count == 1)
        // After tokens[0]: the transaction after it is gone.
        do {
            _ = try transactions(context, after: tokens[0])
            Issue.record("an expired token was accepted")
        } catch let error as NSError {
            #expect(error.code == NSPersistentHistoryTokenExpiredError)
        }
    }

    @Test(
        "a store with history opened without NSPersistentHistoryTrackingKey is read-only until its history is deleted, as on Apple platforms",
        arguments: Kind.allCases)
    func historyGapsAreRefused(_ kind: Kind) throws {
        let context = try stack(kind, name: "gap.sqlite")
        context.employee("Ada")
        try context.save()
        let untracked = try stack(kind, name: "gap.sqlite", options: nil)
        #expect(untracked.persistentStoreCoordinator?.persistentStores.first?.isReadOnly == true)
        untracked.employee("Grace")
        #expect(throws: NSError.self) { try untracked.save() }
        // Deleting the history (with the key) lets the store go untracked.
        let tracked = try stack(kind, name: "gap.sqlite")
        try tracked.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: Date.distantFuture))
        let free = try stack(kind, name: "gap.sqlite", options: nil)
        #expect(free.persistentStoreCoordinator?.persistentStores.first?.isReadOnly == false)
        free.employee("Grace")
        try free.save()
    }

    @Test("a Z_MAX that lags the history tables never hands out a key already used")
    func laggingKeys() throws {
        let context = try stack(name: "lagging.sqlite")
        context.employee("Ada")
        try context.save()
        _ = try sqlite3(
            directory.file("lagging.sqlite"), "UPDATE Z_PRIMARYKEY SET Z_MAX = 0 WHERE Z_ENT >= 16001", readOnly: false)
        let writer = try stack(name: "lagging.sqlite")
        writer.employee("Grace")
        try writer.save()
        let all = try transactions(writer)
        #expect(all.count == 2)
        #expect(Set(all.map(\.transactionNumber)).count == 2)
    }

    @Test("batch requests are recorded in the history")
    func batchRequestsAreRecorded() throws {
        let context = try stack()
        let insert = NSBatchInsertRequest(entityName: "Employee", objects: [["name": "Ada"], ["name": "Grace"]])
        insert.resultType = .objectIDs
        let ids = try #require((try context.execute(insert) as? NSBatchInsertResult)?.result as? [NSManagedObjectID])
        let update = NSBatchUpdateRequest(entityName: "Employee")
        update.propertiesToUpdate = ["salary": 5.0]
        try context.execute(update)
        try context.execute(NSBatchDeleteRequest(objectIDs: [ids[0]]))
        let all = try transactions(context)
        #expect(all.count == 3)
        #expect(all[0].changes?.map(\.changeType) == [.insert, .insert])
        #expect(
            all[1].changes?.allSatisfy { $0.changeType == .update && $0.updatedProperties?.map(\.name) == ["salary"] }
                == true)
        #expect(all[2].changes?.map(\.changeType) == [.delete])
        #expect(all[2].changes?.first?.tombstone?["name"] as? String == "Ada")
    }

    @Test("another coordinator merges a transaction's objectIDNotification into its context", arguments: Kind.allCases)
    func mergingHistory(_ kind: Kind) throws {
        let writer = try stack(kind)
        let reader = try stack(kind)
        let start = reader.persistentStoreCoordinator?.currentPersistentHistoryToken(fromStores: nil)
        writer.employee("Ada")
        try writer.save()
        for transaction in try transactions(reader, after: start) {
            reader.mergeChanges(fromContextDidSave: transaction.objectIDNotification())
        }
        let names = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee"))
            .compactMap { $0.value(forKey: "name") as? String }
        #expect(names == ["Ada"])
    }

    /// NSPersistentHistoryChangeRequest reference, `deleteHistory(before:)` with a transaction:
    /// "Deletes all history transactions before the given transaction" — that transaction stays
    /// (a token, by contrast, covers its own transaction). Regression: the transaction went too.
    @Test("deleteHistory(before:) a transaction keeps that transaction", arguments: Kind.allCases)
    func deletingBeforeATransaction(_ kind: Kind) throws {
        let context = try stack(kind)
        for name in ["a", "b", "c"] {
            context.employee(name)
            try context.save()
        }
        let all = try transactions(context)
        #expect(all.count == 3)
        try context.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: all[1]))
        #expect(try transactions(context).map(\.transactionNumber) == all.dropFirst().map(\.transactionNumber))
    }

    /// An SQLite store at `/dev/null` is a private in-memory database (NSPersistentStoreDescription:
    /// "a SQLite store at /dev/null … in memory"), and it tracks history as a file's store does:
    /// test suites use it for speed. Regression: its tables were made without the history tables,
    /// and every save failed with 134180 "no such table: ATRANSACTION".
    @Test("a /dev/null SQLite store with NSPersistentHistoryTrackingKey saves and records its history")
    func inMemorySQLiteTracksHistory() throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
        try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: URL(fileURLWithPath: "/dev/null"),
            options: Self.tracking)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        context.transactionAuthor = "tests"
        context.employee("Ada")
        try context.save()
        context.employee("Bob")
        try context.save()
        let found = try transactions(context)
        #expect(found.map(\.author) == ["tests", "tests"])
        #expect(found.compactMap(\.changes?.count) == [1, 1])
    }

    /// The common way to process history ("Consuming Relevant Store Changes"): each
    /// transaction's `objectIDNotification().userInfo` is handed to
    /// `NSManagedObjectContext.mergeChanges(fromRemoteContextSave:into:)`, whose dictionary may hold
    /// the IDs under `NSInsertedObjectIDsKey`, `NSUpdatedObjectIDsKey` and `NSDeletedObjectIDsKey`
    /// (the keys the notification carries) as well as under the object keys. Regression: only the
    /// object keys were read, so the merge changed nothing.
    @Test(
        "mergeChanges(fromRemoteContextSave:into:) applies a transaction's objectIDNotification: refresh, insert, delete",
        arguments: Kind.allCases)
    func remoteMergeOfHistory(_ kind: Kind) throws {
        let writer = try stack(kind)
        let reader = try stack(kind)
        let (adaID, oldID) = try {
            let ada = writer.employee("Ada", salary: 1)
            let old = writer.employee("Old")
            try writer.save()
            return (ada.objectID, old.objectID)
        }()
        let readerCoordinator = try #require(reader.persistentStoreCoordinator)
        func mine(_ id: NSManagedObjectID) throws -> NSManagedObject {
            try reader.existingObject(
                with: try #require(readerCoordinator.managedObjectID(forURIRepresentation: id.uriRepresentation())))
        }
        let ada = try mine(adaID)
        let old = try mine(oldID)
        #expect(ada.value(forKey: "salary") as? Double == 1)
        let start = readerCoordinator.currentPersistentHistoryToken(fromStores: nil)
        try writer.existingObject(with: adaID).setValue(3.0, forKey: "salary")
        writer.delete(try writer.existingObject(with: oldID))
        let grace = writer.employee("Grace")
        try writer.save()
        let graceHere = try #require(
            readerCoordinator.managedObjectID(forURIRepresentation: grace.objectID.uriRepresentation()))
        let recorder = NotificationRecorder([.NSManagedObjectContextObjectsDidChange], object: reader)
        let found = try transactions(reader, after: start)
        #expect(found.count == 1)
        for transaction in found {
            let userInfo = try #require(transaction.objectIDNotification().userInfo)
            #expect(userInfo[NSUpdatedObjectIDsKey] != nil, "the notification carries Apple's ID keys")
            NSManagedObjectContext.mergeChanges(fromRemoteContextSave: userInfo, into: [reader])
        }
        #expect(ada.value(forKey: "salary") as? Double == 3, "the updated object is refreshed")
        #expect(old.managedObjectContext == nil, "the deleted object leaves the context")
        let inserted = recorder.objects(.NSManagedObjectContextObjectsDidChange, NSInsertedObjectsKey)
        #expect(inserted?.map(\.objectID) == [graceHere], "the inserted object is faulted in")
    }

    @Test(
        "fetchHistory(withFetch:) narrows transactions with a predicate on the Transaction entity",
        arguments: Kind.allCases)
    func fetchRequests(_ kind: Kind) throws {
        let context = try stack(kind)
        for author in ["app", "sync", "app"] {
            context.transactionAuthor = author
            context.employee(author)
            try context.save()
        }
        let fetch = try #require(NSPersistentHistoryTransaction.fetchRequest)
        fetch.predicate = NSPredicate(format: "author == %@", "sync")
        let request = NSPersistentHistoryChangeRequest.fetchHistory(withFetch: fetch)
        let found = try #require(
            (try context.execute(request) as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction])
        #expect(found.map(\.author) == ["sync"])
        request.resultType = .count
        #expect((try context.execute(request) as? NSPersistentHistoryResult)?.result as? NSNumber == 1)
    }

    /// Apple's "Consuming Relevant Store Changes" narrows history with fetch requests:
    /// transactions after a token (`token > %@`), changes of one entity (`changedEntity == %@`, an
    /// entity description) and of one kind (`changeType == %d`). Regression: both predicates
    /// matched nothing.
    @Test(
        "fetchHistory(withFetch:) takes Apple's predicates: token > %@ and changedEntity == %@",
        arguments: Kind.allCases)
    func fetchRequestsByTokenAndEntity(_ kind: Kind) throws {
        let context = try stack(kind)
        let coordinator = try #require(context.persistentStoreCoordinator)
        context.employee("Ada")
        try context.save()
        let after = try #require(coordinator.currentPersistentHistoryToken(fromStores: nil))
        let department = NSEntityDescription.insertNewObject(forEntityName: "Department", into: context)
        department.setValue("Research", forKey: "name")
        context.employee("Grace")
        try context.save()
        context.employee("Linus")
        try context.save()

        let transactions = try #require(NSPersistentHistoryTransaction.fetchRequest)
        transactions.predicate = NSPredicate(format: "token > %@", after)
        let found = try #require(
            (try context.execute(NSPersistentHistoryChangeRequest.fetchHistory(withFetch: transactions))
                as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction])
        #expect(found.count == 2)
        #expect(found.allSatisfy { $0.token > after })

        let changes = try #require(NSPersistentHistoryChange.fetchRequest)
        let employee = try #require(coordinator.managedObjectModel.entitiesByName["Employee"])
        changes.predicate = NSPredicate(
            format: "changedEntity == %@ AND changeType == %d", employee,
            NSPersistentHistoryChangeType.insert.rawValue)
        let request = NSPersistentHistoryChangeRequest.fetchHistory(withFetch: changes)
        request.resultType = .changesOnly
        let employeeChanges = try #require(
            (try context.execute(request) as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryChange])
        #expect(employeeChanges.count == 3)
        #expect(employeeChanges.allSatisfy { $0.changedObjectID.entity.name == "Employee" })
    }

    @Test(
        "with PersistentHistoryOldValuesKey (an addition), changes carry the values the attributes had before",
        arguments: Kind.allCases)
    func oldValues(_ kind: Kind) throws {
        let context = try stack(
            kind,
            name: "old.sqlite", options: [NSPersistentHistoryTrackingKey: true, PersistentHistoryOldValuesKey: true])
        let ada = context.employee("Ada", salary: 10)
        try context.save()
        ada.setValue(11.0, forKey: "salary")
        ada.setValue(Date(timeIntervalSinceReferenceDate: 5), forKey: "startDate")
        try context.save()
        if kind == .sqlite {
            let raise = NSBatchUpdateRequest(entityName: "Employee")
            raise.propertiesToUpdate = ["salary": 12.0]
            try context.execute(raise)
            context.refresh(ada, mergeChanges: false)  // the batch update moved the row's version on
        } else {
            // Batch requests are the SQLite store's alone, as on Apple platforms.
            ada.setValue(12.0, forKey: "salary")
            try context.save()
        }
        context.delete(ada)
        try context.save()
        let all = try transactions(context)
        #expect(all.count == 4)
        #expect(all[0].changes?.first?.oldValues == nil)
        let update = try #require(all[1].changes?.first?.oldValues)
        #expect(update["salary"] as? Double == 10)
        #expect(update["startDate"] is NSNull)
        #expect(update["name"] == nil)
        #expect(all[2].changes?.first?.oldValues?["salary"] as? Double == 11)
        let delete = try #require(all[3].changes?.first?.oldValues)
        #expect(delete["name"] as? String == "Ada")
        #expect(delete["salary"] as? Double == 12)
        #expect(delete["startDate"] as? Date == Date(timeIntervalSinceReferenceDate: 5))
        // Without the option nothing is recorded.
        let plain = try stack(kind, name: "plain.sqlite")
        let grace = plain.employee("Grace")
        try plain.save()
        grace.setValue(3.0, forKey: "salary")
        try plain.save()
        #expect(try transactions(plain).last?.changes?.first?.oldValues == nil)
    }

    @Test(
        "history requests on a store opened without NSPersistentHistoryTrackingKey fail with 134091",
        arguments: Kind.allCases)
    func untrackedStores(_ kind: Kind) throws {
        let context = try stack(kind, options: nil)
        context.employee("Ada")
        try context.save()
        #expect(context.persistentStoreCoordinator?.currentPersistentHistoryToken(fromStores: nil) == nil)
        do {
            _ = try context.execute(
                NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?))
            Issue.record("history was fetched from an untracked store")
        } catch let error as NSError {
            #expect(error.code == NSPersistentStoreUnsupportedRequestTypeError)
        }
    }

    @Test("a store with history written here has Apple's history tables, columns and indexes")
    func appleLayout() throws {
        guard let root = Fixtures.root() else { return }
        let context = try stack()
        context.employee("Ada")
        try context.save()
        let apple = root.appendingPathComponent(
            "stores/coredataplus-samplemodel/SampleModel2/Fixtures/SampleModel2_V2.sqlite")
        func layout(_ url: URL) throws -> [String] {
            try sqlite3(
                url,
                "SELECT name || ':' || sql FROM sqlite_master WHERE tbl_name IN ('ACHANGE', 'ATRANSACTION', 'ATRANSACTIONSTRING') ORDER BY name"
            ).map { $0.replacingOccurrences(of: "IF NOT EXISTS ", with: "") }
        }
        #expect(try layout(directory.file("history.sqlite")) == (try layout(apple)))
    }

    @Test("Apple-written history reads back: SampleModel2's one transaction of 126 inserts")
    func appleWrittenHistory() throws {
        guard let root = Fixtures.root() else { return }
        let copy = TemporaryDirectory()
        let url = try FixtureStores.copy(
            "coredataplus-samplemodel/SampleModel2/Fixtures/SampleModel2_V2.sqlite", root: root, to: copy)
        let model = try NSManagedObjectModel(contentsOfStoreAt: url)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: Self.tracking)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let all = try transactions(context)
        #expect(all.count == 1)
        let transaction = try #require(all.first)
        #expect(transaction.bundleID == "com.apple.dt.xctest.tool")
        #expect(transaction.processID == "xctest")
        #expect(transaction.author == nil)
        #expect(abs(transaction.timestamp.timeIntervalSinceReferenceDate - 737_057_651.681977) < 0.001)
        let changes = try #require(transaction.changes)
        #expect(changes.count == 126)
        #expect(changes.allSatisfy { $0.changeType == .insert })
        // Each change names an object the store holds.
        let counts = Dictionary(grouping: changes, by: { $0.changedObjectID.entity.name ?? "" }).mapValues(\.count)
        // `ZENTITY` is each object's own entity, sub-entities included.
        #expect(counts == ["Book": 2, "GraphicNovel": 1, "Feedback": 3, "Page": 119, "Author": 1])
        for change in changes.prefix(10) {
            #expect((try? context.existingObject(with: change.changedObjectID)) != nil)
        }
        // Saving here appends to Apple's history; Apple's derived-attribute triggers run with it
        // (Book.pagesCount counts its pages in SQL).
        let page = try #require(changes.first { $0.changedObjectID.entity.name == "Page" })
        let book = try #require(
            try context.existingObject(with: page.changedObjectID).value(forKey: "book") as? NSManagedObject)
        let before = try #require(book.value(forKey: "pagesCount") as? Int)
        context.delete(try context.existingObject(with: page.changedObjectID))
        try context.save()
        let after = try transactions(context)
        #expect(after.count == 2)
        #expect(after.last?.changes?.map(\.changeType).contains(.delete) == true)
        let reopened = NSPersistentStoreCoordinator(managedObjectModel: model)
        try reopened.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: Self.tracking)
        let check = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        check.persistentStoreCoordinator = reopened
        let stored = try check.existingObject(
            with: reopened.managedObjectID(forURIRepresentation: book.objectID.uriRepresentation())!)
        #expect(stored.value(forKey: "pagesCount") as? Int == before - 1)
    }
}
