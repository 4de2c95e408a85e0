/// Routing requests to stores and keeping the row cache current. The coordinator takes values
/// and a ``StoreRequester`` and answers with values: objects are made and registered by the
/// context (`NSManagedObjectContext+StoreResults.swift`), conflicts resolved by it
/// (`NSManagedObjectContext+Writing.swift`).
///
/// Related documentation: NSPersistentStoreCoordinator reference, `execute(_:with:)`;
/// Incremental Store Programming Guide.
extension NSPersistentStoreCoordinator {
    /// The stores a fetch of `entity` asks: the request's `affectedStores`, or every store,
    /// keeping those whose configuration has the entity.
    func stores(answering request: NSFetchRequest<NSFetchRequestResult>, for entity: NSEntityDescription)
        -> [NSPersistentStore]
    {
        (request.affectedStores ?? persistentStores).filter { $0.holds(entity) }
    }

    /// One store's answer to a fetch, its rows cached: final values, IDs that each become an
    /// object in order (with their rows, for the requester to register), or a result the store
    /// left work in memory for.
    ///
    /// - Throws: `NSPersistentStoreUnsupportedRequestTypeError` (134091) for a store that can
    ///   answer no request; the store's error.
    func answer(
        _ request: NSFetchRequest<NSFetchRequestResult>, from store: NSPersistentStore,
        requester: any StoreRequester
    ) throws -> StoreAnswer {
        guard let door = coordinated(store) else {
            throw CoreDataError.make(
                NSPersistentStoreUnsupportedRequestTypeError, "The store cannot answer fetch requests.",
                [NSAffectedStoresErrorKey: [store]])
        }
        let generation = requester.readGeneration
        let cache = rowCache(at: generation)
        let fetch = StoreFetch(
            request: request, requester: requester, generation: generation, cachedRow: { cache[$0] },
            cachedRows: { cache.hasSnapshots(for: $0) })
        var result = try read(door) { try door.fetch(fetch) }
        if !result.rows.isEmpty { cache.updateIfNewer(result.rows) }
        if let values = result.values { return .values(values) }
        let rows = result.rowsOfObjectIDs
        let registersEveryRow =
            cache === rowCache && requester.holdsRows(of: self) && result.answersEveryID(of: request)
        if !result.objectValues.isEmpty {
            // The store gave its IDs as values: registered as they are when every one becomes an
            // object (with their rows, or as faults when the store read none: a `fetchBatchSize`
            // fetch), otherwise made into ID instances for the general path.
            if registersEveryRow, rows.count == result.objectValues.count || rows.isEmpty && result.rows.isEmpty {
                return .objectValues(
                    result.objectValues, rows: rows.isEmpty ? nil : rows, keptAlive: result.valuesKeptAlive)
            }
            result.objectIDs = withExtendedLifetime(result.valuesKeptAlive) {
                result.objectValues.map(NSManagedObjectID.init(value:))
            }
            result.objectValues = []
        }
        guard !rows.isEmpty, rows.count == result.objectIDs.count else { return .unfinished(result) }
        // When every ID becomes an object and the requester's objects hold rows of this cache
        // (not a generation's), a chunk of rows is cached just before its objects are registered,
        // while those IDs and rows are still in the processor's caches.
        if registersEveryRow { return .objectIDs(result.objectIDs, rows: rows) }
        cache.updateIfNewer(result.objectIDs[...], rows[...])
        return .unfinished(result)
    }

    /// Caches rows a fetch read (`rows`, the rows of `ids` in order), each replacing only an older
    /// version, and returns the cache's row for each. A context registering a fetch's objects
    /// calls it a chunk at a time, just before it makes the chunk's objects, while those IDs and
    /// rows are still in the processor's caches; the coordinator stays the one writer of its
    /// row cache.
    func cacheRows(_ ids: ArraySlice<IDValue>, _ rows: ArraySlice<Snapshot>) -> [CachedRow] {
        rowCache.updateIfNewer(ids, rows)
    }

    /// Makes room in the row cache for `count` more rows, which a fetch is about to cache.
    func reserveRowCache(adding count: Int) {
        rowCache.reserveCapacity(adding: count)
    }

    /// Drops the cached rows of `ids`, which another coordinator's save changed or deleted (a
    /// did-save notification merged into a context of this coordinator): their next read goes to
    /// the store.
    func forgetCachedRows(of ids: Set<NSManagedObjectID>) {
        guard !ids.isEmpty else { return }
        rowCache.removeAll { ids.contains($0) }
    }

    /// Runs `body` holding the coordinator's request lock, which every save, batch request and
    /// generation takes first: a save's conflict checks and writes see no other request's changes.
    @inline(__always)
    func withRequestLock<T>(_ body: () throws -> T) rethrows -> T {
        requestLock.lock()
        defer { requestLock.unlock() }
        return try body()
    }

    /// The doors of the stores a save of `changes` (inserted, updated, deleted, locked) writes:
    /// each writable store holding one of the objects, and each with metadata awaiting a save.
    func storesWritten(by changes: [Set<NSManagedObject>]) -> [any CoordinatedStore] {
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
        return Array(touched.values)
    }

    /// Each store gets the objects it holds, in one ordered value (``StoreTransaction``) signed
    /// with the saving context's `author` and `contextName`; the snapshots written are returned,
    /// with the stores written and their history transactions. The caller holds the write locks
    /// (``storesWritten(by:)``, ``withWriteLocks(_:_:)``).
    ///
    /// `ordered`, when given, holds the same objects as the three sets, as arrays: with one store,
    /// its transaction is built from them, in their order.
    ///
    /// - Throws: `NSPersistentStoreSaveError` (134030) for a store that cannot save or is
    ///   read-only; the store's error.
    func write(
        inserted: Set<NSManagedObject>, updated: Set<NSManagedObject>, deleted: Set<NSManagedObject>,
        ordered: ([NSManagedObject], [NSManagedObject], [NSManagedObject])? = nil, author: String?,
        contextName: String?, requester: any StoreRequester
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
            transaction.author = author
            transaction.contextName = contextName
            let saved = transaction.snapshots
            if snapshots.isEmpty { snapshots = saved } else { snapshots.merge(saved) { _, new in new } }
            let storeRequest = NSSaveChangesRequest(
                inserted: changes[0], updated: changes[1], deleted: changes[2], locked: nil)
            let number = try door.save(transaction, request: storeRequest, requester: requester)
            written.stores.append(store)
            if let number { written.historyNumbers[store.identifier] = number }
        }
        return (snapshots, written)
    }

    /// The snapshot of a saved object: from the row cache when it is fresh enough for the
    /// requester, or from its store (then cached).
    ///
    /// - Throws: `NSManagedObjectReferentialIntegrityError` (133000) when no store holds the
    ///   object or its row is gone; the store's error.
    func snapshot(for objectID: NSManagedObjectID, requester: any StoreRequester) throws -> Snapshot {
        try row(for: objectID, requester: requester).snapshot
    }

    /// ``snapshot(for:requester:)``, with the rows the store read beside it (a batch the object
    /// waited in), cached and handed back for the requester's faults among them.
    ///
    /// - Throws: as ``snapshot(for:requester:)``.
    func row(for objectID: NSManagedObjectID, requester: any StoreRequester) throws -> RowRead {
        // A pinned requester reads its generation's rows; others the latest rows, as old as
        // `stalenessInterval` allows (negative: any age).
        let generation = requester.readGeneration
        if let generation {
            if let cached = generation.rowCache[objectID] { return RowRead(snapshot: cached) }
        } else if let cached = rowCache.snapshot(for: objectID, maxAge: requester.stalenessInterval) {
            return RowRead(snapshot: cached)
        }
        guard let store = objectID.persistentStore.flatMap(coordinated) else {
            throw CoreDataError.make(
                NSManagedObjectReferentialIntegrityError, "No store holds the object \(objectID).",
                [NSAffectedObjectsErrorKey: [objectID]])
        }
        let cache = rowCache(at: generation)
        let read = try read(store) {
            try store.read(objectID, requester: requester, generation: generation, cachedRow: { cache[$0] })
        }
        var answer = RowRead(snapshot: read.snapshot)
        // Rows given in order (a batch), with no dictionary on the way.
        if !read.rowValues.isEmpty {
            withExtendedLifetime(read.valuesKeptAlive) {
                let rows = cache.updateIfNewer(read.rowValues[...], read.rowSnapshots[...])
                // The requester's other faults among them fire from these rows when their turn
                // comes, as a fetch's faults fire from the rows the fetch read.
                if generation == nil {
                    answer.batchRows = rows
                    answer.batchIDs = read.rowValues
                    answer.keptAlive = read.valuesKeptAlive
                }
            }
        }
        var rows = read.rows
        rows[IDKey(objectID)] = read.snapshot
        cache.updateIfNewer(rows)
        return answer
    }

    /// The cached snapshots of many saved objects, as ``snapshot(for:requester:)`` would find them
    /// in the row cache, looked up under one lock; `nil` where the cache has none fresh enough
    /// (the caller then asks ``snapshot(for:requester:)``, which reads the store).
    func cachedSnapshots(for objectIDs: [NSManagedObjectID], requester: any StoreRequester) -> [Snapshot?] {
        if let generation = requester.readGeneration {
            return generation.rowCache.snapshots(for: objectIDs, maxAge: -1)
        }
        return rowCache.snapshots(for: objectIDs, maxAge: requester.stalenessInterval)
    }

    /// The destination of a relationship a snapshot left out, asked of the object's store:
    /// an ID or `nil` for a to-one, IDs for a to-many.
    func destination(
        of relationship: NSRelationshipDescription, for objectID: NSManagedObjectID, requester: any StoreRequester
    ) throws -> Any? {
        guard let store = objectID.persistentStore.flatMap(coordinated) else { return nil }
        let generation = requester.readGeneration
        let cache = rowCache(at: generation)
        let value = try read(store) {
            try store.destination(
                of: relationship, for: objectID, requester: requester, generation: generation, cachedRow: { cache[$0] })
        }
        if relationship.isToMany { return Snapshot.objectIDs(in: value) }
        return value as? NSManagedObjectID
    }

    /// The members of the to-many `relationship` of `objectID`, asked of the object's store, with
    /// their rows when the store read them with the IDs and the requester's new faults will hold
    /// rows of this cache: the requester caches and holds them as it registers the members, a
    /// chunk at a time, as it does a fetch's rows (``cacheRows(_:_:)``). Rows for anybody else
    /// (a query generation's cache, a child context) are cached here and not handed back.
    ///
    /// - Throws: the store's error.
    func members(
        of relationship: NSRelationshipDescription, for objectID: NSManagedObjectID, requester: any StoreRequester
    ) throws -> StoreMembers {
        guard let store = objectID.persistentStore.flatMap(coordinated) else { return StoreMembers(ids: []) }
        let generation = requester.readGeneration
        let cache = rowCache(at: generation)
        let answer = try read(store) {
            try store.members(
                of: relationship, for: objectID, requester: requester, generation: generation,
                cachedRow: { cache[$0] })
        }
        guard let answer else {
            let ids = try destination(of: relationship, for: objectID, requester: requester)
            return StoreMembers(ids: ids.map(Snapshot.objectIDs(in:)) ?? [])
        }
        if answer.rows.isEmpty || cache === rowCache && requester.holdsRows(of: self) { return answer }
        cache.updateIfNewer(answer.ids[..<answer.rows.count], answer.rows[...])
        return StoreMembers(ids: answer.ids)
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

    /// Runs a save's steps — taking permanent IDs from `stores`, then the context's conflict
    /// checks and ``write(inserted:updated:deleted:ordered:author:contextName:requester:)`` — holding the coordinator's request lock and the
    /// stores' write locks, so a store writes the keys it hands out and the rows that use them in
    /// one transaction. The locks are taken in the order a save's writing takes them (the request
    /// lock first), and both nest.
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

/// A row the coordinator read for a requester, and the rows its store read with it (the members
/// of a batch the object waited in), already cached: the requester's faults among `batchIDs` may
/// hold `batchRows` (same order), as a fetch's faults hold the rows the fetch read. `batchIDs`
/// stay valid while `keptAlive` lives.
struct RowRead {
    let snapshot: Snapshot
    var batchRows: [CachedRow] = []
    var batchIDs: [IDValue] = []
    var keptAlive: AnyObject?
}

/// One store's answer to a fetch, as the coordinator hands it to the requester.
enum StoreAnswer {
    /// Final results: a count, dictionaries, IDs, or an incremental store's own array.
    case values([Any])
    /// IDs given as values, each to become an object in order; `rows` (same order) are their
    /// rows when the store read them, `nil` for faults. `keptAlive` keeps the values' store part
    /// valid until they are registered.
    case objectValues([IDValue], rows: [Snapshot]?, keptAlive: AnyObject?)
    /// IDs each to become an object in order, with their rows (same order), which the requester
    /// caches chunk by chunk as it registers the objects.
    case objectIDs([NSManagedObjectID], rows: [Snapshot])
    /// A result whose store left work (``StoreFetchResult/remaining``) or a result shape to be
    /// finished in memory, on objects, with the in-memory rules.
    case unfinished(StoreFetchResult)
}
