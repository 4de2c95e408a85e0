import Foundation
import Testing

@testable import OpenCoreData

/// A fetched object, and an inserted one, hold their ID as a value and make the
/// `NSManagedObjectID` instance only when asked. What must not change, from the
/// NSManagedObject reference (`objectID`: "An object ID uniquely identifies the same managed
/// object both between managed object contexts in a single application, and in multiple
/// applications"), the NSManagedObjectID reference (`isTemporaryID`, `persistentStore`,
/// `uriRepresentation()`; "object IDs are thread safe") and the Core Data Programming Guide,
/// "Faulting and Uniquing" (one object per ID in a context):
///
/// - the ID answered is equal, with an equal hash, to the ID that names the row any other way
///   (a URI, another context's object), names the store and the row, and is the same instance
///   each time it is read;
/// - `object(with:)` and `registeredObject(for:)` with it answer the fetched object;
/// - the ID stays whole after its store is removed from the coordinator, as an ID instance kept
///   from before does (its URI keeps the store's identifier);
/// - first reads from several threads at once agree on one instance.
@Suite("Object IDs made on demand")
struct ObjectIDOnDemandTests {
    /// A SQLite store at `url` with three saved employees; answers a fresh context on it.
    private static func savedStore(at url: URL) throws -> NSManagedObjectContext {
        let writer = try sqliteContext(url)
        for name in ["Ada", "Grace", "Edsger"] { _ = writer.employee(name) }
        try writer.save()
        return try sqliteContext(url)
    }

    private static func sqliteContext(_ url: URL) throws -> NSManagedObjectContext {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    private static func fetchEmployees(_ context: NSManagedObjectContext) throws -> [NSManagedObject] {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        return try context.fetch(request)
    }

    @Test("a fetched object's ID names its row and store, is one instance, and finds the object")
    func fetchedObjectsID() throws {
        let directory = TemporaryDirectory()
        let context = try Self.savedStore(at: directory.file("Company.sqlite"))
        let store = try #require(context.persistentStoreCoordinator?.persistentStores.first)
        let employees = try Self.fetchEmployees(context)
        #expect(employees.count == 3)
        // Another context's object for the same row: its ID is made the same way, separately.
        let other = try Self.sqliteContext(directory.file("Company.sqlite"))
        let others = try Self.fetchEmployees(other)
        for (employee, twin) in zip(employees, others) {
            let id = employee.objectID
            #expect(id === employee.objectID, "every read answers the same instance")
            #expect(!id.isTemporaryID)
            #expect(id.persistentStore === store)
            #expect(id.entity.name == "Employee")
            #expect(id == twin.objectID)
            #expect(id.hashValue == twin.objectID.hashValue)
            #expect(id.uriRepresentation() == twin.objectID.uriRepresentation())
            let named = try #require(
                context.persistentStoreCoordinator?.managedObjectID(forURIRepresentation: id.uriRepresentation()))
            #expect(named == id)
            #expect(context.object(with: named) === employee, "one object per ID in a context")
            #expect(context.registeredObject(for: twin.objectID) === employee)
        }
        #expect(Set(employees.map(\.objectID)).count == 3)
    }

    @Test("an ID first asked for after its store was removed still names the store and the row")
    func idAfterTheStoreIsRemoved() throws {
        let directory = TemporaryDirectory()
        let context = try Self.savedStore(at: directory.file("Company.sqlite"))
        let coordinator = try #require(context.persistentStoreCoordinator)
        let identifier = try #require(coordinator.persistentStores.first?.identifier)
        let employees = try Self.fetchEmployees(context)
        let kept = employees[0].objectID
        // No reference to the store is kept here: it may go away with the coordinator's.
        try coordinator.remove(coordinator.persistentStores[0])
        let later = employees[1].objectID
        #expect(!later.isTemporaryID)
        #expect(later.uriRepresentation().absoluteString.hasPrefix("x-coredata://\(identifier)/Employee/p"))
        #expect(later != kept)
        #expect(kept.uriRepresentation().absoluteString.hasPrefix("x-coredata://\(identifier)/Employee/p"))
    }

    @Test("first reads of objectID from several threads at once agree on one instance")
    func concurrentFirstReads() throws {
        let directory = TemporaryDirectory()
        let context = try Self.savedStore(at: directory.file("Company.sqlite"))
        for employee in try Self.fetchEmployees(context) {
            let answers = Answers()
            let shared = UncheckedSendable(employee)
            DispatchQueue.concurrentPerform(iterations: 8) { _ in answers.add(ObjectIdentifier(shared.value.objectID)) }
            #expect(answers.distinct == 1)
            #expect(answers.all.first == ObjectIdentifier(employee.objectID))
        }
    }

    @Test("an inserted object's temporary ID is one instance, found in the registry, until the save")
    func insertedObjectsTemporaryID() throws {
        let directory = TemporaryDirectory()
        let context = try Self.sqliteContext(directory.file("Company.sqlite"))
        let ada = context.employee("Ada")
        let temporary = ada.objectID
        #expect(temporary.isTemporaryID)
        #expect(ada.objectID === temporary)
        #expect(context.registeredObject(for: temporary) === ada)
        #expect(context.object(with: temporary) === ada)
        // An object asked for its ID only after the save gets the permanent one.
        let grace = context.employee("Grace")
        try context.save()
        #expect(!ada.objectID.isTemporaryID)
        #expect(!grace.objectID.isTemporaryID)
        #expect(context.registeredObject(for: grace.objectID) === grace)
        #expect(context.registeredObject(for: temporary) == nil)
    }

    /// Identifiers collected from several threads.
    private final class Answers: @unchecked Sendable {
        private let lock = NSLock()
        private(set) var all: [ObjectIdentifier] = []
        func add(_ answer: ObjectIdentifier) {
            lock.lock()
            all.append(answer)
            lock.unlock()
        }
        var distinct: Int { Set(all).count }
    }
}
