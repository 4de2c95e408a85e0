import CoreData
import Testing

/// Object IDs. Rules from the NSManagedObjectID reference ("isTemporaryID", "uriRepresentation()")
/// and the NSManagedObjectContext reference ("obtainPermanentIDs(for:)"); URI forms from STORE-FORMAT.md.
@Suite("NSManagedObjectID")
struct NSManagedObjectIDTests {
    @Test("a new object has a temporary ID until it is saved; saving gives a new permanent ID")
    func temporaryThenPermanent() throws {
        let context = try CompanyModel.stack()
        let ada = context.employee("Ada")
        let temporary = ada.objectID
        #expect(temporary.isTemporaryID)
        #expect(temporary.persistentStore == nil)
        try context.save()
        #expect(!ada.objectID.isTemporaryID)
        #expect(ada.objectID != temporary)
        #expect(temporary.isTemporaryID, "the temporary ID object itself never changes")
        #expect(ada.objectID.persistentStore === context.persistentStoreCoordinator?.persistentStores.first)
    }

    @Test("obtainPermanentIDs(for:) assigns permanent IDs before a save, and the object stays inserted")
    func obtainPermanentIDs() throws {
        let context = try CompanyModel.stack()
        let ada = context.employee("Ada")
        try context.obtainPermanentIDs(for: [ada])
        #expect(!ada.objectID.isTemporaryID)
        #expect(ada.isInserted)
        #expect(context.registeredObject(for: ada.objectID) === ada)
        try context.save()
        #expect(context.registeredObject(for: ada.objectID) === ada)
    }

    @Test("URIs: x-coredata://<store UUID>/<Entity>/p<key>, temporary x-coredata:///<Entity>/t<UUID><n>")
    func uriForms() throws {
        let context = try CompanyModel.stack()
        let ada = context.employee("Ada")
        let temporary = ada.objectID.uriRepresentation().absoluteString
        #expect(temporary.hasPrefix("x-coredata:///Employee/t"))
        let suffix = temporary.dropFirst("x-coredata:///Employee/t".count)
        #expect(UUID(uuidString: String(suffix.prefix(36))) != nil)
        #expect(UInt64(suffix.dropFirst(36)) != nil)
        #expect(context.employee("Bob").objectID.uriRepresentation().absoluteString != temporary)
        try context.save()
        let store = try #require(context.persistentStoreCoordinator?.persistentStores.first)
        let uri = ada.objectID.uriRepresentation()
        let prefix = "x-coredata://\(store.identifier!)/Employee/p"
        #expect(uri.absoluteString.hasPrefix(prefix))
        #expect(Int(uri.absoluteString.dropFirst(prefix.count)) != nil)
    }

    /// SwiftData's `PersistentIdentifier` holds the string of the object's URI: the one written
    /// directly for a plain store identifier and entity name must be exactly the URL's
    /// (`uriRepresentation()`), and any other falls back to the URL, which percent-encodes.
    @Test("an ID's URI string is its uriRepresentation()'s absolute string, plain or percent-encoded")
    func uriStringIsTheURLsString() throws {
        let model = CompanyModel.make()
        let café = NSEntityDescription()
        café.name = "Café"
        café.properties = [CompanyModel.attribute("label", .stringAttributeType)]
        model.entities += [café]
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let saved = try context.performAndWait {
            let ada = context.employee("Ada")
            let corner = NSEntityDescription.insertNewObject(forEntityName: "Café", into: context)
            #expect(ada.objectID.uriString == ada.objectID.uriRepresentation().absoluteString, "temporary")
            try context.save()
            for id in [ada.objectID, corner.objectID] {
                #expect(id.uriString == id.uriRepresentation().absoluteString)
            }
            #expect(ada.objectID.uriString == "x-coredata://\(store.identifier!)/Employee/p1")
            #expect(corner.objectID.uriString.contains("/Caf%C3%A9/p1"), "a name a URI does not take as it is")
            return ada.objectID
        }
        #expect(saved.uriString == saved.uriRepresentation().absoluteString)
        store.identifier = "a store {1}"
        let renamed = try context.performAndWait {
            let bob = context.employee("Bob")
            try context.save()
            return bob.objectID
        }
        #expect(
            renamed.uriString == renamed.uriRepresentation().absoluteString,
            "a store identifier a host does not take: whatever the URL makes of it")
    }

    @Test("managedObjectID(forURIRepresentation:) returns the ID a URI names, nil for an unknown store")
    func uriRoundTrip() throws {
        let context = try CompanyModel.stack()
        let ada = context.employee("Ada")
        try context.save()
        let coordinator = try #require(context.persistentStoreCoordinator)
        let id = try #require(coordinator.managedObjectID(forURIRepresentation: ada.objectID.uriRepresentation()))
        #expect(id == ada.objectID)
        #expect(id.hashValue == ada.objectID.hashValue)
        #expect(context.object(with: id) === ada)
        let foreign = URL(string: "x-coredata://00000000-0000-0000-0000-000000000000/Employee/p1")!
        #expect(coordinator.managedObjectID(forURIRepresentation: foreign) == nil)
    }

    /// NSObject reference, `hash`: "If two objects are equal (as determined by the isEqual(_:)
    /// method), they must have the same hash value". Object IDs of one root entity (an entity and
    /// its sub-entities share their rows' keys) and one key are equal. Every table of a store
    /// numbers its rows from 1, so IDs of different entities share keys all the time: hashed by the
    /// key alone, row 7 of `Employee` and row 7 of `Department` met in every hash table of IDs,
    /// and each meeting compared them in full. Their hashes differ.
    @Test("equal object IDs hash alike; IDs of different entities with the same key hash apart")
    func hashByRootAndKey() throws {
        let context = try CompanyModel.stack()
        let coordinator = try #require(context.persistentStoreCoordinator)
        let store = try #require(coordinator.persistentStores.first?.identifier)
        func id(_ entity: String, _ key: Int) throws -> NSManagedObjectID {
            let uri = try #require(URL(string: "x-coredata://\(store)/\(entity)/p\(key)"))
            return try #require(coordinator.managedObjectID(forURIRepresentation: uri))
        }
        for key in [1, 7, 1_000] {
            let employee = try id("Employee", key)
            let again = try id("Employee", key)
            #expect(employee !== again && employee == again && employee.hash == again.hash)
            // `Manager` is a sub-entity of `Employee`: one key space, so one object per key.
            let manager = try id("Manager", key)
            #expect(employee == manager && employee.hash == manager.hash)
            let department = try id("Department", key)
            let project = try id("Project", key)
            #expect(employee != department && employee.hash != department.hash)
            #expect(department != project && department.hash != project.hash)
            #expect(Set([employee, again, manager, department, project]).count == 3)
        }
    }

    /// NSPersistentStore reference, `identifier`: "the unique identifier for the store", which a
    /// permanent ID's URI names (`uriRepresentation()`, "x-coredata://<store UUID>/…"). The IDs a
    /// store reads share what they know of the store (its identifier among it); setting the
    /// identifier must reach the IDs read afterwards, so their URIs still resolve.
    @Test("after a store's identifier is set, the IDs it reads name the new identifier and their URIs resolve")
    func identifierChange() throws {
        let directory = TemporaryDirectory()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
        let store = try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: directory.file("ids.sqlite"))
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        context.employee("Ada")
        try context.save()
        let original = try #require(store.identifier)
        let request = NSFetchRequest<NSManagedObjectID>(entityName: "Employee")
        request.resultType = .managedObjectIDResultType
        let before = try #require(try context.fetch(request).first)
        #expect(before.uriRepresentation().host == original)

        let renamed = "0B7A2C4E-5D6F-4A1B-8C9D-0E1F2A3B4C5D"
        store.identifier = renamed
        let after = try #require(try context.fetch(request).first)
        #expect(after.uriRepresentation().host == renamed)
        #expect(after.persistentStore === store)
        let resolved = try #require(coordinator.managedObjectID(forURIRepresentation: after.uriRepresentation()))
        #expect(resolved == after)
        #expect(context.object(with: resolved).value(forKey: "name") as? String == "Ada")
    }

    @Test("IDs are Sendable and Hashable: one passes between tasks and finds the same object")
    func sendable() async throws {
        let context = try CompanyModel.stack()
        let id: NSManagedObjectID = try await context.perform {
            let ada = context.employee("Ada")
            try context.save()
            return ada.objectID
        }
        let echoed = await Task.detached { id }.value
        let name = await context.perform { context.object(with: echoed).value(forKey: "name") as? String }
        #expect(name == "Ada")
        #expect(Set([id, echoed]).count == 1)
    }

    /// `NSManagedObjectID()` is public on Apple platforms (inherited from `NSObject`), and code
    /// uses it as a placeholder ID, in a notification's userInfo or a test double: it names no
    /// object and equals only itself.
    @Test("NSManagedObjectID() makes a placeholder ID that equals only itself")
    func placeholderID() throws {
        let first = NSManagedObjectID()
        let second = NSManagedObjectID()
        #expect(first == first && first != second)
        #expect(first.entity.name == nil)
        #expect(Set([first, second, first]).count == 2)
        let context = try CompanyModel.stack()
        context.performAndWait {
            #expect(context.registeredObject(for: first) == nil)
            #expect(throws: NSError.self) { try context.existingObject(with: first) }
        }
    }
}
