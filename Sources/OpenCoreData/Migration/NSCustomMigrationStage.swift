/// A stage that migrates a store from one model version to the next, calling your code before
/// (``willMigrateHandler``, the manager's `container` open on the store at `currentModel`) and
/// after (``didMigrateHandler``, the container open at `nextModel`) the lightweight migration
/// between them — where data that inference cannot move is moved by hand.
///
/// ```swift
/// let split = NSCustomMigrationStage(migratingFrom: v2Reference, to: v3Reference)
/// split.didMigrateHandler = { manager, _ in
///     let context = manager.container!.newBackgroundContext()
///     try context.performAndWait { … try context.save() }
/// }
/// ```
open class NSCustomMigrationStage: NSMigrationStage, @unchecked Sendable {
    /// The model version the stage migrates from.
    public let currentModel: NSManagedObjectModelReference
    /// The model version the stage migrates to.
    public let nextModel: NSManagedObjectModelReference
    /// Called before the migration, with the store open at ``currentModel``.
    open var willMigrateHandler: ((NSStagedMigrationManager, NSCustomMigrationStage) throws -> Void)?
    /// Called after the migration, with the store open at ``nextModel``.
    open var didMigrateHandler: ((NSStagedMigrationManager, NSCustomMigrationStage) throws -> Void)?

    /// A stage from `currentModel` to `nextModel`.
    public init(migratingFrom currentModel: NSManagedObjectModelReference, to nextModel: NSManagedObjectModelReference)
    {
        self.currentModel = currentModel
        self.nextModel = nextModel
        super.init()
    }
}
