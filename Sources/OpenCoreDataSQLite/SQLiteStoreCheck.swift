import OpenCoreData
import OpenCoreDataSQL

/// Consistency checks of a SQLite store file against a model: SQLite's integrity check, then the
/// checks of every SQL store (``SQLStoreCheck``: Apple's bookkeeping — `Z_PRIMARYKEY` entity
/// numbers and `Z_MAX`, every `Z_ENT` known — dangling to-one and join-table references, and the
/// version hashes). What `coredata check` reports.
///
/// Reads through its own read-only connection and writes nothing beside the file.
@_spi(Tools) public enum SQLiteStoreCheck {
    /// The problems found, one sentence each; empty when the store is sound.
    ///
    /// - Parameter compareVersionHashes: false when `model` is the store's own cached model, whose
    ///   hashes are the store's by construction.
    /// - Throws: an `NSError` when the file cannot be read as a SQLite database at all.
    public static func findings(
        storeAt url: URL, model: NSManagedObjectModel, compareVersionHashes: Bool = true
    ) throws -> [String] {
        try StoreFile.refuseNonRegularFile(at: url, code: NSPersistentStoreOpenError, "read")
        let connection = try SQLiteConnection(path: url.path, mode: .readOnly)
        defer { connection.close() }
        var findings: [String] = []
        for row in try connection.rows("PRAGMA integrity_check") {
            if case .text(let text) = row.first, text != "ok" { findings.append("SQLite integrity: \(text)") }
        }
        guard findings.isEmpty else { return findings }

        let metadata = compareVersionHashes ? try SQLiteStore.metadataForPersistentStore(with: url) : [:]
        return try SQLStoreCheck.findings(
            on: connection, dialect: SQLiteDialect(), metadata: metadata, model: model,
            compareVersionHashes: compareVersionHashes)
    }
}
