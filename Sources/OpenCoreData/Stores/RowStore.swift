/// The two doors the coordinator uses on stores that keep row snapshots: read one row, write one
/// save with the snapshots the coordinator computed.
protocol RowStore: NSIncrementalStore {
    func snapshot(for objectID: NSManagedObjectID) throws -> Snapshot
    func save(
        inserted: Set<NSManagedObject>, updated: Set<NSManagedObject>, deleted: Set<NSManagedObject>,
        snapshots: [NSManagedObjectID: Snapshot]) throws
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
            let snapshots = Snapshot.saved(
                inserted: save.insertedObjects ?? [], updated: save.updatedObjects ?? [],
                previousVersion: previousVersion)
            try self.save(
                inserted: save.insertedObjects ?? [], updated: save.updatedObjects ?? [],
                deleted: save.deletedObjects ?? [], snapshots: snapshots)
            return [Any]()
        default:
            throw CoreDataError.make(
                NSPersistentStoreUnsupportedRequestTypeError,
                "The \(storeName) store does not answer \(request.requestType).")
        }
    }

    /// A node of the row's snapshot, for the incremental-store contract.
    func node(for objectID: NSManagedObjectID) throws -> NSIncrementalStoreNode {
        NSIncrementalStoreNode(objectID: objectID, snapshot: try snapshot(for: objectID))
    }
}
