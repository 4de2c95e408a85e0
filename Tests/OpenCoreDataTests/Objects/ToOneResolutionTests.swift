import Foundation
import Testing

@testable import OpenCoreData

/// Following a to-one of an object read from a store, whose values are still its row's snapshot.
///
/// The object keeps the destination it resolved beside its values, so the values stay shared with
/// the row cache (writing the destination into them copied the whole row). What the app
/// sees must not change:
/// - Core Data Programming Guide, "Faulting and Uniquing": in one context, one record is one
///   managed object, so following a relationship twice answers the same object, the one
///   `object(with:)` answers for its ID.
/// - "Managed Objects and References" (and `refresh(_:mergeChanges:)`): relationships are strong
///   references; a followed destination lives as long as its source does.
/// - `hasFault(forRelationshipNamed:)`: a relationship already followed is not a fault.
/// - Setting, undoing, refreshing and merging a to-one answer the destination the store or the
///   app last gave it.
@Suite("Following a to-one over shared values")
struct ToOneResolutionTests {
    let directory = TemporaryDirectory()

    /// A store with one employee, "Ada", in department "R&D", managed by "Grace" (in "Ops"), and
    /// a fresh context on the store's coordinator.
    func savedStore() throws -> (NSManagedObjectContext, URL) {
        let url = directory.file("Company.sqlite")
        let seed = try sqliteStack(url)
        let ada = seed.employee("Ada")
        let grace = seed.employee("Grace")
        ada.setValue(seed.department("R&D"), forKey: "department")
        grace.setValue(seed.department("Ops"), forKey: "department")
        ada.setValue(grace, forKey: "manager")
        try seed.save()
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = seed.persistentStoreCoordinator
        return (context, url)
    }

    func fetchEmployee(_ name: String, in context: NSManagedObjectContext) throws -> NSManagedObject {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.predicate = NSPredicate(format: "name == %@", name)
        return try #require(try context.fetch(request).first)
    }

    @Test("a followed to-one answers one object, the context's object for the ID, and keeps the row shared")
    func uniquing() throws {
        let (context, _) = try savedStore()
        let ada = try fetchEmployee("Ada", in: context)
        #expect(ada.hasFault(forRelationshipNamed: "department"), "not followed yet")
        let id = try #require(ada.objectIDs(forRelationshipNamed: "department").first)
        let department = try #require(ada.value(forKey: "department") as? NSManagedObject)
        #expect(department === context.object(with: id))
        #expect(ada.value(forKey: "department") as? NSManagedObject === department)
        #expect(ada.value(forKeyPath: "department.name") as? String == "R&D")
        #expect(!ada.hasFault(forRelationshipNamed: "department"), "followed, the relationship is no fault")
        #expect(ada.objectIDs(forRelationshipNamed: "department") == [id])
        // Issue 21: following it did not copy the row's values.
        #expect(ada.heldRow != nil && ada.values.sharedStorage === ada.heldRow, "the values are still the cached row")
        #expect(!ada.hasChanges && ada.changedValues().isEmpty, "following a relationship changes nothing")
    }

    @Test("an object's several to-ones each answer their own destination")
    func severalToOnes() throws {
        let (context, _) = try savedStore()
        let ada = try fetchEmployee("Ada", in: context)
        let grace = try #require(ada.value(forKey: "manager") as? NSManagedObject)
        let department = try #require(ada.value(forKey: "department") as? NSManagedObject)
        #expect(grace.value(forKey: "name") as? String == "Grace")
        #expect(department.value(forKey: "name") as? String == "R&D")
        // Read again in the other order: each is still its own.
        #expect(ada.value(forKey: "department") as? NSManagedObject === department)
        #expect(ada.value(forKey: "manager") as? NSManagedObject === grace)
        #expect(ada.value(forKeyPath: "manager.department.name") as? String == "Ops")
        #expect(!ada.hasFault(forRelationshipNamed: "manager") && !ada.hasFault(forRelationshipNamed: "department"))
        #expect(ada.value(forKey: "badge") == nil, "an empty to-one answers nil")
    }

    @Test("relationships are strong: a followed destination lives while its source does")
    func sourceKeepsDestination() throws {
        let (context, _) = try savedStore()
        let ada = try fetchEmployee("Ada", in: context)
        weak var department: NSManagedObject?
        do {
            let followed = try #require(ada.value(forKey: "department") as? NSManagedObject)
            #expect(followed.value(forKey: "name") as? String == "R&D")
            department = followed
        }
        context.processPendingChanges()  // the end of the event: unreferenced objects go
        #expect(department != nil, "Ada refers to it")
        #expect(ada.value(forKey: "department") as? NSManagedObject === department)
        context.refresh(ada, mergeChanges: false)
        context.processPendingChanges()
        #expect(department == nil, "the refreshed fault let go of its destination")
        #expect(ada.value(forKeyPath: "department.name") as? String == "R&D")
    }

    @Test("setting a followed to-one, undoing it and saving answer what the app last gave it")
    func settingAndUndo() throws {
        let (context, url) = try savedStore()
        context.undoManager = UndoManager()
        let ada = try fetchEmployee("Ada", in: context)
        let rnd = try #require(ada.value(forKey: "department") as? NSManagedObject)
        let ops = try #require(ada.value(forKeyPath: "manager.department") as? NSManagedObject)
        context.processPendingChanges()
        ada.setValue(ops, forKey: "department")
        #expect(ada.value(forKey: "department") as? NSManagedObject === ops)
        #expect((rnd.value(forKey: "employees") as? Set<NSManagedObject>)?.contains(ada) == false)
        #expect((ops.value(forKey: "employees") as? Set<NSManagedObject>)?.contains(ada) == true)
        context.processPendingChanges()
        context.undoManager?.undo()
        #expect(ada.value(forKey: "department") as? NSManagedObject === rnd, "undo restores the first department")
        context.undoManager?.redo()
        #expect(ada.value(forKey: "department") as? NSManagedObject === ops)
        try context.save()
        let reader = try sqliteStack(url)
        #expect(try fetchEmployee("Ada", in: reader).value(forKeyPath: "department.name") as? String == "Ops")
    }

    @Test("a to-one another context changed answers the new destination once the object is refreshed")
    func refreshAfterChangeElsewhere() throws {
        let (context, _) = try savedStore()
        let ada = try fetchEmployee("Ada", in: context)
        let rnd = try #require(ada.value(forKey: "department") as? NSManagedObject)
        #expect(rnd.value(forKey: "name") as? String == "R&D")
        let other = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        other.persistentStoreCoordinator = context.persistentStoreCoordinator
        let theirAda = try fetchEmployee("Ada", in: other)
        theirAda.setValue(theirAda.value(forKeyPath: "manager.department"), forKey: "department")
        try other.save()
        #expect(ada.value(forKey: "department") as? NSManagedObject === rnd, "not refreshed yet")
        context.refresh(ada, mergeChanges: true)
        #expect(ada.value(forKeyPath: "department.name") as? String == "Ops")
        let ops = try #require(ada.value(forKey: "department") as? NSManagedObject)
        #expect(ops !== rnd)
        #expect(ops === context.object(with: ops.objectID))
    }
}
