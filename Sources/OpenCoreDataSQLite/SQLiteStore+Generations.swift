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

/// Connections for reads of the latest state, checked out for the length of one read so reads
/// on several threads run at once. At most ``limit`` are open; a read beyond them waits for one.
final class ReaderPool: @unchecked Sendable {
    private let condition = NSCondition()
    private var idle: [SQLiteConnection] = []
    private var open = 0
    private var inUse = 0
    private var isClosed = false
    let limit = 8
    /// The most connections ever checked out at once (tests read it to see reads overlap).
    private(set) var mostInUse = 0

    /// Opens the pool's first connection, so reads have one even when no more can be opened
    /// later (the store's file was moved or unlinked while open).
    ///
    /// - Throws: `make`'s error.
    func prime(_ make: () throws -> SQLiteConnection) throws {
        let connection = try make()
        condition.lock()
        open += 1
        idle.append(connection)
        condition.unlock()
    }

    /// An idle connection, a new one from `make` while fewer than ``limit`` are open, or the next
    /// one checked in — also when `make` fails while others are open.
    ///
    /// - Throws: `make`'s error when no other connection is open.
    func checkout(_ make: () throws -> SQLiteConnection) throws -> SQLiteConnection {
        condition.lock()
        defer { condition.unlock() }
        var canOpen = true
        while idle.isEmpty, open >= limit || !canOpen { condition.wait() }
        while true {
            if let connection = idle.popLast() {
                inUse += 1
                mostInUse = max(mostInUse, inUse)
                return connection
            }
            open += 1
            condition.unlock()
            do {
                let connection = try make()
                condition.lock()
                inUse += 1
                mostInUse = max(mostInUse, inUse)
                return connection
            } catch {
                condition.lock()
                open -= 1
                guard open > 0 else { throw error }
                canOpen = false
                while idle.isEmpty { condition.wait() }
            }
        }
    }

    /// Returns a connection for the next read (closed instead once the pool is closed).
    func checkin(_ connection: SQLiteConnection) {
        condition.lock()
        inUse -= 1
        let keep = !isClosed
        if keep { idle.append(connection) } else { open -= 1 }
        condition.signal()
        condition.unlock()
        if !keep { connection.close() }
    }

    /// Closes the idle connections; the ones in use are closed as they come back.
    func closeAll() {
        condition.lock()
        let closing = idle
        idle = []
        open -= closing.count
        isClosed = true
        condition.broadcast()
        condition.unlock()
        for connection in closing { connection.close() }
    }
}

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
        // value is not bound again, a read where binding it costs six times as much (issue 21).
        if writingStore == ObjectIdentifier(store) { return try body() }
        return try $writingStore.withValue(ObjectIdentifier(store)) { try body() }
    }
}
