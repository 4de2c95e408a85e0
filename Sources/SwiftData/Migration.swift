import OpenCoreData

extension Schema {
    /// A version of a schema: major, minor and patch numbers, ordered as numbers.
    ///
    /// Related documentation: SwiftData, `Schema.Version`.
    public struct Version: Codable, Hashable, Comparable, Sendable, CustomStringConvertible {
        /// The major number.
        public let major: Int
        /// The minor number.
        public let minor: Int
        /// The patch number.
        public let patch: Int

        /// The version `major.minor.patch`.
        public init(_ major: Int, _ minor: Int, _ patch: Int) {
            self.major = major
            self.minor = minor
            self.patch = patch
        }

        /// Orders versions by major, then minor, then patch number.
        public static func < (lhs: Version, rhs: Version) -> Bool {
            (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
        }

        /// `major.minor.patch`.
        public var description: String { "\(major).\(minor).\(patch)" }
    }

    /// The schema of a versioned schema's models, at its version.
    public convenience init(versionedSchema: any VersionedSchema.Type) {
        self.init(versionedSchema.models, version: versionedSchema.versionIdentifier)
    }
}

/// One version of an app's schema: its model classes (usually nested in the type, so each version
/// keeps its own) and its version.
///
/// Related documentation: SwiftData, `VersionedSchema`.
public protocol VersionedSchema {
    /// The version.
    static var versionIdentifier: Schema.Version { get }
    /// The model classes of the version.
    static var models: [any PersistentModel.Type] { get }
}

/// How a store written with an earlier version of the schema reaches the current one: the
/// versions, oldest first, and a stage from each to the next.
///
/// Related documentation: SwiftData, `SchemaMigrationPlan`.
public protocol SchemaMigrationPlan {
    /// The versions, oldest first.
    static var schemas: [any VersionedSchema.Type] { get }
    /// The stages, oldest first.
    static var stages: [MigrationStage] { get }
}

/// One step of a migration plan: lightweight (Core Data infers the changes), or custom (your
/// code runs with a context of the store at the old version before the step, and at the new
/// version after it).
///
/// Related documentation: SwiftData, `MigrationStage`.
public enum MigrationStage: @unchecked Sendable {
    /// A lightweight step from one version to the next.
    case lightweight(fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type)
    /// A step with `willMigrate` run before it, on a context of the store at `fromVersion`, and
    /// `didMigrate` after it, on a context of the store at `toVersion`.
    case custom(
        fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type,
        willMigrate: ((ModelContext) throws -> Void)?, didMigrate: ((ModelContext) throws -> Void)?)

    /// The stage as a Core Data staged-migration stage between the two versions' models: a
    /// custom stage, whose step is lightweight, with the handlers (none for a lightweight stage).
    var coreDataStage: NSCustomMigrationStage {
        let from: any VersionedSchema.Type
        let to: any VersionedSchema.Type
        var willMigrate: ((ModelContext) throws -> Void)?
        var didMigrate: ((ModelContext) throws -> Void)?
        switch self {
        case .lightweight(let fromVersion, let toVersion):
            (from, to) = (fromVersion, toVersion)
        case .custom(let fromVersion, let toVersion, let will, let did):
            (from, to, willMigrate, didMigrate) = (fromVersion, toVersion, will, did)
        }
        let fromSchema = Schema(versionedSchema: from)
        let toSchema = Schema(versionedSchema: to)
        func reference(_ schema: Schema) -> NSManagedObjectModelReference {
            NSManagedObjectModelReference(
                model: schema.managedObjectModel, versionChecksum: schema.managedObjectModel.versionChecksum)
        }
        let stage = NSCustomMigrationStage(migratingFrom: reference(fromSchema), to: reference(toSchema))
        stage.label = "\(from.versionIdentifier) to \(to.versionIdentifier)"
        func handler(_ body: ((ModelContext) throws -> Void)?, _ schema: Schema)
            -> ((NSStagedMigrationManager, NSCustomMigrationStage) throws -> Void)?
        {
            guard let body else { return nil }
            return { manager, _ in
                guard let coordinator = manager.container?.persistentStoreCoordinator else { return }
                try body(ModelContext(ModelContainer(schema: schema, openStoresOf: coordinator)))
            }
        }
        stage.willMigrateHandler = handler(willMigrate, fromSchema)
        stage.didMigrateHandler = handler(didMigrate, toSchema)
        return stage
    }
}
