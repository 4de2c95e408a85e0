import CoreData
import Testing

/// A store written only against Apple's public NSIncrementalStore API: rows are dictionaries
/// keyed by an integer reference; to-manys are left out of nodes and answered lazily through
/// `newValue(forRelationship:forObjectWith:with:)`, as the Incremental Store Programming Guide
/// allows.
final class DictionaryStore: NSIncrementalStore, @unchecked Sendable {
    struct Row {
        var entityName: String
        var values: [String: Any]
        var version: UInt64
    }

    var rows: [Int: Row] = [:]
    var nextKey = 1
    var lazyRelationshipRequests = 0
    var registered = 0

    override var type: String { "DictionaryStore" }

    override func loadMetadata() throws {
        metadata = [NSStoreTypeKey: "DictionaryStore", NSStoreUUIDKey: UUID().uuidString]
    }

    override func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext?) throws -> Any {
        if let fetch = request as? NSFetchRequest<NSFetchRequestResult>, let context, let entity = fetch.entity {
            let names = Set([entity].flatMap { [$0] + $0.subentities }.compactMap(\.name))
            let ids = rows.filter { names.contains($0.value.entityName) }.keys.sorted().map { key in
                newObjectID(
                    for: context.persistentStoreCoordinator!.managedObjectModel
                        .entitiesByName[rows[key]!.entityName]!, referenceObject: key)
            }
            var objects = ids.map(context.object(with:))
            if let predicate = fetch.predicate { objects = objects.filter { predicate.evaluate(with: $0) } }
            if let sort = fetch.sortDescriptors { objects = objects.sorted(using: sort) }
            if fetch.fetchOffset > 0 { objects = Array(objects.dropFirst(fetch.fetchOffset)) }
            if fetch.fetchLimit > 0 { objects = Array(objects.prefix(fetch.fetchLimit)) }
            switch fetch.resultType {
            case .countResultType: return [objects.count]
            case .managedObjectIDResultType: return objects.map(\.objectID)
            default: return objects
            }
        }
        if let save = request as? NSSaveChangesRequest {
            for object in (save.insertedObjects ?? []).union(save.updatedObjects ?? []) {
                let key = referenceObject(for: object.objectID) as! Int
                var values: [String: Any] = [:]
                for (name, property) in object.entity.propertiesByName where !property.isTransient {
                    let value = object.value(forKey: name)
                    if let relationship = property as? NSRelationshipDescription {
                        if !relationship.isToMany { values[name] = (value as? NSManagedObject)?.objectID ?? NSNull() }
                    } else if let value {
                        values[name] = value
                    }
                }
                rows[key] = Row(
                    entityName: object.entity.name!, values: values, version: (rows[key]?.version ?? 0) + 1)
            }
            for object in save.deletedObjects ?? [] { rows[referenceObject(for: object.objectID) as! Int] = nil }
            return [Any]()
        }
        throw NSError(domain: NSCocoaErrorDomain, code: NSPersistentStoreUnsupportedRequestTypeError)
    }

    override func newValuesForObject(
        with objectID: NSManagedObjectID, with context: NSManagedObjectContext
    ) throws -> NSIncrementalStoreNode {
        guard let row = rows[referenceObject(for: objectID) as! Int] else {
            throw NSError(domain: NSCocoaErrorDomain, code: NSManagedObjectReferentialIntegrityError)
        }
        return NSIncrementalStoreNode(objectID: objectID, withValues: row.values, version: row.version)
    }

    override func newValue(
        forRelationship relationship: NSRelationshipDescription, forObjectWith objectID: NSManagedObjectID,
        with context: NSManagedObjectContext?
    ) throws -> Any {
        lazyRelationshipRequests += 1
        guard let inverse = relationship.inverseRelationship?.name else { return [NSManagedObjectID]() }
        let model = objectID.entity.managedObjectModel!
        return rows.filter { ($0.value.values[inverse] as? NSManagedObjectID) == objectID }.keys.sorted().map {
            newObjectID(for: model.entitiesByName[rows[$0]!.entityName]!, referenceObject: $0)
        }
    }

    override func obtainPermanentIDs(for array: [NSManagedObject]) throws -> [NSManagedObjectID] {
        array.map { object in
            defer { nextKey += 1 }
            return newObjectID(for: object.entity, referenceObject: nextKey)
        }
    }

    override func managedObjectContextDidRegisterObjects(with objectIDs: [NSManagedObjectID]) {
        registered += objectIDs.count
    }
}

/// A store with no metadata: Apple requires `loadMetadata()` to set the type and UUID.
final class MetadataLessStore: NSIncrementalStore, @unchecked Sendable {}

/// Custom stores through the public NSIncrementalStore API (Incremental Store Programming Guide;
/// NSIncrementalStore and NSIncrementalStoreNode references), and the coordinator's store rules.
@Suite("NSIncrementalStore")
struct IncrementalStoreTests {
    private func stack() throws -> (NSManagedObjectContext, DictionaryStore) {
        NSPersistentStoreCoordinator.registerStoreClass(DictionaryStore.self, forStoreType: "DictionaryStore")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
        let store = try coordinator.addPersistentStore(
            ofType: "DictionaryStore", configurationName: nil, at: URL(fileURLWithPath: "/dev/null"))
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return (context, try #require(store as? DictionaryStore))
    }

    @Test("a dictionary-backed store saves, fetches, fulfils faults and answers relationships lazily")
    func dictionaryStore() throws {
        let (context, store) = try stack()
        let dept = context.department("R&D")
        for (name, salary) in [("Ada", 300.0), ("Bob", 100.0)] {
            context.employee(name, salary: salary).setValue(dept, forKey: "department")
        }
        try context.save()
        #expect(store.rows.count == 3)
        #expect(store.rows.values.allSatisfy { $0.version == 1 })

        let fresh = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        fresh.persistentStoreCoordinator = context.persistentStoreCoordinator
        let request = NSFetchRequest<NSManagedObject>(entityName: "Department")
        let department = try #require(try fresh.fetch(request).first)
        #expect(department.isFault)
        #expect(department.value(forKey: "name") as? String == "R&D")
        #expect(department.hasFault(forRelationshipNamed: "employees"))
        let employees = (department.value(forKeyPath: "employees.name") as? [Any])?.compactMap { $0 as? String }
        #expect(Set(employees ?? []) == ["Ada", "Bob"])
        #expect(department.value(forKeyPath: "employees.@sum.salary") as? Double == 400)
        #expect(store.registered >= 3, "managedObjectContextDidRegisterObjects(with:) is called")

        let bob = try #require(
            (department.value(forKey: "employees") as? Set<NSManagedObject>)?.first {
                $0.value(forKey: "name") as? String == "Bob"
            })
        bob.setValue(150.0, forKey: "salary")
        try fresh.save()
        #expect(store.rows[store.referenceObject(for: bob.objectID) as! Int]?.version == 2)
        let count = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        count.predicate = NSPredicate(format: "salary > 120")
        #expect(try fresh.count(for: count) == 2)
    }

    @Test("a to-many left out of a node is asked of newValue(forRelationship:forObjectWith:with:) on first use")
    func lazyRelationship() throws {
        let (context, store) = try stack()
        let model = try #require(context.persistentStoreCoordinator?.managedObjectModel)
        let departmentID = store.newObjectID(for: model.entitiesByName["Department"]!, referenceObject: 1)
        store.rows[1] = .init(entityName: "Department", values: ["name": "R&D"], version: 1)
        store.rows[2] = .init(
            entityName: "Employee", values: ["name": "Ada", "salary": 300.0, "department": departmentID], version: 1)
        store.rows[3] = .init(
            entityName: "Manager", values: ["name": "Max", "salary": 500.0, "department": departmentID], version: 1)
        store.nextKey = 4
        let department = try context.existingObject(with: departmentID)
        #expect(department.hasFault(forRelationshipNamed: "employees"))
        #expect(store.lazyRelationshipRequests == 0)
        #expect(department.value(forKeyPath: "employees.@sum.salary") as? Double == 800)
        #expect(store.lazyRelationshipRequests == 1)
        #expect(!department.hasFault(forRelationshipNamed: "employees"))
        let max = try #require(
            (department.value(forKey: "employees") as? Set<NSManagedObject>)?.first {
                $0.entity.name == "Manager"
            })
        #expect(max.value(forKey: "department") as? NSManagedObject === department)
    }

    @Test("node contract: values by property name, to-one as ID or NSNull, version as given")
    func nodeContract() throws {
        let (context, store) = try stack()
        let ada = context.employee("Ada")
        try context.save()
        let node = try store.newValuesForObject(with: ada.objectID, with: context)
        let entity = ada.entity
        #expect(node.version == 1)
        #expect(node.value(for: entity.propertiesByName["name"]!) as? String == "Ada")
        #expect(node.value(for: entity.propertiesByName["department"]!) is NSNull)
        #expect(node.value(for: entity.propertiesByName["directReports"]!) == nil, "left out: resolved lazily")
        node.update(withValues: ["name": "Ada L.", "unknown": 1, "directReports": [NSManagedObjectID]()], version: 2)
        #expect(node.version == 2)
        #expect(node.value(for: entity.propertiesByName["name"]!) as? String == "Ada L.")
        let reports = node.value(for: entity.propertiesByName["directReports"]!) as? [NSManagedObjectID]
        #expect(reports?.isEmpty == true, "an empty to-many is an empty collection, not nil")
        let stray = NSAttributeDescription()
        stray.name = "unknown"
        #expect(node.value(for: stray) == nil, "keys that name no property are stripped")
    }

    /// Two contexts of one coordinator over the dictionary store, both having read Ada at version 1.
    private func twoReaders() throws -> (
        NSManagedObjectContext, NSManagedObjectContext, DictionaryStore, NSManagedObject, NSManagedObject, Int
    ) {
        let (first, store) = try stack()
        let ada = first.employee("Ada", salary: 100)
        try first.save()
        let key = store.referenceObject(for: ada.objectID) as! Int
        let second = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        second.persistentStoreCoordinator = first.persistentStoreCoordinator
        let secondAda = try second.existingObject(with: ada.objectID)
        #expect(secondAda.value(forKey: "name") as? String == "Ada")
        return (first, second, store, ada, secondAda, key)
    }

    @Test("a node's version drives optimistic locking for a custom store, as Z_OPT does for SQLite")
    func versionDrivesConflicts() throws {
        let (first, second, store, firstAda, ada, key) = try twoReaders()
        // A context saving the same object twice does not conflict with itself: the version it
        // keeps after a save is the one the store reports (1, then one more per save).
        firstAda.setValue(200.0, forKey: "salary")
        try first.save()
        #expect(store.rows[key]?.version == 2)

        ada.setValue("Ada L.", forKey: "name")
        let error = #expect(throws: NSError.self) { try second.save() }
        #expect(error?.code == NSManagedObjectMergeError)
        let conflict = (error?.userInfo["conflictList"] as? [NSMergeConflict])?.first
        #expect(conflict?.oldVersionNumber == 1)
        #expect(conflict?.newVersionNumber == 2)
        #expect(store.rows[key]?.values["name"] as? String == "Ada", "nothing was written")

        second.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        try second.save()
        #expect(store.rows[key]?.version == 3)
        #expect(store.rows[key]?.values["name"] as? String == "Ada L.")
        #expect(store.rows[key]?.values["salary"] as? Double == 200, "the other context's change is kept")
    }

    @Test("an object the custom store no longer has is a conflict when changed, not when deleted")
    func deletedInStore() throws {
        let (first, second, store, firstAda, ada, key) = try twoReaders()
        first.delete(firstAda)
        try first.save()
        #expect(store.rows[key] == nil)
        ada.setValue(1.0, forKey: "salary")
        let error = #expect(throws: NSError.self) { try second.save() }
        #expect((error?.userInfo["conflictList"] as? [NSMergeConflict])?.first?.newVersionNumber == 0)
        second.rollback()
        second.delete(ada)
        try second.save()
    }

    @Test("a store whose loadMetadata() sets no type and UUID is refused with 134080")
    func metadataRequired() throws {
        NSPersistentStoreCoordinator.registerStoreClass(MetadataLessStore.self, forStoreType: "MetadataLess")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
        let error = #expect(throws: NSError.self) {
            try coordinator.addPersistentStore(ofType: "MetadataLess", configurationName: nil, at: nil)
        }
        #expect(error?.code == NSPersistentStoreOpenError)
        #expect(coordinator.persistentStores.isEmpty)
    }

    @Test("an unknown store type is refused with 134000")
    func unknownType() throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
        let error = #expect(throws: NSError.self) {
            try coordinator.addPersistentStore(ofType: "NoSuchType", configurationName: nil, at: nil)
        }
        #expect(error?.domain == NSCocoaErrorDomain)
        #expect(error?.code == NSPersistentStoreInvalidTypeError)
    }
}
