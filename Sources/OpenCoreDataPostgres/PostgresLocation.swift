import Foundation
import OpenCoreData
import PostgresNIO

/// The option key of the PostgreSQL user name; it replaces the URL's user.
public let PostgreSQLUserOption = "PostgreSQLUserOption"
/// The option key of the PostgreSQL password; it replaces the URL's password.
public let PostgreSQLPasswordOption = "PostgreSQLPasswordOption"
/// The option key of the schema (PostgreSQL's namespace within a database) that holds the store's
/// tables, created when missing; it replaces the URL's `schema` query item. Without either, the
/// tables are in the user's default schema (`public`).
public let PostgreSQLSchemaOption = "PostgreSQLSchemaOption"
/// The option key of the TLS mode, as libpq's `sslmode` names it: `"disable"` (the default),
/// `"prefer"` or `"require"`; it replaces the URL's `sslmode` query item.
public let PostgreSQLTLSModeOption = "PostgreSQLTLSModeOption"

/// Where a PostgreSQL store is: a `postgres://user:password@host:port/database?schema=…&sslmode=…`
/// URL (or `postgresql://`, as libpq accepts), with the options above taking precedence.
struct PostgresLocation: Equatable {
    var host: String
    var port: Int
    var user: String
    var password: String?
    var database: String
    var schema: String?
    var tlsMode: String
    var connectTimeout: Int

    /// Reads `url` and `options`.
    ///
    /// - Throws: `NSPersistentStoreOpenError` (134080) for a URL that is not a PostgreSQL URL, or a
    ///   TLS mode this store does not know.
    init(url: URL?, options: [AnyHashable: Any]?) throws {
        guard let url, let scheme = url.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql",
            let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else {
            throw CoreDataError.make(
                NSPersistentStoreOpenError,
                "A PostgreSQL store needs a postgres:// URL (postgres://user@host:port/database), not \(url?.absoluteString ?? "none").",
                [NSURLErrorKey: url as Any])
        }
        let items = Dictionary(
            (components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { _, last in last })
        host = components.host.flatMap { $0.isEmpty ? nil : $0 } ?? "127.0.0.1"
        port = components.port ?? 5432
        user = (options?[PostgreSQLUserOption] as? String) ?? components.user ?? "postgres"
        password = (options?[PostgreSQLPasswordOption] as? String) ?? components.password
        let path = components.path.drop { $0 == "/" }
        database = path.isEmpty ? user : String(path)
        schema = (options?[PostgreSQLSchemaOption] as? String) ?? items["schema"]
        tlsMode = ((options?[PostgreSQLTLSModeOption] as? String) ?? items["sslmode"] ?? "disable").lowercased()
        let timeout = (options?[NSPersistentStoreTimeoutOption] as? Double) ?? Double(items["connect_timeout"] ?? "")
        connectTimeout = max(1, min(Int(timeout ?? 10), 3600))
        guard ["disable", "prefer", "require"].contains(tlsMode) else {
            throw CoreDataError.make(
                NSPersistentStoreOpenError,
                "Unknown PostgreSQL TLS mode \(tlsMode): use disable, prefer or require.", [NSURLErrorKey: url])
        }
    }

    /// The URL of this location without its password, as the store reports it.
    var description: String {
        "postgres://\(user)@\(host):\(port)/\(database)" + (schema.map { "?schema=\($0)" } ?? "")
    }

    /// postgres-nio's TLS setting for ``tlsMode``, with the system's trusted roots.
    ///
    /// - Throws: NIOSSL's error when its context cannot be made.
    func tls() throws -> PostgresConnection.Configuration.TLS {
        switch tlsMode {
        case "prefer": return .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
        case "require": return .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        default: return .disable
        }
    }
}
