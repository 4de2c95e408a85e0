/// The one protocol through which the coordinator reaches a store, whatever its kind: the
/// built-in stores adopt it (through ``RowStore``), a user's `NSIncrementalStore` is reached
/// through ``IncrementalStoreAdapter``. The coordinator asks for a store's door with
/// ``NSPersistentStoreCoordinator/coordinated(_:)`` and never names a concrete store type.
///
/// Fetches and reads go in as values (``StoreFetch``) and come back as object IDs and row
/// snapshots; a save goes in as a ``StoreTransaction``. The requester (``StoreRequester``, the
/// asking context) travels along only because Apple's `NSIncrementalStore` API passes the context
/// to a user's store.
package protocol CoordinatedStore: AnyObject {
    /// The store this door leads to.
    var persistentStore: NSPersistentStore { get }
    /// Whether reads (``fetch(_:)``, ``read(_:requester:generation:cachedRow:)``,
    /// ``destination(of:for:requester:generation:cachedRow:)``) may run on several threads at once and while
    /// a save runs; otherwise the coordinator serializes them with its writes.
    var readsConcurrently: Bool { get }
    /// The rows of a fetch: object IDs, or a final answer, and what is left to do in memory.
    func fetch(_ fetch: StoreFetch) throws -> StoreFetchResult
    /// The row of `objectID`, and any rows read with it.
    ///
    /// - Throws: `NSManagedObjectReferentialIntegrityError` (133000) when the row is gone.
    func read(
        _ objectID: NSManagedObjectID, requester: any StoreRequester, generation: QueryGeneration?,
        cachedRow: @escaping (NSManagedObjectID) -> Snapshot?
    ) throws -> StoreRead
    /// The destination of a relationship a row left out: an ID or `NSNull` for a to-one, a
    /// collection of IDs for a to-many. `cachedRow` tells which rows the coordinator holds.
    func destination(
        of relationship: NSRelationshipDescription, for objectID: NSManagedObjectID, requester: any StoreRequester,
        generation: QueryGeneration?, cachedRow: @escaping (NSManagedObjectID) -> Snapshot?
    ) throws -> Any
    /// The members of a to-many `objectID` has, in the relationship's order, each with its row
    /// when the store reads the rows in the same statement as the IDs (``StoreMembers``); `nil`
    /// when the store answers a to-many only as
    /// ``destination(of:for:requester:generation:cachedRow:)`` does. `cachedRow` tells which rows
    /// the coordinator holds, which a store need not read again.
    ///
    /// - Throws: the store's error reading them.
    func members(
        of relationship: NSRelationshipDescription, for objectID: NSManagedObjectID, requester: any StoreRequester,
        generation: QueryGeneration?, cachedRow: @escaping (NSManagedObjectID) -> Snapshot?
    ) throws -> StoreMembers?
    /// Permanent IDs for newly inserted objects, in order.
    func permanentIDs(for objects: [NSManagedObject]) throws -> [NSManagedObjectID]
    /// The row version of each of `objectIDs`, in order (`Z_OPT` for SQLite, the node's
    /// `version` for an incremental store); `nil` for a row no longer in the store.
    func currentVersions(
        of objectIDs: [NSManagedObjectID], requester: any StoreRequester
    ) throws -> [UInt64?]
    /// Writes one save: `transaction` for stores that take values, `request` (the same changes
    /// as objects) for stores written against Apple's incremental-store API. Returns the number of
    /// the persistent-history transaction the save recorded, `nil` when the store records none.
    func save(_ transaction: StoreTransaction, request: NSSaveChangesRequest, requester: any StoreRequester) throws
        -> Int64?
    /// Runs `body` holding the store's write lock, so no other writer — another coordinator or
    /// process — changes a row between the conflict check and the save.
    func withWriteLock(_ body: () throws -> Void) throws
}

extension CoordinatedStore {
    /// No rows with the IDs: the coordinator asks for the destination.
    package func members(
        of relationship: NSRelationshipDescription, for objectID: NSManagedObjectID, requester: any StoreRequester,
        generation: QueryGeneration?, cachedRow: @escaping (NSManagedObjectID) -> Snapshot?
    ) throws -> StoreMembers? { nil }
}

/// A to-many's members as a store read them: their IDs, in the relationship's order, and rows
/// read by the statement that found the IDs — the walk over a to-many touches its members next,
/// and each one's row then is where its fault fires from, with no statement of its own.
package struct StoreMembers {
    package var ids: [NSManagedObjectID]
    /// The rows of the first `rows.count` members, in order: all of them, or for a large to-many
    /// the first ones (the store reads the rest when they fire); empty when the store read none
    /// (the coordinator holds them already).
    package var rows: [Snapshot]

    package init(ids: [NSManagedObjectID], rows: [Snapshot] = []) {
        self.ids = ids
        self.rows = rows
    }
}

/// A fetch as a store receives it: the request, who asks (Apple's incremental-store API passes
/// the context on; the stores of this module never use it), and a way to ask which rows the
/// coordinator already holds (at the generation being read) so a store need not read them again.
package struct StoreFetch {
    package let request: NSFetchRequest<NSFetchRequestResult>
    let requester: any StoreRequester
    /// The query generation the context reads at; `nil` for the latest state.
    package let generation: QueryGeneration?
    package let cachedRow: (NSManagedObjectID) -> Snapshot?
    /// Which of the IDs given as values the coordinator holds a row of, one answer each, under
    /// one lock of its cache: for a store that lists many IDs it need not read (a
    /// `fetchBatchSize` fetch; `cachedRow` for each was a lock and a closure call an ID).
    package let cachedRows: ([IDValue]) -> [Bool]
}

/// A store's answer to a ``StoreFetch``.
package struct StoreFetchResult {
    /// The parts of a fetch a store may leave to the coordinator, which does them in memory on
    /// the objects of the returned IDs, with the in-memory rules.
    package struct InMemoryWork: OptionSet {
        package let rawValue: Int
        package init(rawValue: Int) { self.rawValue = rawValue }
        /// Keep only the objects the request's predicate accepts.
        package static let predicate = InMemoryWork(rawValue: 1)
        /// Order by the request's sort descriptors.
        package static let sort = InMemoryWork(rawValue: 2)
        /// Apply `fetchOffset` and `fetchLimit`.
        package static let window = InMemoryWork(rawValue: 4)
        package static let all: InMemoryWork = [.predicate, .sort, .window]
    }

    /// The matching objects' IDs, in order as far as `remaining` allows.
    package var objectIDs: [NSManagedObjectID] = []
    /// The matching objects' IDs as values (``IDValue``), in place of `objectIDs`, from a store
    /// that read each row (`rowsOfObjectIDs`) of a fetch of objects: the coordinator registers
    /// them without making an ID instance for each, or makes the instances when it needs them.
    /// Empty when the store gives `objectIDs`.
    package var objectValues: [IDValue] = []
    /// What keeps the store part of `objectValues` valid until the coordinator has registered them
    /// (the store's ID space they were made in): the values hold it unretained, and a store makes
    /// a new space when its identifier or metadata change.
    package var valuesKeptAlive: AnyObject?
    /// A final answer the store computed itself (a count, dictionaries), returned as is.
    package var values: [Any]?
    /// What the coordinator must still do with `objectIDs`; dictionary results not in `values`
    /// are built from the objects by the coordinator.
    package var remaining: InMemoryWork = []
    /// Rows read while answering, for the coordinator's row cache.
    package var rows: RowsByID = [:]
    /// The rows of `objectIDs`, in the same order, when the store read each of them: the
    /// coordinator caches them without a dictionary keyed by ID (a fetch of N rows would
    /// otherwise hash every ID once more). Empty when the store gives its rows in `rows`.
    package var rowsOfObjectIDs: [Snapshot] = []

    package init(
        objectIDs: [NSManagedObjectID] = [], values: [Any]? = nil, remaining: InMemoryWork = [],
        rows: RowsByID = [:]
    ) {
        self.objectIDs = objectIDs
        self.values = values
        self.remaining = remaining
        self.rows = rows
    }
}

extension StoreFetchResult {
    /// Whether the answer to `request` is an object for each of the IDs, in order: the store
    /// gave IDs, left nothing to memory, and the request asks for objects.
    func answersEveryID(of request: NSFetchRequest<NSFetchRequestResult>) -> Bool {
        let (filters, sorts) = leftToMemory(by: request)
        return values == nil && request.resultType == .managedObjectResultType && !remaining.contains(.window)
            && !filters && !sorts
    }

    /// Whether the store left `request`'s predicate (`filters`) and its sort (`sorts`) to memory:
    /// each only when the request has one. The in-memory finish of a fetch and
    /// ``answersEveryID(of:)`` both decide by it, so they cannot disagree.
    func leftToMemory(by request: NSFetchRequest<NSFetchRequestResult>) -> (filters: Bool, sorts: Bool) {
        (
            remaining.contains(.predicate) && request.predicate != nil,
            remaining.contains(.sort) && !(request.sortDescriptors ?? []).isEmpty
        )
    }
}

/// Rows a store read, by object ID: keyed by ``IDKey``, hashed and compared without the `NSObject`
/// path, which a `[NSManagedObjectID: Snapshot]` takes for each row it files.
package typealias RowsByID = [IDKey: Snapshot]

/// A store's answer to reading one row.
package struct StoreRead {
    package let snapshot: Snapshot
    /// Rows read with it, for the coordinator's row cache.
    package var rows: RowsByID = [:]
    /// Rows read with it as parallel arrays, IDs as values (``IDValue``, made by the store, which
    /// keeps their store part alive), for the coordinator's row cache: a batch of rows cached with
    /// no dictionary built and hashed on the way.
    package var rowValues: [IDValue] = []
    package var rowSnapshots: [Snapshot] = []
    /// What keeps the store part of `rowValues` valid until the coordinator has cached them, as
    /// ``StoreFetchResult/valuesKeptAlive``.
    package var valuesKeptAlive: AnyObject?

    package init(snapshot: Snapshot, rows: RowsByID = [:]) {
        self.snapshot = snapshot
        self.rows = rows
    }

    /// The answer for a row read with others, given as values and snapshots in order.
    package init(
        snapshot: Snapshot, rowValues: [IDValue], rowSnapshots: [Snapshot], valuesKeptAlive: AnyObject?,
        rows: RowsByID = [:]
    ) {
        self.snapshot = snapshot
        self.rows = rows
        self.rowValues = rowValues
        self.rowSnapshots = rowSnapshots
        self.valuesKeptAlive = valuesKeptAlive
    }
}

extension NSPersistentStoreCoordinator {
    /// The door to `store`: the store itself when it adopts ``CoordinatedStore``, an adapter for a
    /// user's incremental store, `nil` for a store that can answer no request.
    func coordinated(_ store: NSPersistentStore) -> (any CoordinatedStore)? {
        if let coordinated = store as? any CoordinatedStore { return coordinated }
        if let incremental = store as? NSIncrementalStore { return IncrementalStoreAdapter(incremental) }
        return nil
    }
}
