import OpenCoreData
import OpenCoreDataSQL

/// Query generations for the SQLite store. A generation is a read transaction held open on a
/// connection of its own: in WAL mode SQLite keeps showing that transaction the database as it
/// was when the transaction began, while the writer goes on committing.
///
/// Related documentation: "Accessing data when the store changes" (Core Data); SQLite, "Write-Ahead
/// Logging" (readers see a snapshot from the start of their transaction).
extension SQLiteStore: QueryGenerationStore {
    /// Whether reads can be pinned: a writable store in WAL journal mode (a read transaction on a
    /// rollback-journal store would block every writer).
    var supportsQueryGenerations: Bool {
        guard !isReadOnly, let writer, let mode = try? writer.rows("PRAGMA journal_mode").first?.first else {
            return false
        }
        return mode == .text("wal")
    }

    /// A connection inside a read transaction that began at the latest committed state.
    func beginPinnedRead() throws -> AnyObject {
        let connection = try idleReaders.take() ?? openReader()
        do {
            try connection.execute("BEGIN DEFERRED")
            // The snapshot is taken by the transaction's first read.
            _ = try connection.rows("SELECT count(*) FROM sqlite_master")
        } catch {
            connection.close()
            throw error
        }
        idleReaders.pin(connection)
        return connection
    }

    /// Ends the read transaction of `reader` and keeps its connection for the next generation.
    func endPinnedRead(_ reader: AnyObject) {
        guard let connection = reader as? SQLiteConnection else { return }
        idleReaders.put(connection)
    }

    /// A new connection for reads, configured as the writer is.
    func openReader() throws -> SQLiteConnection {
        let connection = try SQLiteConnection(
            path: writer.path, mode: writer.isReadOnly ? .readOnly : .readWrite(create: false))
        do {
            try configure(connection)
        } catch {
            connection.close()
            throw error
        }
        return connection
    }
}

/// Connections of ended generations, kept for the next (a few at most). Thread-safe: a generation
/// ends when its last token or context lets it go, on whatever thread that happens.
final class IdleReaders: @unchecked Sendable {
    private let lock = NSLock()
    private var connections: [SQLiteConnection] = []
    /// The connections of live generations, each in its read transaction.
    private var pinned: [ObjectIdentifier: SQLiteConnection] = [:]
    private var isClosed = false
    private let limit = 4

    func take() -> SQLiteConnection? {
        lock.lock()
        defer { lock.unlock() }
        return connections.popLast()
    }

    /// Records that `connection` holds a generation's read transaction.
    func pin(_ connection: SQLiteConnection) {
        lock.lock()
        pinned[ObjectIdentifier(connection)] = connection
        lock.unlock()
    }

    /// Takes back a generation's connection: its read transaction ends, and it is kept for the
    /// next generation, or closed.
    func put(_ connection: SQLiteConnection) {
        lock.lock()
        pinned[ObjectIdentifier(connection)] = nil
        lock.unlock()
        if connection.isInTransaction { try? connection.execute("COMMIT") }
        lock.lock()
        let keep = !isClosed && connections.count < limit
        if keep { connections.append(connection) }
        lock.unlock()
        if !keep { connection.close() }
    }

    /// Closes the idle connections, and ends the read transactions of the generations still
    /// alive, so a store removed from its coordinator holds no lock on its file (a pinned context
    /// kept its read open, and destroying the store waited for it). Those connections are closed
    /// when their generations end; reads at them meanwhile see the latest state.
    func closeAll() {
        lock.lock()
        let closing = connections
        let reading = Array(pinned.values)
        connections = []
        isClosed = true
        lock.unlock()
        for connection in closing { connection.close() }
        for connection in reading where connection.isInTransaction { try? connection.execute("COMMIT") }
    }
}

extension SQLiteConnection: SQLPooledConnection {}

/// Which connection a read on this thread uses, per store (task-local, so it follows the read's
/// call tree and nothing else).
enum SQLiteReads {
    private struct Binding: @unchecked Sendable {
        let store: ObjectIdentifier
        let connection: SQLiteConnection
    }

    @TaskLocal private static var bound: Binding?
    @TaskLocal private static var writingStore: ObjectIdentifier?

    /// The connection bound to this thread's read of `store`, if one is running.
    static func bound(to store: SQLiteStore) -> SQLiteConnection? {
        guard let binding = bound, binding.store == ObjectIdentifier(store) else { return nil }
        return binding.connection
    }

    /// Runs `body` with `connection` bound to reads of `store`.
    static func bind<T>(_ connection: SQLiteConnection, to store: SQLiteStore, _ body: () throws -> T) rethrows -> T {
        try $bound.withValue(Binding(store: ObjectIdentifier(store), connection: connection)) { try body() }
    }

    /// Whether this thread is inside a write transaction of `store`.
    static func isWriting(_ store: SQLiteStore) -> Bool { writingStore == ObjectIdentifier(store) }

    /// Runs `body` as `store`'s write transaction on this thread.
    static func writing<T>(_ store: SQLiteStore, _ body: () throws -> T) rethrows -> T {
        // Already the store's write transaction (a save's key allocation, inside its save): the
        // value is not bound again: binding a task-local costs many times a read of it.
        if writingStore == ObjectIdentifier(store) { return try body() }
        return try $writingStore.withValue(ObjectIdentifier(store)) { try body() }
    }
}
