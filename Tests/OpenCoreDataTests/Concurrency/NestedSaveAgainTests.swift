import CoreData
import Foundation
import Testing

/// A child context saving an object again after its first save reached the store through the
/// parent. NSManagedObjectContext reference, `save()`: "If a context's parent store is another
/// managed object context, then save() only updates managed objects in that parent store" — the
/// changes are pushed up one level and reach the store when the root context saves. An object a
/// child inserted keeps its temporary ID in the child after the root's save gives the root's
/// object a permanent one (`obtainPermanentIDs(for:)` is the documented way to avoid that), so
/// the child's later saves name the object by a temporary ID the root no longer files it under:
/// every later edit, delete and reference to it must still reach the store, never vanish.
@Suite("Nested contexts: saving again after the root saved")
struct NestedSaveAgainTests {
    enum Child: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case privateQueue, mainQueue
        var testDescription: String { rawValue }
        var type: NSManagedObjectContextConcurrencyType {
            self == .mainQueue ? .mainQueueConcurrencyType : .privateQueueConcurrencyType
        }
    }

    /// The stores the rule is checked on: the two SQL stores and the in-memory store.
    static let stores: [StoreKind] = StoreKind.allCases.filter { [.inMemory, .sqlite, .postgres].contains($0) }

    let directory = TemporaryDirectory()

    /// A root context on a new store of `kind` and a child of `type`.
    func family(
        _ kind: StoreKind, _ child: Child
    ) throws -> (root: NSManagedObjectContext, child: NSManagedObjectContext) {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
        let url: URL? =
            switch kind {
            case .inMemory: nil
            case .postgres: PostgresTestServer.url(schema: PostgresTestServer.uniqueSchema("nested_again"))
            default: directory.file("Company.\(kind.rawValue)")
            }
        try coordinator.addPersistentStore(ofType: kind.type, configurationName: nil, at: url, options: nil)
        let root = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        root.persistentStoreCoordinator = coordinator
        let context = NSManagedObjectContext(concurrencyType: child.type)
        context.parent = root
        return (root, context)
    }

    /// The stored employees' names and salaries, read by a new root context.
    func stored(_ coordinator: NSPersistentStoreCoordinator?) throws -> [String: Double] {
        let reader = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        reader.persistentStoreCoordinator = coordinator
        return try reader.performAndWait {
            var result: [String: Double] = [:]
            for employee in try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee")) {
                result[employee.value(forKey: "name") as? String ?? "?"] = employee.value(forKey: "salary") as? Double
            }
            return result
        }
    }

    /// Inserts what `insert` makes in the child, saves the child, then the root: the object's
    /// insert has reached the store, and the child's object keeps its temporary ID. A main-queue
    /// child runs its block on the main queue; the test thread waits for it.
    func insertedAndStored(
        _ root: NSManagedObjectContext, _ child: NSManagedObjectContext, _ insert: () -> NSManagedObject
    ) throws -> NSManagedObject {
        let object = try child.performAndWait {
            let object = insert()
            try child.save()
            return object
        }
        try saveRoot(root)
        return object
    }

    /// Saves the root on its queue.
    func saveRoot(_ root: NSManagedObjectContext) throws {
        try root.performAndWait {
            try root.save()
            #expect(!root.hasChanges)
        }
    }

    @Test(
        "an edit a child saves after its insert reached the store is saved by the root",
        arguments: stores, Child.allCases)
    func editAfterRootSave(kind: StoreKind, child type: Child) throws {
        let (root, child) = try family(kind, type)
        let ada = try insertedAndStored(root, child) { child.employee("Ada", salary: 10) }
        #expect(try stored(root.persistentStoreCoordinator) == ["Ada": 10])
        try child.performAndWait {
            #expect(ada.objectID.isTemporaryID, "the child's object keeps its temporary ID")
            ada.setValue(20.0, forKey: "salary")
            try child.save()
        }
        root.performAndWait {
            #expect(root.hasChanges, "the parent holds the child's edit until it saves")
            #expect(root.updatedObjects.count == 1)
        }
        try saveRoot(root)
        #expect(try stored(root.persistentStoreCoordinator) == ["Ada": 20])
        // And a third time: the object is still found by its temporary ID.
        try child.performAndWait {
            ada.setValue(30.0, forKey: "salary")
            try child.save()
        }
        try saveRoot(root)
        #expect(try stored(root.persistentStoreCoordinator) == ["Ada": 30])
    }

    @Test(
        "a delete a child saves after its insert reached the store is saved by the root",
        arguments: stores, Child.allCases)
    func deleteAfterRootSave(kind: StoreKind, child type: Child) throws {
        let (root, child) = try family(kind, type)
        let ada = try insertedAndStored(root, child) {
            child.employee("Bob", salary: 5)
            return child.employee("Ada", salary: 10)
        }
        try child.performAndWait {
            child.delete(ada)
            try child.save()
        }
        root.performAndWait { #expect(root.deletedObjects.count == 1) }
        try saveRoot(root)
        #expect(try stored(root.persistentStoreCoordinator) == ["Bob": 5])
    }

    @Test(
        "a relationship a child sets to an object whose insert reached the store points at its stored row",
        arguments: stores, Child.allCases)
    func referenceAfterRootSave(kind: StoreKind, child type: Child) throws {
        let (root, child) = try family(kind, type)
        let sales = try insertedAndStored(root, child) { child.department("Sales") }
        try child.performAndWait {
            let ada = child.employee("Ada", salary: 10)
            ada.setValue(sales, forKey: "department")
            try child.save()
        }
        try saveRoot(root)
        let reader = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        reader.persistentStoreCoordinator = root.persistentStoreCoordinator
        try reader.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Department")
            let departments = try reader.fetch(request)
            #expect(departments.count == 1, "the department is stored once")
            let members = departments.first?.value(forKey: "employees") as? Set<NSManagedObject> ?? []
            #expect(members.compactMap { $0.value(forKey: "name") as? String } == ["Ada"])
        }
    }

    @Test(
        "a child's object whose insert reached the store reads its values through the parent after a refresh",
        arguments: stores, Child.allCases)
    func faultAfterRootSave(kind: StoreKind, child type: Child) throws {
        let (root, child) = try family(kind, type)
        let ada = try insertedAndStored(root, child) { child.employee("Ada", salary: 10) }
        try child.performAndWait {
            child.refresh(ada, mergeChanges: false)
            #expect(ada.isFault)
            #expect(ada.value(forKey: "salary") as? Double == 10)
            let again = try child.existingObject(with: ada.objectID)
            #expect(again === ada)
        }
    }
}
