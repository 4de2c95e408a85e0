/// The part of a fetch a store leaves to memory, done in one place for every store: the
/// predicate, the sort, the window and dictionary results, evaluated on objects with the
/// in-memory rules (Predicate Programming Guide; NSFetchRequest reference).
extension NSPersistentStoreCoordinator {
    /// Caches the rows a store read that are newer than the cached ones: a cached snapshot of
    /// the same version stays (objects share it), and a read that began before a save committed
    /// never replaces the row the save cached (row versions only grow).
    func cacheRows(_ rows: RowsByID, in cache: RowCache) {
        guard !rows.isEmpty else { return }
        cache.updateIfNewer(rows)
    }

    /// The results of `request` from a store's answer: its final values as they are, else its
    /// object IDs with the work it left done here.
    ///
    /// The predicate and sort see the store's values, not the context's unsaved ones: a context
    /// with changes is evaluated through a scratch context on the same row cache (Apple's SQLite
    /// store evaluates in the database, which holds only saved values; the context folds its own
    /// pending changes in afterwards, `NSManagedObjectContext.fetchResults`).
    func finish(
        _ result: StoreFetchResult, request: NSFetchRequest<NSFetchRequestResult>, context: NSManagedObjectContext
    ) throws -> FetchedRows {
        if let values = result.values { return .values(values) }
        let remaining = result.remaining
        let (filters, sorts) = leftToMemory(by: result, request: request)
        guard filters || sorts || request.resultType == .dictionaryResultType else {
            let windowed = remaining.contains(.window)
            let ids = windowed ? request.window(result.objectIDs) : result.objectIDs
            switch request.resultType {
            case .countResultType: return .values([NSNumber(value: ids.count)])
            case .managedObjectIDResultType: return .values(ids)
            default:
                return .objects(context.objects(with: ids, realizing: request.realizesObjects))
            }
        }
        var evaluation = context
        if context.hasChanges {
            evaluation = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            evaluation.persistentStoreCoordinator = self
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
        default: return .objects(evaluation === context ? objects : objects.map { context.object(with: $0.objectID) })
        }
    }

    /// Whether ``finish(_:request:context:)`` answers `result` with an object for each of its
    /// IDs, in order: the store left nothing to memory, and the request asks for objects.
    func registersEveryID(of result: StoreFetchResult, request: NSFetchRequest<NSFetchRequestResult>) -> Bool {
        let (filters, sorts) = leftToMemory(by: result, request: request)
        return result.values == nil && request.resultType == .managedObjectResultType
            && !result.remaining.contains(.window) && !filters && !sorts
    }

    /// Whether the store left `request`'s predicate (`filters`) and its sort (`sorts`) to memory:
    /// each only when the request has one. ``finish(_:request:context:)`` and
    /// ``registersEveryID(of:request:)`` both decide by it, so they cannot disagree.
    private func leftToMemory(
        by result: StoreFetchResult, request: NSFetchRequest<NSFetchRequestResult>
    ) -> (filters: Bool, sorts: Bool) {
        let remaining = result.remaining
        return (
            remaining.contains(.predicate) && request.predicate != nil,
            remaining.contains(.sort) && !(request.sortDescriptors ?? []).isEmpty
        )
    }
}

extension NSFetchRequest {
    /// Whether the fetched objects take their rows' values at once rather than becoming faults:
    /// objects asked for, and `returnsObjectsAsFaults` false.
    var realizesObjects: Bool { resultType == .managedObjectResultType && !returnsObjectsAsFaults }
}
