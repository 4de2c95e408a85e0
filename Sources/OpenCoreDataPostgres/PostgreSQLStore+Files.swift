import Foundation
import OpenCoreData
import OpenCoreDataSQL

/// Copying and destroying PostgreSQL stores, for `replacePersistentStore`,
/// `destroyPersistentStore` and `migratePersistentStore` between two PostgreSQL stores. A store
/// is the tables of Apple's layout in one schema; these never touch another table.
extension PostgreSQLStore: InPlaceMigratingStore {}

extension PostgreSQLStore: StoreFileOperations {
    /// Copies the store at `source` over the store at `destination` (any server and database),
    /// with the layout its cached model gives.
    ///
    /// - Throws: `NSPersistentStoreOperationError` (134070) when `source` holds no store, or the
    ///   server's error; the destination is unchanged then.
    static func copyStore(at source: URL, to destination: URL) throws {
        let location = try PostgresLocation(url: source, options: nil)
        let link = try PostgresLink.connect(location)
        defer { link.close() }
        guard let schema = try storedSchema(on: link, dialect: PostgreSQLDialect()) else {
            throw CoreDataError.make(
                NSPersistentStoreOperationError, "There is no Core Data store at \(location.description) to copy.",
                [NSURLErrorKey: source])
        }
        try copy(schema, from: link, to: destination)
    }

    func copySavedContents(to destination: URL) throws {
        let link = try readers.checkout { try PostgresLink.connect(location) }
        defer { readers.checkin(link) }
        try Self.copy(schema, from: link, to: destination)
    }

    /// Removes the store at `url`: its tables (the layout its cached model gives, and the
    /// bookkeeping tables), in one transaction holding the store's write lock. A schema without
    /// tables is already empty; one whose tables are not a Core Data store's is refused.
    ///
    /// - Throws: `NSPersistentStoreOperationError` (134070) for a schema that holds other tables
    ///   but no store, or the server's error.
    static func destroyStore(at url: URL) throws {
        let location = try PostgresLocation(url: url, options: nil)
        let link = try PostgresLink.connect(location)
        defer { link.close() }
        try link.transaction {
            try lockStore(on: link)
            let tables = try storeTables(on: link)
            guard !tables.isEmpty else {
                let others = try link.query(
                    "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()"
                ).rows.first?.first
                guard others == .integer(0) else {
                    throw CoreDataError.make(
                        NSPersistentStoreOperationError,
                        "The schema at \(location.description) holds tables but no Core Data store; nothing was removed.",
                        [NSURLErrorKey: url])
                }
                return
            }
            for table in tables { try link.query("DROP TABLE IF EXISTS " + PostgreSQLDialect().quote(table)) }
        }
    }

    /// The tables of the store in the link's schema; empty when the schema holds no store.
    private static func storeTables(on link: PostgresLink) throws -> [String] {
        try storedSchema(on: link, dialect: PostgreSQLDialect()).map(tableNames(of:)) ?? []
    }

    /// Copies every table of `schema`'s layout, read in one snapshot of `source`, into the store at
    /// `destination`, replacing what is there, in one transaction there.
    private static func copy(_ schema: SQLSchema, from source: PostgresLink, to destination: URL) throws {
        let location = try PostgresLocation(url: destination, options: nil)
        let target = try PostgresLink.connect(location)
        defer { target.close() }
        if let name = location.schema {
            try target.query("CREATE SCHEMA IF NOT EXISTS " + PostgreSQLDialect().quote(name))
        }
        try source.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        defer { _ = try? source.query("COMMIT") }
        try target.transaction {
            try lockStore(on: target)
            for table in try storeTables(on: target) {
                try target.query("DROP TABLE IF EXISTS " + PostgreSQLDialect().quote(table))
            }
            try copyTables(of: schema, from: source, to: target, dialect: PostgreSQLDialect())
        }
    }
}

extension NSManagedObjectModel {
    /// The model cached inside the PostgreSQL store at `url` (`Z_MODELCACHE`), so the store opens
    /// with no model file (the `coredata` tool reads stores this way). Nothing is written.
    ///
    /// > Note: Differs from Apple Core Data: an addition, like the SQLite store's
    /// > `init(contentsOfStoreAt:)` (DEVIATIONS.md).
    ///
    /// - Throws: `NSPersistentStoreOpenError` (134080) when the server cannot be reached, or the
    ///   schema holds no store or no readable model cache.
    public convenience init(contentsOfPostgreSQLStoreAt url: URL) throws {
        let location = try PostgresLocation(url: url, options: nil)
        let link = try PostgresLink.connect(location)
        defer { link.close() }
        guard let model = PostgreSQLStore.cachedModel(on: link, dialect: PostgreSQLDialect()) else {
            throw CoreDataError.make(
                NSPersistentStoreOpenError,
                "There is no Core Data store with a cached model at \(location.description).",
                [NSURLErrorKey: url])
        }
        self.init()
        adoptModel(model)
        if case .text(let uuid)? = try? link.query(PostgreSQLDialect.text(SQLBookkeeping.metadataUUID)).rows.first?
            .first
        {
            cachedFromStoreUUID = uuid
        }
    }
}

/// Consistency checks of a PostgreSQL store against a model (``SQLStoreCheck``: Apple's
/// bookkeeping, dangling to-one and join-table references, the version hashes), read in one
/// snapshot. What `coredata check` reports for a `postgres://` URL. PostgreSQL keeps its own
/// pages consistent; there is no file to check.
@_spi(Tools) public enum PostgreSQLStoreCheck {
    /// The problems found, one sentence each; empty when the store is sound.
    ///
    /// - Parameter compareVersionHashes: false when `model` is the store's own cached model.
    /// - Throws: `NSPersistentStoreOpenError` (134080) when the server cannot be reached or the
    ///   schema holds no store; the server's error.
    public static func findings(
        storeAt url: URL, model: NSManagedObjectModel, compareVersionHashes: Bool = true
    ) throws -> [String] {
        let location = try PostgresLocation(url: url, options: nil)
        let link = try PostgresLink.connect(location)
        defer { link.close() }
        let metadata = try PostgreSQLStore.metadataForPersistentStore(with: url)
        return try link.transaction {
            try link.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            return try SQLStoreCheck.findings(
                on: link, dialect: PostgreSQLDialect(), metadata: metadata, model: model,
                compareVersionHashes: compareVersionHashes)
        }
    }
}
