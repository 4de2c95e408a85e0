/// One stage of a staged migration (``NSStagedMigrationManager``): a run of lightweight steps
/// (``NSLightweightMigrationStage``) or one step with your code before and after it
/// (``NSCustomMigrationStage``).
///
/// Related documentation: NSMigrationStage reference (Apple's 2023 staged-migration API).
open class NSMigrationStage: NSObject, @unchecked Sendable {
    /// A name for the stage, for your own logs.
    open var label: String?

    override init() {
        super.init()
    }
}
