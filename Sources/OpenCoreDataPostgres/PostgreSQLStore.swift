import Foundation
import Logging
import OpenCoreData
import OpenCoreDataSQL

/// The type of the PostgreSQL store: pass it to `addPersistentStore(type:at:)` or an
/// `NSPersistentStoreDescription` with a `postgres://` URL. Linking `OpenCoreDataPostgres`
/// registers it.
public let NSPostgreSQLStoreType = "PostgreSQL"

/// The PostgreSQL store (``NSPostgreSQLStoreType``): Apple's SQLite layout — a table per entity
/// hierarchy with `Z_PK`, `Z_ENT`, `Z_OPT`, join tables, order columns, `Z_PRIMARYKEY` and
/// `Z_METADATA` — in a PostgreSQL database that several processes and machines share.
///
/// Fetches become one statement of the SQL layer, written in PostgreSQL's dialect, run on a
/// connection of a pool (`SQLConnectionPool`), so contexts on different threads read at once.
/// Writes use one connection, the writer: a save is one transaction at `READ COMMITTED` that
/// takes the store's transaction-scoped advisory lock before it reads, updates or deletes
/// anything, so writers — in this process or any other — take turns as SQLite's do, and the
/// coordinator's optimistic-locking and uniqueness checks and the writes they guard see no other
/// writer between them (a save that only inserts and checks nothing needs no turn); every update
/// also checks `Z_OPT` in its `WHERE`. Keys come from `Z_PRIMARYKEY` with `UPDATE … RETURNING`, atomic under any number of
/// writers, reserved ahead in blocks (``permanentIDs(for:)``); a save of one new object that
/// checks nothing is one statement (``saveOnItsOwn(_:)``). Readers never wait for writers.
final class PostgreSQLStore: NSIncrementalStore, SQLStore, @unchecked Sendable {
    private(set) var location: PostgresLocation!
    /// The connection that writes (saves, keys, metadata) and reads inside a save.
    private(set) var writer: PostgresLink!
    /// Connections for reads of the latest committed state.
    let readers = SQLConnectionPool<PostgresLink>()
    private(set) var schema: SQLSchema!
    /// Binary data allowed external storage is kept in the row (`BYTEA`).
    let rowPlans = SQLRowPlans(externalStorage: false)
    var writtenMetadataRevision: Int?
    /// Guards ``writingThread`` and ``holdsWriteLock``.
    let stateLock = NSLock()
    /// The thread inside a write transaction of the writer; its reads use the writer.
    var writingThread: ObjectIdentifier?
    /// Whether the writer's open transaction holds the store's write lock yet (``lockForWriting()``).
    private var holdsWriteLock = false
    /// Whether the writer's open transaction has told the store's other coordinators already: a
    /// store that records no history sends its notification with the lock, in one statement.
    private var hasNotified = false
    /// This store's name in its saves' notifications, so its listener ignores its own saves.
    let origin = UUID().uuidString
    /// The channel every store of this schema notifies and listens on.
    private(set) var channel = ""
    /// Posts remote changes, with `NSPersistentStoreRemoteChangeNotificationPostOptionKey`.
    private var listener: PostgresChangeListener?
    /// Keys reserved in `Z_PRIMARYKEY` and not handed out yet, by root entity number: the next
    /// and the last (``permanentIDs(for:)``). Guarded by the writer's lock.
    var spareKeys: [Int64: (next: Int64, last: Int64)] = [:]

    override var type: String { NSPostgreSQLStoreType }

    var dialect: any SQLDialect { PostgreSQLDialect() }

    var readsConcurrently: Bool { true }

    package var tracksHistory: Bool { historyTrackingRequested }

    static let log = LoggerBox(Logger(label: "OpenCoreData.PostgreSQL"))

    deinit {
        listener?.stop()
        writer?.close()
        readers.closeAll()
    }

    override func willRemove(from coordinator: NSPersistentStoreCoordinator?) {
        listener?.stop()
        listener = nil
        writer?.close()
        readers.closeAll()
    }

    // MARK: Opening

    /// Connects, then creates the store's tables in one transaction when the schema has none, or
    /// reads its metadata and entity numbers and checks the model against them.
    override func loadMetadata() throws {
        guard let coordinator = persistentStoreCoordinator else {
            throw CoreDataError.make(NSPersistentStoreOpenError, "A PostgreSQL store needs a coordinator.")
        }
        let location = try PostgresLocation(url: url, options: options)
        self.location = location
        let writer = try PostgresLink.connect(location)
        self.writer = writer
        let model = coordinator.managedObjectModel
        if let schemaName = location.schema {
            // Two processes creating the schema at once: the loser's error is harmless.
            do {
                try writer.query("CREATE SCHEMA IF NOT EXISTS " + PostgreSQLDialect().quote(schemaName))
            } catch {
                guard try Self.schemaExists(schemaName, on: writer) else { throw error }
            }
        }
        func openOrCreate() throws {
            try writer.transaction {
                try Self.lockStore(on: writer)
                if try !writer.hasTable("Z_METADATA") {
                    guard !isReadOnly else {
                        throw CoreDataError.make(
                            NSPersistentStoreOpenError,
                            "There is no store to open read-only at \(location.description).",
                            [NSURLErrorKey: url as Any])
                    }
                    // The compiled model, as Apple's Z_MODELCACHE holds it but not deflated.
                    schema = try createTables(for: model, type: NSPostgreSQLStoreType, on: writer)
                } else {
                    try open(model: model, on: writer)
                }
                if try prepareHistory(oldValues: oldValuesRequested, on: writer) {
                    isReadOnly = true
                    Self.log.logger.warning("\(historyForcesReadOnlyWarning(place: location.description))")
                }
            }
        }
        do {
            try openOrCreate()
        } catch is StagedMigrationNeeded {
            // The stages open the store themselves, version by version (each step in place, in
            // its own transaction); then it opens at the model's version.
            guard let url,
                let staged = options?[NSPersistentStoreStagedMigrationManagerOptionKey] as? NSStagedMigrationManager
            else { throw CoreDataError.make(NSMigrationError, "The staged migration was lost.") }
            metadata = nil
            try staged.migrate(storeAt: url, type: NSPostgreSQLStoreType, to: model, options: options)
            try openOrCreate()
        }
        if case .text(let current)? = try writer.query("SELECT current_schema()::text").rows.first?.first {
            channel = PostgresChangeListener.channel(schema: current)
        }
        if NSPersistentStoreCoordinator.postsRemoteChanges(self) {
            listener = try PostgresChangeListener(store: self, location: location, channel: channel, origin: origin)
        }
    }

    /// Tells the store's other coordinators, when this transaction commits, that it did
    /// (``PostgresChangeListener``): PostgreSQL's `NOTIFY`, with this store's origin and, when the
    /// store tracks history, the number of the history transaction the save recorded — a cursor,
    /// never data.
    func notifyOthers(on link: PostgresLink, historyNumber: Int64?) throws {
        let payload = origin + (historyNumber.map { " \($0)" } ?? "")
        try link.query("SELECT pg_notify($1, $2)", [.text(channel), .text(payload)])
    }

    private static func schemaExists(_ name: String, on link: PostgresLink) throws -> Bool {
        try !link.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [.text(name)]).rows.isEmpty
    }

    /// Takes the store's write lock for the rest of the writer's transaction: PostgreSQL's
    /// transaction-scoped advisory lock on a key of the schema the store lives in.
    static func lockStore(on link: PostgresLink) throws { try link.query(lockSQL) }

    /// The statement that takes the store's write lock.
    static let lockSQL = "SELECT pg_advisory_xact_lock(hashtext('OpenCoreData ' || current_schema()))"

    private func open(model: NSManagedObjectModel, on link: PostgresLink) throws {
        let metadata = try readMetadata(on: link, place: location.description)
        do {
            try StoreMetadata.checkVersionHashes(metadata, model: model, options: options, url: url)
        } catch let error as NSError
            where error.code == NSPersistentStoreIncompatibleVersionHashError && !isReadOnly
            && options?[NSPersistentStoreStagedMigrationManagerOptionKey] is NSStagedMigrationManager
        {
            // Out of the opening transaction, which holds the store's lock the stages need.
            throw StagedMigrationNeeded()
        } catch let error as NSError
            where error.code == NSPersistentStoreIncompatibleVersionHashError && automaticMigrationRequested
            && !isReadOnly
        {
            try migrate(metadata, to: model, on: link, versionError: error)
        }
        schema = try openedSchema(of: model, on: link)
    }

    /// The metadata of the store at `url`, read without adding it to a coordinator.
    override class func metadataForPersistentStore(with url: URL) throws -> [String: Any] {
        let location = try PostgresLocation(url: url, options: nil)
        let link = try PostgresLink.connect(location)
        defer { link.close() }
        guard let row = try? link.query(PostgreSQLDialect.text(SQLBookkeeping.metadata)).rows.first else {
            throw CoreDataError.make(
                NSPersistentStoreOpenError, "There is no Core Data store at \(location.description).",
                [NSURLErrorKey: url])
        }
        return try SQLStoreMetadata.decode(row, place: location.description, url: url)
    }

    // MARK: Connections

    /// Runs a read on the connection it should use: the writer inside this thread's write
    /// transaction (so the save sees its own writes, after taking the write lock: what a save
    /// reads — row versions, rows of a uniqueness constraint — is what it checks), else a pooled
    /// reader. PostgreSQL stores have no query generations: every read sees the last commit.
    func withReadLink<T>(_ generation: QueryGeneration?, _ body: (PostgresLink) throws -> T) throws -> T {
        stateLock.lock()
        let writing = writingThread == ObjectIdentifier(Thread.current)
        stateLock.unlock()
        if writing {
            try lockForWriting()
            return try body(writer)
        }
        let link = try readers.checkout { try PostgresLink.connect(location) }
        defer { readers.checkin(link) }
        return try body(link)
    }

    /// Runs `body` in one transaction of the writer (or inside the one this thread already has
    /// open). The store's write lock is taken when the transaction first needs it
    /// (``lockForWriting()``): before it reads anything, and before it updates or deletes a row or
    /// writes metadata. A save that only inserts, checking nothing, takes no lock — its keys are
    /// its own and no other save's check depends on rows that did not exist.
    func withWriteTransaction(_ body: (PostgresLink) throws -> Void) throws {
        let thread = ObjectIdentifier(Thread.current)
        stateLock.lock()
        let nested = writingThread == thread
        stateLock.unlock()
        if nested { return try body(writer) }
        try writer.transaction {
            stateLock.lock()
            writingThread = thread
            holdsWriteLock = false
            hasNotified = false
            stateLock.unlock()
            defer {
                stateLock.lock()
                writingThread = nil
                holdsWriteLock = false
                hasNotified = false
                stateLock.unlock()
            }
            try body(writer)
        }
    }

    /// Takes the store's write lock for the rest of this thread's write transaction, once. A store
    /// that records no history queues its notification to the other coordinators in the same
    /// statement (``notifyOthers(on:historyNumber:)``): PostgreSQL delivers it only if the
    /// transaction commits, and a transaction that takes the lock writes.
    func lockForWriting() throws {
        stateLock.lock()
        let held = holdsWriteLock
        holdsWriteLock = true
        let notifying = !held && !tracksHistory
        if notifying { hasNotified = true }
        stateLock.unlock()
        guard !held else { return }
        if notifying {
            try writer.query(Self.lockSQL + ", pg_notify($1, $2)", [.text(channel), .text(origin)])
        } else {
            try Self.lockStore(on: writer)
        }
    }

    // MARK: Saving

    /// Writes one save in one transaction holding the store's write lock
    /// (``SQLStore/saveRows(_:oldValues:on:)``), and tells the store's other coordinators; a
    /// save of one new object is one statement (``saveOnItsOwn(_:)``).
    ///
    /// - Throws: `NSPersistentStoreSaveError` (134030) for a read-only store;
    ///   `NSManagedObjectMergeError` (133020) when a row changed since it was read; the server's
    ///   error as `NSPersistentStoreOperationError` (134070) — nothing of the save is kept.
    @discardableResult
    func save(_ transaction: StoreTransaction) throws -> Int64? {
        if try saveOnItsOwn(transaction) { return nil }
        var number: Int64?
        try withWriteTransaction { link in
            number = try saveRows(transaction, oldValues: oldValuesRequested, on: link)
            stateLock.lock()
            let notified = hasNotified
            stateLock.unlock()
            if !notified { try notifyOthers(on: link, historyNumber: number) }
        }
        return number
    }

    /// Runs `body` in one write transaction; the store's lock is taken as the transaction needs it.
    func withWriteLock(_ body: () throws -> Void) throws { try withWriteTransaction { _ in try body() } }
}

/// Thrown out of the opening transaction when the store must go through a staged migration first.
private struct StagedMigrationNeeded: Error {}
