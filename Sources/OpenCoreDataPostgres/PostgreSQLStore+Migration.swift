import Foundation
import OpenCoreData
import OpenCoreDataSQL

/// Lightweight migration of a PostgreSQL store, in place and in SQL, with the SQLite store's plan
/// (``SQLMigrationPlan``): each table whose entities changed is rebuilt with the destination
/// model's columns from the old one (`INSERT … SELECT`), and the bookkeeping (`Z_PRIMARYKEY`,
/// `Z_METADATA`, `Z_MODELCACHE`) follows — all inside the transaction that opens the store,
/// holding its write lock. PostgreSQL's DDL is transactional, so a failure, a lost connection
/// or a killed process leaves the store as it was, and another process opening the store at the
/// same time waits for the lock and then finds it migrated.
///
/// Related documentation: NSMigratePersistentStoresAutomaticallyOption,
/// NSInferMappingModelAutomaticallyOption; Core Data Model Versioning and Data Migration
/// Programming Guide, "Lightweight Migration".
extension PostgreSQLStore {
    /// Migrates the store open on `link` (inside its opening transaction) from the model that
    /// wrote it to `destination`; the store's metadata becomes the new version's.
    ///
    /// - Throws: `NSMigrationMissingMappingModelError` (134140) when inference is not allowed or
    ///   no mapping can be inferred (`versionError` or the inference error under
    ///   `NSUnderlyingErrorKey`); `NSMigrationMissingSourceModelError` (134130) when the model that
    ///   wrote the store is not found; `NSMigrationError` (134110) for a change in-place migration
    ///   does not make, a mapping model the program ships (it needs the migration manager's copy,
    ///   which this store does not make; DEVIATIONS.md), a required value missing, or a statement
    ///   that fails. Nothing is changed then. (A staged migration runs before the store opens.)
    func migrate(
        _ metadata: [String: Any], to destination: NSManagedObjectModel, on link: PostgresLink, versionError: NSError
    ) throws {
        let source = try sourceModel(metadata: metadata, on: link)
        if NSMappingModel(from: ModelVersions.programBundles, forSourceModel: source, destinationModel: destination)
            != nil
        {
            throw CoreDataError.make(
                NSMigrationError,
                "The PostgreSQL store migrates in place with an inferred mapping or through a staged migration, not with a mapping model.",
                [NSURLErrorKey: url as Any, NSUnderlyingErrorKey: versionError])
        }
        guard inferredMappingRequested else { throw inferenceNotRequested(versionError) }
        _ = try migrateInPlace(metadata: metadata, source: source, to: destination, on: link)
    }
}

extension PostgresLink: SQLCatalog {
    /// The indexes on `table` a `CREATE INDEX` made: not those PostgreSQL made for a primary key.
    func createdIndexes(of table: String) throws -> [String] {
        try query(
            """
            SELECT c.relname::text FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
            WHERE i.indrelid = to_regclass($1)
            AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)
            ORDER BY 1
            """, [.text(PostgreSQLDialect().quote(table))]
        ).rows.compactMap { row in
            if case .text(let name)? = row.first { return name }
            return nil
        }
    }

    func triggers(on table: String) throws -> [String] {
        try query(
            "SELECT tgname::text FROM pg_trigger WHERE tgrelid = to_regclass($1) AND NOT tgisinternal",
            [.text(PostgreSQLDialect().quote(table))]
        ).rows.compactMap { row in
            if case .text(let name)? = row.first { return name }
            return nil
        }
    }
}
