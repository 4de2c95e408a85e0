import CoreData
import Testing

/// Where a new object is saved when the coordinator has several stores. Rules from the
/// NSManagedObjectContext reference: `assign(_:to:)` ("only necessary … if the coordinator
/// manages multiple writable stores that have the object's entity in their configuration"),
/// `obtainPermanentIDs(for:)` (IDs come from the store the object will be saved to; an
/// unassigned object goes to "the first writable store supporting the entity"), and
/// `persistentStoreCoordinator` (it must not be set to nil).
@Suite("Several stores")
struct SeveralStoresTests {
    /// A context over two in-memory stores of the default configuration: both can hold everything.
    static func twoStores() throws -> (NSManagedObjectContext, NSPersistentStore, NSPersistentStore) {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
        let first = try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
        let second = try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return (context, first, second)
    }

    /// Regression: the save failed (134030) when the choice was open. The
    /// `obtainPermanentIDs(for:)` reference: "If the object has not been assigned to a store, the
    /// coordinator assigns it to the first writable store supporting the entity."
    @Test("two writable stores can hold the entity: the first added gets it, unless assign(_:to:) says otherwise")
    func openChoiceGoesToTheFirstWritableStore() throws {
        let (context, first, second) = try Self.twoStores()
        try context.performAndWait {
            let ada = context.employee("Ada")
            let bob = context.employee("Bob")
            context.assign(bob, to: second)
            try context.save()
            #expect(ada.objectID.persistentStore === first)
            #expect(bob.objectID.persistentStore === second)
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.affectedStores = [first]
            #expect(try context.fetch(request).map { $0.value(forKey: "name") as? String } == ["Ada"])
            request.affectedStores = [second]
            #expect(try context.fetch(request).map { $0.value(forKey: "name") as? String } == ["Bob"])
        }
    }

    @Test("obtainPermanentIDs(for:) chooses the store by the same rule")
    func permanentIDs() throws {
        let (context, first, second) = try Self.twoStores()
        try context.performAndWait {
            let ada = context.employee("Ada")
            try context.obtainPermanentIDs(for: [ada])
            #expect(!ada.objectID.isTemporaryID)
            #expect(ada.objectID.persistentStore === first)
            let bob = context.employee("Bob")
            context.assign(bob, to: second)
            try context.obtainPermanentIDs(for: [bob])
            #expect(bob.objectID.persistentStore === second)
        }
    }

    @Test("a read-only store is no choice: the one writable store gets the object")
    func readOnlyStoreIsNoChoice() throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
        let archive = try coordinator.addPersistentStore(
            ofType: NSInMemoryStoreType, configurationName: nil, at: nil,
            options: [NSReadOnlyPersistentStoreOption: true])
        let live = try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let ada = context.employee("Ada")
            try context.save()
            #expect(ada.objectID.persistentStore === live)
            try coordinator.remove(live)
            context.employee("Bob")
            let error = #expect(throws: NSError.self) { try context.save() }
            #expect(error?.code == NSPersistentStoreSaveError, "only a read-only store can hold it")
            #expect((error?.userInfo[NSAffectedStoresErrorKey] as? [NSPersistentStore])?.first === archive)
        }
    }

    @Test("an object assigned to a store whose configuration lacks its entity cannot be saved (134020)")
    func assignedToWrongConfiguration() throws {
        let model = CompanyModel.make()
        model.setEntities([model.entitiesByName["Department"]!], forConfigurationName: "Org")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let org = try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: "Org", at: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        context.performAndWait {
            let ada = context.employee("Ada")
            var error = #expect(throws: NSError.self) { try context.save() }
            #expect(error?.code == NSPersistentStoreIncompatibleSchemaError, "no store can hold an Employee")
            context.assign(ada, to: org)
            error = #expect(throws: NSError.self) { try context.save() }
            #expect(error?.code == NSPersistentStoreIncompatibleSchemaError)
            #expect((error?.userInfo[NSAffectedStoresErrorKey] as? [NSPersistentStore])?.first === org)
        }
    }

    @Test("setting persistentStoreCoordinator to nil traps, as Apple raises")
    func nilCoordinatorTraps() async {
        await #expect(processExitsWith: .failure) {
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
            context.persistentStoreCoordinator = nil
        }
    }
}
