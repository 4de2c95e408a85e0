import Foundation
import OpenCoreData

/// Lightweight migration in place, in SQL, for every SQL store ("if you use an inferred model and
/// you use the SQLite store, then Core Data can perform the migration in situ (solely by issuing
/// SQL statements)" — Core Data Model Versioning and Data Migration Programming Guide,
/// "Lightweight Migration"): each table whose entities changed is rebuilt with the destination
/// model's columns from the old one (`INSERT … SELECT`, ``SQLMigrationPlan``), and the
/// bookkeeping (`Z_PRIMARYKEY`, `Z_METADATA`, `Z_MODELCACHE`) follows, all in the caller's
/// transaction.
extension SQLStore {
    /// The model the store on `link` caches in `Z_MODELCACHE`; `nil` when there is none or it
    /// cannot be read.
    package static func cachedModel(on link: some SQLRowRunner, dialect: any SQLDialect) -> NSManagedObjectModel? {
        let query = SQLWriter.write(SQLBookkeeping.modelCache, dialect: dialect).sql
        guard case .blob(let bytes)? = try? link.select(query, []).first?.first else { return nil }
        return try? model(fromCache: bytes)
    }

    /// The model that wrote the store open on `link`: its model cache when that matches the
    /// store's hashes, else a version among the program's models.
    ///
    /// - Throws: `NSMigrationMissingSourceModelError` (134130) when neither is found.
    package func sourceModel(metadata: [String: Any], on link: Link) throws -> NSManagedObjectModel {
        try SQLMigrationPlan.sourceModel(
            cached: Self.cachedModel(on: link, dialect: dialect), metadata: metadata, url: url)
    }

    /// The error of a store that needs a migration its options do not allow inferring.
    package func inferenceNotRequested(_ versionError: NSError) -> NSError {
        CoreDataError.make(
            NSMigrationMissingMappingModelError,
            "Can't find mapping model for migration, and inferring one was not asked for.",
            [NSURLErrorKey: url as Any, NSUnderlyingErrorKey: versionError])
    }

    /// Migrates the store open on `link`, inside the caller's transaction, from `source` to
    /// `destination` with an inferred mapping; the store's metadata becomes the new version's,
    /// which it answers (the store's metadata is as before when it throws).
    ///
    /// - Throws: `NSMigrationMissingMappingModelError` (134140) when no mapping can be inferred;
    ///   `NSMigrationError` (134110) for a change in-place migration does not make (marked with
    ///   ``SQLMigrationPlan/inPlaceUnsupportedKey``), a required value missing, or a statement that
    ///   fails. The caller rolls its transaction back.
    package func migrateInPlace(
        metadata: [String: Any], source: NSManagedObjectModel, to destination: NSManagedObjectModel, on link: Link
    ) throws -> [String: Any] where Link: SQLCatalog {
        let plan = try SQLMigrationPlan.inferred(
            from: source, to: destination, numbers: try SQLMigrationPlan.entityNumbers(on: link, dialect),
            joinTables: try SQLMigrationPlan.joinTables(on: link, dialect), url: url)
        try plan.run(on: link, dialect: dialect, url: url)
        var migrated = metadata
        migrated.merge(StoreMetadata.keys(for: destination)) { _, new in new }
        let previous = self.metadata
        self.metadata = migrated
        do {
            try writeMetadata(insert: false, on: link)
            try link.change(text(.delete(table: "Z_MODELCACHE", filter: nil)), [])
            try link.change(
                text(SQLBookkeeping.insertModelCache), [.blob([UInt8](try Self.modelCache(for: destination)))])
        } catch {
            self.metadata = previous
            throw error
        }
        return migrated
    }
}
