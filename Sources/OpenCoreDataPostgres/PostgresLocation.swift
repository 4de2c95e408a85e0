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
/// The option key of the TLS mode, as libpq's `sslmode` names and means it: `"disable"` (the
/// default), `"prefer"` (TLS when the server offers it), `"require"` (TLS, the server's certificate
/// not checked), `"verify-ca"` (TLS, the certificate signed by a trusted authority) or
/// `"verify-full"` (that, and issued for the host connected to); it replaces the URL's `sslmode`
/// query item.
public let PostgreSQLTLSModeOption = "PostgreSQLTLSModeOption"
/// The option key of the file of trusted certificate authorities (PEM) for `verify-ca` and
/// `verify-full`, as libpq's `sslrootcert`; without it, the system's. It replaces the URL's
/// `sslrootcert` query item.
public let PostgreSQLTLSRootCertificatesOption = "PostgreSQLTLSRootCertificatesOption"

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
    /// The trusted authorities' file, or `nil` for the system's.
    var rootCertificates: String?
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
        rootCertificates = (options?[PostgreSQLTLSRootCertificatesOption] as? String) ?? items["sslrootcert"]
        let timeout = (options?[NSPersistentStoreTimeoutOption] as? Double) ?? Double(items["connect_timeout"] ?? "")
        connectTimeout = max(1, min(Int(timeout ?? 10), 3600))
        guard ["disable", "prefer", "require", "verify-ca", "verify-full"].contains(tlsMode) else {
            throw CoreDataError.make(
                NSPersistentStoreOpenError,
                "Unknown PostgreSQL TLS mode \(tlsMode): use disable, prefer, require, verify-ca or verify-full.",
                [NSURLErrorKey: url])
        }
    }

    /// The URL of this location without its password, as the store reports it.
    var description: String {
        "postgres://\(user)@\(host):\(port)/\(database)" + (schema.map { "?schema=\($0)" } ?? "")
    }

    /// postgres-nio's TLS setting for ``tlsMode``, as libpq's `sslmode` means it: `prefer` and
    /// `require` encrypt without checking the server's certificate; `verify-ca` checks it against
    /// the trusted authorities (``rootCertificates``, else the system's), `verify-full` also checks
    /// that it names the host.
    ///
    /// - Throws: NIOSSL's error when its context cannot be made (an unreadable authorities' file).
    func tls() throws -> PostgresConnection.Configuration.TLS {
        var configuration = TLSConfiguration.makeClientConfiguration()
        switch tlsMode {
        case "prefer", "require": configuration.certificateVerification = .none
        case "verify-ca": configuration.certificateVerification = .noHostnameVerification
        default: configuration.certificateVerification = .fullVerification
        }
        if let rootCertificates { configuration.trustRoots = .file(rootCertificates) }
        switch tlsMode {
        case "disable": return .disable
        case "prefer": return .prefer(try NIOSSLContext(configuration: configuration))
        default: return .require(try NIOSSLContext(configuration: configuration))
        }
    }
}
