/// Nested contexts: a child context's parent plays the role of its persistent store. The child
/// fetches through the parent (seeing the parent's unsaved changes), faults its objects in from the
/// parent's current values, and its save pushes its changes one level up — into the parent, not to
/// a store.
///
/// Related documentation: NSManagedObjectContext reference, `parent`,
/// `automaticallyMergesChangesFromParent`; Core Data Programming Guide, "Using Core Data in the
/// Background" (parent and child contexts).
extension NSManagedObjectContext {
    /// (Re)installs the observer of saves this context merges: sibling and parent saves for a
    /// child, saves of other root contexts of the same coordinator for a root context. What
    /// qualifies is decided from values captured now, so the observer reads nothing of this
    /// context off its queue; the IDs are read on the saving thread and merged on this queue.
    func updateAutomaticMerging() {
        if let token = mergeObserver {
            NotificationCenter.default.removeObserver(token)
            mergeObserver = nil
        }
        guard mergesFromParent else { return }
        weak let parent = parentContext
        weak let coordinator = persistentStoreCoordinator
        let isChild = parentContext != nil
        mergeObserver = NotificationCenter.default.addObserver(
            forName: .NSManagedObjectContextDidSave, object: nil, queue: nil
        ) { [weak self] note in
            guard let self, let source = note.object as? NSManagedObjectContext, source !== self else { return }
            let qualifies =
                isChild
                ? (source === parent || (source.parentContext != nil && source.parentContext === parent))
                : (source.parentContext == nil && source.persistentStoreCoordinator === coordinator)
            guard qualifies else { return }
            let changes = SavedChanges(note.userInfo ?? [:])
            let context = UncheckedSendable(self)
            context.value.queue.async {
                context.value.runMerge(changes)
            }
        }
    }

    private func runMerge(_ changes: SavedChanges) {
        merge(changes)
        processPendingChanges()
    }

    // MARK: Reading through the parent

    /// The snapshot of an object as the parent holds it now, unsaved changes included, and the
    /// parent's object itself.
    func snapshotFromParent(
        _ parent: NSManagedObjectContext, for objectID: NSManagedObjectID
    ) throws -> (Snapshot, parentObject: NSManagedObject?) {
        let answer = try parent.performAndWait {
            let object = try parent.existingObject(with: objectID)
            return UncheckedSendable((object.makeSnapshot(version: object.committed?.version ?? 0), object))
        }
        return answer.value
    }

    /// The destination of one relationship as the parent holds it now.
    func destinationFromParent(
        _ parent: NSManagedObjectContext, of object: NSManagedObject, slot: Int
    ) -> Any? {
        let objectID = object.objectID
        return parent.performAndWait { () -> Any? in
            guard let mine = try? parent.existingObject(with: objectID) else { return nil }
            _ = mine.toManyOrOne(slot: slot)
            return mine.makeSnapshot(version: 0).values[slot]
        }
    }

    /// The answer to `request` below this context's pending changes: the parent's answer (which
    /// includes the parent's own pending changes) for a child, the stores' for a root context.
    func underlyingResults(_ request: NSFetchRequest<NSFetchRequestResult>) throws -> FetchedRows {
        guard let parent = parentContext else {
            guard let coordinator = persistentStoreCoordinator else {
                preconditionFailure("fetch(_:): the context has no persistent store coordinator")
            }
            return try coordinator.executeFetch(request, context: self)
        }
        let forParent = request.converted(to: NSFetchRequestResult.self)
        let wantsObjects = request.resultType == .managedObjectResultType
        if wantsObjects { forParent.resultType = .managedObjectIDResultType }
        forParent.includesPendingChanges = true
        forParent.fetchBatchSize = 0
        let answer = UncheckedSendable(try parent.performAndWait { try parent.fetchResults(forParent) })
        guard wantsObjects else { return .values(answer.value) }
        return .objects(answer.value.compactMap { ($0 as? NSManagedObjectID).map(object(with:)) })
    }

    // MARK: Saving into the parent

    /// Pushes this context's changes into the parent: inserted objects are inserted there with
    /// the same (temporary) IDs, changed properties are set, deleted objects are deleted. Nothing
    /// reaches a store; the parent's own save does that. Returns the snapshots the objects now
    /// share with the parent, and the parent's objects.
    func pushChanges(
        to parent: NSManagedObjectContext
    ) -> (snapshots: [IDKey: Snapshot], parentObjects: [NSManagedObjectID: NSManagedObject]) {
        struct Change {
            let objectID: NSManagedObjectID
            let entity: NSEntityDescription
            let values: SlotValues
            let slots: [Int]
        }
        var snapshots: [IDKey: Snapshot] = [:]
        func change(_ object: NSManagedObject, allSlots: Bool) -> Change {
            let snapshot = object.makeSnapshot(version: object.committed?.version ?? 0)
            snapshots[IDKey(object.objectID)] = snapshot
            let layout = object.layout
            // Transient attributes go up as well: a child's save hands the parent every value the
            // child set, so the parent's object shows them (they never reach a store).
            var values = snapshot.values
            let slots = (0..<layout.count).filter { slot in
                guard layout.kinds[slot] != .fetched, allSlots || object.changedSlots.contains(slot) else {
                    return false
                }
                if layout.properties[slot].isTransient {
                    guard layout.kinds[slot] == .attribute else { return false }
                    values[slot] = object.values[slot]
                }
                return true
            }
            return Change(objectID: object.objectID, entity: object.entity, values: values, slots: slots)
        }
        let inserts = inserted.map { change($0, allSlots: true) }
        let updates = updated.map { change($0, allSlots: false) }
        let deletes = deleted.map(\.objectID)
        let work = UncheckedSendable((inserts, updates, deletes))
        let parentObjects = parent.performAndWait {
            let (inserts, updates, deletes) = work.value
            var parentObjects: [NSManagedObjectID: NSManagedObject] = [:]
            for change in inserts {
                let objectClass = ManagedObjectClasses.objectClass(for: change.entity)
                let object = objectClass.init(entity: change.entity, insertInto: nil)
                object.assign(objectID: change.objectID)
                parent.insert(object)
                for slot in change.slots { object.values[slot] = change.values[slot] }
                parentObjects[change.objectID] = object
            }
            for change in updates {
                let object = parent.object(with: change.objectID)
                object.realize()
                for slot in change.slots {
                    object.willMutate(slot)
                    object.values[slot] = change.values[slot]
                }
                parentObjects[change.objectID] = object
            }
            for objectID in deletes {
                parent.delete(parent.object(with: objectID))
            }
            parent.processPendingChanges()
            return UncheckedSendable(parentObjects)
        }
        return (snapshots, parentObjects.value)
    }
}

/// The object IDs a save notification reports, read on the thread that posted it.
struct SavedChanges: @unchecked Sendable {
    var inserted: [NSManagedObjectID] = []
    var updated: [NSManagedObjectID] = []
    var deleted: [NSManagedObjectID] = []

    init(inserted: [NSManagedObjectID] = [], updated: [NSManagedObjectID] = [], deleted: [NSManagedObjectID] = []) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
    }

    /// The IDs under `NSInsertedObjectsKey`, `NSUpdatedObjectsKey` and `NSDeletedObjectsKey` (objects
    /// or IDs), and their `…ObjectIDsKey` counterparts.
    init(_ userInfo: [AnyHashable: Any]) {
        func ids(_ keys: String...) -> [NSManagedObjectID] {
            var result: [NSManagedObjectID] = []
            for key in keys {
                for element in DynamicValue.elements(userInfo[key] as Any) ?? [] {
                    if let object = element as? NSManagedObject {
                        result.append(object.objectID)
                    } else if let id = element as? NSManagedObjectID {
                        result.append(id)
                    }
                }
            }
            return result
        }
        inserted = ids(NSInsertedObjectsKey, "inserted_objectIDs")
        updated = ids(NSUpdatedObjectsKey, "updated_objectIDs")
        deleted = ids(NSDeletedObjectsKey, "deleted_objectIDs")
    }
}
