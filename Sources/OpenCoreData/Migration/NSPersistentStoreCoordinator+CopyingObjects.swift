/// Moving a store's contents into a store of another type (`migratePersistentStore(_:to:options:withType:)`
/// when the two formats share no file operation): the objects are copied as an app would copy
/// them, through a context of the coordinator, so this sits above the coordinator with the other
/// migrations.
///
/// Related documentation: NSPersistentStoreCoordinator reference,
/// `migratePersistentStore(_:to:options:withType:)`.
extension NSPersistentStoreCoordinator {
    /// Copies every saved object of `source` into `destination`, attributes first, then
    /// relationships between the copies, in one save.
    func copyObjects(from source: NSPersistentStore, to destination: NSPersistentStore) throws {
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = self
        var copies: [NSManagedObjectID: NSManagedObject] = [:]
        var pairs: [(original: NSManagedObject, copy: NSManagedObject)] = []
        for entity in managedObjectModel.entities where !entity.isAbstract && source.holds(entity) {
            let request = NSFetchRequest<NSManagedObject>(entityName: entity.name ?? "")
            request.includesSubentities = false
            request.affectedStores = [source]
            request.returnsObjectsAsFaults = false
            // In key order, so the copies' keys keep the originals' order.
            let fetched = try context.fetch(request).sorted { Self.keyOrder($0.objectID, $1.objectID) }
            for original in fetched {
                let copy = NSManagedObject(entity: entity, insertInto: context)
                context.assign(copy, to: destination)
                for (name, attribute) in entity.attributesByName where !attribute.isTransient {
                    copy.setValue(original.value(forKey: name), forKey: name)
                }
                copies[original.objectID] = copy
                pairs.append((original, copy))
            }
        }
        for (original, copy) in pairs {
            for (name, relationship) in original.entity.relationshipsByName where !relationship.isTransient {
                let value = original.value(forKey: name)
                if relationship.isToMany {
                    let members: [Any] =
                        (value as? NSOrderedSet)?.array ?? (value as? Set<NSManagedObject>).map(Array.init)
                        ?? (value as? NSSet)?.allObjects ?? []
                    let mapped = members.compactMap { ($0 as? NSManagedObject).flatMap { copies[$0.objectID] } }
                    copy.setValue(relationship.isOrdered ? NSOrderedSet(array: mapped) : Set(mapped), forKey: name)
                } else if let target = value as? NSManagedObject {
                    copy.setValue(copies[target.objectID], forKey: name)
                }
            }
        }
        var metadata = destination.metadata ?? [:]
        for (key, value) in source.metadata ?? [:] where !key.hasPrefix("NS") && !key.hasPrefix("_NS") {
            metadata[key] = value
        }
        // The copy is the same store in another format: it keeps the store's UUID, so object
        // URIs saved elsewhere still name its objects.
        if let uuid = source.metadata?[NSStoreUUIDKey] as? String { metadata[NSStoreUUIDKey] = uuid }
        destination.metadata = metadata
        try context.save()
    }

    /// Whether `a` comes before `b` in their store's key order (integer keys by number, others
    /// by their URI).
    private static func keyOrder(_ a: NSManagedObjectID, _ b: NSManagedObjectID) -> Bool {
        if case .integer(let x) = a.key, case .integer(let y) = b.key { return x < y }
        return a.uriRepresentation().absoluteString < b.uriRepresentation().absoluteString
    }
}
