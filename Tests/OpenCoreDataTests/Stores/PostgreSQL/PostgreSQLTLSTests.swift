import CoreData
import Foundation
import Testing

@testable import OpenCoreDataPostgres

/// TLS to the server ("credentials from the URL or options; TLS when asked"), with
/// libpq's `sslmode` meanings (PostgreSQL documentation, "SSL Support": `require` encrypts without
/// checking the certificate, `verify-ca` checks it against trusted authorities, `verify-full` also
/// checks the host name). The test server (`Scripts/postgres-server.sh`) offers TLS with a
/// self-signed certificate for 127.0.0.1, trusted here through its file.
@Suite(
    "PostgreSQL store: TLS", .enabled(if: PostgresTestServer.runsTests && PostgresTLSTestSetup.runsTests))
struct PostgreSQLTLSTests {
    /// Whether the connection to `url` is encrypted, as the server sees it.
    func encrypted(_ url: URL, options: [AnyHashable: Any]? = nil) throws -> Bool {
        let link = try PostgresLink.connect(try PostgresLocation(url: url, options: options))
        defer { link.close() }
        let rows = try link.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").rows
        return rows.first?.first == .integer(1)
    }

    func url(_ query: String) -> URL {
        URL(string: PostgresTestServer.url(schema: PostgresTestServer.uniqueSchema("tls")).absoluteString + query)!
    }

    @Test("sslmode=disable is plain; require encrypts without checking the self-signed certificate")
    func modesThatDoNotVerify() throws {
        #expect(try !encrypted(url("&sslmode=disable")))
        #expect(try encrypted(url("&sslmode=require")))
        #expect(try encrypted(url("&sslmode=prefer")))
        // The option replaces the URL's query item.
        #expect(try encrypted(url("&sslmode=disable"), options: [PostgreSQLTLSModeOption: "require"]))
    }

    @Test("verify-ca and verify-full accept a certificate a trusted authority signed, and refuse it otherwise")
    func modesThatVerify() throws {
        let ca = try #require(PostgresTLSTestSetup.certificate)
        #expect(try encrypted(url("&sslmode=verify-ca&sslrootcert=\(ca)")))
        #expect(try encrypted(url("&sslmode=verify-full"), options: [PostgreSQLTLSRootCertificatesOption: ca]))
        // The system's authorities never signed the test server's certificate: 134080.
        let refused = #expect(throws: NSError.self) { try encrypted(url("&sslmode=verify-full")) }
        #expect(refused?.code == NSPersistentStoreOpenError)
        // A store opens, saves and reads over a verified connection.
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
        try coordinator.addPersistentStore(
            ofType: NSPostgreSQLStoreType, configurationName: nil, at: url("&sslmode=verify-full&sslrootcert=\(ca)"))
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        context.employee("Ada")
        try context.save()
        context.reset()
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Employee")) == 1)
    }
}

/// Where the test server's certificate is: `OPENCOREDATA_POSTGRES_CA`, or the file
/// `Scripts/postgres-server.sh` writes. Under `CI` the TLS tests run (and fail) without it.
enum PostgresTLSTestSetup {
    static let certificate: String? = {
        let environment = ProcessInfo.processInfo.environment
        let path =
            environment["OPENCOREDATA_POSTGRES_CA"]
            ?? (environment["TMPDIR"] ?? "/tmp") + "/opencoredata-postgres-54329/server.crt"
        return FileManager.default.isReadableFile(atPath: path) ? path : nil
    }()

    static var runsTests: Bool { certificate != nil || ProcessInfo.processInfo.environment["CI"] != nil }
}
