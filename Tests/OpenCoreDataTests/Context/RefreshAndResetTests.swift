import CoreData
import Testing

/// Refreshing, resetting and the life of transient values, as Apple's Core Data behaves.
/// Rules: NSManagedObjectContext reference — `refresh(_:mergeChanges:)` ("If flag is false, the
/// object is turned into a fault"; with true, changes are re-applied over the latest values),
/// `refreshAllObjects()` ("objects … without changes are turned back into faults"), `reset()`
/// ("All the receiver's managed objects are 'forgotten'"); NSManagedObject `isDeleted`; Core Data
/// Programming Guide, "Non-Standard Persistent Attributes" and NSAttributeDescription
/// (`defaultValue` applies to transient attributes too); the child-context rule that a save "pushes
/// changes up" one level.
@Suite("Refresh, reset and transient values")
struct RefreshAndResetTests {
    let directory = TemporaryDirectory()

    /// The company model with a required transient `nickname` whose default is "—".
    static func model() -> NSManagedObjectModel {
        let model = CompanyModel.make()
        let nickname = model.entitiesByName["Employee"]?.attributesByName["nickname"]
        nickname?.defaultValue = "—"
        nickname?.isOptional = false
        return model
    }

    private func name(_ object: NSManagedObject) -> String? { object.value(forKey: "name") as? String }

    @Test("refreshAllObjects turns unchanged objects into faults, keeps changed ones, and posts them as refreshed")
    func refreshAllObjects() throws {
        let context = try sqliteStack(directory.file("Company.sqlite"), model: Self.model())
        let ada = context.employee("Ada")
        let bob = context.employee("Bob")
        bob.setValue("Bobby", forKey: "nickname")
        try context.save()
        #expect(bob.value(forKey: "nickname") as? String == "Bobby", "a save keeps transient values")
        ada.setValue("Ada Lovelace", forKey: "name")
        let recorder = NotificationRecorder([.NSManagedObjectContextObjectsDidChange], object: context)
        context.refreshAllObjects()
        #expect(!ada.isFault)
        #expect(name(ada) == "Ada Lovelace")
        #expect(bob.isFault)
        #expect(recorder.objects(.NSManagedObjectContextObjectsDidChange, NSRefreshedObjectsKey) == [ada, bob])
        #expect(name(bob) == "Bob")
        #expect(bob.value(forKey: "nickname") as? String == "—", "a transient is dropped and starts from its default")
    }

    @Test("refresh(_:mergeChanges: true) of an unchanged object makes it a fault")
    func refreshUnchangedWithMerge() throws {
        let context = try sqliteStack(directory.file("Company.sqlite"))
        let ada = context.employee("Ada")
        try context.save()
        context.refresh(ada, mergeChanges: true)
        #expect(ada.isFault)
        #expect(name(ada) == "Ada")
        #expect(!ada.isFault)
    }

    /// Apple turns an inserted object refreshed with `mergeChanges: false` into a fault; nothing the
    /// app inserted is lost here (DEVIATIONS.md).
    @Test("refresh(_:mergeChanges: false) of an inserted object makes it a fault that keeps its values")
    func refreshInsertedObject() throws {
        let context = try sqliteStack(directory.file("Company.sqlite"))
        let ada = context.employee("Ada")
        context.refresh(ada, mergeChanges: false)
        #expect(ada.isFault)
        #expect(ada.isInserted)
        #expect(name(ada) == "Ada")
        #expect(!ada.isFault)
        try context.save()
        context.reset()
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Employee")) == 1)
    }

    @Test("reset() invalidates every object: a fault with no context whose values read as nil, without a trap")
    func resetInvalidates() throws {
        let context = try sqliteStack(directory.file("Company.sqlite"), model: Self.model())
        let ada = context.employee("Ada")
        ada.setValue("Countess", forKey: "nickname")
        try context.save()
        context.reset()
        #expect(ada.isFault)
        #expect(ada.managedObjectContext == nil)
        #expect(name(ada) == nil)
        #expect(ada.value(forKey: "nickname") as? String == "—")
        #expect(context.registeredObjects.isEmpty)
    }

    @Test("a fault whose context has gone away reads nil instead of trapping")
    func faultOfDeallocatedContext() throws {
        let url = directory.file("Company.sqlite")
        let writer = try sqliteStack(url)
        writer.employee("Ada")
        try writer.save()
        var fault: NSManagedObject?
        do {
            let reader = try sqliteStack(url)
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.returnsObjectsAsFaults = true
            fault = try reader.fetch(request).first
            #expect(fault?.isFault == true)
        }
        #expect(fault?.managedObjectContext == nil)
        #expect(fault.map(name) == .some(nil))
    }

    /// CoreDataPlus's tests, run against Apple's Core Data, expect `isDeleted` true here.
    @Test("an object inserted then deleted reports isDeleted, and is in no change set")
    func insertedThenDeleted() throws {
        let context = try sqliteStack(directory.file("Company.sqlite"))
        let ada = context.employee("Ada")
        context.delete(ada)
        #expect(ada.isDeleted)
        #expect(!context.deletedObjects.contains(ada))
        #expect(!context.insertedObjects.contains(ada))
        try context.save()
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Employee")) == 0)
    }

    @Test("a child's save pushes its transient values to the parent's objects")
    func childSavePushesTransients() throws {
        let parent = try sqliteStack(directory.file("Company.sqlite"), model: Self.model())
        let ada = parent.employee("Ada")
        try parent.save()
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = parent
        try child.performAndWait {
            let inChild = child.object(with: ada.objectID)
            inChild.setValue("Countess", forKey: "nickname")
            let bob = child.employee("Bob")
            bob.setValue("Bobby", forKey: "nickname")
            try child.save()
        }
        #expect(ada.value(forKey: "nickname") as? String == "Countess")
        let bob = try #require(parent.insertedObjects.first)
        #expect(bob.value(forKey: "nickname") as? String == "Bobby")
    }

    /// Regression: a fetched object's required transient had no value, so changing
    /// anything else failed validation (1570).
    @Test("a fetched object's transient starts from its default, so a required transient validates")
    func transientDefaultsAfterFetch() throws {
        let url = directory.file("Company.sqlite")
        do {
            let writer = try sqliteStack(url, model: Self.model())
            writer.employee("Ada")
            try writer.save()
        }
        let reader = try sqliteStack(url, model: Self.model())
        let ada = try #require(try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee")).first)
        #expect(ada.value(forKey: "nickname") as? String == "—")
        ada.setValue(10.0, forKey: "salary")
        try reader.save()
    }
}
