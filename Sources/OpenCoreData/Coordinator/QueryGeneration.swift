/// Query generations: a context pinned to a generation reads the store as it was when the
/// generation began, whatever other contexts or processes save meanwhile, until it saves, is
/// reset, merges another context's save, or is given another generation.
///
/// Related documentation: "Accessing data when the store changes" (Core Data);
/// NSManagedObjectContext reference, `queryGenerationToken`, `setQueryGenerationFrom(_:)`;
/// NSQueryGenerationToken reference.

/// A store whose reads can be pinned to the state at one moment (the SQLite store in WAL mode);
/// stores without this capability are read at their latest state by every generation.
package protocol QueryGenerationStore: AnyObject {
    /// Whether reads can be pinned now.
    var supportsQueryGenerations: Bool { get }
    /// A reader pinned to the latest committed state; passed back to ``endPinnedRead(_:)``.
    func beginPinnedRead() throws -> AnyObject
    /// Ends a pinned read.
    func endPinnedRead(_ reader: AnyObject)
}

/// One generation: a pinned read on each store that supports it (stores of other types are read
/// at their latest state) and the rows read at it. Ends when the last context or token holding
/// it lets it go.
package final class QueryGeneration: @unchecked Sendable {
    private static let counter = Counter()

    let number: Int
    weak var coordinator: NSPersistentStoreCoordinator?
    /// The rows read at this generation: never shared with the coordinator's latest rows, each
    /// a copy of the snapshot read (a store without pinned reads hands both caches one snapshot).
    let rowCache = RowCache(copiesSnapshots: true)
    private let readers: [(store: any QueryGenerationStore, reader: AnyObject)]

    /// Begins a generation at the latest committed state of `stores`.
    init(coordinator: NSPersistentStoreCoordinator, stores: [NSPersistentStore]) throws {
        var readers: [(store: any QueryGenerationStore, reader: AnyObject)] = []
        do {
            for case let store as any QueryGenerationStore in stores where store.supportsQueryGenerations {
                readers.append((store, try store.beginPinnedRead()))
            }
        } catch {
            for (store, reader) in readers { store.endPinnedRead(reader) }
            throw error
        }
        self.readers = readers
        self.coordinator = coordinator
        number = Self.counter.next()
    }

    deinit {
        for (store, reader) in readers { store.endPinnedRead(reader) }
    }

    /// Whether any store's reads are pinned.
    var pinsReads: Bool { !readers.isEmpty }

    /// The reader pinned for `store` at this generation.
    package func reader(for store: any QueryGenerationStore) -> AnyObject? {
        readers.first { $0.store === store }?.reader
    }

    /// A thread-safe sequence number, for descriptions.
    private final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0

        func next() -> Int {
            lock.lock()
            defer { lock.unlock() }
            value += 1
            return value
        }
    }
}

extension NSPersistentStoreCoordinator {
    /// A generation beginning now.
    func makeGeneration() throws -> QueryGeneration {
        requestLock.lock()
        defer { requestLock.unlock() }
        return try QueryGeneration(coordinator: self, stores: persistentStores)
    }

    /// The row cache of reads at `generation`: the generation's own, or the latest rows.
    func rowCache(at generation: QueryGeneration?) -> RowCache { generation?.rowCache ?? rowCache }

    /// Runs a read of `store`: concurrently with other reads when the store can, else under the
    /// coordinator's lock.
    func read<T>(_ store: any CoordinatedStore, _ body: () throws -> T) rethrows -> T {
        if store.readsConcurrently { return try body() }
        requestLock.lock()
        defer { requestLock.unlock() }
        return try body()
    }
}
