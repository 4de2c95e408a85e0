import CoreData
import Foundation
import OpenCoreDataPostgres
import SwiftData
import Testing

/// Rows of `DEVIATIONS.md` that no other suite pins: each test checks the behaviour its row
/// describes (``DeviationsDocumentTests`` checks that every row names a test or says why none can
/// pin it). Where the row follows Apple's documentation, the test says which.
@Suite("DEVIATIONS.md: what the rows say")
struct DeviationTests {
    @Test("NSPredicate(format:_: Any...) takes objects, arrays, Swift values and an optional's nil")
    func anyArguments() throws {
        let missing: String? = nil
        let byName = NSPredicate(format: "name IN %@ OR nickname == %@", ["Ada", "Grace"], missing as Any)
        #expect(byName.evaluate(with: ["name": "Grace"]))
        #expect(byName.evaluate(with: ["name": "Alan", "nickname": NSNull()]))
        #expect(!byName.evaluate(with: ["name": "Alan", "nickname": "Al"]))
        let context = try CompanyModel.stack()
        let sales = context.department("Sales")
        let ada = context.employee("Ada")
        ada.setValue(sales, forKey: "department")
        #expect(NSPredicate(format: "department == %@", sales).evaluate(with: ada))
    }

    @Test("a custom-selector comparison builds and prints (evaluating it is what traps)")
    func customSelectorBuildsAndPrints() {
        let predicate = NSComparisonPredicate(
            leftExpression: NSExpression(forKeyPath: "name"), rightExpression: NSExpression(forConstantValue: "Ada"),
            customSelector: Selector("isEqualToString:"))
        #expect(predicate.predicateOperatorType == .customSelector)
        #expect(predicate.customSelector == Selector("isEqualToString:"))
        #expect(predicate.predicateFormat.contains("isEqualToString:"))
    }

    @Test("evaluating a custom-selector comparison stops the program, as Apple's raises")
    func customSelectorEvaluationTraps() async {
        await #expect(processExitsWith: .failure) {
            let predicate = NSComparisonPredicate(
                leftExpression: NSExpression(forKeyPath: "name"),
                rightExpression: NSExpression(forConstantValue: "Ada"),
                customSelector: Selector("isEqualToString:"))
            _ = predicate.evaluate(with: ["name": "Ada"])
        }
    }

    @Test("ANYKEY parses and prints, and evaluates to nil")
    func anyKeyEvaluatesToNil() throws {
        let predicate = try NSPredicate(validatingFormat: "ANYKEY == 'x'", argumentArray: nil)
        #expect(predicate.predicateFormat == #"ANYKEY == "x""#)
        #expect(!predicate.evaluate(with: ["a": "x"]))
        #expect(NSExpression(format: "ANYKEY").expressionValue(with: ["a": "x"], context: nil) == nil)
    }

    @Test("entity(forEntityName:in:) takes a model as well as a context")
    func entityInModel() throws {
        let model = CompanyModel.make()
        #expect(NSEntityDescription.entity(forEntityName: "Manager", in: model)?.superentity?.name == "Employee")
        #expect(NSEntityDescription.entity(forEntityName: "Nobody", in: model) == nil)
        let context = try CompanyModel.stack(model)
        #expect(NSEntityDescription.entity(forEntityName: "Manager", in: context)?.name == "Manager")
    }

    /// NSManagedObject reference, `changedValues()`: "the keys and old values of the persistent
    /// properties that have been changed since last fetching or saving".
    @Test("a property set back to its saved value still counts as changed until the next save")
    func changedValuesAfterSettingBack() throws {
        let context = try CompanyModel.stack()
        let ada = context.employee("Ada")
        try context.save()
        ada.setValue("Grace", forKey: "name")
        ada.setValue("Ada", forKey: "name")
        #expect(ada.changedValues()["name"] as? String == "Ada")
        try context.save()
        #expect(ada.changedValues().isEmpty)
    }

    @Test("default stores live in $XDG_DATA_HOME, else ~/.local/share: the container's and SwiftData's")
    func defaultDirectory() {
        let environment = ProcessInfo.processInfo.environment["XDG_DATA_HOME"] ?? ""
        let expected =
            environment.isEmpty
            ? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share")
            : URL(fileURLWithPath: environment)
        #expect(NSPersistentContainer.defaultDirectoryURL().standardizedFileURL == expected.standardizedFileURL)
        let configuration = ModelConfiguration()
        #expect(configuration.url.lastPathComponent == "default.store")
        #expect(
            configuration.url.deletingLastPathComponent().standardizedFileURL
                == FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first?
                .standardizedFileURL)
    }

    /// A store whose reference objects are strings.
    final class NamedStore: NSAtomicStore {
        override var type: String { "Named" }
        override func load() throws {}
        override func save() throws {}
        override func newReferenceObject(for managedObject: NSManagedObject) -> Any {
            managedObject.value(forKey: "name") as? String ?? "unnamed"
        }
    }

    @Test("a custom store's string reference object is an s-prefixed URI; integers keep Apple's p form")
    func stringReferenceURI() throws {
        NSPersistentStoreCoordinator.registerStoreClass(NamedStore.self, forStoreType: "Named")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
        let directory = TemporaryDirectory()
        try coordinator.addPersistentStore(ofType: "Named", configurationName: nil, at: directory.file("named"))
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let ada = context.employee("Ada")
        try context.save()
        #expect(ada.objectID.uriRepresentation().absoluteString.hasSuffix("/Employee/sAda"))
        #expect(coordinator.managedObjectID(forURIRepresentation: ada.objectID.uriRepresentation()) == ada.objectID)

        let sqlite = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
        try sqlite.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: directory.file("Company.sqlite"))
        let other = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        other.persistentStoreCoordinator = sqlite
        let grace = other.employee("Grace")
        try other.save()
        #expect(grace.objectID.uriRepresentation().absoluteString.hasSuffix("/Employee/p1"))
    }

    @Test("in a predicate, a managed object equals its object ID and its counterpart in another context")
    func objectEqualsItsID() throws {
        let context = try CompanyModel.stack()
        let sales = context.department("Sales")
        let ada = context.employee("Ada")
        ada.setValue(sales, forKey: "department")
        try context.save()
        #expect(NSPredicate(format: "department == %@", sales.objectID).evaluate(with: ada))
        let other = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        other.persistentStoreCoordinator = context.persistentStoreCoordinator
        let salesThere = try other.existingObject(with: sales.objectID)
        #expect(salesThere !== sales)
        #expect(NSPredicate(format: "department == %@", salesThere).evaluate(with: ada))
    }

    @Test("an XML store writes control characters as character references and reads them back")
    func xmlControlCharacters() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Company.xml")
        let text = "bell\u{7}start\u{1}end"
        do {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
            try coordinator.addPersistentStore(ofType: NSXMLStoreType, configurationName: nil, at: url)
            let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            context.employee(text)
            try context.save()
        }
        let file = try String(contentsOf: url, encoding: .utf8)
        #expect(file.contains("&#7;") && file.contains("&#1;"))
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
        try coordinator.addPersistentStore(ofType: NSXMLStoreType, configurationName: nil, at: url)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let names = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee")).map {
            $0.value(forKey: "name") as? String
        }
        #expect(names == [text])
    }

    @Test("a history request's requestType is .fetchRequestType")
    func historyRequestType() {
        #expect(
            NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?).requestType
                == .fetchRequestType)
    }

    @Test("the delegate's controller shares the controller's results: isSameController(as:), not ===")
    func delegateGetsAnEqualController() throws {
        final class Recorder: NSFetchedResultsControllerDelegate {
            var seen: NSFetchedResultsController<NSFetchRequestResult>?
            func controllerDidChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {
                seen = controller
            }
        }
        let context = try CompanyModel.stack()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        let controller = NSFetchedResultsController(
            fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: nil, cacheName: nil)
        let recorder = Recorder()
        controller.delegate = recorder
        try controller.performFetch()
        context.employee("Ada")
        try context.save()
        let seen = try #require(recorder.seen)
        #expect(seen.isSameController(as: controller))
        #expect(seen.fetchedObjects?.count == 1)
        #expect((seen.fetchedObjects?.first as? NSManagedObject) === controller.fetchedObjects?.first)
    }

    /// NSManagedObjectContext reference, `setQueryGenerationFrom(_:)`: query generations are a
    /// feature of SQLite stores in WAL mode.
    @Test("a context pinned on a store without generations reads its latest state, with a token")
    func pinnedOnOtherStoresReadsLatest() throws {
        let pinned = try CompanyModel.stack()
        try pinned.setQueryGenerationFrom(.current)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        #expect(try pinned.count(for: request) == 0)
        let writer = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        writer.persistentStoreCoordinator = pinned.persistentStoreCoordinator
        writer.employee("Ada")
        try writer.save()
        #expect(try pinned.count(for: request) == 1)
        #expect(pinned.queryGenerationToken != nil)
    }

    /// Core Data Programming Guide / NSMergePolicy reference: uniqueness constraints are
    /// resolved when a save reaches the store.
    @Test("a child's save to its parent does not check constraints; the parent's save to the store does")
    func constraintsCheckedWhenTheSaveReachesTheStore() throws {
        let model = CompanyModel.make()
        model.entitiesByName["Department"]?.uniquenessConstraints = [["name"]]
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
        let parent = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        parent.persistentStoreCoordinator = coordinator
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = parent
        try child.performAndWait {
            child.department("Sales")
            child.department("Sales")
            try child.save()
        }
        var failure: NSError?
        parent.performAndWait {
            do {
                try parent.save()
            } catch {
                failure = error as NSError
            }
        }
        #expect(failure?.code == NSManagedObjectConstraintMergeError)
    }

    @Test("a to-many without an inverse is kept in a join table whose other column is <name>_INVERSE")
    func toManyWithoutInverseJoinTable() throws {
        let model = CompanyModel.make()
        let followed = NSRelationshipDescription()
        followed.name = "followed"
        followed.destinationEntity = model.entitiesByName["Department"]
        followed.maxCount = 0
        followed.deleteRule = .nullifyDeleteRule
        model.entitiesByName["Employee"]?.properties.append(followed)
        let directory = TemporaryDirectory()
        let url = directory.file("Company.sqlite")
        do {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url)
            let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            let ada = context.employee("Ada")
            ada.setValue(NSSet(array: [context.department("Sales"), context.department("Tools")]), forKey: "followed")
            try context.save()
        }
        let tables = try sqlite3(
            url, "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_%FOLLOWED' ESCAPE '\\'")
        let table = try #require(tables.first)
        let columns = try sqlite3(url, "SELECT name FROM pragma_table_info('\(table)') ORDER BY name")
        #expect(columns.contains("\(table)_INVERSE"))
        #expect(try sqlite3(url, "SELECT COUNT(*) FROM \(table)") == ["2"])
    }

    /// NSManagedObjectContext reference, `undo()`: undo reverts the last change, a saved deletion
    /// included.
    @Test("undoing a saved deletion inserts the object again with its old object ID")
    func undoneSavedDeletionKeepsItsID() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Undo.sqlite")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let ada = context.employee("Ada")
        try context.save()
        let id = ada.objectID
        let undo = UndoManager()
        context.undoManager = undo
        context.delete(ada)
        context.processPendingChanges()
        if undo.groupingLevel > 0 { undo.endUndoGrouping() }
        try context.save()
        context.undo()
        try context.save()
        let reader = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        reader.persistentStoreCoordinator = coordinator
        let stored = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee"))
        #expect(stored.map(\.objectID) == [id])
        #expect(stored.first?.value(forKey: "name") as? String == "Ada")
    }

    /// NSBatchUpdateRequest reference: a batch update changes the store, not the objects in
    /// memory, which keep their values until the app merges or refreshes them.
    @Test("after a batch update, objects holding values keep them, and a fault fired later reads the store")
    func batchUpdateDropsCachedRows() throws {
        let directory = TemporaryDirectory()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
        try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: directory.file("Batch.sqlite"))
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let ada = context.employee("Ada", salary: 1)
        try context.save()
        let raise = NSBatchUpdateRequest(entityName: "Employee")
        raise.propertiesToUpdate = ["salary": 2.0]
        try context.execute(raise)
        #expect(ada.value(forKey: "salary") as? Double == 1)
        let later = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        later.persistentStoreCoordinator = coordinator
        #expect(later.object(with: ada.objectID).value(forKey: "salary") as? Double == 2)
    }

    @Test("a relationship's .unique option is kept in the schema and makes no uniqueness constraint")
    func uniqueRelationshipOption() throws {
        let entities = try #require(NSManagedObjectModel.makeManagedObjectModel(for: [Owner.self])?.entitiesByName)
        #expect(Schema([Owner.self]).entity(for: Owner.self)?.relationshipsByName["pet"]?.isUnique == true)
        #expect(entities["Owner"]?.uniquenessConstraints.isEmpty == true)
        #expect(entities["Owner"]?.relationshipsByName["pet"] != nil)
    }

    /// A context on a new PostgreSQL store of one entity, `Item` (name, and a payload that allows
    /// external storage), in `schema`.
    static func postgresItems(_ schema: String) throws -> NSManagedObjectContext {
        let model = ArticleExampleTests.model(
            "Item", [("name", .stringAttributeType), ("payload", .binaryDataAttributeType)])
        model.entitiesByName["Item"]?.attributesByName["payload"]?.allowsExternalBinaryDataStorage = true
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(
            ofType: NSPostgreSQLStoreType, configurationName: nil, at: PostgresTestServer.url(schema: schema))
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    @Test(
        "PostgreSQL compares text in SQL by bytes: decomposed and precomposed differ, an affix may match inside a character"
    )
    func postgresTextComparesByBytes() throws {
        guard PostgresTestServer.runsTests else { return }
        let context = try Self.postgresItems(PostgresTestServer.uniqueSchema("bytes"))
        NSEntityDescription.insertNewObject(forEntityName: "Item", into: context).setValue(
            "e\u{301}clair", forKey: "name")
        try context.save()
        context.reset()
        func count(_ format: String, _ argument: String) throws -> Int {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
            request.predicate = NSPredicate(format: format, argument)
            return try context.count(for: request)
        }
        #expect("e\u{301}clair" == "\u{e9}clair", "Swift compares by canonical equivalence")
        #expect(try count("name == %@", "\u{e9}clair") == 0)
        #expect(try count("name == %@", "e\u{301}clair") == 1)
        #expect(try count("name BEGINSWITH %@", "e") == 1)
    }

    @Test("PostgreSQL keeps binary data that allows external storage in the row")
    func postgresExternalDataInTheRow() throws {
        guard PostgresTestServer.runsTests else { return }
        let schema = PostgresTestServer.uniqueSchema("external")
        let context = try Self.postgresItems(schema)
        let payload = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0) })
        NSEntityDescription.insertNewObject(forEntityName: "Item", into: context).setValue(payload, forKey: "payload")
        try context.save()
        context.reset()
        let stored = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item")).first
        #expect(stored?.value(forKey: "payload") as? Data == payload)
        // The schema name is an identifier (lower-case letters, digits and "_"), quoted as one.
        let quoted = "\"" + schema + "\""
        #expect(try PostgresTestServer.run("SELECT octet_length(\"ZPAYLOAD\") FROM \(quoted).\"ZITEM\"") == 200_000)
    }
}

/// A model whose to-one relationship has the `.unique` option.
@Model final class Owner {
    var name: String
    @Relationship(.unique) var pet: Pet?
    init(name: String) { self.name = name }
}

/// The destination of ``Owner/pet``.
@Model final class Pet {
    var name: String
    init(name: String) { self.name = name }
}
