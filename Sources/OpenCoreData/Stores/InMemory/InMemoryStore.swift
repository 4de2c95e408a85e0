/// The in-memory store (`NSInMemoryStoreType`): rows kept in memory for the life of the
/// coordinator, written through Apple's incremental-store contract like any custom store.
///
/// A fetch answers every object ID of the entity and leaves the predicate, the sort and the window
/// to the coordinator, which evaluates them in memory (faults fire from the row cache), so the
/// whole predicate language works.
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
    /// Guards `rows`, `order` and `nextKey`: reads run on any thread, concurrently with a save.
    private let lock = NSLock()

    /// Reads take the store's own lock, briefly.
    var readsConcurrently: Bool { true }

    /// The metadata lives in memory only: nothing waits to be written.
    var metadataAwaitsSave: Bool { false }

    override var type: String { NSInMemoryStoreType }

    override func loadMetadata() throws {
        if metadata == nil || metadata[NSStoreUUIDKey] == nil {
            metadata = [
                NSStoreTypeKey: NSInMemoryStoreType,
                NSStoreUUIDKey: Self.identifierForNewStore(at: url ?? URL(fileURLWithPath: "/")) as! String,
            ]
        }
    }

    func previousVersion(of objectID: NSManagedObjectID) -> UInt64? {
        locked { rows[objectID]?.snapshot.version }
    }

    /// The relationship's value in the row: a to-one's ID or `NSNull`, a to-many's IDs.
    func destination(
        of relationship: NSRelationshipDescription, for objectID: NSManagedObjectID, generation: QueryGeneration?,
        cachedRow: @escaping (NSManagedObjectID) -> Snapshot?
    ) throws -> Any {
        let snapshot = try read(objectID, generation: generation, cachedRow: { _ in nil }).snapshot
        guard let slot = objectID.entity.layout.slotByName[relationship.name] else { return NSNull() }
        return snapshot.publicValue(slot: slot, kind: objectID.entity.layout.kinds[slot]) ?? NSNull()
    }

    override func obtainPermanentIDs(for array: [NSManagedObject]) throws -> [NSManagedObjectID] {
        try permanentIDs(for: array)
    }

    // MARK: Internal doors used by the coordinator

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// The row; an in-memory store has no query generations, so every read sees the latest rows.
    func read(
        _ objectID: NSManagedObjectID, generation: QueryGeneration?,
        cachedRow: @escaping (NSManagedObjectID) -> Snapshot?
    ) throws -> StoreRead {
        guard let row = locked({ rows[objectID] }) else {
            throw CoreDataError.make(
                NSManagedObjectReferentialIntegrityError, "The in-memory store has no object \(objectID).",
                [NSAffectedObjectsErrorKey: [objectID]])
        }
        return StoreRead(snapshot: row.snapshot)
    }

    func currentVersions(of objectIDs: [NSManagedObjectID]) throws -> [UInt64?] {
        lock.lock()
        defer { lock.unlock() }
        return objectIDs.map { rows[$0]?.snapshot.version }
    }

    func permanentIDs(for entities: [NSEntityDescription]) throws -> [NSManagedObjectID] {
        lock.lock()
        defer { lock.unlock() }
        return entities.map { entity in
            var root = entity
            while let parent = root.superentity { root = parent }
            let key = nextKey[root.name ?? "", default: 1]
            nextKey[root.name ?? ""] = key + 1
            return newObjectID(for: entity, referenceObject: key)
        }
    }

    /// The coordinator's lock is the only writer's lock an in-memory store needs.
    func withWriteLock(_ body: () throws -> Void) throws { try body() }

    @discardableResult
    func save(_ transaction: StoreTransaction) throws -> Int64? {
        lock.lock()
        defer { lock.unlock() }
        for row in transaction.inserted {
            let name = row.entity.name ?? ""
            let position = order[name, default: []].count
            order[name, default: []].append(row.objectID)
            rows[row.objectID] = Row(snapshot: row.snapshot, position: position)
        }
        for row in transaction.updated {
            rows[row.objectID]?.snapshot = row.snapshot
        }
        for id in transaction.deleted {
            guard let row = rows.removeValue(forKey: id) else { continue }
            order[id.entity.name ?? ""]?[row.position] = nil
        }
        return nil
    }

    // MARK: Fetching

    /// Every object of the entity (and its sub-entities when the request includes them), in the
    /// order they were inserted; the rest is done in memory.
    func fetch(_ fetch: StoreFetch) throws -> StoreFetchResult {
        let request = fetch.request
        guard let entity = request.entity else { return StoreFetchResult(values: []) }
        var entities = [entity]
        if request.includesSubentities { entities = allEntities(from: entity) }
        var ids: [NSManagedObjectID] = []
        lock.lock()
        defer { lock.unlock() }
        for candidate in entities {
            for case let id? in order[candidate.name ?? ""] ?? [] { ids.append(id) }
        }
        return StoreFetchResult(objectIDs: ids, remaining: .all)
    }

    private func allEntities(from entity: NSEntityDescription) -> [NSEntityDescription] {
        [entity] + entity.subentities.flatMap(allEntities(from:))
    }
}

extension InMemoryStore: FilelessStore {}
