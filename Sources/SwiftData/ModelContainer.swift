import OpenCoreData
import OpenCoreDataSQLite

/// The schema of an app's models and the stores they are saved in: a Core Data stack (a
/// coordinator with an SQLite or in-memory store per configuration) under SwiftData's API, so the
/// stores are Core Data's, in Apple's layout, with persistent history on as SwiftData keeps it.
///
/// Related documentation: SwiftData, `ModelContainer`.
public final class ModelContainer: @unchecked Sendable {
    /// The schema of the container's models.
    public let schema: Schema
    /// The container's configurations.
    public let configurations: [ModelConfiguration]
    /// The plan that migrates a store written with an earlier version of the schema.
    public let migrationPlan: (any SchemaMigrationPlan.Type)?
    let coordinator: NSPersistentStoreCoordinator
    /// The store of each configuration, in the same order.
    private var stores: [NSPersistentStore]
    /// Guards the main context and the stores while they change.
    private let mainContextLock = NSLock()
    nonisolated(unsafe) private var madeMainContext: ModelContext?

    /// A container for `types`, stored as `configurations` say (the default configuration when
    /// none is given).
    ///
    /// - Throws: `NSPersistentStoreIncompatibleSchemaError` (134020) for a model property whose
    ///   type cannot be stored; the store's error when it cannot be opened.
    public convenience init(
        for types: any PersistentModel.Type..., migrationPlan: (any SchemaMigrationPlan.Type)? = nil,
        configurations: ModelConfiguration...
    ) throws {
        try self.init(for: Schema(types), migrationPlan: migrationPlan, configurations: configurations)
    }

    /// A container for `schema`, stored as `configurations` say (the default configuration when
    /// none is given).
    ///
    /// - Throws: `NSPersistentStoreIncompatibleSchemaError` (134020) for a model property whose
    ///   type cannot be stored; the store's error when it cannot be opened.
    public init(
        for schema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)? = nil,
        configurations: [ModelConfiguration] = []
    ) throws {
        guard schema.problems.isEmpty else {
            throw NSError(
                domain: NSCocoaErrorDomain, code: NSPersistentStoreIncompatibleSchemaError,
                userInfo: [NSLocalizedDescriptionKey: schema.problems.joined(separator: " ")])
        }
        self.schema = schema
        let configurations = configurations.isEmpty ? [ModelConfiguration()] : configurations
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: schema.managedObjectModel)
        self.configurations = configurations
        self.coordinator = coordinator
        let staged = migrationPlan.map { plan in NSStagedMigrationManager(plan.stages.map(\.coreDataStage)) }
        stores = try configurations.map { try Self.addStore(for: $0, to: coordinator, migratingWith: staged) }
        self.migrationPlan = migrationPlan
    }

    /// A container of the stores `coordinator` has open, for a migration stage's handler.
    init(schema: Schema, openStoresOf coordinator: NSPersistentStoreCoordinator) {
        self.schema = schema
        self.coordinator = coordinator
        configurations = []
        stores = []
        migrationPlan = nil
    }

    /// The options every store of a container is opened with: persistent history on, as SwiftData
    /// keeps it, lightweight migration inferred, read-only when the configuration allows no saves.
    private static func options(
        for configuration: ModelConfiguration, migratingWith staged: NSStagedMigrationManager? = nil
    ) -> [AnyHashable: Any] {
        var options: [AnyHashable: Any] = [
            NSPersistentHistoryTrackingKey: true, NSMigratePersistentStoresAutomaticallyOption: true,
            NSInferMappingModelAutomaticallyOption: true,
        ]
        if !configuration.allowsSave { options[NSReadOnlyPersistentStoreOption] = true }
        if let staged { options[NSPersistentStoreStagedMigrationManagerOptionKey] = staged }
        return options
    }

    private static func addStore(
        for configuration: ModelConfiguration, to coordinator: NSPersistentStoreCoordinator,
        migratingWith staged: NSStagedMigrationManager? = nil
    ) throws -> NSPersistentStore {
        let options = options(for: configuration, migratingWith: staged)
        if configuration.isStoredInMemoryOnly {
            return try coordinator.addPersistentStore(
                ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: options)
        }
        if configuration.isPostgreSQL {
            return try coordinator.addPersistentStore(
                ofType: ModelConfiguration.postgreSQLStoreType, configurationName: nil, at: configuration.url,
                options: options)
        }
        try FileManager.default.createDirectory(
            at: configuration.url.deletingLastPathComponent(), withIntermediateDirectories: true)
        return try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: configuration.url, options: options)
    }

    /// Deletes every model of the container's stores: each store is removed, its file destroyed,
    /// and an empty store opened in its place. The main context forgets its models. A store that
    /// cannot be deleted is reported on standard error and left as it was, so nothing is lost
    /// silently half-way.
    public func deleteAllData() {
        mainContextLock.lock()
        defer { mainContextLock.unlock() }
        madeMainContext?.managedObjectContext.reset()
        for (index, configuration) in configurations.enumerated() {
            do {
                try coordinator.remove(stores[index])
                if !configuration.isStoredInMemoryOnly {
                    try coordinator.destroyPersistentStore(
                        at: configuration.url,
                        ofType: configuration.isPostgreSQL ? ModelConfiguration.postgreSQLStoreType : NSSQLiteStoreType,
                        options: Self.options(for: configuration))
                }
                stores[index] = try Self.addStore(for: configuration, to: coordinator)
            } catch {
                FileHandle.standardError.write(
                    Data("SwiftData: deleteAllData could not delete the store \(configuration.name): \(error)\n".utf8))
            }
        }
    }

    /// The context of the main actor, made the first time it is asked for.
    @MainActor public var mainContext: ModelContext {
        mainContextLock.lock()
        defer { mainContextLock.unlock() }
        if let madeMainContext { return madeMainContext }
        let context = ModelContext(self)
        context.isMainContext = true
        context.autosaveEnabled = true
        madeMainContext = context
        return context
    }
}
