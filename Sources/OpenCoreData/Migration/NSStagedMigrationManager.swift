/// The store option that hands a staged migration to the store: with it, a store written by an
/// earlier model version migrates through the manager's stages when it is added.
public let NSPersistentStoreStagedMigrationManagerOptionKey = "NSPersistentStoreStagedMigrationManagerOptionKey"

/// Migrates a store through a series of stages, oldest first — runs of lightweight steps and
/// custom steps with your code around them — from whatever version wrote it to the model it is
/// opened with (Apple's staged migration, 2023).
///
/// Pass it in the store's options under ``NSPersistentStoreStagedMigrationManagerOptionKey``:
///
/// ```swift
/// let manager = NSStagedMigrationManager([lightweight, custom, later])
/// description.setOption(manager, forKey: NSPersistentStoreStagedMigrationManagerOptionKey)
/// ```
///
/// Each step opens the store at the next version with lightweight migration (in place, in SQL,
/// for the SQLite and PostgreSQL stores); a custom stage's handlers run with ``container`` open on the store before and
/// after its step. A store whose version no stage names, or a stage whose models cannot be found,
/// fails with `NSMigrationError` (134110) and the store stays at the last version reached.
///
/// Related documentation: NSStagedMigrationManager reference; WWDC23 "What's new in Core Data".
open class NSStagedMigrationManager: NSObject, @unchecked Sendable {
    /// The stages, in order.
    public let stages: [NSMigrationStage]
    /// During a custom stage's handler: a container with the store open at the stage's version.
    open private(set) var container: NSPersistentContainer?
    /// During a migration: the options each step opens the store with.
    private var stepOptions: [AnyHashable: Any] = [:]

    /// A manager of `stages`, oldest first.
    public init(_ stages: [NSMigrationStage]) {
        self.stages = stages
        super.init()
    }

    /// Moves the store at `url` of `type` to `destination`'s version, stage by stage. Each step
    /// opens the store with `options`, the options it is being added with (persistent history
    /// tracking among them, without which a store with history would open read-only), less those
    /// that start migrations.
    ///
    /// - Throws: `NSMigrationError` (134110) when no stage leads on from the store's version or a
    ///   stage's model is missing; a handler's error; a step's migration error.
    package func migrate(
        storeAt url: URL, type: String, to destination: NSManagedObjectModel, options: [AnyHashable: Any]? = nil
    ) throws {
        stepOptions = (options ?? [:]).filter { key, _ in
            guard let key = key as? String else { return true }
            return ![
                NSPersistentStoreStagedMigrationManagerOptionKey, NSMigratePersistentStoresAutomaticallyOption,
                NSInferMappingModelAutomaticallyOption, NSReadOnlyPersistentStoreOption,
            ].contains(key)
        }
        defer { stepOptions = [:] }
        let target = destination.versionChecksum
        let checksum = try Self.checksum(ofStoreAt: url, type: type)
        guard checksum != target else { return }
        let chain = versionChain()
        guard let start = chain.lastIndex(where: { $0.checksum == checksum }) else {
            throw Self.failure("no stage migrates from the store's version (checksum \(checksum))")
        }
        guard let end = chain[start...].firstIndex(where: { $0.checksum == target }) else {
            throw Self.failure("the stages go round without reaching the model's version")
        }
        var current = checksum
        for link in chain[(start + 1)...end] {
            switch link.step {
            case .lightweight(let label):
                let next = try model(withChecksum: link.checksum, destination: destination, label: label)
                if NSPersistentStoreCoordinator.migratesInPlace(type) {
                    // In place, in SQL, the source model from the store's own cache.
                    try Self.open(url, type: type, model: next, migrating: true, options: stepOptions).close()
                } else {
                    let source = try model(withChecksum: current, destination: destination, label: label)
                    try Self.step(url, type: type, from: source, to: next, options: stepOptions)
                }
            case .custom(let stage):
                try migrate(url, type: type, through: stage)
            case nil:
                throw Self.failure("no stage leads to the version with checksum \(link.checksum)")
            }
            current = link.checksum
        }
    }

    /// How the chain reaches a version from the one before it.
    private enum Step {
        /// Lightweight migration, for the stage labelled so.
        case lightweight(String?)
        /// The custom stage's handlers around a lightweight step between its two models.
        case custom(NSCustomMigrationStage)
    }

    /// Every version the stages name, in stage order, each with how it is reached from the one
    /// before: a lightweight stage's checksums one after another; a custom stage's next model from
    /// its current one. Apple's lightweight stages "supplement your custom migration stages and
    /// help maintain a consistent stage order": one that follows a custom stage starts from that
    /// stage's next model, whether or not it lists it, and a custom stage that follows another
    /// version is reached from it by lightweight migration.
    private func versionChain() -> [(checksum: String, step: Step?)] {
        var chain: [(checksum: String, step: Step?)] = []
        for stage in stages {
            if let lightweight = stage as? NSLightweightMigrationStage {
                for checksum in lightweight.versionChecksums where checksum != chain.last?.checksum {
                    chain.append((checksum, chain.isEmpty ? nil : .lightweight(lightweight.label)))
                }
            } else if let custom = stage as? NSCustomMigrationStage {
                let from = custom.currentModel.versionChecksum
                if from != chain.last?.checksum {
                    chain.append((from, chain.isEmpty ? nil : .lightweight(custom.label)))
                }
                chain.append((custom.nextModel.versionChecksum, .custom(custom)))
            }
        }
        return chain
    }

    /// One custom stage: its will-migrate handler with the store open at its current model, the
    /// lightweight step to its next model, its did-migrate handler with the store open at that.
    private func migrate(_ url: URL, type: String, through stage: NSCustomMigrationStage) throws {
        guard let current = stage.currentModel.checkedModel, let next = stage.nextModel.checkedModel else {
            throw Self.failure(
                "the custom stage \(stage.label ?? "") names a model that is not found with its checksum")
        }
        if let handler = stage.willMigrateHandler {
            let opened = try Self.open(url, type: type, model: current, migrating: false, options: stepOptions)
            container = opened.container
            defer {
                container = nil
                opened.close()
            }
            try handler(self, stage)
        }
        try Self.step(url, type: type, from: current, to: next, options: stepOptions)
        let migrated = try Self.open(url, type: type, model: next, migrating: false, options: stepOptions)
        if let handler = stage.didMigrateHandler {
            container = migrated.container
            defer { container = nil }
            do {
                try handler(self, stage)
            } catch {
                migrated.close()
                throw error
            }
        }
        migrated.close()
    }

    /// The model version with `checksum`: the destination, a custom stage's, or one among the
    /// program's model files.
    private func model(
        withChecksum checksum: String, destination: NSManagedObjectModel, label: String?
    ) throws -> NSManagedObjectModel {
        if destination.versionChecksum == checksum { return destination }
        for case let custom as NSCustomMigrationStage in stages {
            for reference in [custom.currentModel, custom.nextModel] where reference.versionChecksum == checksum {
                if let model = reference.checkedModel { return model }
            }
        }
        for file in ModelVersions.files(in: ModelVersions.programBundles) {
            for version in ModelVersions.versions(of: file) {
                if let model = NSManagedObjectModel(contentsOf: version), model.versionChecksum == checksum {
                    return model
                }
            }
        }
        throw Self.failure(
            "the stage \(label ?? "") names a version (checksum \(checksum)) no model file has")
    }

    /// One lightweight step between two known models: in place for a store that keeps its model
    /// (``InPlaceMigratingStore``: SQLite, PostgreSQL); through the migration manager with an
    /// inferred mapping into a new store that replaces the old one (keeping its UUID and metadata)
    /// for other types.
    private static func step(
        _ url: URL, type: String, from source: NSManagedObjectModel, to destination: NSManagedObjectModel,
        options: [AnyHashable: Any]
    ) throws {
        if NSPersistentStoreCoordinator.migratesInPlace(type) {
            try open(url, type: type, model: destination, migrating: true, options: options).close()
            return
        }
        let mapping = try ModelVersions.mappingModel(from: source, to: destination, infer: true, url: url)
        try ModelVersions.migrateReplacing(storeAt: url, type: type, from: source, to: destination, with: mapping)
    }

    /// The version checksum of the store at `url`: recorded in its metadata, else computed from
    /// its entity version hashes.
    private static func checksum(ofStoreAt url: URL, type: String) throws -> String {
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: type, at: url, options: nil)
        if let recorded = metadata["NSStoreModelVersionChecksumKey"] as? String { return recorded }
        let hashes = (metadata[NSStoreModelVersionHashesKey] as? [String: Any] ?? [:]).compactMapValues { $0 as? Data }
        return ModelVersionDigests.checksum(hashes)
    }

    /// A container with the store at `url` open with `model` (migrating lightweight to it when asked).
    private static func open(
        _ url: URL, type: String, model: NSManagedObjectModel, migrating: Bool, options: [AnyHashable: Any]
    ) throws -> (container: NSPersistentContainer, close: () -> Void) {
        let container = NSPersistentContainer(
            name: url.deletingPathExtension().lastPathComponent, managedObjectModel: model)
        let description = NSPersistentStoreDescription(url: url)
        description.type = type
        for case (let key as String, let value) in options {
            let object: NSObject? =
                switch value {
                case let flag as Bool: NSNumber(value: flag)
                case let number as Int: NSNumber(value: number)
                case let text as String: NSString(string: text)
                default: value as? NSObject
                }
            description.setOption(object, forKey: key)
        }
        description.shouldMigrateStoreAutomatically = migrating
        description.shouldInferMappingModelAutomatically = migrating
        container.persistentStoreDescriptions = [description]
        var failure: (any Error)?
        container.loadPersistentStores { _, error in failure = error }
        if let failure { throw failure }
        let coordinator = container.persistentStoreCoordinator
        return (container, { for store in coordinator.persistentStores { try? coordinator.remove(store) } })
    }

    private static func failure(_ reason: String) -> NSError {
        CoreDataError.make(NSMigrationError, "The staged migration stopped: \(reason).", ["reason": reason])
    }
}
