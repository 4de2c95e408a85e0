import CoreData

/// A store opened by the tool: its coordinator, a context, the model it was opened with and its
/// metadata.
struct OpenedStore {
    let url: URL
    let coordinator: NSPersistentStoreCoordinator
    let context: NSManagedObjectContext
    let model: NSManagedObjectModel
    let metadata: [String: Any]
    /// Whether the model came from the store's own `Z_MODELCACHE`.
    let usesCachedModel: Bool
    /// The store's type: `NSSQLiteStoreType`, `NSXMLStoreType`, `NSBinaryStoreType` or
    /// `NSPostgreSQLStoreType` (``PostgreSQLSupport/storeType``).
    let type: String

    /// How the tool names the store at `url`: a file's path, or a PostgreSQL store's whole URL.
    static func name(of url: URL) -> String { isPostgres(url.absoluteString) ? url.absoluteString : url.path }

    /// Whether `path` is a PostgreSQL store's URL (`postgres://…`) rather than a file.
    static func isPostgres(_ path: String) -> Bool {
        path.lowercased().hasPrefix("postgres://") || path.lowercased().hasPrefix("postgresql://")
    }

    /// Whether the store at `url` keeps its model (`Z_MODELCACHE`): SQLite and PostgreSQL stores
    /// do, XML and binary ones do not.
    static func keepsItsModel(_ url: URL) -> Bool {
        [NSSQLiteStoreType, PostgreSQLSupport.storeType].contains(storeType(of: url))
    }

    /// The type of the store at `url`: PostgreSQL for a `postgres://` URL; for a file, from its
    /// first bytes: SQLite's header, the binary store's `OCDBIN01`, else XML.
    static func storeType(of url: URL) -> String {
        if isPostgres(url.absoluteString) { return PostgreSQLSupport.storeType }
        guard let handle = try? FileHandle(forReadingFrom: url) else { return NSSQLiteStoreType }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 16)) ?? Data()
        if head.starts(with: Array("SQLite format 3".utf8)) { return NSSQLiteStoreType }
        if head.starts(with: Array("OCDBIN01".utf8)) { return NSBinaryStoreType }
        let text = head.drop(while: {
            $0 == 0xEF || $0 == 0xBB || $0 == 0xBF || $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09
        })
        if text.starts(with: Array("<".utf8)) { return NSXMLStoreType }
        return NSSQLiteStoreType
    }

    /// The model cached in the store at `url`; only SQLite and PostgreSQL stores keep one.
    static func cachedModel(_ url: URL, path: String) throws -> NSManagedObjectModel {
        let type = storeType(of: url)
        if type == PostgreSQLSupport.storeType {
            let support = try PostgreSQLSupport.required(for: path)
            do {
                return try support.cachedModel(url)
            } catch {
                throw ToolError.data("\(path): \(ToolError.describe(error)); pass --model")
            }
        }
        guard type == NSSQLiteStoreType else {
            throw ToolError.usage(
                "\(path): \(type == NSXMLStoreType ? "an XML" : "a binary") store holds no model; pass --model")
        }
        do {
            return try NSManagedObjectModel(contentsOfStoreAt: url)
        } catch {
            throw ToolError.data("\(path): \(ToolError.describe(error)); pass --model")
        }
    }

    /// Opens the store at `path` (SQLite, XML or binary) with the model at `modelPath`, or else
    /// with the model cached in the store (SQLite stores only). Read-only unless `writable`: nothing is written beside the file.
    ///
    /// With `transformablesAsData`, transformable attributes read as the bytes stored for them
    /// (the model is changed before the store opens, and version hashes are not compared).
    static func open(
        _ path: String, modelPath: String?, writable: Bool = false, transformablesAsData: Bool = false,
        options extra: [AnyHashable: Any] = [:]
    ) throws -> OpenedStore {
        let url = try existingFile(path)
        let metadata = try readMetadata(url)
        let model: NSManagedObjectModel
        let usesCachedModel: Bool
        if let modelPath {
            model = try loadModel(modelPath, matching: metadata)
            usesCachedModel = false
        } else {
            model = try cachedModel(url, path: path)
            usesCachedModel = true
        }
        let type = storeType(of: url)
        var options = extra
        if transformablesAsData {
            for entity in model.entities {
                for case let attribute as NSAttributeDescription in entity.properties
                where attribute.attributeType == .transformableAttributeType {
                    attribute.attributeType = .binaryDataAttributeType
                    attribute.valueTransformerName = nil
                }
            }
            options[NSIgnorePersistentStoreVersioningOption] = true
        }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        if !writable { options[NSReadOnlyPersistentStoreOption] = true }
        do {
            _ = try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url, options: options)
        } catch {
            throw ToolError.data("\(path): \(ToolError.describe(error))")
        }
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return OpenedStore(
            url: url, coordinator: coordinator, context: context, model: model, metadata: metadata,
            usesCachedModel: usesCachedModel, type: type)
    }

    /// The file at `path`, which must exist, or the PostgreSQL store a `postgres://` URL names.
    static func existingFile(_ path: String) throws -> URL {
        if isPostgres(path) {
            _ = try PostgreSQLSupport.required(for: path)
            guard let url = URL(string: path) else { throw ToolError.usage("\(path): not a valid URL") }
            return url
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ToolError.usage("\(path): no such file")
        }
        return URL(fileURLWithPath: path, isDirectory: isDirectory.boolValue)
    }

    /// The store's metadata, read without writing anything beside the file.
    static func readMetadata(_ url: URL) throws -> [String: Any] {
        do {
            return try NSPersistentStoreCoordinator.metadataForPersistentStore(
                ofType: storeType(of: url), at: url, options: nil)
        } catch {
            throw ToolError.data("\(name(of: url)): \(ToolError.describe(error))")
        }
    }

    /// The model at `path`. For a versioned model (`.xcdatamodeld`, `.momd`), the version whose
    /// entity hashes are the store's, else the current version.
    static func loadModel(_ path: String, matching metadata: [String: Any]?) throws -> NSManagedObjectModel {
        let url = try existingFile(path)
        if let metadata, let version = matchingVersion(of: url, metadata: metadata),
            let model = NSManagedObjectModel(contentsOf: version)
        {
            return model
        }
        do {
            return try NSManagedObjectModel(validatingContentsOf: url)
        } catch {
            throw ToolError.data("\(path): \(ToolError.describe(error))")
        }
    }

    /// The version of the versioned model at `url` (`.xcdatamodeld`, `.momd`) whose entity hashes
    /// are the store's; nil for another kind of file or when none is.
    static func matchingVersion(of url: URL, metadata: [String: Any]) -> URL? {
        guard let hashes = metadata[NSStoreModelVersionHashesKey] as? [String: Data],
            ["xcdatamodeld", "momd"].contains(url.pathExtension)
        else { return nil }
        let versions = (try? FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)) ?? []
        return versions.sorted(by: { $0.path < $1.path }).first { version in
            ["xcdatamodel", "mom"].contains(version.pathExtension)
                && NSManagedObjectModel(contentsOf: version)?.entityVersionHashesByName == hashes
        }
    }

    static let modelExtensions: Set<String> = ["xcdatamodeld", "xcdatamodel", "momd", "mom"]

    /// The model in a model file (by its extension), or else the model cached in the store at `path`.
    static func modelFileOrCachedModel(_ path: String) throws -> NSManagedObjectModel {
        let url = try existingFile(path)
        if modelExtensions.contains(url.pathExtension) { return try loadModel(path, matching: nil) }
        _ = try readMetadata(url)
        return try cachedModel(url, path: path)
    }

    /// The entity named `name`, or a usage error listing the entities there are.
    func entity(_ name: String) throws -> NSEntityDescription {
        guard let entity = model.entitiesByName[name] else {
            let names = model.entities.compactMap(\.name).sorted().joined(separator: ", ")
            throw ToolError.usage("unknown entity '\(name)' (the model has: \(names))")
        }
        return entity
    }
}
