import Foundation

/// Firing faults, and holding the rows of the coordinator's cache that objects use (snapshot
/// reference counting; ARCHITECTURE.md, "Values and snapshots").
///
/// Related documentation: Core Data Programming Guide, "Faulting and Uniquing" and "Change
/// Management" (the snapshot taken at fetch); NSManagedObjectContext reference,
/// `shouldDeleteInaccessibleFaults` and `stalenessInterval`.
extension NSManagedObjectContext {
    /// Loads a fault's values; for a fault whose row is gone, Apple's `shouldDeleteInaccessibleFaults`
    /// rule applies (the object becomes an empty deleted object) or the access traps.
    ///
    /// Any other error — the store busy, an I/O error, a damaged file — does not mean the row is
    /// gone, so the object is not deleted: it stays a fault whose values read as nil, the error is
    /// logged (`swift-log`, label `OpenCoreData.Faults`), and the next access tries again.
    /// `existingObject(with:)` fires a fault and throws the error instead.
    func fulfillFault(_ object: NSManagedObject) {
        // Values set while an earlier attempt failed are changes the next load must not overwrite.
        let pending = object.values.isEmpty ? [] : object.changedSlots.map { ($0, object.values[$0]) }
        do {
            try fulfill(object)
            for (slot, value) in pending { object.values[slot] = value }
        } catch let error as NSError
            where error.domain == NSCocoaErrorDomain && error.code == NSManagedObjectReferentialIntegrityError
        {
            guard shouldDeleteInaccessibleFaults else {
                preconditionFailure("CoreData could not fulfill a fault for \(object.objectID): \(error)")
            }
            object.becomeInaccessible(transientDefaults: false)
            markGone(object)
        } catch {
            FaultLog.error(error, objectID: object.objectID)
            if object.values.isEmpty {
                object.values = SlotValues(shape: object.layout.slotShape)
                for (slot, value) in object.layout.transientDefaults { object.values[slot] = value }
            }
        }
    }

    func fulfill(_ object: NSManagedObject) throws {
        if parentContext == nil, readGeneration == nil, let cache = coordinator?.rowCache {
            if object.heldRow != nil {
                // A fault that holds its row (a fetch made it) reads the row directly, as
                // `NSPersistentStoreCoordinator.snapshot(for:requester:)` would find it in the cache.
                if object.snapshotHolder === cache, object.fire(fromHeldRowIn: cache, maxAge: stalenessInterval) {
                    return
                }
            } else if let (row, snapshot) = cache.retainSnapshot(for: object.tableKey, maxAge: stalenessInterval) {
                // Any other fault whose row is cached takes the snapshot and holds the row with one
                // lookup, where finding the snapshot and then holding the row took two.
                object.hold(row, link: link)
                realize(object, with: snapshot, parentObject: nil)
                return
            }
        }
        // An ID instance for the read, not kept by the object unless it had one.
        let id = object.madeObjectID ?? NSManagedObjectID(value: object.tableKey)
        let (snapshot, parentObject) = try loadSnapshot(for: id)
        realize(object, with: snapshot, parentObject: parentObject)
    }

    func realize(_ object: NSManagedObject, with snapshot: Snapshot, parentObject: NSManagedObject?) {
        object.adopt(snapshot)
        if let parentObject { object.parentObject = parentObject }
        holdSnapshot(of: object)
        object.payAwakeFromFetch()
    }

    /// Tells the context's link whether its objects' faults may fire from their held rows without
    /// the context, and with what staleness (``ContextLink/firesFromRows``): as ``fulfill(_:)``
    /// fires them itself, for a context on a coordinator reading the latest data.
    func updateLink() {
        link.route(
            firesFromRows: parentContext == nil && readGeneration == nil && link.rowHolder != nil,
            maxAge: stalenessInterval)
    }

    /// The snapshot of a saved object: from the coordinator's row cache or its store, or for a
    /// child context from the parent (with the parent's object, which the child's then holds).
    func loadSnapshot(for objectID: NSManagedObjectID) throws -> (Snapshot, parentObject: NSManagedObject?) {
        if let parentContext { return try snapshotFromParent(parentContext, for: objectID) }
        guard let coordinator else {
            throw CoreDataError.make(
                NSPersistentStoreOperationError, "The context has no persistent store coordinator.")
        }
        let read = try coordinator.row(for: objectID, requester: self)
        if !read.batchIDs.isEmpty {
            withExtendedLifetime(read.keptAlive) {
                holdRows(read.batchRows, of: read.batchIDs, besides: objectID.value)
            }
        }
        return (read.snapshot, nil)
    }

    /// Asks the store for a relationship the snapshot left out. When the store cannot answer (an
    /// I/O error, a table it cannot read), the error is logged as a fault's is and the
    /// relationship stays unresolved: it reads as empty now and is asked for again at the next
    /// access, never kept as an empty relationship the store does not hold.
    func resolveRelationship(of object: NSManagedObject, slot: Int) {
        if let parentContext {
            object.values[slot] = destinationFromParent(parentContext, of: object, slot: slot)
            return
        }
        guard let coordinator, !object.hasTemporaryID else {
            object.values[slot] = object.layout.kinds[slot] == .toOne ? nil : [NSManagedObjectID]() as Any
            return
        }
        let relationship = object.layout.relationship(at: slot)
        let resolved: Any?
        do {
            resolved = try coordinator.destination(of: relationship, for: object.objectID, requester: self)
        } catch {
            FaultLog.error(error, objectID: object.objectID)
            return
        }
        object.values[slot] = resolved
        object.resolveCommitted(slot: slot, to: resolved)
    }

    /// Resolves the to-many at `slot` of `object` and registers its members, in order: for a
    /// root context, the store's member IDs with the rows it read beside them, each new fault
    /// holding its row as a fetch's faults hold theirs (cached a chunk at a time as they are
    /// registered), so walking the members fires each from its row with no statement of its
    /// own; members whose rows the store did not read (a large to-many's beyond the first) fire
    /// as before. `nil` when the relationship stays unresolved (the store's error is logged, as
    /// ``resolveRelationship(of:slot:)`` does).
    func resolveMembers(of object: NSManagedObject, slot: Int) -> [NSManagedObject]? {
        guard parentContext == nil, let coordinator, !object.hasTemporaryID else {
            resolveRelationship(of: object, slot: slot)
            if UnresolvedRelationship.isMarker(object.values[slot]) { return nil }
            return objects(with: object.values[slot] as? [NSManagedObjectID] ?? [], rowsTogether: true)
        }
        let members: StoreMembers
        do {
            members = try coordinator.members(
                of: object.layout.relationship(at: slot), for: object.objectID, requester: self)
        } catch {
            FaultLog.error(error, objectID: object.objectID)
            return nil
        }
        object.resolveCommitted(slot: slot, to: members.ids)
        let read = min(members.rows.count, members.ids.count)
        if read == 0 { return objects(with: members.ids, rowsTogether: true) }
        if read == members.ids.count { return objects(with: members.ids, caching: members.rows) }
        // A large to-many: the first members with their rows, the rest waiting in the store's batches.
        return objects(with: Array(members.ids[..<read]), caching: Array(members.rows[..<read]))
            + objects(with: Array(members.ids[read...]), rowsTogether: true)
    }

    /// Lets every object of `objects` go of its row's snapshot (and parent object), taking the
    /// row cache's lock once rather than once per object.
    ///
    /// The objects and their rows are asked for a few objects ahead (`prefetch`), so the cache
    /// misses of reading them overlap: a context going away reads each of them from memory.
    func releaseSnapshots(of objects: UnsafeBufferPointer<NSManagedObject>) {
        var rows: [CachedRow] = []
        rows.reserveCapacity(objects.count)
        var holder: SnapshotHolder?
        let ahead = Prefetching.distance
        // The objects are read unretained (the caller's buffer keeps them), and each row moves
        // from its object into `rows` uncounted.
        objects.withMemoryRebound(to: Unmanaged<NSManagedObject>.self) { objects in
            for index in objects.indices {
                if index + 2 * ahead < objects.count {
                    objects[index + 2 * ahead]._withUnsafeGuaranteedRef { $0.prefetch() }
                }
                if index + ahead < objects.count {
                    objects[index + ahead]._withUnsafeGuaranteedRef { $0.prefetchHeldRow() }
                }
                objects[index]._withUnsafeGuaranteedRef { object in
                    object.parentObject = nil
                    guard let (row, cache) = object.moveHeldRowOut() else { return }
                    if cache.toOpaque() != holder.map({ Unmanaged.passUnretained($0).toOpaque() }) {
                        holder?.release(rows)
                        rows.removeAll(keepingCapacity: true)
                        holder = cache.takeUnretainedValue()
                    }
                    rows.append(consume row)
                }
            }
        }
        holder?.release(rows)
    }

    /// Counts `object` as a user of its row's snapshot in the coordinator's cache, so the snapshot
    /// stays while the object does (snapshot reference counting; see `RowCache`).
    func holdSnapshot(of object: NSManagedObject) {
        guard object.snapshotHolder == nil, parentContext == nil, let cache = coordinator?.rowCache,
            !object.hasTemporaryID, let row = cache.retain(object.tableKey)
        else { return }
        object.hold(row, link: link)
    }
}
