/// The doors the coordinator uses on stores that keep row snapshots: read one row, allocate
/// permanent IDs, write one save described by a ``StoreTransaction``. Values cross this boundary,
/// never objects.
protocol RowStore: NSIncrementalStore {
    /// The rows of a fetch: object IDs, or a final answer, and what is left to do in memory.
    func fetch(_ fetch: StoreFetch) throws -> StoreFetchResult
    /// The row of `objectID`, and any rows read with it (a batch the object waits in).
    ///
    /// - Throws: `NSManagedObjectReferentialIntegrityError` (133000) when the row is gone.
    func read(_ objectID: NSManagedObjectID, cachedRow: @escaping (NSManagedObjectID) -> Snapshot?) throws -> StoreRead
    /// Writes `transaction` in one store transaction, or nothing.
    func save(_ transaction: StoreTransaction) throws
    /// New permanent IDs for objects of `entities`, one per element, in order.
    func permanentIDs(for entities: [NSEntityDescription]) throws -> [NSManagedObjectID]
    /// The row version of each object still in the store (`Z_OPT` for SQLite); a deleted row
    /// is absent.
    func currentVersions(of objectIDs: [NSManagedObjectID]) throws -> [NSManagedObjectID: UInt64]
    /// Runs `body` holding the store's write lock, so no other writer — another coordinator or
    /// process — changes a row between the conflict check and the save.
    func withWriteLock(_ body: () throws -> Void) throws
}

/// A fetch as a store receives it: the request, and a way to ask which rows the coordinator
/// already holds (at the generation being read) so a store need not read them again.
struct StoreFetch {
    let request: NSFetchRequest<NSFetchRequestResult>
    let cachedRow: (NSManagedObjectID) -> Snapshot?
}

/// A store's answer to a ``StoreFetch``.
struct StoreFetchResult {
    /// The parts of a fetch a store may leave to the coordinator, which does them in memory on
    /// the objects of the returned IDs, with the in-memory rules.
    struct InMemoryWork: OptionSet {
        let rawValue: Int
        /// Keep only the objects the request's predicate accepts.
        static let predicate = InMemoryWork(rawValue: 1)
        /// Order by the request's sort descriptors.
        static let sort = InMemoryWork(rawValue: 2)
        /// Apply `fetchOffset` and `fetchLimit`.
        static let window = InMemoryWork(rawValue: 4)
        static let all: InMemoryWork = [.predicate, .sort, .window]
    }

    /// The matching objects' IDs, in order as far as `remaining` allows.
    var objectIDs: [NSManagedObjectID] = []
    /// A final answer the store computed itself (a count, dictionaries), returned as is.
    var values: [Any]?
    /// What the coordinator must still do with `objectIDs`; dictionary results not in `values`
    /// are built from the objects by the coordinator.
    var remaining: InMemoryWork = []
    /// Rows read while answering, for the coordinator's row cache.
    var rows: [NSManagedObjectID: Snapshot] = [:]
}

/// A store's answer to reading one row.
struct StoreRead {
    let snapshot: Snapshot
    /// Rows read with it, for the coordinator's row cache.
    var rows: [NSManagedObjectID: Snapshot] = [:]
}

extension RowStore {
    /// `execute(_:with:)` for a row store (called by code other than the coordinator): a fetch is
    /// answered and finished as the coordinator does it, a save request is saved as a
    /// ``StoreTransaction`` built from its objects.
    func answer(
        _ request: NSPersistentStoreRequest, context: NSManagedObjectContext?, storeName: String,
        previousVersion: (NSManagedObjectID) -> UInt64?
    ) throws -> Any {
        switch request {
        case let fetchRequest as NSFetchRequest<NSFetchRequestResult>:
            guard let context, let coordinator = persistentStoreCoordinator else { return [Any]() }
            return try coordinator.fetch(fetchRequest, from: self, context: context)
        case let save as NSSaveChangesRequest:
            try self.save(
                StoreTransaction(
                    inserted: save.insertedObjects ?? [], updated: save.updatedObjects ?? [],
                    deleted: save.deletedObjects ?? [], previousVersion: previousVersion))
            return [Any]()
        default:
            throw CoreDataError.make(
                NSPersistentStoreUnsupportedRequestTypeError,
                "The \(storeName) store does not answer \(request.requestType).")
        }
    }

    /// `obtainPermanentIDs(for:)` of the incremental-store contract.
    func permanentIDs(for objects: [NSManagedObject]) throws -> [NSManagedObjectID] {
        try permanentIDs(for: objects.map(\.entity))
    }

    /// A node of the row's snapshot, for the incremental-store contract.
    func node(for objectID: NSManagedObjectID) throws -> NSIncrementalStoreNode {
        NSIncrementalStoreNode(objectID: objectID, snapshot: try read(objectID, cachedRow: { _ in nil }).snapshot)
    }
}
