import CoreData
import Testing

/// Undo in a context. Rules: Core Data Programming Guide, "Undo Management" (the context's undo
/// manager is nil by default on iOS; changes are registered per event by
/// `processPendingChanges()`, several edits of a property coalescing into one step; undo reverts
/// attribute and relationship changes, inserts and deletes, transient properties included;
/// `processPendingChanges()` + `disableUndoRegistration()` makes changes that cannot be undone);
/// NSManagedObjectContext reference, `undo()`, `redo()`, `rollback()`, `reset()`.
@Suite("Undo in a context")
struct UndoTests {
    /// A context over a SQLite store with an undo manager whose groups the test closes (there is
    /// no run loop to close them), and Ada, Research and Ada's badge saved.
    struct Setup {
        let directory = TemporaryDirectory()
        let context: NSManagedObjectContext
        let undo = UndoManager()
        let ada: NSManagedObject
        let research: NSManagedObject
        let badge: NSManagedObject

        init() throws {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
            try coordinator.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: directory.file("Undo.sqlite"), options: nil)
            context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            ada = context.employee("Ada", salary: 100)
            research = context.department("Research")
            badge = NSEntityDescription.insertNewObject(forEntityName: "Badge", into: context)
            ada.setValue(research, forKey: "department")
            ada.setValue(badge, forKey: "badge")
            try context.save()
            context.undoManager = undo
        }

        /// Ends the event and closes the undo group it opened: one undoable step.
        func endStep() {
            context.processPendingChanges()
            if undo.groupingLevel > 0 { undo.endUndoGrouping() }
        }

        /// What a fresh coordinator reads from the store: employee names with their department.
        func stored() throws -> [String: String] {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
            try coordinator.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: directory.file("Undo.sqlite"), options: nil)
            let reader = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            reader.persistentStoreCoordinator = coordinator
            var result: [String: String] = [:]
            for employee in try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee")) {
                let department = (employee.value(forKey: "department") as? NSManagedObject)?.value(forKey: "name")
                result[employee.value(forKey: "name") as? String ?? ""] = department as? String ?? "-"
            }
            return result
        }
    }

    @Test("a context has no undo manager by default")
    func noUndoManagerByDefault() {
        #expect(NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType).undoManager == nil)
    }

    @Test("several edits of a property in one event undo in one step, and redo")
    func coalescing() throws {
        let setup = try Setup()
        for name in ["Ada L", "Ada Lo", "Ada Lovelace"] { setup.ada.setValue(name, forKey: "name") }
        setup.endStep()
        setup.context.undo()
        #expect(setup.ada.value(forKey: "name") as? String == "Ada")
        #expect(!setup.undo.canUndo, "one step")
        #expect(!setup.context.hasChanges, "undone back to the saved values: nothing to save")
        setup.context.redo()
        #expect(setup.ada.value(forKey: "name") as? String == "Ada Lovelace")
        #expect(setup.context.hasChanges)
    }

    @Test("separate events are separate steps")
    func separateSteps() throws {
        let setup = try Setup()
        setup.ada.setValue(200.0, forKey: "salary")
        setup.endStep()
        setup.ada.setValue(300.0, forKey: "salary")
        setup.endStep()
        setup.context.undo()
        #expect(setup.ada.value(forKey: "salary") as? Double == 200)
        setup.context.undo()
        #expect(setup.ada.value(forKey: "salary") as? Double == 100)
    }

    @Test("undoing an insert takes the object out of the context; redo puts it back")
    func insert() throws {
        let setup = try Setup()
        let grace = setup.context.employee("Grace")
        grace.setValue(setup.research, forKey: "department")
        setup.endStep()
        setup.context.undo()
        #expect(setup.context.insertedObjects.isEmpty)
        #expect(grace.managedObjectContext == nil)
        let members = setup.research.value(forKey: "employees") as? Set<NSManagedObject>
        #expect(members == [setup.ada], "the inverse relationship forgot Grace too")
        setup.context.redo()
        #expect(setup.context.insertedObjects == [grace])
        #expect(grace.value(forKey: "department") as? NSManagedObject === setup.research)
        #expect(setup.research.value(forKey: "employees") as? Set<NSManagedObject> == [setup.ada, grace])
        try setup.context.save()
        #expect(try setup.stored() == ["Ada": "Research", "Grace": "Research"])
    }

    @Test("undoing a cascade delete restores every deleted object and relationship")
    func cascadeDelete() throws {
        let setup = try Setup()
        setup.context.delete(setup.ada)
        setup.endStep()
        #expect(setup.context.deletedObjects == [setup.ada, setup.badge], "the badge went by the cascade rule")
        #expect((setup.research.value(forKey: "employees") as? Set<NSManagedObject>)?.isEmpty == true)
        setup.context.undo()
        #expect(setup.context.deletedObjects.isEmpty)
        #expect(!setup.ada.isDeleted && !setup.badge.isDeleted)
        #expect(setup.ada.value(forKey: "badge") as? NSManagedObject === setup.badge)
        #expect(setup.badge.value(forKey: "holder") as? NSManagedObject === setup.ada)
        #expect(setup.research.value(forKey: "employees") as? Set<NSManagedObject> == [setup.ada])
        #expect(!setup.context.hasChanges)
        setup.context.redo()
        #expect(setup.context.deletedObjects == [setup.ada, setup.badge])
    }

    @Test("undoing a relationship edit moves the object back, inverses included")
    func relationshipEdit() throws {
        let setup = try Setup()
        let sales = setup.context.department("Sales")
        setup.endStep()
        setup.ada.setValue(sales, forKey: "department")
        setup.endStep()
        setup.context.undo()
        #expect(setup.ada.value(forKey: "department") as? NSManagedObject === setup.research)
        #expect(setup.research.value(forKey: "employees") as? Set<NSManagedObject> == [setup.ada])
        #expect((sales.value(forKey: "employees") as? Set<NSManagedObject>)?.isEmpty == true)
    }

    @Test("undo extends to transient properties")
    func transient() throws {
        let setup = try Setup()
        setup.ada.setValue("Countess", forKey: "nickname")
        setup.endStep()
        setup.context.undo()
        #expect(setup.ada.value(forKey: "nickname") == nil)
    }

    @Test("rollback() and reset() clear the undo stack")
    func rollbackAndResetClear() throws {
        let setup = try Setup()
        setup.ada.setValue(1.0, forKey: "salary")
        setup.endStep()
        setup.context.rollback()
        #expect(!setup.undo.canUndo)
        setup.ada.setValue(2.0, forKey: "salary")
        setup.endStep()
        setup.context.reset()
        #expect(!setup.undo.canUndo)
    }

    @Test("processPendingChanges + disableUndoRegistration makes a change that cannot be undone")
    func changeThatCannotBeUndone() throws {
        let setup = try Setup()
        setup.ada.setValue(200.0, forKey: "salary")
        setup.endStep()
        setup.context.processPendingChanges()
        setup.undo.disableUndoRegistration()
        setup.ada.setValue("Ada Lovelace", forKey: "name")
        setup.context.processPendingChanges()
        setup.undo.enableUndoRegistration()
        setup.context.undo()
        #expect(setup.ada.value(forKey: "salary") as? Double == 100, "the earlier step is undone")
        #expect(setup.ada.value(forKey: "name") as? String == "Ada Lovelace", "the unregistered change stays")
        #expect(!setup.undo.canUndo)
    }

    @Test("undo and redo work across a save")
    func acrossSave() throws {
        let setup = try Setup()
        setup.ada.setValue("Ada Lovelace", forKey: "name")
        setup.endStep()
        try setup.context.save()
        setup.context.undo()
        #expect(setup.ada.value(forKey: "name") as? String == "Ada")
        #expect(setup.context.hasChanges, "the saved value was undone")
        try setup.context.save()
        #expect(try setup.stored() == ["Ada": "Research"])
        setup.context.redo()
        try setup.context.save()
        #expect(try setup.stored() == ["Ada Lovelace": "Research"])
    }

    @Test("undoing an insert after it was saved deletes the row; redo saves it again")
    func insertAcrossSave() throws {
        let setup = try Setup()
        let grace = setup.context.employee("Grace")
        setup.endStep()
        try setup.context.save()
        setup.context.undo()
        #expect(grace.isDeleted)
        try setup.context.save()
        #expect(try setup.stored() == ["Ada": "Research"])
        setup.context.redo()
        try setup.context.save()
        #expect(try setup.stored() == ["Ada": "Research", "Grace": "-"])
    }
}
