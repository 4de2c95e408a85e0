/// The in-memory store (`NSInMemoryStoreType`): rows kept in memory for the life of the
/// coordinator, written through Apple's incremental-store contract like any custom store.
///
/// Fetches evaluate predicates and sort descriptors in memory against the requesting context's
/// objects (faults fire from the row cache), so the whole predicate language works.
final class InMemoryStore: NSIncrementalStore, RowStore, @unchecked Sendable {
    private struct Row {
        var snapshot: Snapshot
        let position: Int
    }

    /// Rows by object ID.
    private var rows: [NSManagedObjectID: Row] = [:]
    /// Object IDs per entity name, in insertion order; `nil` where a row was deleted.
    private var order: [String: [NSManagedObjectID?]] = [:]
    /// The next primary key per root entity: sub-entities share their root's key space, as in SQLite stores.
    private var nextKey: [String: Int64] = [:]

    override var type: String { NSInMemoryStoreType }

    override var wantsRegistrationCallbacks: Bool { false }

    override func loadMetadata() throws {
        if metadata == nil || metadata[NSStoreUUIDKey] == nil {
            metadata = [
                NSStoreTypeKey: NSInMemoryStoreType,
                NSStoreUUIDKey: Self.identifierForNewStore(at: url ?? URL(fileURLWithPath: "/")) as! String,
            ]
        }
    }

    override func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext?) throws -> Any {
        try answer(
            request, context: context, storeName: "in-memory", previousVersion: { self.rows[$0]?.snapshot.version },
            fetch: fetch)
    }

    override func newValuesForObject(
        with objectID: NSManagedObjectID, with context: NSManagedObjectContext
    ) throws -> NSIncrementalStoreNode { try node(for: objectID) }

    override func newValue(
        forRelationship relationship: NSRelationshipDescription, forObjectWith objectID: NSManagedObjectID,
        with context: NSManagedObjectContext?
    ) throws -> Any {
        let snapshot = try self.snapshot(for: objectID)
        guard let slot = objectID.entity.layout.slotByName[relationship.name] else { return NSNull() }
        return snapshot.publicValue(slot: slot, kind: objectID.entity.layout.kinds[slot]) ?? NSNull()
    }

    override func obtainPermanentIDs(for array: [NSManagedObject]) throws -> [NSManagedObjectID] {
        try permanentIDs(for: array)
    }

    // MARK: Internal doors used by the coordinator

    func snapshot(for objectID: NSManagedObjectID) throws -> Snapshot {
        guard let row = rows[objectID] else {
            throw CoreDataError.make(
                NSManagedObjectReferentialIntegrityError, "The in-memory store has no object \(objectID).",
                [NSAffectedObjectsErrorKey: [objectID]])
        }
        return row.snapshot
    }

    func currentVersions(of objectIDs: [NSManagedObjectID]) throws -> [NSManagedObjectID: UInt64] {
        var versions: [NSManagedObjectID: UInt64] = [:]
        for id in objectIDs {
            if let row = rows[id] { versions[id] = row.snapshot.version }
        }
        return versions
    }

    func permanentIDs(for entities: [NSEntityDescription]) throws -> [NSManagedObjectID] {
        entities.map { entity in
            var root = entity
            while let parent = root.superentity { root = parent }
            let key = nextKey[root.name ?? "", default: 1]
            nextKey[root.name ?? ""] = key + 1
            return newObjectID(for: entity, referenceObject: key)
        }
    }

    /// The coordinator's lock is the only writer's lock an in-memory store needs.
    func withWriteLock(_ body: () throws -> Void) throws { try body() }

    func save(_ transaction: StoreTransaction) throws {
        for row in transaction.inserted {
            let name = row.entity.name ?? ""
            let position = order[name, default: []].count
            order[name, default: []].append(row.objectID)
            rows[row.objectID] = Row(snapshot: row.snapshot, position: position)
        }
        for row in transaction.updated where rows[row.objectID] != nil {
            rows[row.objectID]!.snapshot = row.snapshot
        }
        for id in transaction.deleted {
            guard let row = rows.removeValue(forKey: id) else { continue }
            order[id.entity.name ?? ""]?[row.position] = nil
        }
    }

    // MARK: Fetching

    private func fetch(_ request: NSFetchRequest<NSFetchRequestResult>, context: NSManagedObjectContext) throws -> [Any]
    {
        guard let entity = request.entity else { return [] }
        var entities = [entity]
        if request.includesSubentities { entities = allEntities(from: entity) }
        var ids: [NSManagedObjectID] = []
        for candidate in entities {
            for case let id? in order[candidate.name ?? ""] ?? [] { ids.append(id) }
        }
        let needsObjects =
            request.predicate != nil || !(request.sortDescriptors ?? []).isEmpty
            || request.resultType == .dictionaryResultType || request.resultType == .managedObjectResultType
        guard needsObjects else {
            let window = self.window(ids, request)
            if request.resultType == .countResultType { return [NSNumber(value: window.count)] }
            return window
        }
        // Dictionary results and fetches without pending changes must see the store's values, not
        // the context's unsaved ones: evaluate them in a scratch context over the same row cache.
        var evaluation = context
        if context.hasChanges, request.resultType == .dictionaryResultType || !request.includesPendingChanges {
            evaluation = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            evaluation.persistentStoreCoordinator = context.persistentStoreCoordinator
        }
        var objects = ids.map(evaluation.object(with:))
        if let predicate = request.predicate {
            objects = UndefinedKeys.readingAsNil { objects.filter { predicate.evaluate(with: $0) } }
        }
        if let descriptors = request.sortDescriptors, !descriptors.isEmpty {
            objects = objects.sorted(using: descriptors)
        }
        if request.resultType == .dictionaryResultType {
            let rows = DictionaryResults.build(from: objects, request: request, entity: entity)
            return window(rows, request)
        }
        objects = window(objects, request)
        if evaluation !== context { objects = objects.map { context.object(with: $0.objectID) } }
        switch request.resultType {
        case .countResultType: return [NSNumber(value: objects.count)]
        case .managedObjectIDResultType: return objects.map(\.objectID)
        default: return objects
        }
    }

    private func window<T>(_ items: [T], _ request: NSFetchRequest<NSFetchRequestResult>) -> [T] {
        var result = items
        if request.fetchOffset > 0 { result = Array(result.dropFirst(request.fetchOffset)) }
        if request.fetchLimit > 0, result.count > request.fetchLimit {
            result = Array(result.prefix(request.fetchLimit))
        }
        return result
    }

    private func allEntities(from entity: NSEntityDescription) -> [NSEntityDescription] {
        [entity] + entity.subentities.flatMap(allEntities(from:))
    }
}
