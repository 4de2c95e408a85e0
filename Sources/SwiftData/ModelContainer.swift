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
    let coordinator: NSPersistentStoreCoordinator
    private let mainContextLock = NSLock()
    nonisolated(unsafe) private var madeMainContext: ModelContext?

    /// A container for `types`, stored as `configurations` say (the default configuration when
    /// none is given).
    ///
    /// - Throws: `NSPersistentStoreIncompatibleSchemaError` (134020) for a model property whose
    ///   type cannot be stored; the store's error when it cannot be opened.
    public convenience init(for types: any PersistentModel.Type..., configurations: ModelConfiguration...) throws {
        try self.init(for: Schema(types), configurations: configurations)
    }

    /// A container for `schema`, stored as `configurations` say (the default configuration when
    /// none is given).
    ///
    /// - Throws: `NSPersistentStoreIncompatibleSchemaError` (134020) for a model property whose
    ///   type cannot be stored; the store's error when it cannot be opened.
    public init(for schema: Schema, configurations: [ModelConfiguration] = []) throws {
        guard schema.problems.isEmpty else {
            throw NSError(
                domain: NSCocoaErrorDomain, code: NSPersistentStoreIncompatibleSchemaError,
                userInfo: [NSLocalizedDescriptionKey: schema.problems.joined(separator: " ")])
        }
        self.schema = schema
        self.configurations = configurations.isEmpty ? [ModelConfiguration()] : configurations
        coordinator = NSPersistentStoreCoordinator(managedObjectModel: schema.managedObjectModel)
        for configuration in self.configurations {
            var options: [AnyHashable: Any] = [
                NSPersistentHistoryTrackingKey: true, NSMigratePersistentStoresAutomaticallyOption: true,
                NSInferMappingModelAutomaticallyOption: true,
            ]
            if !configuration.allowsSave { options[NSReadOnlyPersistentStoreOption] = true }
            if configuration.isStoredInMemoryOnly {
                try coordinator.addPersistentStore(
                    ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: options)
            } else {
                try FileManager.default.createDirectory(
                    at: configuration.url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try coordinator.addPersistentStore(
                    ofType: NSSQLiteStoreType, configurationName: nil, at: configuration.url, options: options)
            }
        }
    }

    /// The context of the main actor, made the first time it is asked for.
    @MainActor public var mainContext: ModelContext {
        mainContextLock.lock()
        defer { mainContextLock.unlock() }
        if let madeMainContext { return madeMainContext }
        let context = ModelContext(self)
        madeMainContext = context
        return context
    }
}
