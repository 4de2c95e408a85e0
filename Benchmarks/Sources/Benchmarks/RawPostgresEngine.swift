import Foundation
import Logging
import PostgresNIO

/// The PostgreSQL baseline: the benchmark's operations written by hand against postgres-nio, as a
/// synchronous program would (each statement sent and waited for), with one transaction per
/// write and the table as a person would declare it.
final class RawPostgres: PostgresBenchmarkEngine {
    let name = "postgres-nio by hand"
    private var connection: PostgresConnection!
    private let logger = Logger(label: "bench")
    private var nextID = 0
    private var count: Int { PostgresBenchmarks.count }

    init() {
        var configuration = PostgresConnection.Configuration(
            host: PostgresBenchmarks.host, port: PostgresBenchmarks.port, username: PostgresBenchmarks.user,
            password: nil, database: PostgresBenchmarks.database, tls: .disable)
        configuration.options.additionalStartupParameters = [("search_path", "bench_raw")]
        connection = try! PostgresConnection.connect(
            on: PostgresConnection.defaultEventLoopGroup.any(), configuration: configuration, id: 1, logger: logger
        ).wait()
    }

    @discardableResult
    private func run(_ query: PostgresQuery) -> PostgresQueryResult {
        try! connection.query(query, logger: logger).wait()
    }

    func reset() {
        run("DROP SCHEMA IF EXISTS bench_raw CASCADE")
        for statement in Self.personTable(in: "bench_raw") + Self.graphTables(in: "bench_raw") {
            run(PostgresQuery(unsafeSQL: statement))
        }
        nextID = 0
    }

    /// The statements that make `schema` with the suite's table, as a person would declare it:
    /// the hand-written engine's and Fluent's, the same so the two compare.
    static func personTable(in schema: String) -> [String] {
        [
            "CREATE SCHEMA \(schema)",
            """
            CREATE TABLE \(schema).person (id BIGINT PRIMARY KEY, name TEXT COLLATE "C", email TEXT COLLATE "C",
            age BIGINT, salary DOUBLE PRECISION, active BOOLEAN, created DOUBLE PRECISION, note TEXT)
            """,
            "CREATE INDEX person_email ON \(schema).person (email)",
        ]
    }

    /// The graph's two tables in `schema`, as a person would declare them: the hand-written
    /// engine's and Fluent's.
    static func graphTables(in schema: String) -> [String] {
        [
            "CREATE TABLE \(schema).department (id BIGINT PRIMARY KEY, name TEXT COLLATE \"C\", budget DOUBLE PRECISION)",
            """
            CREATE TABLE \(schema).employee (id BIGINT PRIMARY KEY, name TEXT COLLATE "C", age BIGINT,
            department BIGINT REFERENCES \(schema).department (id))
            """,
            "CREATE INDEX employee_department ON \(schema).employee (department)",
        ]
    }

    /// The statements that fill the graph's tables in `schema` on the server (set-up, untimed):
    /// the rows the SQLite suite's engines insert.
    static func graphRows(in schema: String) -> [PostgresQuery] {
        let (departments, count) = (SQLiteBenchmarks.departments, PostgresBenchmarks.count)
        return [
            """
            INSERT INTO \(unescaped: schema).department SELECT g, 'Department ' || g, g \
            FROM generate_series(0, \(departments - 1)) g
            """,
            """
            INSERT INTO \(unescaped: schema).employee SELECT g, 'Employee ' || g, 18 + g % 60, g % \(departments) \
            FROM generate_series(0, \(count - 1)) g
            """,
        ]
    }

    func prepareGraph() {
        for statement in Self.graphRows(in: "bench_raw") { run(statement) }
    }

    /// The graph's rows decoded as an app would use them.
    private func employees(_ query: PostgresQuery) -> [(id: Int, name: String, age: Int, department: Int)] {
        run(query).rows.map { try! $0.decode((Int, String, Int, Int).self) }
    }

    private func departments(_ query: PostgresQuery) -> [(id: Int, name: String, budget: Double)] {
        run(query).rows.map { try! $0.decode((Int, String, Double).self) }
    }

    func followToOne() -> Int {
        var budgets: [Int: Double] = [:]
        var total = 0
        for employee in employees("SELECT id, name, age, department FROM employee") {
            if budgets[employee.department] == nil {
                budgets[employee.department] =
                    departments("SELECT id, name, budget FROM department WHERE id = \(employee.department)").first?
                    .budget
            }
            total &+= Int(budgets[employee.department] ?? 0)
        }
        return total
    }

    func followToMany() -> Int {
        var total = 0
        for department in departments("SELECT id, name, budget FROM department") {
            let members = employees(
                "SELECT id, name, age, department FROM employee WHERE department = \(department.id)")
            total &+= members.reduce(0) { $0 &+ $1.age }
        }
        return total
    }

    /// Inserts `row`; `notifying`, with PostgreSQL's notification sent in the same statement, as
    /// the store's save of one new object does (`WITH … INSERT … RETURNING`, then `pg_notify` of a
    /// row it returned). The channel and payload are fixed text of the statement.
    private func insert(_ row: SQLiteBenchmarks.Row, notifying: Bool = false) {
        let (head, tail) =
            notifying
            ? ("WITH saved AS (", " RETURNING 1) SELECT pg_notify('bench_raw', 'by hand') FROM saved") : ("", "")
        run(
            """
            \(unescaped: head)INSERT INTO person (id, name, email, age, salary, active, created, note) VALUES \
            (\(row.id), \(row.name), \(row.email), \(row.age), \(row.salary), \(row.active), \
            \(row.created.timeIntervalSinceReferenceDate), \(row.note))\(unescaped: tail)
            """)
    }

    func insertAll() -> Int {
        run("BEGIN")
        for index in 0..<count { insert(SQLiteBenchmarks.Row(index)) }
        run("COMMIT")
        nextID = count
        return count
    }

    /// Rows decoded into the benchmark's row type, as an app would use them.
    private func rows(_ query: PostgresQuery) -> [SQLiteBenchmarks.Row] {
        run(query).rows.map { row in
            let (id, name, email, age, salary, active, created, note) = try! row.decode(
                (Int, String, String, Int, Double, Bool, Double, String?).self)
            return SQLiteBenchmarks.Row(
                id: id, name: name, email: email, age: age, salary: salary, active: active,
                created: Date(timeIntervalSinceReferenceDate: created), note: note)
        }
    }

    func fetchAll() -> Int {
        rows("SELECT id, name, email, age, salary, active, created, note FROM person").reduce(0) { $0 &+ $1.age }
    }

    func query() -> Int {
        var total = 0
        for _ in 0..<10 {
            total &+= rows(
                """
                SELECT id, name, email, age, salary, active, created, note FROM person \
                WHERE age >= \(30) AND active = \(true) AND salary > \(1000.0) ORDER BY salary DESC LIMIT \(100)
                """
            ).reduce(0) { $0 &+ $1.id }
        }
        return total
    }

    func queryByName() -> Int {
        var total = 0
        for _ in 0..<10 {
            total &+= rows(
                """
                SELECT id, name, email, age, salary, active, created, note FROM person \
                WHERE age >= \(30) AND active = \(true) AND salary > \(1000.0) ORDER BY name LIMIT \(100)
                """
            ).reduce(0) { $0 &+ $1.id }
        }
        return total
    }

    func countMatching() -> Int {
        var total = 0
        for _ in 0..<10 {
            let result = run(
                "SELECT count(*) FROM person WHERE age >= \(30) AND active = \(true) AND salary > \(1000.0)")
            total &+= try! result.rows.first!.decode(Int.self)
        }
        return total
    }

    func indexedLookups() -> Int {
        var total = 0
        for index in stride(from: 0, to: count, by: count / 1000) {
            total &+= rows(
                """
                SELECT id, name, email, age, salary, active, created, note FROM person \
                WHERE email = \("person\(index)@example.com")
                """
            ).reduce(0) { $0 &+ $1.id }
        }
        return total
    }

    func updateTenth() -> Int {
        run("BEGIN")
        for id in stride(from: 0, to: count, by: 10) {
            run("UPDATE person SET salary = salary + 1, note = \("raised") WHERE id = \(id)")
        }
        run("COMMIT")
        return count / 10
    }

    func deleteTenth() -> Int {
        run("BEGIN")
        for id in stride(from: 0, to: count, by: 10) { run("DELETE FROM person WHERE id = \(id)") }
        run("COMMIT")
        return count / 10
    }

    func singleInserts() -> Int { singleInserts(notifying: false) }

    /// ``singleInserts()`` with each insert sending the store's notification: what telling other
    /// coordinators costs, written by hand.
    func singleInsertsNotifying() -> Int { singleInserts(notifying: true) }

    private func singleInserts(notifying: Bool) -> Int {
        for _ in 0..<1000 {
            insert(SQLiteBenchmarks.Row(nextID), notifying: notifying)
            nextID += 1
        }
        return 1000
    }
}

/// Drops the Core Data and Fluent engines' schemas between runs and makes Fluent's table.
final class RawPostgresAdmin {
    private let connection: PostgresConnection
    private let logger = Logger(label: "bench-admin")

    init() {
        let configuration = PostgresConnection.Configuration(
            host: PostgresBenchmarks.host, port: PostgresBenchmarks.port, username: PostgresBenchmarks.user,
            password: nil, database: PostgresBenchmarks.database, tls: .disable)
        connection = try! PostgresConnection.connect(
            on: PostgresConnection.defaultEventLoopGroup.any(), configuration: configuration, id: 2, logger: logger
        ).wait()
    }

    /// Runs a statement of the engines' own setup, with no values.
    func run(_ sql: String) {
        _ = try! connection.query(PostgresQuery(unsafeSQL: sql), logger: logger).wait()
    }

    /// Runs a statement of the engines' own setup, its values bound.
    func run(_ query: PostgresQuery) {
        _ = try! connection.query(query, logger: logger).wait()
    }

    /// Vacuums and analyzes every table of the database, waiting for it: what autovacuum would
    /// otherwise do at a moment of its own choosing (it looks every minute), in the middle of
    /// whichever engine is being measured then.
    func settle() {
        run("VACUUM ANALYZE")
    }

    func dropSchema(_ name: String) {
        _ = try! connection.query("DROP SCHEMA IF EXISTS \(unescaped: name) CASCADE", logger: logger).wait()
    }
}
