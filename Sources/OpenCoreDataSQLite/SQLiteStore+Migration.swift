import OpenCoreData
import OpenCoreDataSQL

/// Lightweight migration in place, in SQL, as Apple's SQLite store does it ("if you use an inferred
/// model and you use the SQLite store, then Core Data can perform the migration in situ (solely by
/// issuing SQL statements)" — Core Data Model Versioning and Data Migration Programming Guide,
/// "Lightweight Migration"). No object is loaded: each table whose entities changed is rebuilt
/// with the destination model's columns from the old one (`INSERT … SELECT`), in one transaction
/// with the bookkeeping (`Z_PRIMARYKEY`, `Z_METADATA`, `Z_MODELCACHE`), so a failure or a kill
/// leaves the store as it was.
extension SQLiteStore {
    /// Whether the options ask for automatic migration (`NSMigratePersistentStoresAutomaticallyOption`).
    var migrates: Bool { automaticMigrationRequested }

    /// Marks a refusal of in-place migration for a change it does not make (not a failure of
    /// the data): the migration then goes through the migration manager.
    static let inPlaceUnsupportedKey = SQLMigrationPlan.inPlaceUnsupportedKey

    /// The staged migration the options hand over (`NSPersistentStoreStagedMigrationManagerOptionKey`).
    var staged: NSStagedMigrationManager? {
        options?[NSPersistentStoreStagedMigrationManagerOptionKey] as? NSStagedMigrationManager
    }

    /// Whether the options allow an inferred mapping model (`NSInferMappingModelAutomaticallyOption`).
    var infers: Bool { inferredMappingRequested }

    /// How a migration when the store opens ended: in place on the open connection (with the new
    /// metadata), or by a new store that replaced the file (which then opens again).
    enum MigrationOutcome {
        case inPlace([String: Any])
        case replaced
    }

    /// Migrates the store open on `connection` to `destination` as the options ask: a staged
    /// migration they hand over; else a mapping model the program ships for the two versions, as
    /// in Apple's Core Data (through NSMigrationManager into a new store copied over this one);
    /// else, when inference is allowed, in place in SQL — or through the manager with the same
    /// inferred mapping when in-place SQL does not make a change yet (nothing was written then).
    ///
    /// - Throws: `NSMigrationMissingMappingModelError` (134140) without a mapping model when
    ///   inference is not allowed (`versionError` under `NSUnderlyingErrorKey`); the errors of
    ///   ``migrateInPlace(_:metadata:source:to:)`` and of the manager. The store is unchanged.
    func migrateOnOpen(
        _ connection: SQLiteConnection, metadata: [String: Any], path: String, to destination: NSManagedObjectModel,
        versionError: NSError
    ) throws -> MigrationOutcome {
        func replacing(_ body: () throws -> Void) throws -> MigrationOutcome {
            connection.close()
            writer = nil
            try body()
            return .replaced
        }
        if let staged {
            return try replacing {
                try staged.migrate(
                    storeAt: URL(fileURLWithPath: path), type: NSSQLiteStoreType, to: destination, options: options)
            }
        }
        let source = try sourceModel(metadata: metadata, on: connection)
        if let shipped = NSMappingModel(
            from: ModelVersions.programBundles, forSourceModel: source, destinationModel: destination)
        {
            return try replacing { try migrate(path: path, from: source, to: destination, with: shipped) }
        }
        guard infers else { throw inferenceNotRequested(versionError) }
        do {
            return .inPlace(try migrateInPlace(connection, metadata: metadata, source: source, to: destination))
        } catch let refusal as NSError where refusal.userInfo[Self.inPlaceUnsupportedKey] as? Bool == true {
            let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: source, destinationModel: destination)
            return try replacing { try migrate(path: path, from: source, to: destination, with: mapping) }
        }
    }

    /// Migrates the store at `path` from `source` to `destination` with a mapping model the
    /// program ships: NSMigrationManager writes a new store beside this one, which SQLite's backup
    /// API then copies over it in one transaction (a kill leaves the old store or the new one);
    /// the store keeps its UUID and metadata.
    ///
    /// - Throws: `NSMigrationError` (134110) when the migration fails; the store is unchanged.
    func migrate(
        path: String, from source: NSManagedObjectModel, to destination: NSManagedObjectModel,
        with mapping: NSMappingModel
    ) throws {
        try ModelVersions.migrateReplacing(
            storeAt: URL(fileURLWithPath: path), type: NSSQLiteStoreType, from: source, to: destination, with: mapping)
    }

    /// Migrates the store open on `connection`, written with another version of the model, to
    /// `destination` in one transaction (``SQLStore/migrateInPlace(metadata:source:to:on:)``);
    /// answers its new metadata.
    ///
    /// - Throws: as ``SQLStore/migrateInPlace(metadata:source:to:on:)``, or SQLite's error. The
    ///   store is unchanged after any of them.
    func migrateInPlace(
        _ connection: SQLiteConnection, metadata: [String: Any], source: NSManagedObjectModel,
        to destination: NSManagedObjectModel
    ) throws -> [String: Any] {
        try connection.execute("BEGIN IMMEDIATE")
        do {
            let migrated = try migrateInPlace(metadata: metadata, source: source, to: destination, on: connection)
            try connection.commit(rewrite: Self.metadataRewrite)
            return migrated
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }
}

extension SQLiteConnection: SQLCatalog {
    func createdIndexes(of table: String) throws -> [String] {
        try rows(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL ORDER BY name",
            [.text(table)]
        ).compactMap { row in
            if case .text(let name) = row[0] { return name }
            return nil
        }
    }

    func triggers(on table: String) throws -> [String] {
        try rows("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?", [.text(table)]).compactMap {
            row in
            if case .text(let name) = row[0] { return name }
            return nil
        }
    }
}
