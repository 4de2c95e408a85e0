/// The doors the coordinator uses on stores that keep row snapshots: read one row, allocate
/// permanent IDs, write one save described by a ``StoreTransaction``. Values cross this boundary,
/// never objects.
protocol RowStore: NSIncrementalStore {
    func snapshot(for objectID: NSManagedObjectID) throws -> Snapshot
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

extension RowStore {
    /// `execute(_:with:)` for a row store: a fetch goes to `fetch`, a save request (from a caller
    /// other than the coordinator) is saved with snapshots built here.
    func answer(
        _ request: NSPersistentStoreRequest, context: NSManagedObjectContext?, storeName: String,
        previousVersion: (NSManagedObjectID) -> UInt64?,
        fetch: (NSFetchRequest<NSFetchRequestResult>, NSManagedObjectContext) throws -> [Any]
    ) throws -> Any {
        switch request {
        case let fetchRequest as NSFetchRequest<NSFetchRequestResult>:
            guard let context else { return [Any]() }
            return try fetch(fetchRequest, context)
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
        NSIncrementalStoreNode(objectID: objectID, snapshot: try snapshot(for: objectID))
    }
}
