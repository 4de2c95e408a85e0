/// A stage of lightweight migrations through model versions named by their version checksums
/// (``NSManagedObjectModel/versionChecksum``), in order: a store at any of the versions moves to
/// the next one, step by step, each step inferred. The models are found by checksum among the
/// program's model files and the models the other stages name.
///
/// ```swift
/// let early = NSLightweightMigrationStage([v1.versionChecksum, v2.versionChecksum, v3.versionChecksum])
/// ```
open class NSLightweightMigrationStage: NSMigrationStage, @unchecked Sendable {
    /// The version checksums of the stage's model versions, oldest first.
    public let versionChecksums: [String]

    /// A stage through the model versions with `versionChecksums`, oldest first.
    public init(_ versionChecksums: [String]) {
        self.versionChecksums = versionChecksums
        super.init()
    }
}
