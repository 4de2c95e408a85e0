import CoreData
import Testing

/// Records the context notifications posted while a block runs.
final class NotificationRecorder: @unchecked Sendable {
    private(set) var notes: [Notification] = []
    private var tokens: [NSObjectProtocol] = []

    init(_ names: [Notification.Name], object: AnyObject) {
        for name in names {
            tokens.append(
                NotificationCenter.default.addObserver(forName: name, object: object, queue: nil) { [weak self] note in
                    self?.notes.append(note)
                })
        }
    }

    deinit { tokens.forEach(NotificationCenter.default.removeObserver) }

    func objects(_ name: Notification.Name, _ key: String) -> Set<NSManagedObject>? {
        notes.last { $0.name == name }?.userInfo?[key] as? Set<NSManagedObject>
    }
}

/// Records the objects `prepareForDeletion()` is called on, in order.
final class DeletionRecorder: NSManagedObject {
    nonisolated(unsafe) static var prepared: [NSManagedObject] = []

    override func prepareForDeletion() { Self.prepared.append(self) }
}

/// Change tracking, inverse maintenance, delete rules and notifications. Rules from the
/// NSManagedObjectContext reference and the Core Data Programming Guide ("Creating Managed Object
/// Relationships", "Relationship Delete Rules", "Change Management").
@Suite("Change tracking")
struct ChangeTrackingTests {
    @Test("an object inserted and deleted before a save is in no change set and is not saved")
    func insertThenDelete() throws {
        let context = try CompanyModel.stack()
        let recorder = NotificationRecorder([.NSManagedObjectContextObjectsDidChange], object: context)
        let ghost = context.employee("Ghost")
        context.delete(ghost)
        #expect(context.insertedObjects.isEmpty)
        #expect(context.deletedObjects.isEmpty)
        context.processPendingChanges()
        #expect(recorder.notes.isEmpty, "no change to report")
        #expect(!context.hasChanges)
        try context.save()
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Employee")) == 0)
    }

    /// Ada and Bob saved; then, with `names` recorded, one change of each kind: Cy inserted (the
    /// first object given back), Ada updated (the second), Bob deleted (the third).
    private func oneChangeOfEachKind(recording names: [Notification.Name]) throws -> (
        NSManagedObjectContext, NotificationRecorder, NSManagedObject, NSManagedObject, NSManagedObject
    ) {
        let context = try CompanyModel.stack()
        let ada = context.employee("Ada")
        let bob = context.employee("Bob")
        try context.save()
        let recorder = NotificationRecorder(names, object: context)
        let cy = context.employee("Cy")
        ada.setValue(1.0, forKey: "salary")
        context.delete(bob)
        return (context, recorder, cy, ada, bob)
    }

    @Test("ObjectsDidChange reports each event's inserts, updates and deletes under Apple's keys")
    func objectsDidChange() throws {
        let (context, recorder, cy, ada, bob) = try oneChangeOfEachKind(recording: [
            .NSManagedObjectContextObjectsDidChange
        ])
        context.processPendingChanges()
        let name = Notification.Name.NSManagedObjectContextObjectsDidChange
        #expect(recorder.objects(name, NSInsertedObjectsKey) == [cy])
        #expect(recorder.objects(name, NSUpdatedObjectsKey) == [ada])
        #expect(recorder.objects(name, NSDeletedObjectsKey) == [bob])
        #expect(NSManagedObjectContext.didChangeObjectsNotification == name)
        #expect(NSManagedObjectContext.NotificationKey.insertedObjects.rawValue == "inserted")
    }

    /// NSManagedObjectContext reference, `ObjectsDidChange` and `undoManager`: an event reports
    /// each object once, and undoing it undoes it once. Deleting, re-inserting and deleting a
    /// saved object again in one event adds it to the event's deleted objects twice
    /// (event sets keep membership as a bit on the object and filter when read): the notification
    /// names it once under `deleted` and nowhere else, and one undo brings it back undeleted.
    @Test("an object deleted, re-inserted and deleted again in one event is reported and undone once")
    func deleteReinsertDeleteInOneEvent() throws {
        let context = try CompanyModel.stack()
        let undo = UndoManager()
        let ada = context.employee("Ada")
        try context.save()
        context.undoManager = undo
        let recorder = NotificationRecorder([.NSManagedObjectContextObjectsDidChange], object: context)
        context.delete(ada)
        context.insert(ada)
        context.delete(ada)
        context.processPendingChanges()
        let name = Notification.Name.NSManagedObjectContextObjectsDidChange
        #expect(recorder.notes.count == 1)
        #expect(recorder.objects(name, NSDeletedObjectsKey) == [ada])
        #expect(recorder.objects(name, NSInsertedObjectsKey) == nil)
        #expect(context.deletedObjects == [ada])
        if undo.groupingLevel > 0 { undo.endUndoGrouping() }  // no run loop closes the event's group
        undo.undo()
        #expect(!ada.isDeleted)
        #expect(!context.hasChanges)
        #expect(ada.value(forKey: "name") as? String == "Ada")
    }

    @Test("WillSave precedes the save; DidSave carries the saved objects and leaves no change sets")
    func saveNotifications() throws {
        let context = try CompanyModel.stack()
        let recorder = NotificationRecorder(
            [.NSManagedObjectContextWillSave, .NSManagedObjectContextDidSave], object: context)
        let ada = context.employee("Ada")
        try context.save()
        #expect(recorder.notes.map(\.name) == [.NSManagedObjectContextWillSave, .NSManagedObjectContextDidSave])
        #expect(recorder.objects(.NSManagedObjectContextDidSave, NSInsertedObjectsKey) == [ada])
        #expect(!context.hasChanges)
        try context.save()
        #expect(recorder.notes.count == 2, "a save without changes does nothing")
    }

    /// NSManagedObjectContext reference, `NSManagedObjectContextDidSave` (its userInfo holds the
    /// saved objects under `NSInsertedObjectsKey`, `NSUpdatedObjectsKey`, `NSDeletedObjectsKey`)
    /// and `didSaveObjectIDsNotification` (the same changes as IDs, under `inserted_objectIDs`,
    /// `updated_objectIDs`, `deleted_objectIDs`). Issue 21 fills both userInfo dictionaries by the
    /// places of their keys: each kind of change must land under its own key, in both.
    @Test("DidSave and DidSaveObjectIDs carry each kind of change under its own key")
    func saveNotificationsKeepEachKindApart() throws {
        let (context, recorder, cy, ada, bob) = try oneChangeOfEachKind(recording: [
            .NSManagedObjectContextDidSave, .NSManagedObjectContextDidSaveObjectIDs,
        ])
        let deletedID = bob.objectID
        try context.save()
        let saved = Notification.Name.NSManagedObjectContextDidSave
        #expect(recorder.objects(saved, NSInsertedObjectsKey) == [cy])
        #expect(recorder.objects(saved, NSUpdatedObjectsKey) == [ada])
        #expect(recorder.objects(saved, NSDeletedObjectsKey) == [bob])
        let ids = try #require(
            recorder.notes.last { $0.name == NSManagedObjectContext.didSaveObjectIDsNotification }?.userInfo)
        #expect(ids["inserted_objectIDs"] as? Set<NSManagedObjectID> == [cy.objectID])
        #expect(ids["updated_objectIDs"] as? Set<NSManagedObjectID> == [ada.objectID])
        #expect(ids["deleted_objectIDs"] as? Set<NSManagedObjectID> == [deletedID])
    }

    @Test("inverses follow every to-one change: reassigning moves the object between to-many sets")
    func inverseOnReassign() throws {
        let context = try CompanyModel.stack()
        let rnd = context.department("R&D")
        let ops = context.department("Ops")
        let ada = context.employee("Ada")
        ada.setValue(rnd, forKey: "department")
        ada.setValue(ops, forKey: "department")
        #expect((rnd.value(forKey: "employees") as? Set<NSManagedObject>)?.isEmpty == true)
        #expect(ops.value(forKey: "employees") as? Set<NSManagedObject> == [ada])
        ops.setValue(Set<NSManagedObject>(), forKey: "employees")
        #expect(ada.value(forKey: "department") == nil)
    }

    @Test("one-to-one: giving a badge to a new holder takes it from the previous one")
    func oneToOneSteal() throws {
        let context = try CompanyModel.stack()
        let ada = context.employee("Ada")
        let bob = context.employee("Bob")
        let badge = NSEntityDescription.insertNewObject(forEntityName: "Badge", into: context)
        ada.setValue(badge, forKey: "badge")
        bob.setValue(badge, forKey: "badge")
        #expect(ada.value(forKey: "badge") == nil)
        #expect(badge.value(forKey: "holder") as? NSManagedObject === bob)
    }

    @Test("moving an object into another to-many removes it from the previous owner's set")
    func toManyTakeover() throws {
        let context = try CompanyModel.stack()
        let rnd = context.department("R&D")
        let ops = context.department("Ops")
        let ada = context.employee("Ada")
        rnd.mutableSetValue(forKey: "employees").add(ada)
        ops.mutableSetValue(forKey: "employees").add(ada)
        #expect((rnd.value(forKey: "employees") as? Set<NSManagedObject>)?.isEmpty == true)
        #expect(ada.value(forKey: "department") as? NSManagedObject === ops)
    }

    @Test("nullify: deleting a department leaves its employees with no department, at the end of the event")
    func nullifyRule() throws {
        let context = try CompanyModel.stack()
        let dept = context.department("R&D")
        let ada = context.employee("Ada")
        ada.setValue(dept, forKey: "department")
        try context.save()
        context.delete(dept)
        context.processPendingChanges()
        #expect(ada.value(forKey: "department") == nil)
        #expect(context.updatedObjects.contains(ada))
        try context.save()
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Department")) == 0)
    }

    @Test("cascade: deleting an employee deletes the badge; the badge's inverse is gone")
    func cascadeRule() throws {
        let context = try CompanyModel.stack()
        let ada = context.employee("Ada")
        let badge = NSEntityDescription.insertNewObject(forEntityName: "Badge", into: context)
        ada.setValue(badge, forKey: "badge")
        try context.save()
        context.delete(ada)
        context.processPendingChanges()
        #expect(badge.isDeleted)
        #expect(context.deletedObjects == [ada, badge])
        try context.save()
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Badge")) == 0)
    }

    /// "Relationship Delete Rules" (Core Data Programming Guide): a cascade deletes the objects at
    /// the destination, whose own rules then run; NSManagedObject reference, `prepareForDeletion()`:
    /// called before the object's rules run. Every object deleted — those a cascade deletes too —
    /// is prepared once, in the order it was deleted, so a cascade's objects come after the
    /// objects the app deleted (the queue of deletes took its first object by moving
    /// every other one, quadratic in the number of objects deleted).
    @Test("cascades over two levels prepare every object once, in the order each was deleted")
    func cascadesInDeletionOrder() throws {
        let model = CompanyModel.make()
        model.entitiesByName["Department"]?.relationshipsByName["employees"]?.deleteRule = .cascadeDeleteRule
        for entity in ["Department", "Employee", "Badge"] {
            model.entitiesByName[entity]?.managedObjectClassName = "DeletionRecorder"
        }
        let context = try CompanyModel.stack(model)
        var departments: [NSManagedObject] = []
        for index in 0..<200 {
            let department = context.department("D\(index)")
            departments.append(department)
            for _ in 0..<5 {
                let employee = context.employee("E\(index)")
                employee.setValue(department, forKey: "department")
                let badge = NSEntityDescription.insertNewObject(forEntityName: "Badge", into: context)
                employee.setValue(badge, forKey: "badge")
            }
        }
        try context.save()
        DeletionRecorder.prepared = []
        for department in departments { context.delete(department) }
        context.processPendingChanges()
        let prepared = DeletionRecorder.prepared
        #expect(prepared.count == 2_200, "200 departments, 1,000 employees, 1,000 badges, each once")
        #expect(Set(prepared.map(ObjectIdentifier.init)).count == 2_200)
        #expect(prepared.prefix(200).map { $0.value(forKey: "name") as? String } == (0..<200).map { "D\($0)" })
        #expect(prepared.dropFirst(200).prefix(1_000).allSatisfy { $0.entity.name == "Employee" })
        #expect(prepared.suffix(1_000).allSatisfy { $0.entity.name == "Badge" })
        #expect(context.deletedObjects.count == 2_200)
        try context.save()
        for entity in ["Department", "Employee", "Badge"] {
            #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: entity)) == 0)
        }
    }

    @Test("deny: deleting an object whose deny relationship has objects fails the save with 1600")
    func denyRule() throws {
        let model = CompanyModel.make()
        model.entitiesByName["Department"]?.relationshipsByName["employees"]?.deleteRule = .denyDeleteRule
        let context = try CompanyModel.stack(model)
        let dept = context.department("R&D")
        context.employee("Ada").setValue(dept, forKey: "department")
        try context.save()
        context.delete(dept)
        let error = #expect(throws: NSError.self) { try context.save() }
        #expect(error?.domain == NSCocoaErrorDomain)
        #expect(error?.code == NSValidationRelationshipDeniedDeleteError)
        #expect(error?.userInfo[NSValidationKeyErrorKey] as? String == "employees")
        #expect(dept.isDeleted, "a failed save leaves the context as it was")
    }

    @Test("no action: the destination keeps pointing at the deleted object")
    func noActionRule() throws {
        let model = CompanyModel.make()
        model.entitiesByName["Department"]?.relationshipsByName["employees"]?.deleteRule = .noActionDeleteRule
        let context = try CompanyModel.stack(model)
        let dept = context.department("R&D")
        let ada = context.employee("Ada")
        ada.setValue(dept, forKey: "department")
        context.delete(dept)
        context.processPendingChanges()
        #expect(ada.value(forKey: "department") as? NSManagedObject === dept)
    }

    @Test("propagatesDeletesAtEndOfEvent false: delete rules wait until the save")
    func deferredPropagation() throws {
        let context = try CompanyModel.stack()
        context.propagatesDeletesAtEndOfEvent = false
        let dept = context.department("R&D")
        let ada = context.employee("Ada")
        ada.setValue(dept, forKey: "department")
        try context.save()
        context.delete(dept)
        context.processPendingChanges()
        #expect(ada.value(forKey: "department") as? NSManagedObject === dept)
        try context.save()
        #expect(ada.value(forKey: "department") == nil)
    }

    @Test("rollback() forgets inserts, restores updated and deleted objects to their committed values")
    func rollback() throws {
        let context = try CompanyModel.stack()
        let dept = context.department("R&D")
        let ada = context.employee("Ada", salary: 10)
        ada.setValue(dept, forKey: "department")
        try context.save()
        ada.setValue(99.0, forKey: "salary")
        let bob = context.employee("Bob")
        bob.setValue(dept, forKey: "department")
        context.delete(dept)
        context.processPendingChanges()
        context.rollback()
        #expect(!context.hasChanges)
        #expect(ada.value(forKey: "salary") as? Double == 10)
        #expect(ada.value(forKey: "department") as? NSManagedObject === dept)
        #expect(!dept.isDeleted)
        #expect(dept.value(forKey: "employees") as? Set<NSManagedObject> == [ada])
        #expect(bob.managedObjectContext == nil)
    }

    @Test("reset() forgets every object and posts invalidatedAll")
    func reset() throws {
        let context = try CompanyModel.stack()
        let ada = context.employee("Ada")
        try context.save()
        let id = ada.objectID
        let recorder = NotificationRecorder([.NSManagedObjectContextObjectsDidChange], object: context)
        context.reset()
        #expect(context.registeredObjects.isEmpty)
        #expect(context.registeredObject(for: id) == nil)
        #expect(ada.managedObjectContext == nil)
        #expect(recorder.notes.last?.userInfo?[NSInvalidatedAllObjectsKey] != nil)
        #expect(context.object(with: id) !== ada)
    }

    @Test("refresh(_:mergeChanges: false) turns the object into a fault and drops its changes")
    func refreshDiscarding() throws {
        let context = try CompanyModel.stack()
        let ada = context.employee("Ada", salary: 10)
        try context.save()
        ada.setValue(20.0, forKey: "salary")
        context.refresh(ada, mergeChanges: false)
        #expect(ada.isFault)
        #expect(!context.hasChanges)
        #expect(ada.value(forKey: "salary") as? Double == 10)
    }

    @Test("refresh(_:mergeChanges: true) reloads store values and re-applies local changes and transients")
    func refreshMerging() throws {
        let context = try CompanyModel.stack()
        let ada = context.employee("Ada", salary: 10)
        try context.save()
        let other = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        other.persistentStoreCoordinator = context.persistentStoreCoordinator
        let twin = try other.existingObject(with: ada.objectID)
        twin.setValue("Ada Lovelace", forKey: "name")
        try other.save()
        ada.setValue(20.0, forKey: "salary")
        ada.setValue("Countess", forKey: "nickname")
        context.refresh(ada, mergeChanges: true)
        #expect(ada.value(forKey: "name") as? String == "Ada Lovelace")
        #expect(ada.value(forKey: "salary") as? Double == 20)
        #expect(ada.value(forKey: "nickname") as? String == "Countess")
        #expect(ada.isUpdated)
    }
}
