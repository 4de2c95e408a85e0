import OpenCoreData
import OpenCoreDataSQL

/// The SQLite store (`NSSQLiteStoreType`) in Apple's on-disk layout (STORE-FORMAT.md): a store written
/// here opens in Apple's Core Data, and a store written there opens here.
///
/// Writes — saves, permanent IDs — arrive under the coordinator's lock and use one connection,
/// the writer. Reads of a WAL store (or a read-only one) run on any thread at once, each on a
/// connection checked out of a pool for its length (``withReadConnection(_:_:)``), so contexts on
/// different queues fetch at the same time while another saves. Fetches become one SQL statement
/// with bound parameters (``SQLQuery``); rows become shared snapshots in the coordinator's row
/// cache; a save is one `BEGIN IMMEDIATE` transaction.
///
/// Related documentation: Core Data Programming Guide, "Persistent Store Types and Behaviors".
final class SQLiteStore: NSIncrementalStore, SQLStore, @unchecked Sendable {
    /// The connection that writes, and reads when the store cannot read concurrently.
    var writer: SQLiteConnection!
    /// The connection the running call uses: the one bound to this thread for a read
    /// (``withReadConnection(_:_:)``), else the writer.
    var connection: SQLiteConnection! { SQLiteReads.bound(to: self) ?? writer }
    /// Idle connections for query generations (ThreadSafe: a generation may end on any thread).
    let idleReaders = IdleReaders()
    /// Connections for reads of the latest state.
    let readerPool = SQLConnectionPool<SQLiteConnection>()
    /// Counts the statements of every connection of the store.
    let statementCounter = StatementCounter()
    /// Called on the reading thread when a read has checked out its pooled connection; `nil`
    /// except in tests, which use it to hold reads inside the store until they meet.
    var pooledReadStarted: (@Sendable () -> Void)?
    /// Whether reads run concurrently on pooled connections: a WAL file store, or a read-only
    /// one. Otherwise (a private in-memory database, a rollback journal chosen by pragma) reads
    /// use the writer, serialized by the coordinator.
    private(set) var readsConcurrently = false
    private(set) var schema: SQLSchema!
    /// The metadata revision last written to (or read from) `Z_METADATA`, to write again only
    /// when the metadata was set since.
    var writtenMetadataRevision: Int?
    /// Guards the caches and hand-offs below, which reads on several threads share.
    let stateLock = NSLock()
    var readers: [ObjectIdentifier: RowReader] = [:]
    /// Binary data allowed external storage is written as Apple's store writes it: a marker byte,
    /// and large values in files beside the store.
    let rowPlans = SQLRowPlans(externalStorage: true)
    /// Objects a `fetchBatchSize` fetch returned whose rows wait to be read with their batch:
    /// each ID's entry is its batch's index in ``batches``. An index, not the batch: a reference
    /// in each entry was an atomic increment of one count per object filed, each waiting for the
    /// table's stores before it to reach memory.
    var pendingBatches: [IDValueKey: Int] = [:]
    /// The batches ``pendingBatches`` indexes; emptied with it.
    var batches: [PendingBatch] = []
    /// How many of `pendingBatches`' entries name a batch not read yet (the others are left
    /// until none is, then emptied at once).
    var waitingInBatches = 0
    /// The most object IDs waiting in batches. Batches are only a way to read rows together;
    /// past this many (faults of batched fetches or to-manys nobody touched), the waiting ones
    /// are forgotten and their faults read their own rows, so the store's memory stays bounded.
    var maximumWaitingInBatches = 500_000
    /// To-many members read by prefetching, handed out once by `newValue(forRelationship:…)`.
    var prefetchedToMany: [RelationshipKey: [NSManagedObjectID]] = [:]
    /// Watches the file for other connections' commits, with
    /// `NSPersistentStoreRemoteChangeNotificationPostOptionKey`.
    var remoteChangeWatcher: RemoteChangeWatcher?
    /// `NSPersistentHistoryTrackingKey` and the old-values option as the store was added with
    /// them, read from the options when the store loads, not asked of the options (a dictionary
    /// lookup and casts) twice in every save.
    private(set) var historyOptions = (tracks: false, oldValues: false)

    override var type: String { NSSQLiteStoreType }

    /// Apple's model cache: the archive, raw-deflated (STORE-FORMAT.md).
    static func modelCache(for model: NSManagedObjectModel) throws -> Data {
        try ModelCache.deflate(CompiledModelEncoder.archive(model))
    }

    static func model(fromCache bytes: [UInt8]) throws -> NSManagedObjectModel { try ModelCache.model(from: bytes) }

    var dialect: any SQLDialect { SQLiteDialect() }

    deinit {
        remoteChangeWatcher?.stop()
        writer?.close()
        idleReaders.closeAll()
        readerPool.closeAll()
    }

    // MARK: Opening

    override func loadMetadata() throws {
        historyOptions = (historyTrackingRequested, oldValuesRequested)
        guard let url, url.isFileURL, let coordinator = persistentStoreCoordinator else {
            throw CoreDataError.make(
                NSPersistentStoreOpenError, "An SQLite store needs a file URL.", [NSURLErrorKey: url as Any])
        }
        let path = url.path
        if path == Self.privateMemoryPath {
            // Apple's SQLite store reads /dev/null as a private in-memory database, empty at each
            // open; it keeps history as a file's store does.
            try create(path: SQLiteConnection.memoryPath, model: coordinator.managedObjectModel)
        } else {
            switch StoreFile.kind(at: path) {
            case .other:
                try StoreFile.refuseNonRegularFile(at: url, code: NSPersistentStoreOpenError, "open a store at")
            case .regular(let size) where size > 0:
                try open(path: path, model: coordinator.managedObjectModel)
            default:
                try createUnlessReadOnly(path: path, model: coordinator.managedObjectModel)
            }
        }
        try prepareHistory()
        if NSPersistentStoreCoordinator.postsRemoteChanges(self), path != Self.privateMemoryPath {
            remoteChangeWatcher = try RemoteChangeWatcher(store: self, path: path)
        }
    }

    private func createUnlessReadOnly(path: String, model: NSManagedObjectModel) throws {
        guard !isReadOnly else {
            throw CoreDataError.make(
                NSPersistentStoreOpenError, "There is no store to open read-only at \(path).",
                [NSURLErrorKey: url as Any])
        }
        try create(path: path, model: model)
    }

    override func willRemove(from coordinator: NSPersistentStoreCoordinator?) {
        remoteChangeWatcher?.stop()
        remoteChangeWatcher = nil
        writer?.close()
        idleReaders.closeAll()
        readerPool.closeAll()
    }

    func configure(_ connection: SQLiteConnection) throws {
        connection.counter = statementCounter
        let timeout = (options?[NSPersistentStoreTimeoutOption] as? Double) ?? 120
        connection.setBusyTimeout(milliseconds: Int32(min(timeout * 1000, Double(Int32.max))))
        try SQLiteFunctions.register(on: connection)
        guard let pragmas = options?[NSSQLitePragmasOption] as? [String: Any] else { return }
        for (name, value) in pragmas.sorted(by: { $0.key < $1.key }) {
            let text = String(describing: DynamicValue.unwrap(value) ?? "")
            // Pragma values cannot be bound: accept plain words and numbers only.
            guard SQLiteStore.isPlainWord(name), SQLiteStore.isPlainWord(text) else {
                throw CoreDataError.make(
                    NSPersistentStoreOpenError, "Unsupported SQLite pragma \(name) = \(text).",
                    [NSURLErrorKey: url as Any])
            }
            try connection.execute("PRAGMA \(name) = \(text)")
        }
    }

    static func isPlainWord(_ text: String) -> Bool {
        !text.isEmpty
            && text.utf8.allSatisfy {
                ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 95 || $0 == 45
            }
    }

    private func create(path: String, model: NSManagedObjectModel) throws {
        if path != SQLiteConnection.memoryPath {
            // As Apple's, a new store's folder is created when missing.
            try? FileManager.default.createDirectory(
                at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
        }
        let connection = try SQLiteConnection(path: path, mode: .readWrite(create: true))
        writer = connection
        // Apple records `_NSAutoVacuumLevel` 2: incremental auto-vacuum, set before any table exists.
        try connection.execute("PRAGMA auto_vacuum = 2")
        try connection.execute("PRAGMA journal_mode = WAL")
        try configure(connection)
        try connection.execute("BEGIN IMMEDIATE")
        do {
            schema = try createTables(
                for: model, type: NSSQLiteStoreType, extraMetadata: ["_NSAutoVacuumLevel": "2"], on: connection)
            try connection.commit(rewrite: Self.metadataRewrite)
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
        try startReaders(connection)
    }

    private func open(path: String, model: NSManagedObjectModel) throws {
        let connection = try SQLiteConnection(path: path, mode: isReadOnly ? .readOnly : .readWrite(create: false))
        writer = connection
        try configure(connection)
        let row: [SQLiteValue]
        do {
            if try Self.hasNoTables(connection) {
                // An SQLite file with no tables at all is a store whose creation never committed
                // (a kill between SQLite creating the file and the creation transaction), or a
                // destroyed one: it becomes a new store, as a missing file would.
                connection.close()
                writer = nil
                return try createUnlessReadOnly(path: path, model: model)
            }
            guard let first = try connection.rows(SQLBookkeeping.metadata).first
            else { throw CoreDataError.make(NSPersistentStoreOpenError, "Z_METADATA has no row.") }
            row = first
        } catch let error as NSError {
            throw CoreDataError.make(
                NSPersistentStoreOpenError,
                "The file at \(path) is not a Core Data SQLite store (\(error.localizedDescription)).",
                [NSURLErrorKey: url as Any, NSUnderlyingErrorKey: error])
        }
        var metadata = try SQLStoreMetadata.decode(row, place: path, url: URL(fileURLWithPath: path))
        if let existing = self.metadata { metadata.merge(existing as [String: Any]) { old, _ in old } }
        self.metadata = metadata
        writtenMetadataRevision = metadataRevision
        do {
            try StoreMetadata.checkVersionHashes(metadata, model: model, options: options, url: url)
        } catch let error as NSError
            where error.code == NSPersistentStoreIncompatibleVersionHashError && (migrates || staged != nil)
            && !isReadOnly
        {
            switch try migrateOnOpen(connection, metadata: metadata, path: path, to: model, versionError: error) {
            case .inPlace(let migrated): metadata = migrated
            case .replaced: return try open(path: path, model: model)
            }
        }
        schema = try openedSchema(of: model, on: connection)
        if !isReadOnly { try maintainOnOpen(metadata) }
        try startReaders(connection)
    }

    /// Decides whether reads run concurrently and, when they do, opens the pool's first reader.
    private func startReaders(_ connection: SQLiteConnection) throws {
        readsConcurrently = try Self.allowsConcurrentReads(connection)
        if readsConcurrently { try readerPool.prime { try openReader() } }
    }

    /// Whether other connections may read while the writer writes: in WAL mode readers see the
    /// last commit and never wait; a read-only store has no writer.
    private static func allowsConcurrentReads(_ connection: SQLiteConnection) throws -> Bool {
        guard connection.path != SQLiteConnection.memoryPath else { return false }
        if connection.isReadOnly { return true }
        return try connection.rows("PRAGMA journal_mode").first?.first == .text("wal")
    }

    /// The metadata of the store at `url`, read without adding the store to a coordinator (and
    /// without writing anything beside the file).
    override class func metadataForPersistentStore(with url: URL) throws -> [String: Any] {
        try StoreFile.refuseNonRegularFile(at: url, code: NSPersistentStoreOpenError, "read store metadata at")
        let connection = try SQLiteConnection(path: url.path, mode: .readOnly)
        defer { connection.close() }
        let rows: [[SQLiteValue]]
        do {
            rows = try connection.rows(SQLBookkeeping.metadata)
        } catch let error as NSError {
            throw CoreDataError.make(
                NSPersistentStoreOpenError, "The file at \(url.path) is not a Core Data SQLite store.",
                [NSURLErrorKey: url, NSUnderlyingErrorKey: error])
        }
        guard let row = rows.first else {
            throw CoreDataError.make(NSPersistentStoreOpenError, "The store at \(url.path) has no metadata.")
        }
        return try SQLStoreMetadata.decode(row, place: url.path, url: URL(fileURLWithPath: url.path))
    }

    /// Writes `metadata` into the store at `url` in one transaction, keeping the store's type
    /// and UUID when `metadata` leaves them out.
    override class func setMetadata(_ metadata: [String: Any]?, forPersistentStoreWith url: URL) throws {
        try StoreFile.refuseNonRegularFile(at: url, code: NSPersistentStoreOperationError, "write store metadata at")
        var merged = metadata ?? [:]
        let existing = try metadataForPersistentStore(with: url)
        merged[NSStoreTypeKey] = merged[NSStoreTypeKey] ?? existing[NSStoreTypeKey]
        merged[NSStoreUUIDKey] = merged[NSStoreUUIDKey] ?? existing[NSStoreUUIDKey]
        let row = try SQLStoreMetadata.row(merged)
        let connection = try SQLiteConnection(path: url.path, mode: .readWrite(create: false))
        defer { connection.close() }
        connection.setBusyTimeout(milliseconds: 120_000)
        try connection.execute("BEGIN IMMEDIATE")
        do {
            try connection.run(SQLBookkeeping.updateMetadata, row)
            try connection.commit(rewrite: Self.metadataRewrite)
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    // MARK: Requests

    /// A to-one's destination ID or `NSNull`; a to-many's member IDs, in order (prefetched ones
    /// once, else read).
    func destination(
        of relationship: NSRelationshipDescription, for objectID: NSManagedObjectID, generation: QueryGeneration?,
        cachedRow: @escaping (NSManagedObjectID) -> Snapshot?
    ) throws -> Any {
        try withReadConnection(generation) {
            try destinationOnConnection(of: relationship, for: objectID, cachedRow: cachedRow)
        }
    }

    func destinationOnConnection(
        of relationship: NSRelationshipDescription, for objectID: NSManagedObjectID,
        cachedRow: (NSManagedObjectID) -> Snapshot?
    ) throws -> Any {
        let mapping = schema[objectID.entity]
        guard let slot = objectID.entity.layout.slotByName[relationship.name], let pk = objectID.sqlKey else {
            return NSNull()
        }
        stateLock.lock()
        let prefetched = prefetchedToMany.removeValue(forKey: RelationshipKey(object: objectID, slot: slot))
        stateLock.unlock()
        if let prefetched { return prefetched }
        switch mapping.storage[slot] {
        case .toOne:
            return try readOnConnection(objectID, cachedRow: { _ in nil }).snapshot.values[slot] ?? NSNull()
        case .toManyByInverse, .join:
            guard let destinationEntity = relationship.destinationEntity,
                let sql = reader(for: mapping).memberSQL[slot]
            else { return NSNull() }
            let statement = try connection.statement(sql.keys)
            try statement.bind(.integer(pk), at: 1)
            defer { statement.reset() }
            return try objectIDs(statement, fallback: schema[destinationEntity])
        default:
            return NSNull()
        }
    }

    /// A to-many's members with their rows, read by the owner's key in one statement
    /// (``SQLSchema/memberRowsSelect(_:destination:owners:)``, which the relationship's index
    /// answers, in the relationship's order): the rows of the first ``membersReadWithRows``, the
    /// keys of the rest, which wait in batches of that size (``addBatches(of:keptAlive:size:entity:prefetching:)``).
    /// When the first member's row is cached already (a walk done before, objects another
    /// context holds) the rest are taken to be cached too and only their keys are read from the
    /// same statement. Prefetched members are answered as they were read. `nil` for a to-one.
    func members(
        of relationship: NSRelationshipDescription, for objectID: NSManagedObjectID, requester: any StoreRequester,
        generation: QueryGeneration?, cachedRow: @escaping (NSManagedObjectID) -> Snapshot?
    ) throws -> StoreMembers? {
        guard let (mapping, slot, pk) = toManySlot(relationship, of: objectID) else { return nil }
        stateLock.lock()
        let prefetched = prefetchedToMany.removeValue(forKey: RelationshipKey(object: objectID, slot: slot))
        stateLock.unlock()
        if let prefetched { return StoreMembers(ids: prefetched) }
        switch mapping.storage[slot] {
        case .toManyByInverse, .join:
            guard let destinationEntity = relationship.destinationEntity,
                let sql = reader(for: mapping).memberSQL[slot]
            else { return StoreMembers(ids: []) }
            let destination = schema[destinationEntity]
            return try withReadConnection(generation) {
                let statement = try connection.statement(sql.rows)
                try statement.bind(.integer(pk), at: 1)
                defer { statement.reset() }
                var members = StoreMembers(ids: [])
                guard try statement.step() else { return members }
                let decoder = RowDecoder(store: self, fallback: destination)
                let (first, row) = try decoder.read(statement)
                members.ids.append(first)
                let readsRows = cachedRow(first) == nil
                if readsRows { members.rows.append(row) }
                // Past the first rows, keys only: the rest wait in batches, each read when one of
                // its members fires, so a to-many of any size is not held in memory at once.
                var rest: [IDValue] = []
                var layouts: [Int64: EntityLayout] = [:]
                let (layout, space) = (destination.entity.layout, objectIDSpace)
                while try statement.step() {
                    if readsRows, rest.isEmpty, members.rows.count < Self.membersReadWithRows {
                        let (id, row) = try decoder.read(statement)
                        members.ids.append(id)
                        members.rows.append(row)
                        continue
                    }
                    let value = objectValue(
                        statement, fallback: destination, fallbackLayout: layout, readsEntity: true, space: space,
                        layouts: &layouts)
                    if readsRows { rest.append(value) }
                    members.ids.append(NSManagedObjectID(value: value))
                }
                if !rest.isEmpty {
                    addBatches(
                        of: rest, keptAlive: space, size: Self.membersReadWithRows, entity: destination.entity,
                        prefetching: [])
                }
                return members
            }
        default:
            return StoreMembers(ids: [])
        }
    }

    /// How many of a to-many's members are read with their rows when it fires; the rest wait in
    /// batches of this many.
    static let membersReadWithRows = 1000

    /// Writes the metadata row back unchanged: what a commit that failed with an I/O error is
    /// overwritten with (``SQLiteConnection/commit(rewrite:)``).
    static let metadataRewrite = SQLiteDialect.text(SQLBookkeeping.rewriteMetadata)

    /// Runs `body` in one write transaction (`BEGIN IMMEDIATE`) on the writer, or inside the one
    /// already open; reads `body` makes on this thread use the writer, seeing the transaction.
    func transaction(_ body: () throws -> Void) throws {
        try SQLiteReads.writing(self) {
            if writer.isInTransaction { return try body() }
            // A cached prepared statement, not `execute(_:)`: `sqlite3_exec` would compile `BEGIN`
            // and `COMMIT` again on every save.
            try writer.run("BEGIN IMMEDIATE")
            // Holding the write lock: a change the watcher has not seen is another connection's.
            let watcher = remoteChangeWatcher
            watcher?.beginOwnWrite()
            defer { watcher?.endOwnWrite() }
            do {
                try body()
                try writer.commit(rewrite: Self.metadataRewrite)
            } catch {
                try? writer.execute("ROLLBACK")
                throw error
            }
        }
    }

    /// ``SQLStore``'s read: ``withReadConnection(_:_:)`` on the connection it chose.
    func withReadLink<T>(_ generation: QueryGeneration?, _ body: (SQLiteConnection) throws -> T) throws -> T {
        try withReadConnection(generation) { try body(connection) }
    }

    /// ``SQLStore``'s write transaction: ``transaction(_:)`` on the writer.
    func withWriteTransaction(_ body: (SQLiteConnection) throws -> Void) throws {
        try transaction { try body(writer) }
    }

    /// Nothing: `BEGIN IMMEDIATE` took the write lock when the transaction began.
    func lockForWriting() {}

    /// Runs a read on the connection it should use: the writer inside this thread's write
    /// transaction, the query generation's pinned reader, a pooled reader when reads run
    /// concurrently, else the writer (the coordinator then serializes reads with writes).
    func withReadConnection<T>(_ generation: QueryGeneration?, _ body: () throws -> T) throws -> T {
        if SQLiteReads.bound(to: self) != nil || SQLiteReads.isWriting(self) { return try body() }
        if let pinned = generation?.reader(for: self) as? SQLiteConnection {
            pinned.useLock.lock()
            defer { pinned.useLock.unlock() }
            return try SQLiteReads.bind(pinned, to: self, body)
        }
        guard readsConcurrently else { return try body() }
        let reader = try readerPool.checkout { try openReader() }
        defer { readerPool.checkin(reader) }
        pooledReadStarted?()
        return try SQLiteReads.bind(reader, to: self, body)
    }

    func read(
        _ objectID: NSManagedObjectID, generation: QueryGeneration?,
        cachedRow: @escaping (NSManagedObjectID) -> Snapshot?
    ) throws -> StoreRead {
        try withReadConnection(generation) { try readOnConnection(objectID, cachedRow: cachedRow) }
    }

    private func readOnConnection(
        _ objectID: NSManagedObjectID, cachedRow: @escaping (NSManagedObjectID) -> Snapshot?
    ) throws -> StoreRead {
        // The batch's rows are kept even when the object's own row was not among them: the other
        // objects of the batch fire from them, not with a statement each.
        let batch = try readBatch(of: objectID, cachedRow: cachedRow)
        if let batch, let snapshot = batch.snapshot {
            return StoreRead(
                snapshot: snapshot, rowValues: batch.values, rowSnapshots: batch.snapshots,
                valuesKeptAlive: batch.space, rows: batch.rows)
        }
        let mapping = schema[objectID.entity]
        guard let pk = objectID.sqlKey else {
            throw CoreDataError.make(
                NSManagedObjectReferentialIntegrityError, "The SQLite store has no object \(objectID).",
                [NSAffectedObjectsErrorKey: [objectID]])
        }
        let statement = try connection.statement(reader(for: mapping).keySQL)
        try statement.bind(.integer(pk), at: 1)
        guard try statement.step() else {
            throw CoreDataError.make(
                NSManagedObjectReferentialIntegrityError, "The SQLite store has no object \(objectID).",
                [NSAffectedObjectsErrorKey: [objectID]])
        }
        let (_, snapshot) = try readRow(statement, fallback: mapping)
        statement.reset()
        return StoreRead(
            snapshot: snapshot, rowValues: batch?.values ?? [], rowSnapshots: batch?.snapshots ?? [],
            valuesKeptAlive: batch?.space, rows: batch?.rows ?? [:])
    }
}
