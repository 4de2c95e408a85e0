/// Registering many objects at once: a fetch's results and a to-many's members become the
/// context's objects, with their rows held, a chunk at a time.
extension NSManagedObjectContext {
    /// ``object(with:)`` for each of `objectIDs`, as a fetch registers its results: the
    /// snapshots of the new faults are held under one lock of the row cache per chunk of
    /// ``registrationChunk`` IDs.
    ///
    /// `snapshots`, when given, are the rows a fetch read for `objectIDs`, in order, not yet in
    /// the coordinator's row cache: each chunk's rows are cached (``RowCache/updateIfNewer(_:_:)``)
    /// just before its objects are made, so the IDs and rows the cache has just touched are
    /// still in the processor's caches when the objects hold them (caching every row
    /// first and registering after walked 100,000 IDs and rows twice from memory). With
    /// `realizing`, the new objects take their rows' values at once instead of becoming faults
    /// (a fetch with `returnsObjectsAsFaults` false).
    ///
    /// `rowsTogether`: the IDs' rows are cached all together or not at all, as a to-many's
    /// members are (read with the to-many, or waiting in one batch): when the first new fault's row is not
    /// cached, the others' are not looked up (each would be a miss in a large table). A fault whose
    /// row is cached but not held finds it when it fires.
    func objects(
        with objectIDs: [NSManagedObjectID], caching snapshots: [Snapshot]? = nil, realizing: Bool = false,
        rowsTogether: Bool = false
    ) -> [NSManagedObject] {
        objects(
            withValues: objectIDs.map(\.value), instances: objectIDs, caching: snapshots, realizing: realizing,
            rowsTogether: rowsTogether)
    }

    /// ``objects(with:caching:realizing:)`` for IDs given as values (``IDValue``), as a store that
    /// read each row gives them: the new faults hold the values, and an ``NSManagedObjectID`` is
    /// made only for an object somebody asks the ID of.
    ///
    /// `instances`, when given, are the ID instances of `objectIDs`, in order: the new faults keep
    /// them (a to-many's members, whose IDs the owner's committed snapshot also keeps, are then
    /// one instance each, not two).
    func objects(
        withValues objectIDs: [IDValue], instances: [NSManagedObjectID]? = nil, caching snapshots: [Snapshot]? = nil,
        realizing: Bool = false, rowsTogether: Bool = false
    ) -> [NSManagedObject] {
        checkQueue("object(with:)")
        let snapshots = snapshots?.count == objectIDs.count ? snapshots : nil
        guard parentContext == nil, let coordinator else {
            if let snapshots { _ = coordinator?.cacheRows(objectIDs[...], snapshots[...]) }
            return objectIDs.map { registry[$0] ?? object(with: NSManagedObjectID(value: $0)) }
        }
        let cache = coordinator.rowCache
        var objects: [NSManagedObject] = []
        objects.reserveCapacity(objectIDs.count)
        // A first large fetch into a context registers every row: size the tables once.
        if let first = objectIDs.first { registry.reserveCapacity(objectIDs.count, for: first) }
        if snapshots != nil { coordinator.reserveRowCache(adding: objectIDs.count) }
        // The registry's tables and the link in locals, and the objects of a chunk unretained (the
        // result keeps them): reached through the context's stored properties, each was retained
        // and released around every use, about a dozen atomic counts an object.
        let tables = registry.objectTable
        let link = self.link
        var registered = 0
        // The new objects of a chunk, and the indices in the chunk of their rows when the fetch
        // gave them. Chunks keep these and the cache's answers small (arrays of every
        // row, freed after the objects were made, left their pages resident: 25 bytes a realized
        // object of 100,000).
        var created: [Unmanaged<NSManagedObject>] = []
        var createdRows: [Int] = []
        // Whether the last store seen asks to be told of registrations (one answer per store,
        // found by the IDs' shared space: reading an ID's store is a weak load).
        // The tail is compared first, by identity: an integer key's is its store's space.
        var lastTail: UnsafeRawPointer?
        var lastSpace: ObjectIdentifier?
        var callsBack = false
        // The entity, class and registry table of the last layout seen: the rows of a fetch are
        // mostly of one.
        var lastLayout: EntityLayout?
        var entity: NSEntityDescription?
        var objectClass: NSManagedObject.Type = NSManagedObject.self
        var table: IDTable<NSManagedObject>?
        for chunkStart in stride(from: 0, to: objectIDs.count, by: Self.registrationChunk) {
            let chunk = chunkStart..<min(chunkStart + Self.registrationChunk, objectIDs.count)
            created.removeAll(keepingCapacity: true)
            createdRows.removeAll(keepingCapacity: true)
            let cachedRows = snapshots.map { coordinator.cacheRows(objectIDs[chunk], $0[chunk]) }
            for index in chunk {
                let objectID = objectIDs[index]
                // A temporary ID (none from a store) is looked up and made as `object(with:)` does.
                if objectID.isTemporary {
                    objects.append(object(with: NSManagedObjectID(value: objectID)))
                    continue
                }
                if lastLayout.map(objectID.hasLayout) != true {
                    let layout = objectID.layout
                    lastLayout = layout
                    entity = layout.entity
                    objectClass = ManagedObjectClasses.objectClass(for: layout.entity)
                    table = tables.filingTable(for: objectID)
                }
                // Set with `lastLayout` just above.
                let table = table.unsafelyUnwrapped
                // The registry's lines for an ID a few ahead, so the probes' misses overlap.
                if index + Prefetching.distance < chunk.upperBound {
                    let ahead = objectIDs[index + Prefetching.distance]
                    if ahead.hasLayout(lastLayout.unsafelyUnwrapped) { table.prefetch(ahead) }
                }
                if let registered = table[objectID] {
                    objects.append(registered)
                    continue
                }
                if objectID.tailIdentity != lastTail {
                    lastTail = objectID.tailIdentity
                    let space = objectID.space
                    if space.map(ObjectIdentifier.init) != lastSpace {
                        lastSpace = space.map(ObjectIdentifier.init)
                        callsBack = (space?.store as? NSIncrementalStore)?.wantsRegistrationCallbacks ?? false
                    }
                }
                if callsBack {
                    objects.append(object(with: NSManagedObjectID(value: objectID)))
                    continue
                }
                // `entity` was set with `lastLayout` above.
                let object = makeFault(
                    objectID, instance: instances?[index], of: objectClass, entity: entity.unsafelyUnwrapped,
                    in: table, link: link)
                registered += 1
                if cachedRows != nil { createdRows.append(index - chunkStart) }
                objects.append(object)
                created.append(Unmanaged.passUnretained(object))
            }
            guard !created.isEmpty else { continue }
            if let cachedRows, realizing {
                let rows = createdRows.map { cachedRows[$0] }
                for (object, (row, snapshot)) in zip(created, zip(rows, cache.retain(rows: rows))) {
                    guard let snapshot else { continue }
                    object._withUnsafeGuaranteedRef { object in
                        object.hold(row, link: link)
                        realize(object, with: snapshot, parentObject: nil)
                    }
                }
            } else if let cachedRows {
                Self.hold(cachedRows, at: createdRows, by: created, in: cache, link: link)
            } else {
                // With `rowsTogether`, the rest are looked up only when the first has a row.
                var lookedUp = created[...]
                if rowsTogether, let first = created.first {
                    guard let row = cache.retain(first._withUnsafeGuaranteedRef(\.tableKey)) else { continue }
                    first._withUnsafeGuaranteedRef { $0.hold(row, link: link) }
                    lookedUp = created.dropFirst()
                }
                let rows = cache.retain(lookedUp.map { $0._withUnsafeGuaranteedRef(\.tableKey) })
                for (object, row) in zip(lookedUp, rows) {
                    if let row { object._withUnsafeGuaranteedRef { $0.hold(row, link: link) } }
                }
            }
        }
        registry.noteCandidates(registered)
        return objects
    }

    /// Gives the registered faults among `ids` that hold no row `rows`, the cache's rows for them
    /// a store read together (a to-many's members, read as the first of them fired), except the
    /// one of `firing`, which its own firing holds. Each then fires from its row when its turn
    /// comes, as a fault a fetch made fires from the row the fetch read, instead of looking it up
    /// in the cache then: one lookup each, in the rows' order with the next ones asked for ahead,
    /// and one lock of the cache for all (each member's lookup, alone, missed the
    /// processor's caches). Nothing changes for a member that is not a fault, holds a row, or was
    /// not read (one another writer moved away reads its own row when it fires).
    func holdRows(_ rows: [CachedRow], of ids: [IDValue], besides firing: IDValue) {
        guard parentContext == nil, rows.count == ids.count, let cache = coordinator?.rowCache else { return }
        let tables = registry.objectTable
        let link = self.link
        var waiting: [Unmanaged<NSManagedObject>] = []
        var indices: [Int] = []
        for (index, id) in ids.enumerated() {
            if index + Prefetching.distance < ids.count { tables.prefetch(ids[index + Prefetching.distance]) }
            guard let object = tables[id], object.isFaultFlag, object.heldRow == nil, !id.isSame(as: firing)
            else { continue }
            waiting.append(Unmanaged.passUnretained(object))
            indices.append(index)
        }
        guard !waiting.isEmpty else { return }
        Self.hold(rows, at: indices, by: waiting, in: cache, link: link)
    }

    /// Counts `objects[i]` a holder of `rows[indices[i]]` and gives it the row, all under one lock
    /// of `cache`; an object whose row was emptied since gets none. The objects are unretained:
    /// the caller keeps them (a fetch's result, the registry) while this runs.
    private static func hold(
        _ rows: [CachedRow], at indices: [Int], by objects: [Unmanaged<NSManagedObject>], in cache: RowCache,
        link: ContextLink
    ) {
        for (object, (index, counted)) in zip(objects, zip(indices, cache.retain(rows: rows, at: indices)))
        where counted {
            object._withUnsafeGuaranteedRef { $0.hold(rows[index], link: link) }
        }
    }

    /// How many IDs ``objects(with:caching:realizing:)`` registers under one lock of the row
    /// cache: its working arrays stay under the allocator's threshold for a mapping of their own,
    /// and a chunk's rows, cached just before its objects are made, are still in the processor's
    /// second-level cache when each object holds its row (at four times the size they were not;
    /// BENCHMARKS-JOURNAL.md).
    static let registrationChunk = 1024

    /// How many objects a context going away, or reset, lets go of at a time (its rows released
    /// under one lock of the row cache, then the objects): a chunk's objects and rows, about 200
    /// bytes each, stay in the processor's second-level cache from the first touch to the free.
    static let teardownChunk = 1024

    /// A new fault of class `objectClass` for the ID `objectID` holds, filed in `table` (the
    /// registry's: the caller counts it with ``ObjectRegistry/noteCandidates(_:)``) and linked
    /// by `link`. It keeps `instance` as its ``NSManagedObjectID`` when given; else the value
    /// only, and an instance is made when somebody asks for it (``NSManagedObject/objectID``).
    /// The table and link are the caller's locals, so a loop registering many objects does not
    /// retain them for each.
    @inline(__always)
    func makeFault(
        _ objectID: IDValue, instance: NSManagedObjectID? = nil, of objectClass: NSManagedObject.Type,
        entity: NSEntityDescription, in table: IDTable<NSManagedObject>, link: ContextLink
    ) -> NSManagedObject {
        let object = objectClass.init(entity: entity, insertInto: nil)
        object.assignToNewFault(idValue: objectID, instance: instance)
        object.becomeFetchedFault()
        object.attach(to: link)
        table.insert(object)
        return object
    }
}
