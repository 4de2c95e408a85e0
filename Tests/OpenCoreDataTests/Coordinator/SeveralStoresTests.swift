import CoreData
import Testing

/// Where a new object is saved when the coordinator has several stores. Rules from the
/// NSManagedObjectContext reference: `assign(_:to:)` ("only necessary … if the coordinator
/// manages multiple writable stores that have the object's entity in their configuration"),
/// `obtainPermanentIDs(for:)` (IDs come from the store the object will be saved to), and
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

    @Test("two writable stores can hold the entity: a save that leaves the choice open fails, assign(_:to:) settles it")
    func ambiguousSave() throws {
        let (context, first, second) = try Self.twoStores()
        try context.performAndWait {
            let ada = context.employee("Ada")
            let error = #expect(throws: NSError.self) { try context.save() }
            #expect(error?.domain == NSCocoaErrorDomain)
            #expect(error?.code == NSPersistentStoreSaveError)
            let stores = error?.userInfo[NSAffectedStoresErrorKey] as? [NSPersistentStore]
            #expect(stores?.count == 2)
            #expect(ada.objectID.isTemporaryID, "nothing was saved")
            #expect(context.hasChanges)

            context.assign(ada, to: second)
            try context.save()
            #expect(ada.objectID.persistentStore === second)
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.affectedStores = [first]
            #expect(try context.count(for: request) == 0)
            request.affectedStores = [second]
            #expect(try context.count(for: request) == 1)
        }
    }

    @Test("obtainPermanentIDs(for:) chooses the store by the same rule")
    func permanentIDs() throws {
        let (context, first, _) = try Self.twoStores()
        try context.performAndWait {
            let ada = context.employee("Ada")
            let error = #expect(throws: NSError.self) { try context.obtainPermanentIDs(for: [ada]) }
            #expect(error?.code == NSPersistentStoreSaveError)
            #expect(ada.objectID.isTemporaryID)
            context.assign(ada, to: first)
            try context.obtainPermanentIDs(for: [ada])
            #expect(!ada.objectID.isTemporaryID)
            #expect(ada.objectID.persistentStore === first)
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
