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
    /// The built-in stores compare `Z_OPT` versions in one query per store; a custom store is asked
    /// for each object's current node, whose `version` plays `Z_OPT`'s part
    /// (`NSIncrementalStoreNode` reference).
    func lockingConflicts(
        updated: Set<NSManagedObject>, deleted: Set<NSManagedObject>, locked: Set<NSManagedObject>,
        context: NSManagedObjectContext
    ) throws -> [NSMergeConflict] {
        var candidates: [ObjectIdentifier: (store: RowStore, objects: [NSManagedObject])] = [:]
        var custom: [(store: NSIncrementalStore, object: NSManagedObject)] = []
        for object in updated.union(deleted).union(locked) {
            guard !object.objectID.isTemporaryID, object.committed != nil,
                let store = object.objectID.persistentStore
            else { continue }
            if let rows = store as? RowStore {
                candidates[ObjectIdentifier(rows), default: (rows, [])].objects.append(object)
            } else if let incremental = store as? NSIncrementalStore {
                custom.append((incremental, object))
            }
        }
        var conflicts: [NSMergeConflict] = []
        func check(_ object: NSManagedObject, current: UInt64?, persisted: () throws -> Snapshot) rethrows {
            if current == object.committed?.version ?? 0 { return }
            if current == nil, object.isDeletedFlag { return }
            let persisted = try current.map { _ in try persisted() }
            if let persisted { rowCache[object.objectID] = persisted }
            conflicts.append(NSMergeConflict(object: object, persisted: persisted))
        }
        for (store, objects) in candidates.values {
            let versions = try store.currentVersions(of: objects.map(\.objectID))
            for object in objects {
                try check(object, current: versions[object.objectID]) {
                    try store.read(object.objectID, cachedRow: { _ in nil }).snapshot
                }
            }
        }
        for (store, object) in custom {
            let node: NSIncrementalStoreNode?
            do {
                node = try store.newValuesForObject(with: object.objectID, with: context)
            } catch let error as NSError
                where error.domain == NSCocoaErrorDomain && error.code == NSManagedObjectReferentialIntegrityError
            {
                node = nil  // the store no longer has the object
            }
            check(object, current: node?.version) { node!.snapshot }
        }
        return conflicts
    }

    /// Runs `body` holding the write lock of each row store in `stores`, innermost last.
    func withWriteLocks(_ stores: ArraySlice<RowStore>, _ body: () throws -> Void) throws {
        guard let first = stores.first else { return try body() }
        try first.withWriteLock { try withWriteLocks(stores.dropFirst(), body) }
    }
}

extension NSManagedObjectContext {
    /// Hands the conflicts to the merge policy, then bases each surviving object on the row's
    /// current version so the save writes over it. An object whose row was deleted in the store
    /// leaves the context (the store's delete wins under every policy but the error policy).
    func resolve(_ conflicts: [NSMergeConflict]) throws {
        let policy = mergePolicy as? NSMergePolicy ?? NSMergePolicy.error
        try policy.resolve(mergeConflicts: conflicts)
        for conflict in conflicts {
            let object = conflict.sourceObject
            guard let persisted = conflict.persistedRow else {
                object.isUpdatedFlag = false
                object.isDeletedFlag = false
                forget(object)
                continue
            }
            object.committed = persisted
            let changed = object.slots(differingFrom: persisted)
            object.changedSlots = changed
            if changed.isEmpty, object.isUpdatedFlag {
                object.isUpdatedFlag = false
                updated.remove(object)
            }
        }
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
                if value is UnresolvedRelationship { continue }
                dictionary[layout.properties[slot].name] = value ?? NSNull()
            case .toMany, .fetched:
                continue
            }
        }
        return dictionary
    }
}
