/// Query generations: a context pinned to a generation reads the store as it was when the
/// generation began, whatever other contexts or processes save meanwhile, until it saves, is
/// reset, merges another context's save, or is given another generation.
///
/// Related documentation: "Accessing data when the store changes" (Core Data);
/// NSManagedObjectContext reference, `queryGenerationToken`, `setQueryGenerationFrom(_:)`;
/// NSQueryGenerationToken reference.

/// One generation: a read transaction on each SQLite store of a coordinator (stores of other
/// types are read at their latest state) and the rows read at it. Ends when the last context or
/// token holding it lets it go.
final class QueryGeneration: @unchecked Sendable {
    private static let counter = Counter()

    let number: Int
    weak var coordinator: NSPersistentStoreCoordinator?
    /// The rows read at this generation: never shared with the coordinator's latest rows.
    let rowCache = RowCache()
    private let readers: [(store: SQLiteStore, connection: SQLiteConnection)]

    /// Begins a generation at the latest committed state of `stores`.
    init(coordinator: NSPersistentStoreCoordinator, stores: [NSPersistentStore]) throws {
        var readers: [(store: SQLiteStore, connection: SQLiteConnection)] = []
        do {
            for case let store as SQLiteStore in stores where store.supportsQueryGenerations {
                readers.append((store, try store.beginSnapshotRead()))
            }
        } catch {
            for (store, connection) in readers { store.endSnapshotRead(connection) }
            throw error
        }
        self.readers = readers
        self.coordinator = coordinator
        number = Self.counter.next()
    }

    deinit {
        for (store, connection) in readers { store.endSnapshotRead(connection) }
    }

    /// Whether any store's reads are pinned.
    var pinsReads: Bool { !readers.isEmpty }

    /// The connection reading `store` at this generation.
    func reader(for store: SQLiteStore) -> SQLiteConnection? {
        readers.first { $0.store === store }?.connection
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

    /// Runs `body` (which holds the coordinator's lock) with every store reading at `generation`;
    /// `nil` reads the latest state.
    func reading<T>(at generation: QueryGeneration?, _ body: () throws -> T) rethrows -> T {
        if generation === activeGeneration { return try body() }
        let previous = activeGeneration
        activate(generation)
        defer { activate(previous) }
        return try body()
    }

    private func activate(_ generation: QueryGeneration?) {
        activeGeneration = generation
        for case let store as SQLiteStore in persistentStores {
            store.activeReader = generation?.reader(for: store)
        }
    }

    /// The row cache of the generation being read: the active generation's, or the latest rows.
    var readCache: RowCache { activeGeneration?.rowCache ?? rowCache }
}
