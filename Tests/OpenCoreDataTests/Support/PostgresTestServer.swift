import CoreData
import Foundation
import OpenCoreDataSQL

@testable import OpenCoreDataPostgres

/// The PostgreSQL server the PostgreSQL store's tests use: `OPENCOREDATA_POSTGRES_URL`, or the
/// throwaway server `Scripts/postgres-server.sh start` runs on 127.0.0.1:54329. Each test works in
/// a schema of its own, so tests run in parallel without seeing each other's tables.
///
/// Without a server the tests fail when `CI` is set (CI must test the store) and are left out
/// elsewhere, with one message saying how to start one.
enum PostgresTestServer {
    static let baseURL =
        ProcessInfo.processInfo.environment["OPENCOREDATA_POSTGRES_URL"]
        ?? "postgres://postgres@127.0.0.1:54329/postgres"

    /// Whether a server answers at ``baseURL`` (asked once).
    static let isAvailable: Bool = {
        guard let url = URL(string: baseURL), let location = try? PostgresLocation(url: url, options: nil),
            let link = try? PostgresLink.connect(location)
        else {
            if ProcessInfo.processInfo.environment["CI"] == nil {
                print(
                    "PostgreSQL store tests left out: no server at \(baseURL). Start one with Scripts/postgres-server.sh start."
                )
            }
            return false
        }
        link.close()
        return true
    }()

    /// Whether the PostgreSQL tests run: a server answers, or `CI` is set (they then fail).
    static var runsTests: Bool { isAvailable || ProcessInfo.processInfo.environment["CI"] != nil }

    /// The URL of a store in schema `name` (letters, digits and `_` kept, the rest `_`).
    static func url(schema name: String) -> URL {
        let schema = String(name.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "_" })
        return URL(string: baseURL + (baseURL.contains("?") ? "&" : "?") + "schema=" + schema)!
    }

    /// A schema name no other test uses.
    static func uniqueSchema(_ label: String) -> String {
        "t_" + UUID().uuidString.prefix(8).lowercased() + "_" + label
    }
}

/// A context on a new PostgreSQL store in a schema of its own (labelled `label`), with
/// CompanyModel or `model`.
func postgresStack(
    _ label: String, model: NSManagedObjectModel = CompanyModel.make(), options: [AnyHashable: Any]? = nil
) throws -> NSManagedObjectContext {
    let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
    try coordinator.addPersistentStore(
        ofType: NSPostgreSQLStoreType, configurationName: nil,
        at: PostgresTestServer.url(schema: PostgresTestServer.uniqueSchema(label)), options: options)
    let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
    context.persistentStoreCoordinator = coordinator
    return context
}

extension PostgresTestServer {
    /// Runs `sql` on the test server with `values` bound to its `$n` placeholders, and returns the
    /// first column of its first row as an integer (0 when there is none).
    static func run(_ sql: String, _ values: [SQLValue] = []) throws -> Int64 {
        let location = try PostgresLocation(url: URL(string: baseURL), options: nil)
        let link = try PostgresLink.connect(location)
        defer { link.close() }
        if case .integer(let value)? = try link.query(sql, values).rows.first?.first { return value }
        return 0
    }
}
