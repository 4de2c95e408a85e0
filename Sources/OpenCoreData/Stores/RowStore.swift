/// A store of this module that keeps row snapshots (SQLite, in-memory): the ``CoordinatedStore``
/// doors without the requesting context, which such a store never needs. Values cross this
/// boundary, never objects.
package protocol RowStore: NSIncrementalStore, CoordinatedStore {
    /// The rows of a fetch: object IDs, or a final answer, and what is left to do in memory.
    func fetch(_ fetch: StoreFetch) throws -> StoreFetchResult
    /// The row of `objectID`, and any rows read with it (a batch the object waits in).
    ///
    /// - Throws: `NSManagedObjectReferentialIntegrityError` (133000) when the row is gone.
    func read(
        _ objectID: NSManagedObjectID, generation: QueryGeneration?,
        cachedRow: @escaping (NSManagedObjectID) -> Snapshot?
    ) throws -> StoreRead
    /// ``CoordinatedStore/destination(of:for:requester:generation:cachedRow:)`` without the requester.
    func destination(
        of relationship: NSRelationshipDescription, for objectID: NSManagedObjectID, generation: QueryGeneration?,
        cachedRow: @escaping (NSManagedObjectID) -> Snapshot?
    ) throws -> Any
    /// Writes `transaction` in one store transaction, or nothing; returns the number of the
    /// persistent-history transaction it recorded (`nil` when the store records no history).
    @discardableResult
    func save(_ transaction: StoreTransaction) throws -> Int64?
    /// New permanent IDs for objects of `entities`, one per element, in order.
    func permanentIDs(for entities: [NSEntityDescription]) throws -> [NSManagedObjectID]
    /// The row version of each of `objectIDs`, in order (`Z_OPT` for SQLite); `nil` for a row no
    /// longer in the store.
    func currentVersions(of objectIDs: [NSManagedObjectID]) throws -> [UInt64?]
    /// Runs `body` holding the store's write lock, so no other writer — another coordinator or
    /// process — changes a row between the conflict check and the save.
    func withWriteLock(_ body: () throws -> Void) throws
    /// Whether metadata set since the last save waits to be written by the next one.
    var metadataAwaitsSave: Bool { get }
    /// The version of `objectID`'s row the store holds, for a save request that comes through
    /// `execute(_:with:)` rather than the coordinator; `nil` when the store does not say.
    func previousVersion(of objectID: NSManagedObjectID) -> UInt64?
}

extension RowStore {
    package var persistentStore: NSPersistentStore { self }

    package func read(
        _ objectID: NSManagedObjectID, requester: any StoreRequester, generation: QueryGeneration?,
        cachedRow: @escaping (NSManagedObjectID) -> Snapshot?
    ) throws -> StoreRead {
        try read(objectID, generation: generation, cachedRow: cachedRow)
    }

    package func destination(
        of relationship: NSRelationshipDescription, for objectID: NSManagedObjectID, requester: any StoreRequester,
        generation: QueryGeneration?, cachedRow: @escaping (NSManagedObjectID) -> Snapshot?
    ) throws -> Any {
        try destination(of: relationship, for: objectID, generation: generation, cachedRow: cachedRow)
    }

    package func currentVersions(
        of objectIDs: [NSManagedObjectID], requester: any StoreRequester
    ) throws -> [UInt64?] {
        try currentVersions(of: objectIDs)
    }

    package func save(_ transaction: StoreTransaction, request: NSSaveChangesRequest, requester: any StoreRequester)
        throws -> Int64?
    {
        try save(transaction)
    }

    /// No version known.
    package func previousVersion(of objectID: NSManagedObjectID) -> UInt64? { nil }

    /// `execute(_:with:)` for a row store (called by code other than the coordinator): a fetch is
    /// answered and finished as the coordinator does it, a save request is saved as a
    /// ``StoreTransaction`` built from its objects.
    package func answer(_ request: NSPersistentStoreRequest, context: NSManagedObjectContext?) throws -> Any {
        switch request {
        case let fetchRequest as NSFetchRequest<NSFetchRequestResult>:
            guard let context, context.persistentStoreCoordinator != nil else { return [Any]() }
            return try context.storeResults(fetchRequest, from: self).values
        case let save as NSSaveChangesRequest:
            try self.save(
                StoreTransaction(
                    inserted: Array(save.insertedObjects ?? []), updated: Array(save.updatedObjects ?? []),
                    deleted: Array(save.deletedObjects ?? []), previousVersion: { previousVersion(of: $0) }))
            return [Any]()
        default:
            throw CoreDataError.make(
                NSPersistentStoreUnsupportedRequestTypeError,
                "The \(type) store does not answer \(request.requestType).")
        }
    }

    /// `obtainPermanentIDs(for:)` of the incremental-store contract.
    package func permanentIDs(for objects: [NSManagedObject]) throws -> [NSManagedObjectID] {
        try permanentIDs(for: objects.map(\.entity))
    }

    /// A node of the row's snapshot, for the incremental-store contract.
    package func node(for objectID: NSManagedObjectID) throws -> NSIncrementalStoreNode {
        NSIncrementalStoreNode(
            objectID: objectID, snapshot: try read(objectID, generation: nil, cachedRow: { _ in nil }).snapshot)
    }
}
