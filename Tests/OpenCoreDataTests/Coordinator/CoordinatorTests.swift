import CoreData
import Testing

/// The coordinator, container and context doors. Rules from the NSPersistentStoreCoordinator,
/// NSPersistentContainer, NSPersistentStoreDescription and NSManagedObjectContext references.
@Suite("Coordinator and container")
struct CoordinatorTests {
    @Test("a model becomes immutable once a coordinator uses it: editing traps, as Apple raises")
    func modelImmutable() async {
        await #expect(processExitsWith: .failure) {
            let model = CompanyModel.make()
            _ = NSPersistentStoreCoordinator(managedObjectModel: model)
            model.entitiesByName["Employee"]?.name = "Worker"
        }
    }

    @Test("configurations route each entity to the store whose configuration holds it")
    func configurations() throws {
        let model = CompanyModel.make()
        let entities = model.entitiesByName
        model.setEntities([entities["Department"]!], forConfigurationName: "Org")
        model.setEntities(
            [entities["Employee"]!, entities["Manager"]!, entities["Badge"]!, entities["Project"]!],
            forConfigurationName: "People")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let org = try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: "Org", at: nil)
        let people = try coordinator.addPersistentStore(
            ofType: NSInMemoryStoreType, configurationName: "People", at: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let dept = context.department("R&D")
        let ada = context.employee("Ada")
        try context.save()
        #expect(dept.objectID.persistentStore === org)
        #expect(ada.objectID.persistentStore === people)
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Employee")) == 1)
        let error = #expect(throws: NSError.self) {
            try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: "Nope", at: nil)
        }
        #expect(error?.code == NSPersistentStoreIncompatibleSchemaError)
    }

    @Test("affectedStores limits a fetch to the named stores")
    func affectedStores() throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
        let first = try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
        let second = try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        context.assign(context.employee("Ada"), to: first)
        context.assign(context.employee("Bob"), to: second)
        try context.save()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: false)]
        #expect(try context.fetch(request).compactMap { $0.value(forKey: "name") as? String } == ["Bob", "Ada"])
        request.affectedStores = [second]
        #expect(try context.fetch(request).compactMap { $0.value(forKey: "name") as? String } == ["Bob"])
        try coordinator.remove(second)
        #expect(coordinator.persistentStores.count == 1)
    }

    @Test("metadata: stores carry their type and UUID; setMetadata keeps them and adds keys")
    func metadata() throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
        let store = try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
        #expect(coordinator.metadata(for: store)[NSStoreTypeKey] as? String == NSInMemoryStoreType)
        let uuid = try #require(coordinator.metadata(for: store)[NSStoreUUIDKey] as? String)
        #expect(store.identifier == uuid)
        coordinator.setMetadata(["appVersion": "1.2"], for: store)
        #expect(coordinator.metadata(for: store)["appVersion"] as? String == "1.2")
        #expect(coordinator.metadata(for: store)[NSStoreUUIDKey] as? String == uuid)
    }

    @Test("NSPersistentContainer: an in-memory description, viewContext on the main queue, background contexts")
    func container() async throws {
        let container = NSPersistentContainer(name: "Company", managedObjectModel: CompanyModel.make())
        #expect(container.persistentStoreDescriptions.first?.type == NSSQLiteStoreType)
        #expect(container.persistentStoreDescriptions.first?.url?.lastPathComponent == "Company.sqlite")
        let description = NSPersistentStoreDescription()
        description.type = NSInMemoryStoreType
        #expect(description.shouldMigrateStoreAutomatically && description.shouldInferMappingModelAutomatically)
        container.persistentStoreDescriptions = [description]
        var loadError: Error?
        container.loadPersistentStores { _, error in loadError = error }
        #expect(loadError == nil)
        #expect(container.viewContext.concurrencyType == .mainQueueConcurrencyType)
        #expect(container.viewContext === container.viewContext)
        let background = container.newBackgroundContext()
        #expect(background.concurrencyType == .privateQueueConcurrencyType)
        try await background.perform {
            background.employee("Ada")
            try background.save()
        }
        let check = container.newBackgroundContext()
        let count = try await check.perform {
            try check.count(for: NSFetchRequest<NSManagedObject>(entityName: "Employee"))
        }
        #expect(count == 1)
        // NSPersistentContainer reference, `performBackgroundTask(_:) async`: the block runs on a
        // new private-queue context, and its value — or its error — is the call's.
        let names = try await container.performBackgroundTask { context in
            #expect(context.concurrencyType == .privateQueueConcurrencyType)
            context.employee("Grace")
            try context.save()
            return try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee"))
                .compactMap { $0.value(forKey: "name") as? String }.sorted()
        }
        #expect(names == ["Ada", "Grace"])
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await container.performBackgroundTask { (_: NSManagedObjectContext) throws(Refused) -> Int in
                throw Refused()
            }
        }
    }

    @Test("performAndWait runs on the context's queue, is re-entrant, returns values and rethrows")
    func performAndWait() throws {
        let context = try CompanyModel.stack()
        let outer = context.performAndWait { () -> Int in
            context.performAndWait { 41 } + 1
        }
        #expect(outer == 42)
        struct Failure: Error {}
        #expect(throws: Failure.self) {
            try context.performAndWait { throw Failure() }
        }
        context.performAndWait { _ = context.employee("Ada") }
        #expect(context.hasChanges)
    }

    @Test("perform runs blocks in order on the context's queue and ends the event afterwards")
    func performOrdering() async throws {
        let context = try CompanyModel.stack()
        let recorder = NotificationRecorder([.NSManagedObjectContextObjectsDidChange], object: context)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let box = UncheckedBox(done)
            context.perform { context.employee("Ada") }
            context.perform { context.employee("Bob") }
            context.perform { box.value.resume() }
        }
        let count = await context.perform(schedule: .enqueued) { context.insertedObjects.count }
        #expect(count == 2)
        #expect(recorder.notes.count == 2, "each perform block ends with processPendingChanges")
    }
}

/// Carries a continuation into a context block in a test.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
