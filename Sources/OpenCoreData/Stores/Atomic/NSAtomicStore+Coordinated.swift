/// The coordinator's door to an atomic store: fetches and faults are answered from the cache
/// nodes in memory, a save becomes Apple's sequence of node calls and then ``NSAtomicStore/save()``.
extension NSAtomicStore: CoordinatedStore {
    package var persistentStore: NSPersistentStore { self }

    /// Reads take the node lock, briefly.
    package var readsConcurrently: Bool { true }

    /// Every object of the entity (and its sub-entities when the request includes them), with its
    /// row, in the order their nodes were added; the predicate, sort and window are done in memory.
    package func fetch(_ fetch: StoreFetch) throws -> StoreFetchResult {
        let request = fetch.request
        guard let entity = request.entity else { return StoreFetchResult(values: []) }
        var entities = [entity]
        if request.includesSubentities { entities = Self.family(of: entity) }
        var ids: [NSManagedObjectID] = []
        var rows: [Snapshot] = []
        nodeLock.lock()
        defer { nodeLock.unlock() }
        for candidate in entities {
            for case let id? in order[candidate.name ?? ""] ?? [] {
                guard let node = nodesByID[IDKey(id)] else { continue }
                ids.append(id)
                rows.append(node.snapshot())
            }
        }
        // The rows go along: the coordinator caches them in bulk, and the in-memory predicate
        // and sort read them without asking for each object again.
        var result = StoreFetchResult(objectIDs: ids, remaining: .all)
        result.rowsOfObjectIDs = rows
        return result
    }

    private static func family(of entity: NSEntityDescription) -> [NSEntityDescription] {
        [entity] + entity.subentities.flatMap(family(of:))
    }

    package func read(
        _ objectID: NSManagedObjectID, requester: any StoreRequester, generation: QueryGeneration?,
        cachedRow: @escaping (NSManagedObjectID) -> Snapshot?
    ) throws -> StoreRead {
        StoreRead(snapshot: try node(objectID).snapshot())
    }

    private func node(_ objectID: NSManagedObjectID) throws -> NSAtomicStoreCacheNode {
        guard let node = cacheNode(for: objectID) else {
            throw CoreDataError.make(
                NSManagedObjectReferentialIntegrityError, "The store has no object \(objectID).",
                [NSAffectedObjectsErrorKey: [objectID], NSAffectedStoresErrorKey: [self]])
        }
        return node
    }

    package func destination(
        of relationship: NSRelationshipDescription, for objectID: NSManagedObjectID, requester: any StoreRequester,
        generation: QueryGeneration?, cachedRow: @escaping (NSManagedObjectID) -> Snapshot?
    ) throws -> Any {
        let snapshot = try node(objectID).snapshot()
        let layout = objectID.entity.layout
        guard let slot = layout.slotByName[relationship.name] else { return NSNull() }
        return snapshot.publicValue(slot: slot, kind: layout.kinds[slot]) ?? NSNull()
    }

    /// One reference object per object from ``newReferenceObject(for:)``, made into an ID.
    package func permanentIDs(for objects: [NSManagedObject]) throws -> [NSManagedObjectID] {
        nodeLock.lock()
        defer { nodeLock.unlock() }
        return objects.map { objectID(for: $0.entity, withReferenceObject: newReferenceObject(for: $0)) }
    }

    package func currentVersions(
        of objectIDs: [NSManagedObjectID], requester: any StoreRequester
    ) throws -> [UInt64?] {
        nodeLock.lock()
        defer { nodeLock.unlock() }
        return objectIDs.map { nodesByID[IDKey($0)]?.version }
    }

    package func withWriteLock(_ body: () throws -> Void) throws {
        try withFileLock(body)
    }

    /// A save, in Apple's order: a node for each inserted object (``newCacheNode(for:)``), added
    /// with ``addCacheNodes(_:)``; ``updateCacheNode(_:from:)`` for each updated object;
    /// ``willRemoveCacheNodes(_:)`` for the deleted ones, which are then removed; then
    /// ``save()``. When any step throws, the nodes are put back as they were.
    ///
    /// - Throws: `NSPersistentStoreSaveConflictsError` (134050) when a new object's ID is already
    ///   in the store (another coordinator saved an object under the same reference); what
    ///   ``save()`` throws.
    package func save(_ transaction: StoreTransaction, request: NSSaveChangesRequest, requester: any StoreRequester)
        throws -> Int64?
    {
        nodeLock.lock()
        defer { nodeLock.unlock() }
        var objects: [IDKey: NSManagedObject] = [:]
        for object in (request.insertedObjects ?? []).union(request.updatedObjects ?? []) {
            objects[IDKey(object.objectID)] = object
        }
        savingSnapshots.reserveCapacity(transaction.inserted.count + transaction.updated.count)
        for row in transaction.inserted { savingSnapshots[IDKey(row.objectID)] = row.snapshot }
        for row in transaction.updated { savingSnapshots[IDKey(row.objectID)] = row.snapshot }
        pendingNodes = [:]
        var undo = SaveUndo()
        defer {
            savingSnapshots = [:]
            pendingNodes = [:]
        }
        do {
            var created: [NSAtomicStoreCacheNode] = []
            for row in transaction.inserted {
                guard let object = objects[IDKey(row.objectID)] else { continue }
                guard nodesByID[IDKey(row.objectID)] == nil else {
                    throw CoreDataError.make(
                        NSPersistentStoreSaveConflictsError,
                        "The store already holds an object with the ID of a new object, \(row.objectID).",
                        [NSAffectedObjectsErrorKey: [row.objectID], NSAffectedStoresErrorKey: [self]])
                }
                let node = newCacheNode(for: object)
                node.version = row.snapshot.version
                created.append(node)
            }
            var changed: [NSAtomicStoreCacheNode] = []
            for row in transaction.updated {
                guard let object = objects[IDKey(row.objectID)], let node = nodesByID[IDKey(row.objectID)] else {
                    continue
                }
                undo.updated.append((node, node.slots, node.propertyCacheCopy, node.version))
                updateCacheNode(node, from: object)
                node.version = row.snapshot.version
                changed.append(node)
            }
            undo.added = created.map(\.objectID).filter { nodesByID[IDKey($0)] == nil }
            addCacheNodes(Set(created))
            relink(created + changed)
            let removed = transaction.deleted.compactMap { nodesByID[IDKey($0)] }
            if !removed.isEmpty {
                willRemoveCacheNodes(Set(removed))
                undo.removed = removed
                unregister(removed)
            }
            if !transaction.isEmpty || metadataAwaitsSave {
                let revision = metadataRevision
                try save()
                savedMetadataRevision = revision
            }
        } catch {
            undo.apply(to: self)
            throw error
        }
        return nil
    }

    /// Replaces, in nodes kept by slot, any destination node that is not the one registered for
    /// its object (a placeholder made before a subclass's own ``newCacheNode(for:)`` ran).
    private func relink(_ nodes: [NSAtomicStoreCacheNode]) {
        for node in nodes {
            guard var slots = node.slots else { continue }
            let layout = node.objectID.entity.layout
            var replaced = false
            for slot in layout.relationshipSlots {
                if let destination = slots[slot] as? NSAtomicStoreCacheNode,
                    let registered = nodesByID[IDKey(destination.objectID)], registered !== destination
                {
                    slots[slot] = registered
                    replaced = true
                } else if let destinations = slots[slot] as? [NSAtomicStoreCacheNode],
                    destinations.contains(where: isStale)
                {
                    slots[slot] = destinations.map { nodesByID[IDKey($0.objectID)] ?? $0 }
                    replaced = true
                }
            }
            if replaced { node.slots = slots }
        }
    }

    /// Whether another node is registered for `node`'s object.
    private func isStale(_ node: NSAtomicStoreCacheNode) -> Bool {
        nodesByID[IDKey(node.objectID)].map { $0 !== node } ?? false
    }
}

/// What a failed save puts back: the nodes it added, removed and updated.
private struct SaveUndo {
    var added: [NSManagedObjectID] = []
    var removed: [NSAtomicStoreCacheNode] = []
    var updated: [(node: NSAtomicStoreCacheNode, slots: SlotValues?, cache: NSMutableDictionary?, version: UInt64)] =
        []

    func apply(to store: NSAtomicStore) {
        store.unregister(added.compactMap { store.nodesByID[IDKey($0)] })
        for node in removed { store.register(node) }
        for (node, slots, cache, version) in updated.reversed() {
            if let slots { node.slots = slots } else { node.propertyCache = cache }
            node.version = version
        }
    }
}

extension NSAtomicStoreCacheNode {
    /// A copy of the node's dictionary, when it keeps one, for undoing a failed save.
    var propertyCacheCopy: NSMutableDictionary? {
        guard slots == nil else { return nil }
        return propertyCache?.mutableCopy() as? NSMutableDictionary
    }
}
