import Foundation
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
/// connection of a pool (``PostgresLinkPool``), so contexts on different threads read at once.
/// Writes use one connection, the writer: a save is one transaction at `READ COMMITTED` that
/// takes the store's transaction-scoped advisory lock before it reads, updates or deletes
/// anything, so writers — in this process or any other — take turns as SQLite's do, and the
/// coordinator's optimistic-locking and uniqueness checks and the writes they guard see no other
/// writer between them (a save that only inserts and checks nothing needs no turn); every update
/// also checks `Z_OPT` in its `WHERE`. Keys come from `Z_PRIMARYKEY` with `UPDATE … RETURNING`, atomic under any number of
/// writers. Readers never wait for writers.
final class PostgreSQLStore: NSIncrementalStore, RowStore, @unchecked Sendable {
    private(set) var location: PostgresLocation!
    /// The connection that writes (saves, keys, metadata) and reads inside a save.
    private(set) var writer: PostgresLink!
    /// Connections for reads of the latest committed state.
    let readers = PostgresLinkPool(capacity: 8)
    private(set) var schema: SQLSchema!
    /// The metadata revision last written to (or read from) `Z_METADATA`.
    var writtenMetadataRevision: Int?
    /// Guards the caches below and ``writingThread``.
    let stateLock = NSLock()
    /// The thread inside a write transaction of the writer; its reads use the writer.
    var writingThread: ObjectIdentifier?
    /// Whether the writer's open transaction holds the store's write lock yet (``lockForWriting()``).
    private var holdsWriteLock = false
    private var columnIndexes: [ObjectIdentifier: [String: Int]] = [:]
    private var rowWriters: [ObjectIdentifier: PostgresRowWriter] = [:]
    /// This store's name in its saves' notifications, so its listener ignores its own saves.
    let origin = UUID().uuidString
    /// The channel every store of this schema notifies and listens on.
    private(set) var channel = ""
    /// Posts remote changes, with `NSPersistentStoreRemoteChangeNotificationPostOptionKey`.
    private var listener: PostgresChangeListener?

    override var type: String { NSPostgreSQLStoreType }

    var readsConcurrently: Bool { true }

    package var metadataAwaitsSave: Bool { metadata != nil && writtenMetadataRevision != metadataRevision }

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
        readers.connect = { try PostgresLink.connect(location) }
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
                    try create(model: model, on: writer)
                } else {
                    try open(model: model, on: writer)
                }
                try prepareHistory(on: writer)
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
            try staged.migrate(storeAt: url, type: NSPostgreSQLStoreType, to: model)
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
    static func lockStore(on link: PostgresLink) throws {
        try link.query("SELECT pg_advisory_xact_lock(hashtext('OpenCoreData ' || current_schema()))")
    }

    private func create(model: NSManagedObjectModel, on link: PostgresLink) throws {
        let schema = SQLSchema(model: model)
        for statement in schema.createStatements() + SQLBookkeeping.createTables {
            try link.query(PostgreSQLDialect.text(statement))
        }
        for mapping in schema.ordered {
            let parent = mapping.entity.superentity.map { schema[$0].number } ?? 0
            try link.query(
                PostgreSQLDialect.text(SQLBookkeeping.insertEntity),
                [.integer(mapping.number), .text(mapping.entity.name ?? ""), .integer(parent)])
        }
        var metadata = self.metadata ?? [:]
        metadata[NSStoreTypeKey] = NSPostgreSQLStoreType
        metadata[NSStoreUUIDKey] = UUID().uuidString
        metadata.merge(StoreMetadata.keys(for: model)) { _, new in new }
        self.metadata = metadata
        try writeMetadata(insert: true, on: link)
        // The compiled model, as Apple's Z_MODELCACHE holds it but not deflated.
        try link.query(
            PostgreSQLDialect.text(SQLBookkeeping.insertModelCache),
            [.blob([UInt8](CompiledModelEncoder.archive(model)))])
        self.schema = schema
    }

    private func open(model: NSManagedObjectModel, on link: PostgresLink) throws {
        guard let row = try link.query(PostgreSQLDialect.text(SQLBookkeeping.metadata)).rows.first else {
            throw CoreDataError.make(
                NSPersistentStoreOpenError, "The store at \(location.description) has no metadata row.",
                [NSURLErrorKey: url as Any])
        }
        var metadata = try Self.decodeMetadata(row, location: location)
        if let existing = self.metadata { metadata.merge(existing as [String: Any]) { old, _ in old } }
        self.metadata = metadata
        writtenMetadataRevision = metadataRevision
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
        let schema = SQLSchema(
            model: model, numbers: try SQLMigrationPlan.entityNumbers(on: link, PostgreSQLDialect()),
            joinTables: try SQLMigrationPlan.joinTables(on: link, PostgreSQLDialect()))
        try verify(schema, on: link)
        self.schema = schema
    }

    /// Checks that every table and column the model maps to exists, so a store whose layout
    /// differs is an error when it opens, not at the first fetch.
    private func verify(_ schema: SQLSchema, on link: PostgresLink) throws {
        var existing: [String: Set<String>] = [:]
        for row in try link.query(
            "SELECT table_name::text, column_name::text FROM information_schema.columns WHERE table_schema = current_schema()"
        ).rows {
            guard case .text(let table) = row[0], case .text(let column) = row[1] else { continue }
            existing[table, default: []].insert(column)
        }
        for table in schema.tables {
            let columns = existing[table.name] ?? []
            let missing = (["Z_PK", "Z_ENT", "Z_OPT"] + table.columns.map(\.name)).filter { !columns.contains($0) }
            guard missing.isEmpty else {
                throw CoreDataError.make(
                    NSPersistentStoreIncompatibleSchemaError,
                    "The store's table \(table.name) lacks columns \(missing.joined(separator: ", ")) of the model.",
                    [NSURLErrorKey: url as Any])
            }
        }
    }

    /// The metadata dictionary of a `Z_METADATA` row (`Z_UUID`, `Z_PLIST`).
    static func decodeMetadata(_ row: [SQLValue], location: PostgresLocation) throws -> [String: Any] {
        guard row.count == 2, case .blob(let bytes) = row[1],
            let plist = try? PropertyListReader.propertyList(from: Data(bytes)),
            var metadata = plist as? [String: Any]
        else {
            throw CoreDataError.make(
                NSPersistentStoreOpenError, "The store at \(location.description) has unreadable metadata.")
        }
        if case .text(let uuid) = row[0] { metadata[NSStoreUUIDKey] = uuid }
        return metadata
    }

    func writeMetadata(insert: Bool, on link: PostgresLink) throws {
        var plist = metadata ?? [:]
        let uuid = plist.removeValue(forKey: NSStoreUUIDKey) as? String ?? ""
        let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        try link.query(
            PostgreSQLDialect.text(insert ? SQLBookkeeping.insertMetadata : SQLBookkeeping.updateMetadata),
            [.text(uuid), .blob([UInt8](data))])
        writtenMetadataRevision = metadataRevision
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
        return try decodeMetadata(row, location: location)
    }

    // MARK: Connections

    /// Runs a read on the connection it should use: the writer inside this thread's write
    /// transaction (so the save sees its own writes, after taking the write lock: what a save
    /// reads — row versions, rows of a uniqueness constraint — is what it checks), else a pooled
    /// reader.
    func withReadLink<T>(_ body: (PostgresLink) throws -> T) throws -> T {
        stateLock.lock()
        let writing = writingThread == ObjectIdentifier(Thread.current)
        stateLock.unlock()
        if writing {
            try lockForWriting()
            return try body(writer)
        }
        let link = try readers.checkout()
        defer { readers.checkin(link) }
        return try body(link)
    }

    /// Runs `body` in one transaction of the writer (or inside the one this thread already has
    /// open). The store's write lock is taken when the transaction first needs it
    /// (``lockForWriting()``): before it reads anything, and before it updates or deletes a row or
    /// writes metadata. A save that only inserts, checking nothing, takes no lock — its keys are
    /// its own and no other save's check depends on rows that did not exist.
    func transaction(_ body: () throws -> Void) throws {
        let thread = ObjectIdentifier(Thread.current)
        stateLock.lock()
        let nested = writingThread == thread
        stateLock.unlock()
        if nested { return try body() }
        try writer.transaction {
            stateLock.lock()
            writingThread = thread
            holdsWriteLock = false
            stateLock.unlock()
            defer {
                stateLock.lock()
                writingThread = nil
                holdsWriteLock = false
                stateLock.unlock()
            }
            try body()
        }
    }

    /// Takes the store's write lock for the rest of this thread's write transaction, once.
    func lockForWriting() throws {
        stateLock.lock()
        let held = holdsWriteLock
        holdsWriteLock = true
        stateLock.unlock()
        if !held { try Self.lockStore(on: writer) }
    }

    // MARK: Rows → snapshots

    /// The position of each column of `mapping`'s table in a row read by ``SQLSchema/rowColumns``.
    func columnIndex(_ mapping: SQLSchema.Entity) -> [String: Int] {
        stateLock.lock()
        defer { stateLock.unlock() }
        if let index = columnIndexes[ObjectIdentifier(mapping.table)] { return index }
        var index: [String: Int] = [:]
        for (offset, column) in mapping.table.columns.enumerated() { index[column.name] = offset + 3 }
        columnIndexes[ObjectIdentifier(mapping.table)] = index
        return index
    }

    /// The insert and update statements of `mapping`'s entity, made once.
    func rowWriter(for mapping: SQLSchema.Entity) -> PostgresRowWriter {
        stateLock.lock()
        defer { stateLock.unlock() }
        if let writer = rowWriters[ObjectIdentifier(mapping)] { return writer }
        let writer = PostgresRowWriter(mapping: mapping, schema: schema)
        rowWriters[ObjectIdentifier(mapping)] = writer
        return writer
    }

    /// The ID and snapshot of a row whose first columns are `Z_PK, Z_ENT, Z_OPT`, followed by the
    /// table's columns.
    ///
    /// - Throws: `NSCoreDataError` (134060) for a row whose `Z_ENT` leaves it an abstract entity.
    func readRow(_ row: [SQLValue], fallback: SQLSchema.Entity) throws -> (NSManagedObjectID, Snapshot) {
        guard row.count >= 3, case .integer(let pk) = row[0] else {
            throw CoreDataError.make(NSCoreDataError, "A row of \(fallback.table.name) has no key.")
        }
        var mapping = fallback
        if case .integer(let number) = row[1], number != fallback.number, let exact = schema.entitiesByNumber[number],
            exact.entity.isKindOf(entity: fallback.entity)
        {
            mapping = exact
        }
        guard !mapping.entity.isAbstract else {
            throw CoreDataError.make(
                NSCoreDataError,
                "The row \(pk) of \(mapping.table.name) leaves it the abstract entity \(mapping.entity.name ?? "") (a damaged store)."
            )
        }
        let index = columnIndex(mapping)
        let layout = mapping.entity.layout
        var values = SlotValues(shape: layout.slotShape)
        for (slot, storage) in mapping.storage.enumerated() {
            switch storage {
            case .attribute(let column, let type):
                guard let position = index[column], position < row.count else { continue }
                values[slot] = SQLValues.attributeValue(
                    row[position], type: type, attribute: layout.properties[slot] as? NSAttributeDescription)
            case .toOne(let column, let entityColumn):
                guard let position = index[column], position < row.count, case .integer(let key) = row[position],
                    let destination = layout.relationship(at: slot).destinationEntity
                else { continue }
                var entity = destination
                if let entityColumn, let entityPosition = index[entityColumn], entityPosition < row.count,
                    case .integer(let number) = row[entityPosition], let exact = schema.entitiesByNumber[number],
                    exact.entity.isKindOf(entity: destination)
                {
                    entity = exact.entity
                }
                values[slot] = objectID(entity, key)
            case .toManyByInverse, .join:
                values[slot] = UnresolvedRelationship.marker
            case .none:
                if layout.kinds[slot] == .fetched { values[slot] = UnresolvedRelationship.marker }
            }
        }
        var version: UInt64 = 0
        if case .integer(let stored) = row[2] { version = UInt64(max(0, stored)) }
        return (objectID(mapping.entity, pk), Snapshot(values: values, version: version))
    }

    func objectID(_ entity: NSEntityDescription, _ pk: Int64) -> NSManagedObjectID {
        NSManagedObjectID(entity: entity, key: .integer(pk), space: objectIDSpace)
    }

    static func primaryKey(_ id: NSManagedObjectID) -> Int64? {
        if case .integer(let pk) = id.key { return pk }
        return nil
    }

    // MARK: The incremental-store contract

    override func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext?) throws -> Any {
        try answer(request, context: context, storeName: "PostgreSQL", previousVersion: { _ in nil })
    }

    override func newValuesForObject(
        with objectID: NSManagedObjectID, with context: NSManagedObjectContext
    ) throws -> NSIncrementalStoreNode { try node(for: objectID) }

    override func newValue(
        forRelationship relationship: NSRelationshipDescription, forObjectWith objectID: NSManagedObjectID,
        with context: NSManagedObjectContext?
    ) throws -> Any {
        try destination(of: relationship, for: objectID, generation: nil, cachedRow: { _ in nil })
    }

    override func obtainPermanentIDs(for array: [NSManagedObject]) throws -> [NSManagedObjectID] {
        try permanentIDs(for: array)
    }
}

/// Thrown out of the opening transaction when the store must go through a staged migration first.
private struct StagedMigrationNeeded: Error {}
