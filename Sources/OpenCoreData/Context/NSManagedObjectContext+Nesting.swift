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
            let object = try parent.existingObject(with: parent.childTemporaryIDs.current(objectID))
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
            guard let mine = try? parent.existingObject(with: parent.childTemporaryIDs.current(objectID)) else {
                return nil
            }
            _ = mine.toManyOrOne(slot: slot)
            return mine.makeSnapshot(version: 0).values[slot]
        }
    }

    /// The answer to `request` below this context's pending changes: the parent's answer (which
    /// includes the parent's own pending changes) for a child, the stores' for a root context.
    func underlyingResults(_ request: NSFetchRequest<NSFetchRequestResult>) throws -> FetchedRows {
        guard let parent = parentContext else { return try storeResults(request) }
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
    ///
    /// An object this context inserted and pushed before may have been given a permanent ID in
    /// the parent since (the root saved it), while it keeps its temporary ID here, as Apple's
    /// child contexts keep theirs: the parent finds it, and every relationship naming it, by
    /// what its temporary ID became (``ChildTemporaryIDs``).
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
            let renamed = parent.childTemporaryIDs
            func value(_ change: Change, _ slot: Int) -> Any? {
                let value = change.values[slot]
                guard !renamed.isEmpty else { return value }
                switch change.entity.layout.kinds[slot] {
                case .toOne: return (value as? NSManagedObjectID).map(renamed.current) ?? value
                case .toMany: return (value as? [NSManagedObjectID]).map { $0.map(renamed.current) } ?? value
                case .attribute, .fetched: return value
                }
            }
            for change in inserts {
                let objectClass = ManagedObjectClasses.objectClass(for: change.entity)
                let object = objectClass.init(entity: change.entity, insertInto: nil)
                object.assign(objectID: change.objectID)
                parent.insert(object)
                parent.childTemporaryIDs.noteInserted(change.objectID)
                for slot in change.slots { object.values[slot] = value(change, slot) }
                parentObjects[change.objectID] = object
            }
            for change in updates {
                let object = parent.object(with: renamed.current(change.objectID))
                object.realize()
                for slot in change.slots {
                    object.willMutate(slot)
                    object.values[slot] = value(change, slot)
                }
                parentObjects[change.objectID] = object
            }
            for objectID in deletes {
                parent.delete(parent.object(with: renamed.current(objectID)))
            }
            parent.processPendingChanges()
            return UncheckedSendable(parentObjects)
        }
        return (snapshots, parentObjects.value)
    }
}

/// The temporary IDs under which child contexts inserted objects into a context, and the
/// permanent ID each object got from this context since.
///
/// A child's object keeps its temporary ID after the root context's save gives the root's object
/// a permanent one (Apple's children do the same; `obtainPermanentIDs(for:)` is the documented
/// way to avoid it), so the child's later saves, and its faults firing through the parent, still
/// name the object by the temporary ID. Without this the parent would make a new, empty object for
/// that ID and the child's edit would never reach the store.
///
/// - Complexity: one entry per object a child inserted, kept for the context's life: a child may
///   name its object by the temporary ID for as long as both live.
struct ChildTemporaryIDs {
    /// Temporary IDs of child inserts not yet given permanent IDs here.
    private var waiting = Set<IDKey>()
    /// What each temporary ID of a child insert became.
    private var became: [IDKey: NSManagedObjectID] = [:]

    /// Whether no temporary ID has been renamed: nothing to look up.
    var isEmpty: Bool { became.isEmpty }

    /// Notes that a child inserted an object under `id`.
    mutating func noteInserted(_ id: NSManagedObjectID) {
        if id.isTemporaryID { waiting.insert(IDKey(id)) }
    }

    /// Whether any child insert waits for a permanent ID.
    var hasWaiting: Bool { !waiting.isEmpty }

    /// Notes that the object a child inserted under `temporary` now has `permanent`.
    mutating func rename(_ temporary: NSManagedObjectID, to permanent: NSManagedObjectID) {
        guard waiting.remove(IDKey(temporary)) != nil else { return }
        became[IDKey(temporary)] = permanent
    }

    /// Takes back a rename whose save failed: the object has its temporary ID again.
    mutating func restore(_ temporary: NSManagedObjectID) {
        guard became.removeValue(forKey: IDKey(temporary)) != nil else { return }
        waiting.insert(IDKey(temporary))
    }

    /// Forgets the child inserts that wait for permanent IDs: the inserts were discarded.
    mutating func discardWaiting() { waiting.removeAll() }

    /// The ID the object `id` names has here now: its permanent ID when `id` is a child's
    /// temporary ID this context renamed, else `id`.
    func current(_ id: NSManagedObjectID) -> NSManagedObjectID {
        guard !became.isEmpty, id.isTemporaryID else { return id }
        return became[IDKey(id)] ?? id
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
        inserted = ids(NSInsertedObjectsKey, NSInsertedObjectIDsKey)
        updated = ids(NSUpdatedObjectsKey, NSUpdatedObjectIDsKey)
        deleted = ids(NSDeletedObjectsKey, NSDeletedObjectIDsKey)
    }
}
