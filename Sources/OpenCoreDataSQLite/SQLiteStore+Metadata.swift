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
        if case .text(let uuid) = row[0] {
            // Core Data writes a 36-character UUID here, and every object ID's URI carries it: an
            // identifier of a megabyte (a damaged or hostile file) made each URI a megabyte and a
            // query that named its objects spin for seconds.
            guard uuid.utf8.count <= maximumIdentifierLength else {
                throw CoreDataError.make(
                    NSPersistentStoreOpenError,
                    "The store at \(path) has a store identifier (Z_UUID) of \(uuid.utf8.count) bytes; Core Data writes a 36-character UUID (a damaged store).",
                    [NSURLErrorKey: URL(fileURLWithPath: path)])
            }
            metadata[NSStoreUUIDKey] = uuid
        }
        return metadata
    }

    /// The longest store identifier a store opens with: far above the 36 characters of the UUIDs
    /// Core Data writes, so that an identifier a program chose itself still opens.
    static let maximumIdentifierLength = 1024

    /// Refuses a model whose entity version hashes differ from the store's (Apple's 134100).
    func checkVersionHashes(_ metadata: [String: Any], model: NSManagedObjectModel) throws {
        try StoreMetadata.checkVersionHashes(metadata, model: model, options: options, url: url)
    }

    func writeMetadata(insert: Bool) throws {
        var plist = metadata ?? [:]
        let uuid = plist.removeValue(forKey: NSStoreUUIDKey) as? String ?? ""
        let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        try connection.run(
            insert ? SQLBookkeeping.insertMetadata : SQLBookkeeping.updateMetadata, [.text(uuid), .blob([UInt8](data))])
        writtenMetadataRevision = metadataRevision
    }
}
