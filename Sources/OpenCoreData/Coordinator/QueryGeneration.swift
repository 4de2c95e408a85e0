/// Query generations: a context pinned to a generation reads the store as it was when the
/// generation began, whatever other contexts or processes save meanwhile, until it saves, is
/// reset, merges another context's save, or is given another generation.
///
/// Related documentation: "Accessing data when the store changes" (Core Data);
/// NSManagedObjectContext reference, `queryGenerationToken`, `setQueryGenerationFrom(_:)`;
/// NSQueryGenerationToken reference.

/// A token naming a generation of the store's data, for `setQueryGenerationFrom(_:)`.
/// ``current`` asks for the latest generation; a context's ``NSManagedObjectContext/queryGenerationToken``
/// names the one it is pinned to, and pins another context of the same coordinator to it too.
open class NSQueryGenerationToken: NSObject, NSCopying, @unchecked Sendable {
    /// The generation; `nil` for ``current``.
    let generation: QueryGeneration?

    init(generation: QueryGeneration?) {
        self.generation = generation
        super.init()
    }

    /// The token that pins a context to the generation current when it is set.
    public class var current: NSQueryGenerationToken { currentQueryGenerationToken }

    /// Tokens are immutable: a copy is the token itself.
    public func copy(with zone: NSZone? = nil) -> Any { self }

    /// Two tokens are equal when they name the same generation.
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSQueryGenerationToken else { return false }
        return generation === other.generation
    }

    open override var hash: Int { generation.map { ObjectIdentifier($0).hashValue } ?? 0 }

    open override var description: String {
        generation.map { "<NSQueryGenerationToken: generation \($0.number)>" } ?? "<NSQueryGenerationToken: current>"
    }
}

private let currentQueryGenerationToken = NSQueryGenerationToken(generation: nil)

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

extension NSManagedObjectContext {
    /// The token of the generation this context is pinned to; `nil` when it reads the latest state.
    public var queryGenerationToken: NSQueryGenerationToken? {
        queryGeneration.map { NSQueryGenerationToken(generation: $0) }
    }

    /// Pins the context to a generation of the store's data: ``NSQueryGenerationToken/current``
    /// for the latest one (taken now), another context's ``queryGenerationToken`` to share its
    /// generation, or `nil` to read the latest state again. A pinned context moves to the latest
    /// generation when it saves, is reset, or merges another context's save.
    ///
    /// - Throws: `NSPersistentStoreOperationError` (134070) when the token comes from another
    ///   coordinator or the context has none; an SQLite error when the read cannot begin.
    public func setQueryGenerationFrom(_ generation: NSQueryGenerationToken?) throws {
        checkQueue("setQueryGenerationFrom(_:)")
        guard let generation else {
            queryGeneration = nil
            return
        }
        guard let coordinator = persistentStoreCoordinator else {
            throw CoreDataError.make(
                NSPersistentStoreOperationError, "The context has no persistent store coordinator.")
        }
        if let pinned = generation.generation {
            guard pinned.coordinator === coordinator else {
                throw CoreDataError.make(
                    NSPersistentStoreOperationError,
                    "The query generation token belongs to another persistent store coordinator.")
            }
            queryGeneration = pinned
        } else {
            queryGeneration = try coordinator.makeGeneration()
        }
    }

    /// The generation reads go through: `nil` when unpinned or when no store can pin reads.
    var readGeneration: QueryGeneration? {
        guard let queryGeneration, queryGeneration.pinsReads else { return nil }
        return queryGeneration
    }

    /// Moves a pinned context to the latest generation (after a save, a reset or a merge).
    func advanceQueryGeneration() {
        guard queryGeneration != nil, let coordinator = persistentStoreCoordinator else { return }
        queryGeneration = try? coordinator.makeGeneration()
    }
}
