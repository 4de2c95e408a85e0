/// Fetching: the store's answer, folded together with the context's unsaved changes.
///
/// Related documentation: NSFetchRequest reference, `includesPendingChanges`; Core Data
/// Programming Guide, "Fetching Objects": a fetch returns matching unsaved inserts, judges
/// modified objects by their current in-memory state, omits objects deleted in the context, and
/// never overwrites the values of an object already in the context.
extension NSManagedObjectContext {
    /// Returns the objects (or IDs, dictionaries, count) `request` describes.
    ///
    /// Traps when the request has no entity, as Apple raises.
    ///
    /// - Throws: `NSCoreDataError` (134060) when the predicate or a sort descriptor names a key
    ///   path the entity does not have; the store's error when it cannot answer.
    public func fetch<T>(_ request: NSFetchRequest<T>) throws -> [T] {
        checkQueue("fetch(_:)")
        let erased = request.converted(to: NSFetchRequestResult.self)
        let entity = resolveEntity(of: erased, api: "fetch(_:)")
        ManagedObjectClasses.note(T.self, for: entity)
        let results = try fetchRows(erased).typed(as: T.self)
        if !results.isEmpty, erased.resultType == .managedObjectResultType {
            holdForEvent(results, count: results.count)
        }
        return results
    }

    /// The number of objects `request` would return, honoring offset and limit.
    public func count<T>(for request: NSFetchRequest<T>) throws -> Int {
        checkQueue("count(for:)")
        let erased = request.converted(to: NSFetchRequestResult.self)
        erased.resultType = .countResultType
        _ = resolveEntity(of: erased, api: "count(for:)")
        let results = try fetchResults(erased)
        return results.first.flatMap { DynamicValue.number($0)?.exactInt }.map(Int.init) ?? 0
    }

    func resolveEntity(of request: NSFetchRequest<NSFetchRequestResult>, api: String) -> NSEntityDescription {
        if let entity = request.entity { return entity }
        guard let name = request.entityName,
            let entity = coordinator(api).managedObjectModel.entitiesByName[name]
        else {
            preconditionFailure("\(api): the fetch request has no entity (entity name \(request.entityName ?? "nil"))")
        }
        request.entity = entity
        return entity
    }

    /// The context's coordinator; a context without one cannot fetch, which Apple raises as a
    /// programming error.
    func coordinator(_ api: String) -> NSPersistentStoreCoordinator {
        guard let coordinator = persistentStoreCoordinator else {
            preconditionFailure("\(api): the context has no persistent store coordinator")
        }
        return coordinator
    }

    /// Runs a fetch whose entity is resolved and folds in pending changes.
    func fetchResults(_ request: NSFetchRequest<NSFetchRequestResult>) throws -> [Any] {
        try fetchRows(request).values
    }

    /// ``fetchResults(_:)``, with objects kept as objects (``FetchedRows``).
    func fetchRows(_ request: NSFetchRequest<NSFetchRequestResult>) throws -> FetchedRows {
        let entity = request.entity!
        try FetchRequestCheck.validate(request, entity: entity)
        // Apple: dictionary results reflect the store only, never pending changes.
        let wantsPending = request.includesPendingChanges && request.resultType != .dictionaryResultType
        if wantsPending { processPendingChanges() }
        let pending = wantsPending ? pendingObjects(of: entity, includesSubentities: request.includesSubentities) : []
        if pending.isEmpty {
            let results = try underlyingResults(request)
            if request.resultType == .managedObjectResultType, !request.returnsObjectsAsFaults {
                switch results {
                case .objects(let objects): try realizeAll(objects)
                // An incremental store's own array of objects.
                case .values(let values): try realizeAll(values.compactMap { $0 as? NSManagedObject })
                }
            }
            return results
        }
        let storeRequest = request.converted(to: NSFetchRequestResult.self)
        storeRequest.fetchOffset = 0
        storeRequest.fetchLimit = storeLimit(for: request, pending: pending)
        storeRequest.resultType = .managedObjectIDResultType
        let storeIDs = try underlyingResults(storeRequest).values
        var objects = storeIDs.compactMap { ($0 as? NSManagedObjectID).map(object(with:)) }
        let belonging = pending.filter { object in
            !object.isDeletedFlag && !object.isDiscardedInsert
                && (UndefinedKeys.readingAsNil { request.predicate?.evaluate(with: object) } ?? true)
        }
        if let descriptors = request.sortDescriptors, !descriptors.isEmpty {
            // The store's rows are in order; a pending object's place depends on its unsaved
            // values, so each is taken out and put back where it sorts now.
            let changed = Set(pending.map(ObjectIdentifier.init))
            objects.removeAll { changed.contains(ObjectIdentifier($0)) }
            objects = Self.insert(belonging.sorted(using: descriptors), into: objects, by: descriptors)
        } else {
            // Unsorted: the store's order, objects leaving taken out, new members at the end.
            let stays = Set(belonging.map(ObjectIdentifier.init))
            let leaving = Set(pending.map(ObjectIdentifier.init)).subtracting(stays)
            var present = Set<ObjectIdentifier>()
            objects.removeAll { object in
                let key = ObjectIdentifier(object)
                if leaving.contains(key) { return true }
                if stays.contains(key) { present.insert(key) }
                return false
            }
            objects += belonging.filter { !present.contains(ObjectIdentifier($0)) }
        }
        objects = request.window(objects)
        switch request.resultType {
        case .countResultType:
            return .values([NSNumber(value: objects.count)])
        case .managedObjectIDResultType:
            return .values(objects.map(\.objectID))
        default:
            if !request.returnsObjectsAsFaults { try realizeAll(objects) }
            return .objects(objects)
        }
    }

    /// How many of the store's rows a fetch with pending changes needs: all of them, unless the
    /// request has a limit. Then the first `fetchOffset + fetchLimit` rows, plus one for each
    /// pending object that may already be among the store's rows (each such object may leave the
    /// results or move) — the store answers with one windowed statement, not every row.
    private func storeLimit(for request: NSFetchRequest<NSFetchRequestResult>, pending: [NSManagedObject]) -> Int {
        guard request.fetchLimit > 0 else { return 0 }
        let saved = pending.reduce(0) { $0 + ($1.isInsertedFlag ? 0 : 1) }
        let (sum, overflow) = request.fetchOffset.addingReportingOverflow(request.fetchLimit)
        let (limit, overflowAgain) = sum.addingReportingOverflow(saved)
        return overflow || overflowAgain ? 0 : limit
    }

    /// `pending`, sorted, placed into the sorted `objects`: each after the last object that does
    /// not sort after it (as a stable sort of the store's rows followed by the pending objects
    /// would). A binary search per pending object, so only O(log n) of `objects` are compared —
    /// and fired, when faults — for each.
    static func insert(
        _ pending: [NSManagedObject], into objects: [NSManagedObject], by descriptors: [NSSortDescriptor]
    ) -> [NSManagedObject] {
        guard !pending.isEmpty else { return objects }
        func sortsAfter(_ a: NSManagedObject, _ b: NSManagedObject) -> Bool {
            for descriptor in descriptors {
                switch descriptor.compare(a, to: b) {
                case .orderedAscending: return false
                case .orderedDescending: return true
                case .orderedSame: continue
                }
            }
            return false
        }
        var result: [NSManagedObject] = []
        result.reserveCapacity(objects.count + pending.count)
        var next = 0
        for object in pending {
            var low = next
            var high = objects.count
            while low < high {
                let middle = low + (high - low) / 2
                if sortsAfter(objects[middle], object) { high = middle } else { low = middle + 1 }
            }
            result += objects[next..<low]
            result.append(object)
            next = low
        }
        result += objects[next...]
        return result
    }

    /// Registered objects of `entity` with unsaved changes, whose in-memory state decides membership.
    private func pendingObjects(of entity: NSEntityDescription, includesSubentities: Bool) -> [NSManagedObject] {
        guard hasChanges else { return [] }
        func matches(_ object: NSManagedObject) -> Bool {
            includesSubentities ? object.entity.isKindOf(entity: entity) : object.entity === entity
        }
        return inserted.filter(matches) + updated.filter(matches) + deleted.filter(matches)
    }

    /// Loads the values of the faults among `results`: the snapshots the fetch just cached are
    /// taken for all of them under one lock of the row cache (``NSPersistentStoreCoordinator/cachedSnapshots(for:requester:)``);
    /// any other fault — a child context's, or one whose row the cache no longer holds — fires
    /// on its own.
    private func realizeAll(_ results: [NSManagedObject]) throws {
        let faults = results.filter(\.isFaultFlag)
        guard !faults.isEmpty else { return }
        var snapshots: [Snapshot?]?
        if parentContext == nil, let coordinator {
            if readGeneration == nil {
                // Faults that hold their row of the coordinator's cache read it directly.
                let cache = coordinator.rowCache
                let rows = faults.map { $0.snapshotHolder === cache ? $0.heldRow : nil }
                snapshots = cache.snapshots(of: rows, ids: faults.map(\.objectID), maxAge: stalenessInterval)
            } else {
                snapshots = coordinator.cachedSnapshots(for: faults.map(\.objectID), requester: self)
            }
        }
        for (index, object) in faults.enumerated() where object.isFaultFlag {
            if let snapshot = snapshots?[index] {
                realize(object, with: snapshot, parentObject: nil)
            } else {
                try fulfill(object)
            }
        }
    }

    /// The value of a fetched property for `object`: its fetch with `$FETCH_SOURCE` bound.
    func evaluateFetchedProperty(_ property: NSFetchedPropertyDescription, for object: NSManagedObject) -> [Any] {
        guard let request = property.fetchRequest, request.entity != nil else { return [] }
        if let predicate = request.predicate {
            request.predicate = predicate.withSubstitutionVariables([
                "FETCH_SOURCE": object, "FETCHED_PROPERTY": property,
            ])
        }
        return (try? fetchResults(request)) ?? []
    }
}
