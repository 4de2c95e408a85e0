import CoreData
import Testing

/// Parent and child contexts. Rules: NSManagedObjectContext reference (`parent`, `save()`:
/// "changes are pushed up one level", `obtainPermanentIDs(for:)`,
/// `automaticallyMergesChangesFromParent`); Core Data Programming Guide, "Using Core Data in the
/// Background" and "Object Validation".
@Suite("Nested contexts")
struct NestedContextTests {
    /// A root context on a fresh store and a private-queue child of it.
    func family(_ storeType: String = NSInMemoryStoreType) throws -> (
        root: NSManagedObjectContext, child: NSManagedObjectContext, directory: TemporaryDirectory
    ) {
        let directory = TemporaryDirectory()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
        try coordinator.addPersistentStore(
            ofType: storeType, configurationName: nil,
            at: storeType == NSSQLiteStoreType ? directory.file("Company.sqlite") : nil, options: nil)
        let root = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        root.persistentStoreCoordinator = coordinator
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = root
        return (root, child, directory)
    }

    /// Names of the employees a fresh root context reads from the store.
    func storedNames(_ coordinator: NSPersistentStoreCoordinator?) throws -> Set<String> {
        let reader = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        reader.persistentStoreCoordinator = coordinator
        return try reader.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            return Set(try reader.fetch(request).compactMap { $0.value(forKey: "name") as? String })
        }
    }

    @Test(
        "a child fetches through its parent and sees the parent's unsaved inserts and changes",
        arguments: [NSInMemoryStoreType, NSSQLiteStoreType])
    func childSeesParentChanges(_ storeType: String) throws {
        let (root, child, directory) = try family(storeType)
        // The store's file must outlive its readers: the directory is removed when released.
        defer { withExtendedLifetime(directory) {} }
        let saved = try root.performAndWait {
            let ada = root.employee("Ada", salary: 10)
            try root.save()
            ada.setValue(20.0, forKey: "salary")  // unsaved in the parent
            root.employee("Grace", salary: 30)  // unsaved insert
            return ada.objectID
        }
        #expect(child.persistentStoreCoordinator === root.persistentStoreCoordinator)
        try child.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            let found = try child.fetch(request)
            #expect(found.compactMap { $0.value(forKey: "name") as? String } == ["Ada", "Grace"])
            let ada = try child.existingObject(with: saved)
            #expect(ada.value(forKey: "salary") as? Double == 20)
            request.predicate = NSPredicate(format: "salary > 25")
            let count = try child.count(for: request)
            #expect(count == 1)
        }
    }

    @Test("a child's save pushes its changes one level up: the parent has them, the store does not")
    func saveGoesOneLevelUp() throws {
        let (root, child, directory) = try family(NSSQLiteStoreType)
        // The store's file must outlive its readers: the directory is removed when released.
        defer { withExtendedLifetime(directory) {} }
        let temporary = try child.performAndWait {
            let ada = child.employee("Ada")
            try child.save()
            #expect(!child.hasChanges)
            #expect(ada.objectID.isTemporaryID, "a nested save assigns no permanent IDs")
            return ada.objectID
        }
        try root.performAndWait {
            #expect(root.hasChanges)
            let mine = try #require(root.registeredObject(for: temporary))
            #expect(mine.isInserted)
            #expect(mine.value(forKey: "name") as? String == "Ada")
        }
        #expect(try storedNames(root.persistentStoreCoordinator).isEmpty)
        try root.performAndWait { try root.save() }
        #expect(try storedNames(root.persistentStoreCoordinator) == ["Ada"])
    }

    @Test("a child's update and delete (with its cascade) reach the parent")
    func updateAndDeleteReachParent() throws {
        let (root, child, directory) = try family()
        // The store's file must outlive its readers: the directory is removed when released.
        defer { withExtendedLifetime(directory) {} }
        let (adaID, badgeID) = try root.performAndWait {
            let ada = root.employee("Ada")
            let badge = NSEntityDescription.insertNewObject(forEntityName: "Badge", into: root)
            ada.setValue(badge, forKey: "badge")
            root.employee("Grace")
            try root.save()
            return (ada.objectID, badge.objectID)
        }
        try child.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.predicate = NSPredicate(format: "name == 'Grace'")
            let grace = try #require(try child.fetch(request).first)
            grace.setValue(99.0, forKey: "salary")
            child.delete(try child.existingObject(with: adaID))
            try child.save()
        }
        try root.performAndWait {
            #expect(root.updatedObjects.compactMap { $0.value(forKey: "name") as? String } == ["Grace"])
            #expect(Set(root.deletedObjects.map(\.objectID)) == [adaID, badgeID], "the cascade came along")
            try root.save()
            let badges = try root.count(for: NSFetchRequest<NSManagedObject>(entityName: "Badge"))
            #expect(badges == 0)
        }
    }

    @Test("a child's save validates: a missing mandatory value fails with 1570 and the parent is untouched")
    func childSaveValidates() throws {
        let (root, child, directory) = try family()
        // The store's file must outlive its readers: the directory is removed when released.
        defer { withExtendedLifetime(directory) {} }
        child.performAndWait {
            _ = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: child)
            let error = #expect(throws: NSError.self) { try child.save() }
            #expect(error?.code == NSValidationMissingMandatoryPropertyError)
        }
        root.performAndWait { #expect(!root.hasChanges) }
    }

    @Test("discarding a child leaves the parent untouched")
    func discardChild() throws {
        let (root, child, directory) = try family()
        // The store's file must outlive its readers: the directory is removed when released.
        defer { withExtendedLifetime(directory) {} }
        let id = try root.performAndWait {
            let ada = root.employee("Ada", salary: 1)
            try root.save()
            return ada.objectID
        }
        try child.performAndWait {
            try child.existingObject(with: id).setValue(2.0, forKey: "salary")
            child.employee("Scratch")
            child.rollback()
        }
        try root.performAndWait {
            #expect(!root.hasChanges)
            let ada = try root.existingObject(with: id)
            #expect(ada.value(forKey: "salary") as? Double == 1)
        }
    }

    @Test("obtainPermanentIDs(for:) in a child asks the store; the parent receives the permanent IDs")
    func permanentIDsInChild() throws {
        let (root, child, directory) = try family()
        // The store's file must outlive its readers: the directory is removed when released.
        defer { withExtendedLifetime(directory) {} }
        let id = try child.performAndWait {
            let ada = child.employee("Ada")
            try child.obtainPermanentIDs(for: [ada])
            #expect(!ada.objectID.isTemporaryID)
            try child.save()
            return ada.objectID
        }
        try root.performAndWait {
            #expect(root.registeredObject(for: id)?.isInserted == true)
            try root.save()
            let ada = try root.existingObject(with: id)
            #expect(ada.value(forKey: "name") as? String == "Ada")
        }
    }

    @Test("automaticallyMergesChangesFromParent: a child takes in a sibling's save into their parent")
    func automaticMergeFromSibling() throws {
        let (root, viewer, directory) = try family()
        // The store's file must outlive its readers: the directory is removed when released.
        defer { withExtendedLifetime(directory) {} }
        let editor = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        editor.parent = root
        viewer.automaticallyMergesChangesFromParent = true
        #expect(viewer.automaticallyMergesChangesFromParent)
        let id = try root.performAndWait {
            let ada = root.employee("Ada", salary: 1)
            try root.save()
            return ada.objectID
        }
        let seen = try viewer.performAndWait { try viewer.existingObject(with: id) }
        try editor.performAndWait {
            try editor.existingObject(with: id).setValue(2.0, forKey: "salary")
            try editor.save()
        }
        // The merge was enqueued on the viewer's queue during the save; this block runs after it.
        viewer.performAndWait { #expect(seen.value(forKey: "salary") as? Double == 2) }
    }

    @Test("automaticallyMergesChangesFromParent on a root context merges other contexts' saves to the coordinator")
    func automaticMergeFromCoordinator() throws {
        let (root, _, directory) = try family()
        // The store's file must outlive its readers: the directory is removed when released.
        defer { withExtendedLifetime(directory) {} }
        let other = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        other.persistentStoreCoordinator = root.persistentStoreCoordinator
        root.automaticallyMergesChangesFromParent = true
        let id = try other.performAndWait {
            let ada = other.employee("Ada", salary: 1)
            try other.save()
            return ada.objectID
        }
        let mine = try root.performAndWait { try root.existingObject(with: id) }
        try other.performAndWait {
            try other.existingObject(with: id).setValue(5.0, forKey: "salary")
            try other.save()
        }
        root.performAndWait { #expect(mine.value(forKey: "salary") as? Double == 5) }
    }
}
