/// Optimistic locking: before a save writes, each changed, deleted or locked object's row version
/// is compared with the version the context based the object on; differences become
/// ``NSMergeConflict``s for the context's merge policy.
///
/// Related documentation: Core Data Programming Guide, "Change Management" ("Conflict
/// Detection and Optimistic Locking"); NSMergePolicy and NSMergeConflict references.
extension NSPersistentStoreCoordinator {
    /// The conflicts of a save: objects whose row changed (or went away) in the store since their
    /// context read it. Re-deleting a row already deleted is not a conflict.
    ///
    /// Each store reports its rows' current versions in one call (`Z_OPT` for SQLite; a custom
    /// store's node `version`, `NSIncrementalStoreNode` reference); the row of a changed version is
    /// read for the conflict.
    func lockingConflicts(
        updated: Set<NSManagedObject>, deleted: Set<NSManagedObject>, locked: Set<NSManagedObject>,
        requester: any StoreRequester
    ) throws -> [NSMergeConflict] {
        var objectsByStore: [ObjectIdentifier: (store: NSPersistentStore, objects: [NSManagedObject])] = [:]
        func check(_ object: NSManagedObject) {
            guard !object.hasTemporaryID, object.committed != nil,
                let store = object.objectID.persistentStore
            else { return }
            objectsByStore[ObjectIdentifier(store), default: (store, [])].objects.append(object)
        }
        // Each object once, as their union would give them, without building the union (hashing
        // every deleted object into a new set). A save
        // mostly changes or deletes, so the other set is empty and asked nothing.
        func isIn(_ set: Set<NSManagedObject>, _ object: NSManagedObject) -> Bool {
            !set.isEmpty && set.contains(object)
        }
        for object in updated { check(object) }
        for object in deleted where !isIn(updated, object) { check(object) }
        for object in locked where !isIn(updated, object) && !isIn(deleted, object) { check(object) }
        let candidates = objectsByStore.values.compactMap { entry in
            coordinated(entry.store).map { (store: $0, objects: entry.objects) }
        }
        var conflicts: [NSMergeConflict] = []
        for (store, objects) in candidates {
            let versions = try store.currentVersions(of: objects.map(\.objectID), requester: requester)
            for (object, current) in zip(objects, versions) {
                if current == object.committed?.version ?? 0 { continue }
                if current == nil, object.isDeletedFlag { continue }
                var persisted: Snapshot?
                if current != nil {
                    do {
                        persisted = try store.read(
                            object.objectID, requester: requester, generation: nil, cachedRow: { _ in nil }
                        ).snapshot
                    } catch let error as NSError
                        where error.domain == NSCocoaErrorDomain
                        && error.code == NSManagedObjectReferentialIntegrityError
                    {
                        // Deleted between the version check and the read.
                        if object.isDeletedFlag { continue }
                    }
                }
                if let persisted { rowCache[object.objectID] = persisted }
                conflicts.append(NSMergeConflict(object: object, persisted: persisted))
            }
        }
        return conflicts
    }

    /// Runs `body` holding the write lock of each row store in `stores`, innermost last.
    func withWriteLocks(_ stores: ArraySlice<any CoordinatedStore>, _ body: () throws -> Void) throws {
        guard let first = stores.first else { return try body() }
        try first.withWriteLock { try withWriteLocks(stores.dropFirst(), body) }
    }
}

extension Snapshot {
    /// The snapshot as `NSMergeConflict` reports it: attributes and to-one destinations by name,
    /// `NSNull` for no value (Apple's snapshots leave out to-many relationships).
    func dictionary(layout: EntityLayout) -> [String: Any] {
        var dictionary: [String: Any] = [:]
        for (slot, kind) in layout.kinds.enumerated() where layout.isPersistent(slot) {
            let value = values[slot]
            switch kind {
            case .attribute, .toOne:
                if UnresolvedRelationship.isMarker(value) { continue }
                dictionary[layout.properties[slot].name] = value ?? NSNull()
            case .toMany, .fetched:
                continue
            }
        }
        return dictionary
    }
}
