/// Routing requests to stores and keeping the row cache current.
///
/// Related documentation: NSPersistentStoreCoordinator reference, `execute(_:with:)`;
/// Incremental Store Programming Guide.
extension NSPersistentStoreCoordinator {
    /// Runs a store request for `context`: a fetch returns its array, a save an empty array, a
    /// batch or history request its result (`NSBatchInsertResult`, …, `NSPersistentHistoryResult`).
    ///
    /// - Throws: `NSPersistentStoreUnsupportedRequestTypeError` (134091) for a request no store
    ///   can run; the store's error.
    public func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext) throws -> Any {
        switch request {
        case let history as NSPersistentHistoryChangeRequest:
            return try executeHistory(history)
        case is NSBatchInsertRequest, is NSBatchUpdateRequest, is NSBatchDeleteRequest:
            return try executeBatch(request, context: context)
        case let save as NSSaveChangesRequest:
            try executeSave(save, context: context)
            return [Any]()
        case let fetch as NSFetchRequest<NSFetchRequestResult>:
            if fetch.entity == nil, let name = fetch.entityName {
                fetch.entity = managedObjectModel.entitiesByName[name]
            }
            return try executeFetch(fetch, context: context).values
        default:
            throw CoreDataError.make(
                NSPersistentStoreUnsupportedRequestTypeError, "Unsupported request type \(request.requestType).")
        }
    }

    /// Asks each store that holds the request's entity, and combines their answers.
    func executeFetch(_ request: NSFetchRequest<NSFetchRequestResult>, context: NSManagedObjectContext) throws
        -> FetchedRows
    {
        guard let entity = request.entity else { return .values([]) }
        let stores = (request.affectedStores ?? persistentStores).filter { $0.holds(entity) }
        return try fetch(request, from: stores, context: context)
    }

    private func fetch(
        _ request: NSFetchRequest<NSFetchRequestResult>, from stores: [NSPersistentStore],
        context: NSManagedObjectContext
    ) throws -> FetchedRows {
        if stores.count == 1 { return try fetch(request, from: stores[0], context: context) }
        if stores.isEmpty { return .values(request.resultType == .countResultType ? [NSNumber(value: 0)] : []) }
        // Several stores: each answers without offset and limit; order and limits apply once.
        let partial = request.converted(to: NSFetchRequestResult.self)
        partial.fetchOffset = 0
        partial.fetchLimit = 0
        var combined: [Any] = []
        var count = 0
        for store in stores {
            let results = try fetch(partial, from: store, context: context).values
            if request.resultType == .countResultType {
                count += results.first.flatMap { DynamicValue.number($0)?.exactInt }.map(Int.init) ?? 0
            } else {
                combined += results
            }
        }
        if request.resultType == .countResultType {
            count = max(0, count - request.fetchOffset)
            return .values([NSNumber(value: request.fetchLimit > 0 ? min(count, request.fetchLimit) : count)])
        }
        if let descriptors = request.sortDescriptors, !descriptors.isEmpty {
            combined = combined.sorted(using: descriptors)
        }
        return .values(request.window(combined))
    }

    /// One store's answer to a fetch: its rows cached, and finished in memory where the store
    /// left work (``finish(_:request:context:)``).
    ///
    /// - Throws: `NSPersistentStoreUnsupportedRequestTypeError` (134091) for a store that can
    ///   answer no request; the store's error.
    func fetch(
        _ request: NSFetchRequest<NSFetchRequestResult>, from store: NSPersistentStore, context: NSManagedObjectContext
    ) throws -> FetchedRows {
        guard let door = coordinated(store) else {
            throw CoreDataError.make(
                NSPersistentStoreUnsupportedRequestTypeError, "The store cannot answer fetch requests.",
                [NSAffectedStoresErrorKey: [store]])
        }
        let generation = context.readGeneration
        let cache = rowCache(at: generation)
        let fetch = StoreFetch(
            request: request, context: context, generation: generation, cachedRow: { cache[$0] },
            cachedRows: { cache.hasSnapshots(for: $0) })
        var result = try read(door) { try door.fetch(fetch) }
        cacheRows(result.rows, in: cache)
        let rows = result.rowsOfObjectIDs
        let registersEveryRow =
            cache === rowCache && context.parentContext == nil && context.coordinator === self
            && registersEveryID(of: result, request: request)
        if !result.objectValues.isEmpty {
            // The store gave its IDs as values: registered as they are when every one becomes an
            // object (with their rows, or as faults when the store read none: a `fetchBatchSize`
            // fetch), otherwise made into ID instances for the general path.
            if registersEveryRow, rows.count == result.objectValues.count || rows.isEmpty && result.rows.isEmpty {
                return withExtendedLifetime(result.valuesKeptAlive) {
                    .objects(
                        context.objects(
                            withValues: result.objectValues, caching: rows.isEmpty ? nil : rows,
                            realizing: request.realizesObjects))
                }
            }
            result.objectIDs = withExtendedLifetime(result.valuesKeptAlive) {
                result.objectValues.map(NSManagedObjectID.init(value:))
            }
            result.objectValues = []
        }
        guard !rows.isEmpty, rows.count == result.objectIDs.count else {
            return try finish(result, request: request, context: context)
        }
        // When every ID becomes an object and the context's objects hold rows of this cache (not
        // a generation's), a chunk of rows is cached just before its objects are registered,
        // while those IDs and rows are still in the processor's caches.
        if registersEveryRow {
            return .objects(
                context.objects(with: result.objectIDs, caching: rows, realizing: request.realizesObjects))
        }
        cache.updateIfNewer(result.objectIDs[...], rows[...])
        return try finish(result, request: request, context: context)
    }

    /// Saves one context's changes (``writeSave(_:context:fromChangeLists:)``) and, once the
    /// stores have committed them, gives the row cache the saved rows.
    @discardableResult
    func executeSave(_ request: NSSaveChangesRequest, context: NSManagedObjectContext) throws -> [IDKey: Snapshot] {
        try withSaveLocks([]) { try writeSave(request, context: context) }.snapshots
    }

    /// Writes one context's changes: with each row store's write lock held, optimistic-locking
    /// conflicts and then uniqueness-constraint conflicts are found and resolved by the context's
    /// merge policy, then each store gets the objects it holds. Returns the saved values with
    /// their versions incremented, for the row cache; the cache is not touched here, as the rows
    /// may still be rolled back: ``withSaveLocks(_:_:)`` caches them after the commit.
    ///
    /// `fromChangeLists`: the request's sets are the context's change lists as they are (a
    /// context's own `save()`), so that the store's rows are built from the lists, in their order.
    func writeSave(
        _ request: NSSaveChangesRequest, context: NSManagedObjectContext, fromChangeLists: Bool = false
    ) throws -> SavedRows {
        requestLock.lock()
        defer { requestLock.unlock() }
        let changes = [
            request.insertedObjects ?? [], request.updatedObjects ?? [], request.deletedObjects ?? [],
            request.lockedObjects ?? [],
        ]
        var touched: [ObjectIdentifier: any CoordinatedStore] = [:]
        if persistentStores.count == 1 {
            // One store holds every saved object: none's ID is read to find it (a pass
            // over every object of a save).
            let store = persistentStores[0]
            if !store.isReadOnly, store.hasUnsavedMetadata || changes.contains(where: { !$0.isEmpty }),
                let door = coordinated(store)
            {
                touched[ObjectIdentifier(store)] = door
            }
        } else {
            for object in changes.joined() {
                if let store = object.objectID.persistentStore, !store.isReadOnly,
                    touched[ObjectIdentifier(store)] == nil, let door = coordinated(store)
                {
                    touched[ObjectIdentifier(store)] = door
                }
            }
            for store in persistentStores where store.hasUnsavedMetadata && !store.isReadOnly {
                if let door = coordinated(store) { touched[ObjectIdentifier(store)] = door }
            }
        }
        var snapshots: [IDKey: Snapshot] = [:]
        var written = WrittenStores()
        var deleted = changes[2]
        try withWriteLocks(ArraySlice(touched.values)) {
            var inserted = changes[0]
            var updated = changes[1]
            let conflicts = try lockingConflicts(
                updated: updated, deleted: deleted, locked: changes[3], context: context)
            if !conflicts.isEmpty {
                try context.resolve(conflicts)
                let leaving = Set(conflicts.filter { $0.persistedRow == nil }.map(\.sourceObject))
                inserted = inserted.filter { $0.isInsertedFlag }
                updated = updated.filter { $0.isUpdatedFlag }.subtracting(leaving)
                deleted = deleted.subtracting(leaving)
            }
            let constraintConflicts = try constraintConflicts(
                inserted: inserted, updated: updated, deleted: deleted, context: context)
            if !constraintConflicts.isEmpty {
                // The policy may merge into stored objects and delete others: what the context
                // holds afterwards is what is saved, and it must satisfy the constraints.
                try context.resolve(constraintConflicts)
                inserted = context.inserted.set
                updated = context.updated.set
                deleted = context.deleted.set
                let left = try self.constraintConflicts(
                    inserted: inserted, updated: updated, deleted: deleted, context: context)
                guard left.isEmpty else {
                    throw CoreDataError.make(
                        NSManagedObjectConstraintMergeError, "Uniqueness constraints are still violated.",
                        ["conflictList": left])
                }
            }
            // Saved as the context's lists hold them (nothing left or joined the sets): the rows
            // are built in the lists' order, about the order the objects were made in, where a
            // set's order is its hash order and each object a cache miss.
            let ordered =
                fromChangeLists && conflicts.isEmpty && constraintConflicts.isEmpty
                ? (Array(context.inserted.objects), Array(context.updated.objects), Array(context.deleted.objects))
                : nil
            (snapshots, written) = try write(
                inserted: inserted, updated: updated, deleted: deleted, ordered: ordered, context: context)
        }
        return SavedRows(snapshots: snapshots, removed: deleted.map(\.objectID), stores: written)
    }

    /// Each store gets the objects it holds; the snapshots written are returned, with the stores
    /// written and their history transactions.
    ///
    /// `ordered`, when given, holds the same objects as the three sets, as arrays: with one store,
    /// its transaction is built from them, in their order.
    private func write(
        inserted: Set<NSManagedObject>, updated: Set<NSManagedObject>, deleted: Set<NSManagedObject>,
        ordered: ([NSManagedObject], [NSManagedObject], [NSManagedObject])? = nil, context: NSManagedObjectContext
    ) throws -> ([IDKey: Snapshot], WrittenStores) {
        var perStore: [ObjectIdentifier: (store: NSPersistentStore, changes: [Set<NSManagedObject>])] = [:]
        let stores = persistentStores
        if stores.count == 1 {
            // One store holds everything: no need to split the change sets.
            perStore[ObjectIdentifier(stores[0])] = (stores[0], [inserted, updated, deleted])
        } else {
            for (index, objects) in [inserted, updated, deleted].enumerated() {
                for object in objects {
                    guard let store = object.objectID.persistentStore else { continue }
                    perStore[ObjectIdentifier(store), default: (store, [[], [], []])].changes[index].insert(object)
                }
            }
            // Metadata set with setMetadata(_:for:) is written by the next save, changes or not.
            for store in stores where store.hasUnsavedMetadata && !store.isReadOnly {
                if perStore[ObjectIdentifier(store)] == nil {
                    perStore[ObjectIdentifier(store)] = (store, [[], [], []])
                }
            }
        }
        var snapshots: [IDKey: Snapshot] = [:]
        var written = WrittenStores()
        for (store, changes) in perStore.values {
            guard let door = coordinated(store) else {
                throw CoreDataError.make(
                    NSPersistentStoreSaveError, "The store cannot save.", [NSAffectedStoresErrorKey: [store]])
            }
            guard !store.isReadOnly else {
                throw CoreDataError.make(
                    NSPersistentStoreSaveError, "Cannot save to a read-only store.", [NSAffectedStoresErrorKey: [store]]
                )
            }
            // Each object's new version follows the one its context based it on (Z_OPT + 1).
            var transaction =
                if let ordered, stores.count == 1 {
                    StoreTransaction(inserted: ordered.0, updated: ordered.1, deleted: ordered.2)
                } else {
                    StoreTransaction(
                        inserted: Array(changes[0]), updated: Array(changes[1]), deleted: Array(changes[2]))
                }
            transaction.author = context.transactionAuthor
            transaction.contextName = context.name
            let saved = transaction.snapshots
            if snapshots.isEmpty { snapshots = saved } else { snapshots.merge(saved) { _, new in new } }
            let storeRequest = NSSaveChangesRequest(
                inserted: changes[0], updated: changes[1], deleted: changes[2], locked: nil)
            do {
                let number = try door.save(transaction, request: storeRequest, context: context)
                written.stores.append(store)
                if let number { written.historyNumbers[store.identifier] = number }
            } catch let error as NSError {
                throw Self.namingObjects(in: error, context: context)
            }
        }
        return (snapshots, written)
    }

    /// A store's error with the object IDs it names under `NSAffectedObjectsErrorKey` replaced by
    /// the context's objects, as Apple's errors name them.
    private static func namingObjects(in error: NSError, context: NSManagedObjectContext) -> NSError {
        guard let ids = error.userInfo[NSAffectedObjectsErrorKey] as? [NSManagedObjectID] else { return error }
        var userInfo = error.userInfo
        userInfo[NSAffectedObjectsErrorKey] = ids.map { context.registeredObject(for: $0) ?? $0 }
        return NSError(domain: error.domain, code: error.code, userInfo: userInfo)
    }

    /// The snapshot of a saved object: from the row cache when it is fresh enough for the
    /// context, or from its store (then cached).
    func snapshot(for objectID: NSManagedObjectID, context: NSManagedObjectContext) throws -> Snapshot {
        // A pinned context reads its generation's rows; others the latest rows, as old as
        // `stalenessInterval` allows (negative: any age).
        let generation = context.readGeneration
        if let generation {
            if let cached = generation.rowCache[objectID] { return cached }
        } else if let cached = rowCache.snapshot(for: objectID, maxAge: context.stalenessInterval) {
            return cached
        }
        guard let store = objectID.persistentStore.flatMap(coordinated) else {
            throw CoreDataError.make(
                NSManagedObjectReferentialIntegrityError, "No store holds the object \(objectID).",
                [NSAffectedObjectsErrorKey: [objectID]])
        }
        let cache = rowCache(at: generation)
        let read = try read(store) {
            try store.read(objectID, context: context, generation: generation, cachedRow: { cache[$0] })
        }
        // Rows given in order (a batch), with no dictionary on the way.
        if !read.rowValues.isEmpty {
            withExtendedLifetime(read.valuesKeptAlive) {
                let rows = cache.updateIfNewer(read.rowValues[...], read.rowSnapshots[...])
                // The context's other faults among them fire from these rows when their turn
                // comes, as a fetch's faults fire from the rows the fetch read.
                if generation == nil { context.holdRows(rows, of: read.rowValues, besides: objectID.value) }
            }
        }
        var rows = read.rows
        rows[IDKey(objectID)] = read.snapshot
        cacheRows(rows, in: cache)
        return read.snapshot
    }

    /// The cached snapshots of many saved objects, as ``snapshot(for:context:)`` would find them
    /// in the row cache, looked up under one lock; `nil` where the cache has none fresh enough
    /// (the caller then asks ``snapshot(for:context:)``, which reads the store).
    func cachedSnapshots(for objectIDs: [NSManagedObjectID], context: NSManagedObjectContext) -> [Snapshot?] {
        if let generation = context.readGeneration { return generation.rowCache.snapshots(for: objectIDs, maxAge: -1) }
        return rowCache.snapshots(for: objectIDs, maxAge: context.stalenessInterval)
    }

    /// The destination of a relationship a snapshot left out, asked of the object's store:
    /// an ID or `nil` for a to-one, IDs for a to-many.
    func destination(
        of relationship: NSRelationshipDescription, for objectID: NSManagedObjectID, context: NSManagedObjectContext
    ) throws -> Any? {
        guard let store = objectID.persistentStore.flatMap(coordinated) else { return nil }
        let generation = context.readGeneration
        let cache = rowCache(at: generation)
        let value = try read(store) {
            try store.destination(
                of: relationship, for: objectID, context: context, generation: generation, cachedRow: { cache[$0] })
        }
        if relationship.isToMany { return Snapshot.objectIDs(in: value) }
        return value as? NSManagedObjectID
    }

    /// The store a new object is saved to: the one `assign(_:to:)` chose, or else the only
    /// writable store whose configuration has the object's entity (NSManagedObjectContext
    /// reference, `assign(_:to:)`: choosing is "only necessary" when several writable stores can
    /// hold the entity — a save that leaves that choice open fails).
    ///
    /// - Throws: `NSPersistentStoreIncompatibleSchemaError` (134020) when no store can hold the
    ///   entity (or the assigned store cannot); `NSPersistentStoreSaveError` (134030) when the only
    ///   stores that can are read-only, or when several writable stores can and none was assigned,
    ///   with the candidates under `NSAffectedStoresErrorKey`.
    func store(for object: NSManagedObject, assigned: NSPersistentStore?) throws -> NSPersistentStore {
        let entityName = object.entity.name ?? ""
        if let assigned {
            guard persistentStores.contains(where: { $0 === assigned }), assigned.holds(object.entity) else {
                throw CoreDataError.make(
                    NSPersistentStoreIncompatibleSchemaError,
                    "The store an object of \(entityName) was assigned to cannot hold instances of that entity.",
                    [NSAffectedObjectsErrorKey: [object], NSAffectedStoresErrorKey: [assigned]])
            }
            return assigned
        }
        if let store = object.objectID.persistentStore { return store }
        let holding = persistentStores.filter { $0.holds(object.entity) }
        // obtainPermanentIDs(for:): "If the object has not been assigned to a store, the
        // coordinator assigns it to the first writable store supporting the entity" — the first
        // in the order the stores were added.
        if let first = holding.first(where: { !$0.isReadOnly }) { return first }
        if !holding.isEmpty {
            throw CoreDataError.make(
                NSPersistentStoreSaveError, "Every persistent store that can hold \(entityName) is read-only.",
                [NSAffectedObjectsErrorKey: [object], NSAffectedStoresErrorKey: holding])
        }
        throw CoreDataError.make(
            NSPersistentStoreIncompatibleSchemaError,
            "No persistent store can hold instances of entity \(entityName); add a store first.",
            [NSAffectedObjectsErrorKey: [object]])
    }

    /// Runs a save's steps — taking permanent IDs from `stores`, then
    /// ``writeSave(_:context:fromChangeLists:)`` — holding the coordinator's request lock and the
    /// stores' write locks, so a store writes the keys it hands out and the rows that use them in
    /// one transaction. The locks are taken in the order `writeSave` takes them (the request lock
    /// first), and both nest.
    ///
    /// The saved rows reach the row cache only after the transactions committed, and before the
    /// request lock is let go: every context of the coordinator reads rows from the cache, and a
    /// row whose commit failed was never stored (a save "either succeeds or fails as a whole"),
    /// while a save that ran after this one must not find its newer rows replaced by these.
    ///
    /// Once the locks are let go, each store written that was added with
    /// ``NSPersistentStoreRemoteChangeNotificationPostOptionKey`` posts its remote-change
    /// notification, as Apple's option says: for every write to the store, this coordinator's too.
    func withSaveLocks(_ stores: [NSPersistentStore], _ body: () throws -> SavedRows) throws -> SavedRows {
        let saved = try {
            requestLock.lock()
            defer { requestLock.unlock() }
            var saved = SavedRows(snapshots: [:], removed: [], stores: WrittenStores())
            try withWriteLocks(ArraySlice(stores.compactMap { coordinated($0) })) { saved = try body() }
            rowCache.update(saved.snapshots, removing: saved.removed)
            return saved
        }()
        for store in saved.stores.stores {
            let number = saved.stores.historyNumbers[store.identifier]
            postOwnRemoteChange(
                for: store, token: number.map { NSPersistentHistoryToken(numbers: [store.identifier: $0]) })
        }
        return saved
    }

    /// Permanent IDs for `objects` from `store`.
    func obtainPermanentIDs(for objects: [NSManagedObject], in store: NSPersistentStore) throws -> [NSManagedObjectID] {
        guard let door = coordinated(store) else {
            throw CoreDataError.make(
                NSPersistentStoreOperationError, "The store cannot assign IDs.", [NSAffectedStoresErrorKey: [store]])
        }
        requestLock.lock()
        defer { requestLock.unlock() }
        let ids = try door.permanentIDs(for: objects)
        guard ids.count == objects.count, ids.allSatisfy({ !$0.isTemporaryID }) else {
            throw CoreDataError.make(
                NSPersistentStoreOperationError,
                "The store returned \(ids.count) permanent IDs for \(objects.count) objects.",
                [NSAffectedStoresErrorKey: [store]])
        }
        return ids
    }
}

/// The rows a save wrote, by ID, with their new versions, and the IDs of the rows it deleted:
/// what the row cache takes once the save committed.
struct SavedRows {
    var snapshots: [IDKey: Snapshot]
    var removed: [NSManagedObjectID]
    var stores: WrittenStores
}

/// The stores a save wrote, and the number of the history transaction each recorded (stores that
/// track history): a did-save notification's history token.
struct WrittenStores {
    var stores: [NSPersistentStore] = []
    var historyNumbers: [String: Int64] = [:]

    /// The token of the save's history transactions; `nil` when no store recorded one.
    var historyToken: NSPersistentHistoryToken? {
        historyNumbers.isEmpty ? nil : NSPersistentHistoryToken(numbers: historyNumbers)
    }
}
