import OpenCoreData
import OpenCoreDataSQL

extension PostgresLink: SQLRowRunner, SQLPooledConnection {
    func select(_ sql: String, _ values: [SQLValue]) throws -> [[SQLValue]] { try read(sql, values) }

    func select(_ sql: String, _ values: [SQLValue], eachRow body: ([SQLValue]) throws -> Void) throws {
        try query(sql, values, eachRow: body)
    }

    func change(_ sql: String, _ values: [SQLValue]) throws -> Int { try query(sql, values).changes }

    func hasTable(_ name: String) throws -> Bool {
        let quoted = PostgreSQLDialect().quote(name)
        return try query("SELECT to_regclass($1)::text", [.text(quoted)]).rows.first?.first.map { $0 != .null } ?? false
    }
}
