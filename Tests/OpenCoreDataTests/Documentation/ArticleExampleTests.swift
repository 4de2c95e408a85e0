import CoreData
import Foundation
import OpenCoreDataPostgres
import Testing

/// The code of the DocC articles (`Sources/OpenCoreData/OpenCoreData.docc`), run: each test holds
/// an article's blocks as the article shows them (``ArticleCodeTests`` checks that they match)
/// and checks what the article says they do, which is what Apple's documentation of the calls
/// says.
@Suite("Documentation: the articles' code does what they say")
struct ArticleExampleTests {
    /// A model of one entity with the given attributes.
    static func model(_ entityName: String, _ attributes: [(String, NSAttributeType)]) -> NSManagedObjectModel {
        let entity = NSEntityDescription()
        entity.name = entityName
        entity.properties = attributes.map { name, type in
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            return attribute
        }
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }

    /// "Getting started on Linux": a model made in code (NSEntityDescription,
    /// NSAttributeDescription), a container on an SQLite file (NSPersistentContainer,
    /// `persistentStoreDescriptions`), and a fetch with a predicate and a sort (NSFetchRequest) —
    /// the saved objects are in the file, and the fetch answers the adults by name.
    @Test("Getting started: a model in code, saved to SQLite, fetched with a predicate and a sort")
    func gettingStarted() throws {
        let directory = TemporaryDirectory()
        let storeURL = directory.file("People.sqlite")

        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        let age = NSAttributeDescription()
        age.name = "age"
        age.attributeType = .integer16AttributeType
        let person = NSEntityDescription()
        person.name = "Person"
        person.properties = [name, age]
        let model = NSManagedObjectModel()
        model.entities = [person]

        let container = NSPersistentContainer(name: "People", managedObjectModel: model)
        container.persistentStoreDescriptions.first?.url = storeURL
        var loadError: (any Error)?
        container.loadPersistentStores { _, error in loadError = error }
        if let loadError { throw loadError }

        let context = container.newBackgroundContext()
        try context.performAndWait {
            for (personName, personAge) in [("Ada", 36), ("Grace", 85), ("Alan", 12)] {
                let someone = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
                someone.setValue(personName, forKey: "name")
                someone.setValue(personAge, forKey: "age")
            }
            try context.save()

            let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
            request.predicate = NSPredicate(format: "age >= %d", 18)
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            let adults = try context.fetch(request)
            print(adults.map { $0.value(forKey: "name") as? String ?? "" })  // ["Ada", "Grace"]
        }

        // A second coordinator on the file reads what was saved, and the same fetch answers as the
        // article's comment says.
        let reader = NSPersistentStoreCoordinator(managedObjectModel: model)
        try reader.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: storeURL)
        let check = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        check.persistentStoreCoordinator = reader
        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
        request.predicate = NSPredicate(format: "age >= %d", 18)
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        #expect(try check.fetch(request).map { $0.value(forKey: "name") as? String } == ["Ada", "Grace"])
        #expect(try check.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) == 3)
    }

    /// "Opening a store an iPhone or Mac wrote": an Apple-written SQLite store (wibosco's version 1,
    /// ten posts) opens with its model's source (`init(validatingContentsOf:)`,
    /// `addPersistentStore`), and read-only with the model cached inside it — the cached model has
    /// Apple's version hashes, so it equals the source's, and the read-only store writes nothing.
    @Test("Opening an Apple-written store with its model, and read-only with its cached model")
    func openingAppleStores() throws {
        guard let root = Fixtures.root() else { return }
        let directory = TemporaryDirectory()
        let storeURL = directory.file("Posts.sqlite")
        try FileManager.default.copyItem(
            at: root.appendingPathComponent("stores/wibosco-migration/CoreDataMigration_Example_1.sqlite"), to: storeURL
        )
        let modelURL = root.appendingPathComponent(
            "stores/wibosco-migration/CoreDataMigration_Example.xcdatamodeld/CoreDataMigration_Example.xcdatamodel")

        do {
            let model = try NSManagedObjectModel(validatingContentsOf: modelURL)
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: storeURL)
            let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Post")) == 10)
            try coordinator.remove(try #require(coordinator.persistentStores.first))
        }
        let before = try Data(contentsOf: storeURL)

        let cached = try NSManagedObjectModel(contentsOfStoreAt: storeURL)
        let reader = NSPersistentStoreCoordinator(managedObjectModel: cached)
        try reader.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: storeURL,
            options: [NSReadOnlyPersistentStoreOption: true])

        let model = try NSManagedObjectModel(validatingContentsOf: modelURL)
        #expect(cached.entityVersionHashesByName == model.entityVersionHashesByName)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = reader
        let posts = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Post"))
        #expect(posts.count == 10)
        #expect(posts.allSatisfy { $0.value(forKey: "postID") is String })
        #expect(try Data(contentsOf: storeURL) == before)
        #expect(!FileManager.default.fileExists(atPath: storeURL.path + "-wal"))
    }

    /// "The predicate language": Apple's format grammar with `%d`, `%@` and `[cd]` (Predicate
    /// Programming Guide, "Predicate Format String Syntax"), the canonical `predicateFormat`, the
    /// throwing initializer for input a program does not control, and `caseInsensitiveCompare:`
    /// sorts (NSSortDescriptor reference).
    @Test("The predicate language: format strings, errors from user input, sorting")
    func predicateLanguage() throws {
        let adults = NSPredicate(format: "age >= %d AND name BEGINSWITH[cd] %@", 18, "a")
        let matches = adults.evaluate(with: ["age": 30, "name": "Ärne"])
        print(matches, adults.predicateFormat)  // true age >= 18 AND name BEGINSWITH[cd] "a"
        #expect(matches)
        #expect(adults.predicateFormat == #"age >= 18 AND name BEGINSWITH[cd] "a""#)

        do {
            _ = try NSPredicate(validatingFormat: "age >> 3", argumentArray: nil)
        } catch {
            print(error)  // Unable to parse the format string (syntax error) … at offset 5, with a caret
        }
        let error = try #require(
            #expect(throws: NSPredicateFormatError.self) {
                try NSPredicate(validatingFormat: "age >> 3", argumentArray: nil)
            })
        #expect(error.offset == 5)
        #expect(String(describing: error).contains("^"))

        let people: [[String: Any]] = [["name": "b"], ["name": "A"]]
        let sorted = people.sorted(
            using: [NSSortDescriptor(key: "name", ascending: true, selector: Selector("caseInsensitiveCompare:"))])
        #expect(sorted.map { $0["name"] as? String } == ["A", "b"])
    }

    /// "Contexts and concurrency": a private-queue context used inside `performAndWait`; a child
    /// context's save reaches its parent, not the store, until the parent saves (Core Data
    /// Programming Guide, "Using nested contexts"); a merge policy set by its static name.
    @Test("Contexts and concurrency: queues, child contexts and merge policies")
    func contextsAndConcurrency() throws {
        let directory = TemporaryDirectory()
        let model = Self.model("Note", [("text", .stringAttributeType)])
        let container = NSPersistentContainer(name: "Notes", managedObjectModel: model)
        container.persistentStoreDescriptions.first?.url = directory.file("Notes.sqlite")
        container.loadPersistentStores { _, error in #expect(error == nil) }
        func storedTexts() throws -> Set<String> {
            let reader = container.newBackgroundContext()
            return try reader.performAndWait {
                Set(
                    try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Note")).compactMap {
                        $0.value(forKey: "text") as? String
                    })
            }
        }

        let background = container.newBackgroundContext()
        try background.performAndWait {
            let note = NSEntityDescription.insertNewObject(forEntityName: "Note", into: background)
            note.setValue("Written on a background queue", forKey: "text")
            try background.save()
        }
        #expect(try storedTexts() == ["Written on a background queue"])

        let editor = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        editor.parent = background
        try editor.performAndWait {
            let draft = NSEntityDescription.insertNewObject(forEntityName: "Note", into: editor)
            draft.setValue("A draft", forKey: "text")
            try editor.save()
        }
        #expect(try storedTexts() == ["Written on a background queue"])
        #expect(background.performAndWait { background.hasChanges })

        try background.performAndWait { try background.save() }
        #expect(try storedTexts() == ["Written on a background queue", "A draft"])

        background.mergePolicy = NSMergePolicy.mergeByPropertyObjectTrump
        #expect((background.mergePolicy as? NSMergePolicy)?.mergeType == .mergeByPropertyObjectTrumpMergePolicyType)
    }

    /// "Migration": an Apple-written store of wibosco's version 1 opened with version 2 and the
    /// two migration options is migrated in place by lightweight migration ("Migrating your data
    /// model automatically"); the inferred mapping says how; and the staged form
    /// (NSStagedMigrationManager with an NSLightweightMigrationStage, under
    /// `NSPersistentStoreStagedMigrationManagerOptionKey`) moves another copy when its container
    /// loads it. Every post survives both.
    @Test("Migration: lightweight, the inferred mapping, and a staged migration")
    func migration() throws {
        guard let root = Fixtures.root() else { return }
        let directory = TemporaryDirectory()
        let models = root.appendingPathComponent("stores/wibosco-migration/CoreDataMigration_Example.xcdatamodeld")
        let version1 = try NSManagedObjectModel(
            validatingContentsOf: models.appendingPathComponent("CoreDataMigration_Example.xcdatamodel"))
        let version2 = try NSManagedObjectModel(
            validatingContentsOf: models.appendingPathComponent("CoreDataMigration_Example 2.xcdatamodel"))
        let original = root.appendingPathComponent("stores/wibosco-migration/CoreDataMigration_Example_1.sqlite")
        func posts(_ coordinator: NSPersistentStoreCoordinator) throws -> [NSManagedObject] {
            let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            return try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Post"))
        }

        var storeURL = directory.file("Lightweight.sqlite")
        try FileManager.default.copyItem(at: original, to: storeURL)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: version2)
        try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: storeURL,
            options: [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true])
        #expect(try posts(coordinator).count == 10)
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: storeURL, options: nil)
        #expect(version2.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))

        let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: version1, destinationModel: version2)
        print(mapping.entityMappings.map { "\($0.name ?? "?"): \($0.mappingType)" })
        #expect(mapping.entityMappings.map(\.destinationEntityName) == ["Post"])

        storeURL = directory.file("Staged.sqlite")
        try FileManager.default.copyItem(at: original, to: storeURL)
        let stages = NSStagedMigrationManager([
            NSLightweightMigrationStage([version1.versionChecksum, version2.versionChecksum])
        ])
        let description = NSPersistentStoreDescription(url: storeURL)
        description.setOption(stages, forKey: NSPersistentStoreStagedMigrationManagerOptionKey)
        let container = NSPersistentContainer(name: "Posts", managedObjectModel: version2)
        container.persistentStoreDescriptions = [description]
        container.loadPersistentStores { _, error in #expect(error == nil) }
        #expect(try posts(container.persistentStoreCoordinator).count == 10)
    }

    /// "Batch requests and persistent history": a batch insert, a batch update with a predicate
    /// and a batch delete answering object IDs (NSBatchInsertRequest, NSBatchUpdateRequest,
    /// NSBatchDeleteRequest references), merged into a context with
    /// `mergeChanges(fromRemoteContextSave:into:)`; with history tracking on, each is a
    /// transaction the history request answers after a token ("Consuming relevant store changes").
    @Test("Batch requests and persistent history")
    func batchRequestsAndHistory() throws {
        let directory = TemporaryDirectory()
        let model = Self.model("Entry", [("level", .integer16AttributeType), ("text", .stringAttributeType)])
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: directory.file("Log.sqlite"),
            options: [NSPersistentHistoryTrackingKey: true])
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        var lastToken: NSPersistentHistoryToken?

        let rows: [[String: Any]] = (1...10).map { ["level": $0 % 5, "text": "entry \($0)"] }
        try context.execute(NSBatchInsertRequest(entityName: "Entry", objects: rows))

        let held = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Entry"))
        #expect(held.count == 10)

        let quiet = NSBatchUpdateRequest(entityName: "Entry")
        quiet.predicate = NSPredicate(format: "level == 0")
        quiet.propertiesToUpdate = ["text": "(quiet)"]
        try context.execute(quiet)

        let old = NSFetchRequest<NSFetchRequestResult>(entityName: "Entry")
        old.predicate = NSPredicate(format: "level >= 3")
        let delete = NSBatchDeleteRequest(fetchRequest: old)
        delete.resultType = .resultTypeObjectIDs
        let result = try context.execute(delete) as? NSBatchDeleteResult
        let deleted = result?.result as? [NSManagedObjectID] ?? []
        NSManagedObjectContext.mergeChanges(
            fromRemoteContextSave: [NSDeletedObjectsKey: deleted], into: [context])

        #expect(deleted.count == 4)
        #expect(held.filter { $0.managedObjectContext != nil }.count == 6)
        let counter = NSFetchRequest<NSManagedObject>(entityName: "Entry")
        counter.predicate = NSPredicate(format: "text == %@", "(quiet)")
        #expect(try context.count(for: counter) == 2)

        let request = NSPersistentHistoryChangeRequest.fetchHistory(after: lastToken)
        let history = try context.execute(request) as? NSPersistentHistoryResult
        let transactions = history?.result as? [NSPersistentHistoryTransaction] ?? []
        for transaction in transactions {
            for change in transaction.changes ?? [] {
                print(transaction.author ?? "-", change.changeType, change.changedObjectID)
            }
        }
        lastToken = transactions.last?.token ?? lastToken

        #expect(transactions.map { $0.changes?.count ?? 0 } == [10, 2, 4])
        let later = try context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: lastToken))
        #expect(((later as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction])?.isEmpty == true)
    }

    /// "Live results": a fetched results controller in sections by a key path
    /// (NSFetchedResultsController reference, `sectionNameKeyPath`) tells its delegate of a save
    /// that changes its results; the async sequence ends when its task is cancelled.
    @Test("Live results: a fetched results controller and the async sequence")
    func liveResults() async throws {
        final class Observer: NSFetchedResultsControllerDelegate {
            var changes = 0
            func controllerDidChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {
                changes += 1
            }
        }
        let observer = Observer()
        let context = try CompanyModel.stack()
        let sales = context.department("Sales")
        for name in ["Ann", "Bob"] { context.employee(name).setValue(sales, forKey: "department") }
        try context.save()

        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.sortDescriptors = [
            NSSortDescriptor(key: "department.name", ascending: true), NSSortDescriptor(key: "name", ascending: true),
        ]
        let controller = NSFetchedResultsController(
            fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "department.name", cacheName: nil)
        controller.delegate = observer
        try controller.performFetch()
        print(controller.sections?.map(\.name) ?? [], controller.fetchedObjects?.count ?? 0)

        #expect(controller.sections?.map(\.name) == ["Sales"])
        context.employee("Cy").setValue(context.department("Tools"), forKey: "department")
        try context.save()
        #expect(observer.changes == 1)
        #expect(controller.sections?.map(\.name) == ["Sales", "Tools"])

        let watcher = Task {
            for try await change in context.changes(for: request) {
                print(change.objectIDs.count, change.difference?.count ?? 0)
            }
        }
        watcher.cancel()
        _ = await watcher.result
        #expect(watcher.isCancelled)
    }

    /// "PostgreSQL": the store added by URL with remote-change notifications on; a save through it
    /// reaches the server (read back by a second coordinator).
    @Test("PostgreSQL: the store added by URL")
    func postgreSQL() throws {
        guard PostgresTestServer.runsTests else { return }
        let model = Self.model("Item", [("name", .stringAttributeType)])
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let schema = PostgresTestServer.uniqueSchema("article")
        do {
            // The article's URL names a production server: user, password, host, port, database.
            let url = URL(string: "postgres://app:secret@db.internal:5432/inventory?schema=shop&sslmode=require")!
            #expect([url.user, url.password, url.host, url.path] == ["app", "secret", "db.internal", "/inventory"])
        }
        do {
            let url = PostgresTestServer.url(schema: schema)
            try coordinator.addPersistentStore(
                ofType: NSPostgreSQLStoreType, configurationName: nil, at: url,
                options: [NSPersistentStoreRemoteChangeNotificationPostOptionKey: true])
        }
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        NSEntityDescription.insertNewObject(forEntityName: "Item", into: context).setValue("one", forKey: "name")
        try context.save()

        let other = NSPersistentStoreCoordinator(managedObjectModel: model)
        try other.addPersistentStore(
            ofType: NSPostgreSQLStoreType, configurationName: nil, at: PostgresTestServer.url(schema: schema))
        let reader = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        reader.persistentStoreCoordinator = other
        #expect(try reader.count(for: NSFetchRequest<NSManagedObject>(entityName: "Item")) == 1)
    }

    /// The README's example: the Library model's source loaded (`init(validatingContentsOf:)`
    /// takes Xcode's `.xcdatamodeld`), a container on an SQLite file, an insert saved and found
    /// again by a case-insensitive `BEGINSWITH[c]` (Predicate Programming Guide, "String
    /// Comparisons").
    @Test("The README's example: a model file, a container on SQLite, a save and a fetch")
    func readmeExample() throws {
        let directory = TemporaryDirectory()
        let modelURL = ArticleCodeTests.root.appendingPathComponent(
            "Examples/CompanyModel/Sources/CompanyModel/Library.xcdatamodeld")
        let storeURL = directory.file("Library.sqlite")

        let model = try NSManagedObjectModel(validatingContentsOf: modelURL)
        let container = NSPersistentContainer(name: "Library", managedObjectModel: model)
        container.persistentStoreDescriptions.first?.url = storeURL
        var loadError: (any Error)?
        container.loadPersistentStores { _, error in loadError = error }
        if let loadError { throw loadError }
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let author = NSEntityDescription.insertNewObject(forEntityName: "Author", into: context)
            author.setValue("Ursula K. Le Guin", forKey: "name")
            try context.save()
            let request = NSFetchRequest<NSManagedObject>(entityName: "Author")
            request.predicate = NSPredicate(format: "name BEGINSWITH[c] %@", "ursula")
            print(try context.fetch(request).count)  // 1
        }

        let check = container.newBackgroundContext()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Author")
        request.predicate = NSPredicate(format: "name BEGINSWITH[c] %@", "ursula")
        #expect(try check.performAndWait { try check.fetch(request).count } == 1)
        #expect(FileManager.default.fileExists(atPath: storeURL.path))
    }

    /// "Store types": an `NSAtomicStore` subclass registered under its own type
    /// (`registerStoreClass(_:forStoreType:)`, NSAtomicStore reference) is what the coordinator
    /// makes for that type, and objects saved through it are kept by its cache nodes; an SQLite
    /// store at `/dev/null` is an in-memory database that writes no file.
    @Test("Store types: an NSAtomicStore of one's own, and SQLite at /dev/null")
    func storeTypes() throws {
        final class JSONStore: NSAtomicStore {
            override var type: String { "JSON" }

            override func load() throws {
                // Read the file: a node per object, named by objectID(for:withReferenceObject:), then addCacheNodes(_:).
            }

            override func save() throws {
                // Write cacheNodes() and the metadata to the file.
            }

            override func newReferenceObject(for managedObject: NSManagedObject) -> Any { UUID().uuidString }
        }
        NSPersistentStoreCoordinator.registerStoreClass(JSONStore.self, forStoreType: "JSON")

        let directory = TemporaryDirectory()
        let model = Self.model("Note", [("text", .stringAttributeType)])
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(
            ofType: "JSON", configurationName: nil, at: directory.file("notes.json"))
        #expect(store is JSONStore)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        NSEntityDescription.insertNewObject(forEntityName: "Note", into: context).setValue("kept", forKey: "text")
        try context.save()
        #expect((store as? JSONStore)?.cacheNodes().count == 1)

        let memory = NSPersistentStoreCoordinator(managedObjectModel: model)
        try memory.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: URL(fileURLWithPath: "/dev/null"))
        let scratch = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        scratch.persistentStoreCoordinator = memory
        NSEntityDescription.insertNewObject(forEntityName: "Note", into: scratch).setValue("gone", forKey: "text")
        try scratch.save()
        #expect(try scratch.count(for: NSFetchRequest<NSManagedObject>(entityName: "Note")) == 1)
        #expect(!FileManager.default.fileExists(atPath: "/dev/null-wal"))
    }
}
