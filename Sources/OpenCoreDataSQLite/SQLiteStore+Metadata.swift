import OpenCoreData
import OpenCoreDataSQL

/// The SQLite store's metadata: decoded from `Z_METADATA`, checked against the model's entity
/// version hashes, and written back with Apple's model checksum and digest (STORE-FORMAT.md).
extension SQLiteStore {
    /// The metadata dictionary of a `Z_METADATA` row (`Z_UUID`, `Z_PLIST`).
    static func decodeMetadata(_ row: [SQLiteValue], path: String) throws -> [String: Any] {
        guard row.count == 2, case .blob(let bytes) = row[1],
            let plist = try? PropertyListReader.propertyList(from: Data(bytes)),
            var metadata = plist as? [String: Any]
        else {
            throw CoreDataError.make(
                NSPersistentStoreOpenError, "The store at \(path) has unreadable metadata.",
                [NSURLErrorKey: URL(fileURLWithPath: path)])
        }
        if case .text(let uuid) = row[0] { metadata[NSStoreUUIDKey] = uuid }
        return metadata
    }

    /// Refuses a model whose entity version hashes differ from the store's (Apple's 134100),
    /// unless `NSIgnorePersistentStoreVersioningOption` is set or the model is the store's own cache.
    func checkVersionHashes(_ metadata: [String: Any], model: NSManagedObjectModel) throws {
        if (options?[NSIgnorePersistentStoreVersioningOption] as? Bool) == true { return }
        if let source = model.cachedFromStoreUUID, source == metadata[NSStoreUUIDKey] as? String { return }
        let stored = (metadata["NSStoreModelVersionHashes"] as? [String: Any]) ?? [:]
        let expected = model.entityVersionHashesByName
        let matches =
            stored.count == expected.count
            && expected.allSatisfy { name, hash in (stored[name] as? Data) == hash }
        guard matches else {
            throw CoreDataError.make(
                NSPersistentStoreIncompatibleVersionHashError,
                "The model used to open the store is incompatible with the one used to create the store.",
                [
                    NSURLErrorKey: url as Any, "NSStoreModelVersionHashes": stored,
                    "differingEntities": expected.keys.filter { (stored[$0] as? Data) != expected[$0] }.sorted(),
                ])
        }
    }

    func writeMetadata(insert: Bool) throws {
        var plist = metadata ?? [:]
        let uuid = plist.removeValue(forKey: NSStoreUUIDKey) as? String ?? ""
        let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        try connection.run(
            insert ? SQLBookkeeping.insertMetadata : SQLBookkeeping.updateMetadata, [.text(uuid), .blob([UInt8](data))])
        writtenMetadataRevision = metadataRevision
    }

    /// `NSStoreModelVersionChecksumKey` (``ModelVersionDigests/checksum(_:)``).
    static func checksum(_ hashes: [String: Data]) -> String { ModelVersionDigests.checksum(hashes) }

    /// `NSStoreModelVersionHashesDigest` (``ModelVersionDigests/digest(_:)``).
    static func digest(_ hashes: [String: Data]) -> String { ModelVersionDigests.digest(hashes) }
}
