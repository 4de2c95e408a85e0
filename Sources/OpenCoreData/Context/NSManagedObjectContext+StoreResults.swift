/// A fetch below the context's pending changes, in one place: the stores each answer
/// (``NSPersistentStoreCoordinator/answer(_:from:requester:)``), the context registers the
/// objects and finishes in memory what a store left — the predicate, the sort, the window and
/// dictionary results, with the in-memory rules — and several stores' answers are combined.
///
/// Related documentation: NSFetchRequest reference; Predicate Programming Guide; NSPersistentStoreCoordinator
/// reference, `execute(_:with:)`.
extension NSManagedObjectContext: StoreRequester {
    /// The stores' answer to `request` (its entity resolved): each store that holds the entity
    /// asked, their answers combined.
    ///
    /// - Throws: the store's error.
    func storeResults(_ request: NSFetchRequest<NSFetchRequestResult>) throws -> FetchedRows {
        guard let entity = request.entity else { return .values([]) }
        let stores = coordinator("fetch(_:)").stores(answering: request, for: entity)
        if stores.count == 1 { return try storeResults(request, from: stores[0]) }
        if stores.isEmpty { return .values(request.resultType == .countResultType ? [NSNumber(value: 0)] : []) }
        // Several stores: each answers without offset and limit; order and limits apply once.
        let partial = request.converted(to: NSFetchRequestResult.self)
        partial.fetchOffset = 0
        partial.fetchLimit = 0
        var combined: [Any] = []
        var count = 0
        for store in stores {
            let results = try storeResults(partial, from: store).values
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

    /// One store's answer to `request`, its objects registered in this context and finished in
    /// memory where the store left work.
    ///
    /// - Throws: `NSPersistentStoreUnsupportedRequestTypeError` (134091) for a store that can
    ///   answer no request; `NSPersistentStoreOperationError` (134070) for a store no longer in a
    ///   coordinator; the store's error.
    func storeResults(
        _ request: NSFetchRequest<NSFetchRequestResult>, from store: NSPersistentStore
    ) throws -> FetchedRows {
        guard let coordinator = store.persistentStoreCoordinator else {
            throw CoreDataError.make(
                NSPersistentStoreOperationError, "The store is in no coordinator.", [NSAffectedStoresErrorKey: [store]])
        }
        switch try coordinator.answer(request, from: store, requester: self) {
        case .values(let values):
            return .values(values)
        case .objectValues(let values, let rows, let keptAlive):
            return withExtendedLifetime(keptAlive) {
                .objects(objects(withValues: values, caching: rows, realizing: request.realizesObjects))
            }
        case .objectIDs(let ids, let rows):
            return .objects(objects(with: ids, caching: rows, realizing: request.realizesObjects))
        case .unfinished(let result):
            return try finish(result, request: request)
        }
    }

    /// The results of `request` from a store's answer that left work to memory: its object IDs
    /// with the predicate, sort, window and result shape done here.
    ///
    /// The predicate and sort see the store's values, not the context's unsaved ones: a context
    /// with changes is evaluated through a scratch context on the same row cache (Apple's SQLite
    /// store evaluates in the database, which holds only saved values; the context folds its own
    /// pending changes in afterwards, ``fetchRows(_:)``).
    private func finish(
        _ result: StoreFetchResult, request: NSFetchRequest<NSFetchRequestResult>
    ) throws -> FetchedRows {
        if let values = result.values { return .values(values) }
        let remaining = result.remaining
        let (filters, sorts) = result.leftToMemory(by: request)
        guard filters || sorts || request.resultType == .dictionaryResultType else {
            let windowed = remaining.contains(.window)
            let ids = windowed ? request.window(result.objectIDs) : result.objectIDs
            switch request.resultType {
            case .countResultType: return .values([NSNumber(value: ids.count)])
            case .managedObjectIDResultType: return .values(ids)
            default: return .objects(objects(with: ids, realizing: request.realizesObjects))
            }
        }
        var evaluation = self
        if hasChanges {
            evaluation = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            evaluation.persistentStoreCoordinator = persistentStoreCoordinator
        }
        var objects = result.objectIDs.map(evaluation.object(with:))
        if filters, let predicate = request.predicate {
            objects = UndefinedKeys.readingAsNil { objects.filter { predicate.evaluate(with: $0) } }
        }
        if sorts, let descriptors = request.sortDescriptors {
            objects = objects.sorted(using: descriptors)
        }
        if request.resultType == .dictionaryResultType {
            let rows = DictionaryResults.build(from: objects, request: request, entity: request.entity!)
            return .values(remaining.contains(.window) ? request.window(rows) : rows)
        }
        if remaining.contains(.window) { objects = request.window(objects) }
        switch request.resultType {
        case .countResultType: return .values([NSNumber(value: objects.count)])
        case .managedObjectIDResultType: return .values(objects.map(\.objectID))
        default: return .objects(evaluation === self ? objects : objects.map { object(with: $0.objectID) })
        }
    }

    /// A root context of `coordinator` holds rows of the coordinator's row cache (of the one of
    /// its generation when pinned, which the coordinator tells apart).
    package func holdsRows(of coordinator: NSPersistentStoreCoordinator) -> Bool {
        parentContext == nil && self.coordinator === coordinator
    }

    /// The IDs a store's rows matching `fetch` have, finished in memory where the store left work.
    package func storeIDs(
        matching fetch: NSFetchRequest<NSFetchRequestResult>, in store: NSPersistentStore
    ) throws -> [NSManagedObjectID] {
        try storeResults(fetch, from: store).values.compactMap { $0 as? NSManagedObjectID }
    }
}

extension NSFetchRequest {
    /// Whether the fetched objects take their rows' values at once rather than becoming faults:
    /// objects asked for, and `returnsObjectsAsFaults` false.
    var realizesObjects: Bool { resultType == .managedObjectResultType && !returnsObjectsAsFaults }
}
