/// The model keys every store writes into its metadata, and the check every store makes of them
/// when it opens: one definition for the SQLite and atomic stores.
package enum StoreMetadata {
    /// The keys that describe the model that writes a store: its entity version hashes, the
    /// hashes' format version (3), the model's version identifiers, Apple's checksum and digest
    /// of the hashes (STORE-FORMAT.md), and the Core Data version Apple writes.
    package static func keys(for model: NSManagedObjectModel) -> [String: Any] {
        let hashes = model.entityVersionHashesByName
        return [
            NSStoreModelVersionHashesKey: hashes,
            "NSStoreModelVersionHashesVersion": 3,
            NSStoreModelVersionIdentifiersKey: model.versionIdentifiers.map { String(describing: $0) }.sorted(),
            NSPersistenceFrameworkVersionKey: 1344,
            "NSStoreModelVersionChecksumKey": ModelVersionDigests.checksum(hashes),
            "NSStoreModelVersionHashesDigest": ModelVersionDigests.digest(hashes),
        ]
    }

    /// Refuses a model whose entity version hashes differ from the store's (Apple's 134100),
    /// unless `NSIgnorePersistentStoreVersioningOption` is set or the model is the store's own cache.
    ///
    /// - Throws: `NSPersistentStoreIncompatibleVersionHashError` (134100), with the stored hashes
    ///   and the names of the entities that differ.
    package static func checkVersionHashes(
        _ metadata: [String: Any], model: NSManagedObjectModel, options: [AnyHashable: Any]?, url: URL?
    ) throws {
        if (options?[NSIgnorePersistentStoreVersioningOption] as? Bool) == true { return }
        if let source = model.cachedFromStoreUUID, source == metadata[NSStoreUUIDKey] as? String { return }
        let stored = (metadata[NSStoreModelVersionHashesKey] as? [String: Any]) ?? [:]
        let expected = model.entityVersionHashesByName
        let matches =
            stored.count == expected.count
            && expected.allSatisfy { name, hash in (stored[name] as? Data) == hash }
        guard matches else {
            throw CoreDataError.make(
                NSPersistentStoreIncompatibleVersionHashError,
                "The model used to open the store is incompatible with the one used to create the store.",
                [
                    NSURLErrorKey: url as Any, NSStoreModelVersionHashesKey: stored,
                    "differingEntities": expected.keys.filter { (stored[$0] as? Data) != expected[$0] }.sorted(),
                ])
        }
    }
}
