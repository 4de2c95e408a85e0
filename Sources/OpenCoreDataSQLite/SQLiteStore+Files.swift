internal import CSQLite
import OpenCoreData
import OpenCoreDataSQL

/// The SQLite store's files: what may be opened as a store, copying a store, and destroying one.
///
/// Two rules guard the files around a store. `/dev/null` is never a file here: as on Apple
/// platforms it names a private in-memory database (Core Data Programming Guide, "Persistent
/// Store Types and Behaviors"; `NSPersistentStoreDescription`'s in-memory default). Any other
/// path that exists but is not a regular file — a device, a FIFO, a directory — is refused
/// before SQLite sees it, so SQLite never reads from it or creates `-journal`/`-wal` files beside it.
extension SQLiteStore {
    /// The URL path Apple's SQLite store reads as "a private in-memory database".
    static let privateMemoryPath = StoreFile.nullDevice

    /// Whether the database has no tables of its own (SQLite's `sqlite_` tables aside): a file
    /// SQLite created and nothing more, such as a store whose creation was interrupted before
    /// its one creation transaction committed, or a destroyed store.
    static func hasNoTables(_ connection: SQLiteConnection) throws -> Bool {
        let rows = try connection.rows(
            "SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
        return rows.first?.first == .integer(0)
    }
}

// MARK: Copying and destroying store files

extension SQLiteStore: InPlaceMigratingStore {}

extension SQLiteStore: StoreFileOperations {
    static func copyStore(at source: URL, to destination: URL) throws {
        try StoreFile.refuseNonRegularFile(at: source, code: NSPersistentStoreOperationError, "copy the store at")
        let from = try SQLiteConnection(path: source.path, mode: .readOnly)
        defer { from.close() }
        try copy(from, to: destination)
        try copyExternalData(from: source, to: destination)
    }

    func copySavedContents(to destination: URL) throws {
        try SQLiteStore.copy(connection, to: destination)
        if let url, url.path != Self.privateMemoryPath { try SQLiteStore.copyExternalData(from: url, to: destination) }
    }

    private static func copy(_ source: SQLiteConnection, to destination: URL) throws {
        try StoreFile.refuseNonRegularFile(at: destination, code: NSPersistentStoreOperationError, "write a store to")
        try? FileManager.default.createDirectory(
            at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
        let to = try SQLiteConnection(path: destination.path, mode: .readWrite(create: true))
        defer { to.close() }
        try source.backup(into: to)
    }

    /// Empties the store at `url` through SQLite, as Apple's `destroyPersistentStore` does: the
    /// file stays (so another connection or a sandbox extension to it stays valid) with no table
    /// in it, its WAL is checkpointed away, and its external-data folder is removed. Adding a
    /// store at the URL afterwards creates a new store in the same file.
    ///
    /// Nothing is touched unless the file is an SQLite database that is a Core Data store (it has
    /// `Z_METADATA`) or has no tables at all. `/dev/null` is already empty; a missing file becomes
    /// an empty one, as Apple's store leaves it (its folder must exist).
    ///
    /// - Throws: `NSPersistentStoreOperationError` (134070) naming the file when it is a device or
    ///   other non-regular file, not an SQLite database, or an SQLite database of another program.
    static func destroyStore(at url: URL) throws {
        let path = url.path
        guard path != privateMemoryPath else { return }
        switch StoreFile.kind(at: path) {
        case .missing:
            // Apple's store opens the path through SQLite, which creates it: an empty file is left
            // where none was, and code written for Apple removes that file next. Without its
            // folder nothing is created, as SQLite creates none.
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            return
        case .other:
            try StoreFile.refuseNonRegularFile(at: url, code: NSPersistentStoreOperationError, "destroy")
        case .regular(let size):
            if size > 0 { try emptyDatabase(at: url) }
        }
        let support = supportDirectory(of: url)
        if FileManager.default.fileExists(atPath: support.path) { try FileManager.default.removeItem(at: support) }
    }

    /// How long destroying a store waits for another connection's lock: the default of
    /// `NSPersistentStoreTimeoutOption`, 120 seconds.
    private static let busyTimeout: Int32 = 120_000

    private static func emptyDatabase(at url: URL) throws {
        // Look first through a read-only connection: a file that is not a store is left exactly as it was.
        let objects: [[SQLiteValue]]
        do {
            let reader = try SQLiteConnection(path: url.path, mode: .readOnly)
            defer { reader.close() }
            // Another connection may hold the file for a moment (the last connection of a store
            // just removed checkpoints its WAL as it closes): wait for it as the writer below does.
            reader.setBusyTimeout(milliseconds: busyTimeout)
            objects = try reader.rows("SELECT type, name FROM sqlite_master")
        } catch let error as NSError {
            let why =
                switch SQLiteConnection.primaryCode(of: error) {
                case SQLITE_NOTADB?: "it is not an SQLite store"
                case SQLITE_BUSY?, SQLITE_LOCKED?: "another connection kept it locked (database is locked)"
                default: "it could not be read (\(error.localizedDescription))"
                }
            throw CoreDataError.make(
                NSPersistentStoreOperationError, "Cannot destroy \(url.path): \(why), and it was left untouched.",
                [NSURLErrorKey: url, NSUnderlyingErrorKey: error])
        }
        let tables: [String] = objects.compactMap { row in
            guard row.count == 2, case .text("table") = row[0], case .text(let name) = row[1] else { return nil }
            return name.hasPrefix("sqlite_") ? nil : name
        }
        guard tables.isEmpty || tables.contains("Z_METADATA") else {
            throw CoreDataError.make(
                NSPersistentStoreOperationError,
                "Cannot destroy \(url.path): it is an SQLite database but not a Core Data store (no Z_METADATA), "
                    + "and it was left untouched.",
                [NSURLErrorKey: url])
        }
        let connection = try SQLiteConnection(path: url.path, mode: .readWrite(create: false))
        defer { connection.close() }
        connection.setBusyTimeout(milliseconds: busyTimeout)
        try connection.execute("BEGIN IMMEDIATE")
        do {
            // Dropping a table drops its indexes and triggers; views go on their own. Names come
            // from the file, so they are always quoted as identifiers (a table may be named like a keyword), never spliced in as SQL.
            for row in try connection.rows("SELECT type, name FROM sqlite_master WHERE type IN ('view', 'table')") {
                guard case .text(let type) = row[0], case .text(let name) = row[1], !name.hasPrefix("sqlite_")
                else { continue }
                try connection.execute(
                    "DROP \(type == "view" ? "VIEW" : "TABLE") IF EXISTS \"\(name.replacingOccurrences(of: "\"", with: "\"\""))\""
                )
            }
            if try !connection.rows("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'").isEmpty {
                try connection.execute("DELETE FROM sqlite_sequence")
            }
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
        try connection.execute("VACUUM")
        _ = try? connection.rows("PRAGMA wal_checkpoint(TRUNCATE)")
    }
}
