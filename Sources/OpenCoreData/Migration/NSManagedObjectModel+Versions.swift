import Foundation

/// Model versions: merging models, finding the version that wrote a store among those a program
/// ships, and the checksum stores record. Apple's documentation: NSManagedObjectModel reference
/// ("Creating a Managed Object Model", "Getting Version Information"); Core Data Model Versioning
/// and Data Migration Programming Guide.
extension NSManagedObjectModel {
    /// The checksum of the model's entity version hashes: what a store written with the model
    /// records under `NSStoreModelVersionChecksumKey`, and what a compiled model's version
    /// information names it by.
    public var versionChecksum: String { ModelVersionDigests.checksum(entityVersionHashesByName) }

    /// A model with the entities, configurations and fetch request templates of every model of
    /// `models` (each copied: the models given stay as they are). Nil when two models have an
    /// entity of the same name, or a model cannot be copied.
    public convenience init?(byMerging models: [NSManagedObjectModel]?) {
        guard let merged = Self.merge(models ?? []) else { return nil }
        self.init()
        adoptModel(merged)
    }

    /// The merge of `models` (see ``init(byMerging:)``), when it is the model that wrote a store
    /// with `metadata` (its entity version hashes are the store's); nil otherwise.
    public convenience init?(byMerging models: [NSManagedObjectModel], forStoreMetadata metadata: [String: Any]) {
        guard let merged = Self.merge(models),
            merged.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata)
        else { return nil }
        self.init()
        adoptModel(merged)
    }

    /// The merge of the current version of every model in `bundles` (the main bundle when nil):
    /// the compiled `.momd` and `.mom` files at the top of each bundle's resources and — on Linux,
    /// where Xcode does not compile them — the `.xcdatamodeld` model sources. Nil when there is
    /// none, or they cannot be merged.
    public class func mergedModel(from bundles: [Bundle]?) -> NSManagedObjectModel? {
        let models = ModelVersions.files(in: bundles ?? [Bundle.main]).compactMap(
            NSManagedObjectModel.init(contentsOf:))
        guard !models.isEmpty else { return nil }
        return NSManagedObjectModel(byMerging: models)
    }

    /// The model that wrote a store with `metadata`, from the models in `bundles` (the main
    /// bundle when nil): of each model, the version whose entity version hashes are all the
    /// store's — every version in a `.momd` or `.xcdatamodeld`, not just the current one — merged
    /// when the store was written with several models. Nil when no combination matches the store.
    public class func mergedModel(from bundles: [Bundle]?, forStoreMetadata metadata: [String: Any])
        -> NSManagedObjectModel?
    {
        let stored = metadata["NSStoreModelVersionHashes"] as? [String: Any] ?? [:]
        var chosen: [NSManagedObjectModel] = []
        for file in ModelVersions.files(in: bundles ?? [Bundle.main]) {
            let versions = ModelVersions.versions(of: file).compactMap(NSManagedObjectModel.init(contentsOf:))
            let matching = versions.first { version in
                let hashes = version.entityVersionHashesByName
                return !hashes.isEmpty && hashes.allSatisfy { name, hash in (stored[name] as? Data) == hash }
            }
            if let matching { chosen.append(matching) }
        }
        guard !chosen.isEmpty else { return nil }
        return NSManagedObjectModel(byMerging: chosen, forStoreMetadata: metadata)
    }

    /// A copy of each model's entities in one new model; nil on an entity name two models share.
    private static func merge(_ models: [NSManagedObjectModel]) -> NSManagedObjectModel? {
        let merged = NSManagedObjectModel()
        var entities: [NSEntityDescription] = []
        var names: Set<String> = []
        var configurations: [(String, [NSEntityDescription])] = []
        for model in models {
            guard let copy = try? CompiledModelDecoder.model(from: CompiledModelEncoder.archive(model)) else {
                return nil
            }
            for entity in copy.entities {
                guard names.insert(entity.name ?? "").inserted else { return nil }
            }
            for name in copy.configurations {
                configurations.append((name, copy.entities(forConfigurationName: name) ?? []))
            }
            for (name, template) in copy.fetchRequestTemplatesByName {
                merged.setFetchRequestTemplate(template, forName: name)
            }
            merged.versionIdentifiers.formUnion(copy.versionIdentifiers)
            entities += copy.entities
            copy.entities = []
        }
        merged.entities = entities
        for (name, members) in configurations {
            let existing = merged.entities(forConfigurationName: name) ?? []
            merged.setEntities(existing + members, forConfigurationName: name)
        }
        return merged
    }
}

/// Where models are in bundles, and the versions of a model file.
package enum ModelVersions {
    /// Bundles searched for models and mapping models in addition to the program's, for the
    /// duration of a task (tests give a folder of fixture files as a bundle).
    @TaskLocal package static var additionalBundles: [Bundle] = []

    /// The bundles automatic migration searches, as Apple's searches the main bundle: the main
    /// bundle, the resource bundles SwiftPM builds beside the program (`<package>_<target>.resources`
    /// on Linux), and any ``additionalBundles``.
    package static var programBundles: [Bundle] {
        var bundles = [Bundle.main]
        let beside =
            (try? FileManager.default.contentsOfDirectory(at: Bundle.main.bundleURL, includingPropertiesForKeys: nil))
            ?? []
        for url in beside.sorted(by: { $0.path < $1.path }) where ["resources", "bundle"].contains(url.pathExtension) {
            if let bundle = Bundle(url: url) { bundles.append(bundle) }
        }
        return bundles + additionalBundles
    }

    /// The mapping model for migrating from `source` to `destination`: the one the program's
    /// bundles ship, else (when `infer`) an inferred one.
    ///
    /// - Throws: `NSMigrationMissingMappingModelError` (134140) when there is none and none may
    ///   or can be inferred (the inference error under `NSUnderlyingErrorKey`).
    package static func mappingModel(
        from source: NSManagedObjectModel, to destination: NSManagedObjectModel, infer: Bool, url: URL?
    ) throws -> NSMappingModel {
        if let shipped = NSMappingModel(from: programBundles, forSourceModel: source, destinationModel: destination) {
            return shipped
        }
        do {
            guard infer else {
                throw CoreDataError.make(NSInferredMappingModelError, "Inferring a mapping model was not asked for.")
            }
            return try NSMappingModel.inferredMappingModel(forSourceModel: source, destinationModel: destination)
        } catch {
            throw CoreDataError.make(
                NSMigrationMissingMappingModelError, "Can't find mapping model for migration.",
                [NSURLErrorKey: url as Any, NSUnderlyingErrorKey: error])
        }
    }

    /// Migrates the store at `url` of `type` from `source` to `destination` with `mapping` into
    /// a new store of the same type at `temporary` (NSMigrationManager).
    ///
    /// - Throws: `NSMigrationError` (134110), the cause under `NSUnderlyingErrorKey` unless it is
    ///   one itself.
    package static func migrate(
        storeAt url: URL, type: String, from source: NSManagedObjectModel, to destination: NSManagedObjectModel,
        with mapping: NSMappingModel, into temporary: URL, options: [AnyHashable: Any]?,
        manager: NSMigrationManager? = nil
    ) throws {
        do {
            try (manager ?? NSMigrationManager(sourceModel: source, destinationModel: destination)).migrateStore(
                from: url, sourceType: type, options: options, with: mapping, toDestinationURL: temporary,
                destinationType: type, destinationOptions: nil)
        } catch let error as NSError where error.domain == NSCocoaErrorDomain && error.code == NSMigrationError {
            throw error
        } catch {
            throw CoreDataError.make(
                NSMigrationError, "The store could not be migrated.", [NSURLErrorKey: url, NSUnderlyingErrorKey: error])
        }
    }

    /// Migrates the store at `url` of `type` with `mapping` into a new store beside it, which
    /// then replaces it (the store type's own copy: atomic for every built-in type), keeping the
    /// store's UUID and the app's metadata.
    ///
    /// - Throws: `NSMigrationError` (134110) when the migration fails; the store is unchanged.
    package static func migrateReplacing(
        storeAt url: URL, type: String, from source: NSManagedObjectModel, to destination: NSManagedObjectModel,
        with mapping: NSMappingModel, manager: NSMigrationManager? = nil
    ) throws {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(
            ".\(url.lastPathComponent).migrating-\(UUID().uuidString)")
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: temporary.path + suffix) }
        }
        let stored = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: type, at: url, options: nil)
        try migrate(
            storeAt: url, type: type, from: source, to: destination, with: mapping, into: temporary, options: nil,
            manager: manager)
        var carried = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: type, at: temporary, options: nil)
        for (key, value) in stored where !key.hasPrefix("NS") && !key.hasPrefix("_NS") { carried[key] = value }
        carried[NSStoreUUIDKey] = stored[NSStoreUUIDKey]
        try NSPersistentStoreCoordinator.setMetadata(
            carried, forPersistentStoreOfType: type, at: temporary, options: nil)
        try NSPersistentStoreCoordinator(managedObjectModel: destination).replacePersistentStore(
            at: url, destinationOptions: nil, withPersistentStoreFrom: temporary, sourceOptions: nil, ofType: type)
    }

    /// The model files at the top of the bundles' resources: `.momd`, `.mom`, `.xcdatamodeld`.
    static func files(in bundles: [Bundle]) -> [URL] {
        topLevelFiles(in: bundles, extensions: ["momd", "mom", "xcdatamodeld"])
    }

    /// The mapping models at the top of the bundles' resources: compiled `.cdm` files and Xcode's
    /// `.xcmappingmodel` sources.
    package static func mappingModelFiles(in bundles: [Bundle]) -> [URL] {
        topLevelFiles(in: bundles, extensions: ["cdm", "xcmappingmodel"])
    }

    /// Compiled files and the sources they were compiled from, by extension.
    private static let compiledForms = ["xcdatamodeld": "momd", "xcdatamodel": "mom", "xcmappingmodel": "cdm"]

    /// The bundles' top-level files with `extensions`. A source beside the file compiled from it
    /// (`Model.xcdatamodeld` and `Model.momd`, as a package holds when it keeps its model source as
    /// a resource and the build plugin compiles it) is left out: it is one model, found once.
    private static func topLevelFiles(in bundles: [Bundle], extensions: Set<String>) -> [URL] {
        var files: [URL] = []
        for bundle in bundles {
            guard let resources = bundle.resourceURL,
                let names = try? FileManager.default.contentsOfDirectory(atPath: resources.path)
            else { continue }
            let present = Set(names)
            for name in names.sorted() where extensions.contains((name as NSString).pathExtension) {
                let pathExtension = (name as NSString).pathExtension
                if let compiled = compiledForms[pathExtension],
                    present.contains((name as NSString).deletingPathExtension + "." + compiled)
                {
                    continue
                }
                files.append(resources.appendingPathComponent(name))
            }
        }
        return files
    }

    /// Every version of a model file: the `.mom` files of a `.momd`, the `.xcdatamodel` folders of
    /// an `.xcdatamodeld`, or the file itself.
    static func versions(of file: URL) -> [URL] {
        let inner: String
        switch file.pathExtension {
        case "momd": inner = "mom"
        case "xcdatamodeld": inner = "xcdatamodel"
        default: return [file]
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: file.path)) ?? []
        return names.sorted().filter { ($0 as NSString).pathExtension == inner }.map { file.appendingPathComponent($0) }
    }
}
