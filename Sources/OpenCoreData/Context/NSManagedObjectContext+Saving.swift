/// Saving and discarding changes.
///
/// Related documentation: NSManagedObjectContext reference, `save()`, `rollback()`, `reset()`,
/// `refresh(_:mergeChanges:)`, `obtainPermanentIDs(for:)`; Core Data Programming Guide,
/// "Object Validation" and "Change Management".
extension NSManagedObjectContext {
    /// Saves every unsaved insert, change and delete to the stores, in this order: end of event
    /// (delete rules), `NSManagedObjectContextWillSave`, `willSave()` on each object, validation,
    /// permanent IDs, the stores' save, `didSave()`, `NSManagedObjectContextDidSave`.
    ///
    /// Does nothing when there are no changes — unless metadata set on a store with
    /// `setMetadata(_:for:)` waits to be written, which a save writes on its own. A failed save
    /// changes nothing in the stores and leaves the context's changes in place, ready to retry.
    ///
    /// - Throws: a validation error (1550–1680, or 1560 with ``NSDetailedErrorsKey``), or the
    ///   store's error.
    public func save() throws {
        checkQueue("save()")
        processPendingChanges()
        guard hasChanges || !lockedObjects.isEmpty || hasUnsavedStoreMetadata else { return }
        guard let coordinator = persistentStoreCoordinator else {
            throw CoreDataError.make(NSPersistentStoreSaveError, "The context has no persistent store coordinator.")
        }
        NotificationCenter.default.post(name: .NSManagedObjectContextWillSave, object: self, userInfo: nil)
        isCallingWillSave = true
        for changes in [inserted, updated, deleted] {
            for object in changes { object.willSave() }
        }
        isCallingWillSave = false
        processPendingChanges()
        if !propagatesDeletesAtEndOfEvent {
            propagateDeletes()
            processPendingChanges()
        }
        try validatePendingChanges()
        if let parentContext {
            // A child's save goes one level up only; objects keep their temporary IDs.
            let (snapshots, parentObjects) = pushChanges(to: parentContext)
            for object in [inserted, updated].joined() {
                object.parentObject = parentObjects[object.objectID] ?? object.parentObject
            }
            lockedObjects = []
            finishSave(snapshots: snapshots)
            return
        }

        let insertedNow = inserted.set
        let updatedNow = updated.set
        let deletedNow = deleted.set
        let temporary = inserted.filter { $0.hasTemporaryID }
        // Their temporary IDs, to give back if the save fails: the values, and the instances
        // made so far (an ID instance is made only when asked for).
        let temporaryIDs = temporary.map { ($0, $0.tableKey, $0.madeObjectID) }
        var snapshots: [IDKey: Snapshot] = [:]
        var historyToken: NSPersistentHistoryToken?
        // A save reads and writes the latest state; a pinned context then moves to the generation
        // its save made (a failed save keeps the generation it had).
        let pinned = queryGeneration
        queryGeneration = nil
        // A context waiting to pin the current generation still waits after its save, whose
        // reads are of the latest state.
        let pinsLater = pinsAtNextRead
        pinsAtNextRead = false
        defer { pinsAtNextRead = pinsLater }
        do {
            // The new objects' keys are taken in the save's own store transaction: one commit
            // (one flush of the disk) per save, as Apple's SQLite store makes.
            let groups = try permanentIDGroups(for: Array(temporary))
            let saved = try coordinator.withSaveLocks(groups.map(\.store)) {
                try assignPermanentIDs(groups)
                let request = NSSaveChangesRequest(
                    inserted: insertedNow, updated: updatedNow, deleted: deletedNow,
                    locked: lockedObjects.isEmpty ? nil : lockedObjects)
                return try writeSave(request, to: coordinator, fromChangeLists: true)
            }
            snapshots = saved.snapshots
            historyToken = saved.stores.historyToken
        } catch {
            // A failed save leaves the context as it was: objects keep their temporary IDs.
            queryGeneration = pinned
            for (object, id, instance) in temporaryIDs where !object.tableKey.isSame(as: id) && object.context === self
            {
                registry.removeValue(forKey: object.tableKey)
                if let instance { object.assign(objectID: instance) } else { object.assign(idValue: id) }
                registry.register(object)
                if !childTemporaryIDs.isEmpty { childTemporaryIDs.restore(object.objectID) }
            }
            throw error
        }
        if pinned != nil { queryGeneration = try? coordinator.makeGeneration() }
        // The merge policy may have dropped objects from the change sets (rolled back, or deleted
        // in the store): what is left is what was saved.
        lockedObjects = []
        finishSave(snapshots: snapshots, historyToken: historyToken)
    }

    /// Marks `object` for conflict detection: the next save fails (or the merge policy resolves)
    /// if its row changed in the store since it was read, even when the object is unchanged.
    public func detectConflicts(for object: NSManagedObject) {
        guard object.context === self, !object.hasTemporaryID else { return }
        object.realize()
        lockedObjects.insert(object)
    }

    /// Validates every changed object: model constraints and `validateForInsert/Update/Delete`,
    /// gathered into one error (Apple's 1560 with ``NSDetailedErrorsKey`` when several).
    private func validatePendingChanges() throws {
        var errors: [Error] = []
        for object in inserted {
            do { try object.validateForInsert() } catch { errors.append(error) }
        }
        for object in updated {
            do { try object.validateForUpdate() } catch { errors.append(error) }
        }
        for object in deleted {
            do { try object.validateForDelete() } catch { errors.append(error) }
        }
        if let error = CoreDataError.combining(errors) { throw error }
    }

    /// Ends a save that succeeded: the saved objects take their new snapshots and lose their
    /// change marks, `didSave()` is called, and the did-save notifications are posted.
    ///
    /// The saved objects are gone through in the change lists' order (about the order they were
    /// made in, so each pass reads memory forwards) and a few objects ahead of each pass's turn
    /// (`prefetch`); the notifications' sets are built once, at the end. Going through the sets
    /// instead read the objects in hash order, each pass a cache miss an object.
    ///
    /// `historyToken`: the token of the save's persistent-history transaction, which the did-save
    /// notification carries under `newChangeToken` (stores that track history).
    private func finishSave(snapshots: [IDKey: Snapshot], historyToken: NSPersistentHistoryToken? = nil) {
        let insertedNow = Array(inserted.objects)
        let updatedNow = Array(updated.objects)
        let deletedNow = Array(deleted.objects)
        for changes in [insertedNow, updatedNow] {
            for (index, object) in changes.enumerated() {
                if index + Prefetching.distance < changes.count {
                    changes[index + Prefetching.distance].prefetch()
                }
                object.commitSave(snapshots[IDKey(object.objectID)])
                clearChangeFlags(object)
                if !object.fetchedValues.isEmpty { object.fetchedValues = [:] }
            }
        }
        for object in deletedNow {
            clearChangeFlags(object)
            forget(object)
        }
        if parentContext == nil {
            for object in insertedNow { holdSnapshot(of: object) }
        }
        registry.noteCandidates(insertedNow.count + updatedNow.count)
        removeAllChanges()
        for changes in [insertedNow, updatedNow, deletedNow] {
            for object in changes { object.didSave() }
        }
        // An empty list is the empty set, which allocates nothing (a save's lists are mostly empty).
        func set<Element: Hashable>(_ elements: [Element]) -> Set<Element> { elements.isEmpty ? [] : Set(elements) }
        var info = ThreeKeyUserInfo.objects.filled(set(insertedNow), set(updatedNow), set(deletedNow))
        if let historyToken { info[NSManagedObjectContext.NotificationKey.newChangeToken.rawValue] = historyToken }
        NotificationCenter.default.post(name: .NSManagedObjectContextDidSave, object: self, userInfo: info)
        NotificationCenter.default.post(
            name: Self.didSaveObjectIDsNotification, object: self,
            userInfo: ThreeKeyUserInfo.objectIDs.filled(
                set(insertedNow.map(\.objectID)), set(updatedNow.map(\.objectID)), set(deletedNow.map(\.objectID))))
    }

    /// Whether a store of this root context's coordinator holds metadata not yet written.
    private var hasUnsavedStoreMetadata: Bool {
        guard parentContext == nil, let coordinator = persistentStoreCoordinator else { return false }
        return coordinator.persistentStores.contains { $0.hasUnsavedMetadata && !$0.isReadOnly }
    }

    /// Gives objects with temporary IDs their permanent IDs now, from the stores they will be saved to.
    ///
    /// - Throws: `NSPersistentStoreOperationError` (134070) when the context has no coordinator or
    ///   a store cannot assign IDs, or the store's error.
    public func obtainPermanentIDs(for objects: [NSManagedObject]) throws {
        try assignPermanentIDs(permanentIDGroups(for: objects))
    }

    /// The objects of `objects` with temporary IDs, grouped by the store each will be saved to.
    private func permanentIDGroups(
        for objects: [NSManagedObject]
    ) throws -> [(store: NSPersistentStore, objects: [NSManagedObject])] {
        guard let coordinator = persistentStoreCoordinator else {
            throw CoreDataError.make(
                NSPersistentStoreOperationError, "The context has no persistent store coordinator.")
        }
        let temporary = objects.filter { $0.hasTemporaryID }
        guard !temporary.isEmpty else { return [] }
        let stores = coordinator.persistentStores
        // One writable store holding every entity: no choice to make per object.
        if stores.count == 1, assignedStores.isEmpty, !stores[0].isReadOnly,
            stores[0].configurationName == "PF_DEFAULT_CONFIGURATION_NAME"
        {
            return [(stores[0], temporary)]
        }
        var byStore: [ObjectIdentifier: (store: NSPersistentStore, objects: [NSManagedObject])] = [:]
        for object in temporary {
            let store = try coordinator.store(for: object, assigned: assignedStores[ObjectIdentifier(object)])
            byStore[ObjectIdentifier(store), default: (store, [])].objects.append(object)
        }
        return Array(byStore.values)
    }

    /// Gives each group's objects permanent IDs from its store, re-keying the registry.
    private func assignPermanentIDs(_ groups: [(store: NSPersistentStore, objects: [NSManagedObject])]) throws {
        guard let coordinator = persistentStoreCoordinator, !groups.isEmpty else { return }
        for (store, group) in groups {
            let ids = try coordinator.obtainPermanentIDs(for: group, in: store)
            registry.reserveCapacity(adding: ids)
            let renamesChildInserts = childTemporaryIDs.hasWaiting
            for (object, id) in zip(group, ids) {
                if renamesChildInserts { childTemporaryIDs.rename(object.objectID, to: id) }
                registry.removeValue(forKey: object.tableKey)
                object.assign(objectID: id)
                registry.register(object)
            }
        }
    }

    /// Discards every unsaved change: inserted objects are forgotten, changed and deleted objects
    /// get their committed values back. The undo manager's actions are removed.
    public func rollback() {
        checkQueue("rollback()")
        undoManager?.removeAllActions()
        pendingDeletes.removeAll()
        lockedObjects = []
        childTemporaryIDs.discardWaiting()
        for object in inserted {
            clearChangeFlags(object)
            forget(object)
        }
        for object in registry.values where object.isDiscardedInsert { forget(object) }
        for object in [updated, deleted].joined() {
            clearChangeFlags(object)
            object.rollBackToCommitted()
            object.awake(fromSnapshotEvents: .rollback)
        }
        registry.noteCandidates(updated.count + deleted.count)
        removeAllChanges()
        eventInserted.removeAll()
        eventUpdated.removeAll()
        eventDeleted.removeAll()
        for object in eventChanged { object.isInEventChanged = false }
        eventChanged = []
    }

    /// Forgets every object: the context returns to its base state. Every object it held is
    /// invalidated — a fault whose data is gone, with no context — and must not be used any more
    /// (its persistent values read as `nil`, its transient ones as their defaults). The undo
    /// manager's actions are removed.
    public func reset() {
        checkQueue("reset()")
        undoManager?.removeAllActions()
        eventHeld.removeAll()
        eventHeldCount = 0
        // In the order of their addresses and a chunk at a time, as the context's teardown does:
        // what the objects let go of (and the objects, when nothing else holds them) is freed in
        // the order it was made, while the chunk is in the processor's caches.
        let released = registry.count
        var invalidated: [NSManagedObjectID] = []
        invalidated.reserveCapacity(released)
        registry.objectTable.drainInMemoryOrder(chunkSize: Self.teardownChunk) { chunk in
            releaseSnapshots(of: chunk)
            for object in chunk {
                invalidated.append(object.objectID)
                clearChangeFlags(object)
                forget(object)
                if !object.isFaultFlag { object.turnIntoFault() }
            }
        }
        registry.removeAll()
        removeAllChanges()
        pendingDeletes.removeAll()
        lockedObjects = []
        childTemporaryIDs.discardWaiting()
        eventInserted.removeAll()
        eventUpdated.removeAll()
        eventDeleted.removeAll()
        for object in eventChanged { object.isInEventChanged = false }
        eventChanged = []
        assignedStores = [:]
        advanceQueryGeneration()
        NotificationCenter.default.post(
            name: .NSManagedObjectContextObjectsDidChange, object: self,
            userInfo: [NSInvalidatedAllObjectsKey: invalidated])
        // The IDs made for the notification go too, before the free memory is given back.
        invalidated = []
        FreedMemory.released(objects: released)
    }

    /// Updates an object with the latest values from the store's cache.
    ///
    /// With `flag` false the object becomes a fault and its unsaved changes are discarded. With
    /// `flag` true its values are reloaded and its unsaved changes (transient ones included) are
    /// re-applied on top (NSManagedObjectContext reference, `refresh(_:mergeChanges:)`).
    public func refresh(_ object: NSManagedObject, mergeChanges flag: Bool) {
        checkQueue("refresh(_:mergeChanges:)")
        guard object.context === self, !object.isDiscardedInsert, !object.isFaultFlag else { return }
        if object.isInsertedFlag {
            // Not in any store yet, so there is nothing to reload. Apple turns the object into a
            // fault with `flag` false; here it keeps its unsaved values, which the next access
            // materializes again (DEVIATIONS.md): nothing the app inserted is lost.
            if !flag { object.keepUnsavedValuesAsFault() }
            return
        }
        // An object with no unsaved change has nothing to merge: refreshing it, with either flag,
        // turns it into a fault (so do refreshAllObjects() and merges), dropping its transient values.
        let unchanged = !object.isUpdatedFlag && !object.isDeletedFlag && object.changedSlots.isEmpty
        if !flag || unchanged {
            if object.isUpdatedFlag { leaveUpdated(object) }
            if object.isDeletedFlag { leaveDeleted(object) }
            // The fault lets go of its values — related objects included, which breaks
            // relationship cycles — so memory can be trimmed (Core Data Programming Guide,
            // "Managed Objects and References"). It keeps its row's snapshot: the next access
            // reloads "from the persistent store or last cached state" as staleness allows.
            object.turnIntoFault(refreshed: true)
            registry.noteCandidates(1)
            return
        }
        let kept = object.changedSlots.map { ($0, object.values[$0]) }
        let transients = (0..<object.layout.count).filter { object.layout.properties[$0].isTransient }
            .map { ($0, object.values[$0]) }
        guard let (snapshot, parentObject) = try? loadSnapshot(for: object.objectID) else { return }
        object.adopt(snapshot)
        if let parentObject { object.parentObject = parentObject }
        holdSnapshot(of: object)
        object.fetchedValues = [:]
        // Core Data Programming Guide, "Change Management": the object is refreshed and woken from
        // the fetch, then its transient values are set back to their pre-refresh values and its
        // unsaved changes re-applied.
        object.awakeFromFetch()
        for (slot, value) in transients + kept { object.values[slot] = value }
        object.awake(fromSnapshotEvents: .refresh)
    }

    /// Refreshes every registered object as `refresh(_:mergeChanges: true)` does: objects with
    /// unsaved changes keep them over the latest values, the others turn into faults. Posts
    /// `NSManagedObjectContextObjectsDidChange` with the refreshed objects.
    public func refreshAllObjects() {
        checkQueue("refreshAllObjects()")
        var refreshed = Set<NSManagedObject>()
        for object in registry.values where !object.isInsertedFlag && !object.isDiscardedInsert {
            if !object.isFaultFlag { refresh(object, mergeChanges: true) }
            refreshed.insert(object)
        }
        postObjectsDidChange([NSRefreshedObjectsKey: refreshed])
    }
}
