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
        return connection
    }

    /// Ends the read transaction of `reader` and keeps its connection for the next generation.
    func endPinnedRead(_ reader: AnyObject) {
        guard let connection = reader as? SQLiteConnection else { return }
        if connection.isInTransaction { try? connection.execute("COMMIT") }
        idleReaders.put(connection)
    }

    var pinnedReader: AnyObject? {
        get { activeReader }
        set { activeReader = newValue as? SQLiteConnection }
    }

    private func openReader() throws -> SQLiteConnection {
        let connection = try SQLiteConnection(path: writer.path, mode: .readWrite(create: false))
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
    private var isClosed = false
    private let limit = 4

    func take() -> SQLiteConnection? {
        lock.lock()
        defer { lock.unlock() }
        return connections.popLast()
    }

    func put(_ connection: SQLiteConnection) {
        lock.lock()
        let keep = !isClosed && connections.count < limit
        if keep { connections.append(connection) }
        lock.unlock()
        if !keep { connection.close() }
    }

    /// Closes the idle connections; later ones are closed as they come back.
    func closeAll() {
        lock.lock()
        let closing = connections
        connections = []
        isClosed = true
        lock.unlock()
        for connection in closing { connection.close() }
    }
}
