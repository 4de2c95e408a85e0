import Foundation

/// The ``CoordinatedStore`` door of a user's `NSIncrementalStore`: each call becomes the
/// incremental-store method Apple documents for it (Incremental Store Programming Guide).
final class IncrementalStoreAdapter: CoordinatedStore {
    let store: NSIncrementalStore

    init(_ store: NSIncrementalStore) { self.store = store }

    var persistentStore: NSPersistentStore { store }

    /// Apple's coordinator calls an incremental store from one thread at a time.
    var readsConcurrently: Bool { false }

    /// The store's own answer (objects, IDs, dictionaries or a count), as final values.
    ///
    /// - Throws: `NSPersistentStoreOperationError` (134070) when the answer is not an array.
    func fetch(_ fetch: StoreFetch) throws -> StoreFetchResult {
        let answer = try store.execute(fetch.request, with: Self.context(of: fetch.requester))
        guard let results = answer as? [Any] else {
            throw CoreDataError.make(
                NSPersistentStoreOperationError,
                "The store answered a fetch request with \(type(of: answer)), not an array.",
                [NSAffectedStoresErrorKey: [store]])
        }
        return StoreFetchResult(values: results)
    }

    func read(
        _ objectID: NSManagedObjectID, requester: any StoreRequester, generation: QueryGeneration?,
        cachedRow: @escaping (NSManagedObjectID) -> Snapshot?
    ) throws -> StoreRead {
        StoreRead(snapshot: try store.newValuesForObject(with: objectID, with: Self.context(of: requester)).snapshot)
    }

    func destination(
        of relationship: NSRelationshipDescription, for objectID: NSManagedObjectID, requester: any StoreRequester,
        generation: QueryGeneration?, cachedRow: @escaping (NSManagedObjectID) -> Snapshot?
    ) throws -> Any {
        try store.newValue(forRelationship: relationship, forObjectWith: objectID, with: Self.context(of: requester))
    }

    func permanentIDs(for objects: [NSManagedObject]) throws -> [NSManagedObjectID] {
        try store.obtainPermanentIDs(for: objects)
    }

    /// Each object's node `version`, which plays `Z_OPT`'s part (NSIncrementalStoreNode reference);
    /// an object the store reports gone (133000) has none.
    func currentVersions(
        of objectIDs: [NSManagedObjectID], requester: any StoreRequester
    ) throws -> [UInt64?] {
        let context = try Self.context(of: requester)
        return try objectIDs.map { id in
            do {
                return try store.newValuesForObject(with: id, with: context).version
            } catch let error as NSError
                where error.domain == NSCocoaErrorDomain && error.code == NSManagedObjectReferentialIntegrityError
            {
                return nil
            }
        }
    }

    func save(_ transaction: StoreTransaction, request: NSSaveChangesRequest, requester: any StoreRequester) throws
        -> Int64?
    {
        _ = try store.execute(request, with: Self.context(of: requester))
        return nil
    }

    /// The context Apple's incremental-store API hands a store: the requester itself.
    ///
    /// - Throws: `NSPersistentStoreOperationError` (134070) for a requester that is not a context
    ///   (none in this module is), which a user's store could not be given.
    private static func context(of requester: any StoreRequester) throws -> NSManagedObjectContext {
        guard let context = requester as? NSManagedObjectContext else {
            throw CoreDataError.make(
                NSPersistentStoreOperationError, "An incremental store is asked only on behalf of a context.")
        }
        return context
    }

    /// A user's store has no write lock to offer; the coordinator's lock serializes its saves.
    func withWriteLock(_ body: () throws -> Void) throws { try body() }
}
