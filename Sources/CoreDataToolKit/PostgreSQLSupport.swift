import CoreData

/// What the tool needs of the PostgreSQL store, given by the executable that links it
/// (`coredata-postgres`). The `coredata` executable links no PostgreSQL driver, so its first build
/// compiles SQLite's stack only; given a `postgres://` URL it says which executable reads it.
public struct PostgreSQLSupport: Sendable {
    /// The PostgreSQL store's type, as the coordinator registers it (`PostgreSQLSupport.storeType`).
    static let storeType = "PostgreSQL"

    /// The model a PostgreSQL store keeps.
    let cachedModel: @Sendable (URL) throws -> NSManagedObjectModel
    /// The findings of `coredata check` on a PostgreSQL store: the store at the URL, the model to
    /// check against, and whether to compare version hashes (false for the store's own model).
    let check: @Sendable (URL, NSManagedObjectModel, Bool) throws -> [String]

    /// The PostgreSQL store's model reader and consistency check.
    public init(
        cachedModel: @escaping @Sendable (URL) throws -> NSManagedObjectModel,
        check: @escaping @Sendable (URL, NSManagedObjectModel, Bool) throws -> [String]
    ) {
        self.cachedModel = cachedModel
        self.check = check
    }

    nonisolated(unsafe) private(set) static var current: PostgreSQLSupport?

    /// The support, or a usage error naming `path` and the executable that reads PostgreSQL stores.
    static func required(for path: String) throws -> PostgreSQLSupport {
        guard let current else {
            throw ToolError.usage(
                "\(path): this coredata is built without the PostgreSQL store; PostgreSQL stores are read and written by coredata-postgres (swift run coredata-postgres …)"
            )
        }
        return current
    }

    /// Installs the support before any command runs; set once, by the executable's entry point.
    static func install(_ support: PostgreSQLSupport?) { current = support }
}

/// The `coredata` tool's entry point, shared by the `coredata` executable (SQLite, XML and binary
/// stores) and `coredata-postgres` (PostgreSQL stores too).
public enum CommandLineTool {
    /// Parses the command line and runs the command; exits with the tool's status. `postgreSQL`
    /// is the PostgreSQL store's support when the executable links it.
    public static func main(postgreSQL: PostgreSQLSupport? = nil) -> Never {
        PostgreSQLSupport.install(postgreSQL)
        CoreDataCommand.main()
        exit(0)
    }
}
