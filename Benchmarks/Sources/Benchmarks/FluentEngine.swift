import FluentKit
import FluentPostgresDriver
import Foundation
import Logging
import NIOCore
import NIOPosix

/// The suite's person as a Fluent model, on the hand-written engine's table layout.
final class FluentPerson: Model, @unchecked Sendable {
    static let schema = "person"

    @ID(custom: "id", generatedBy: .user) var id: Int?
    @Field(key: "name") var name: String
    @Field(key: "email") var email: String
    @Field(key: "age") var age: Int
    @Field(key: "salary") var salary: Double
    @Field(key: "active") var active: Bool
    @Field(key: "created") var created: Double
    @OptionalField(key: "note") var note: String?

    init() {}

    init(_ row: SQLiteBenchmarks.Row) {
        id = row.id
        name = row.name
        email = row.email
        age = row.age
        salary = row.salary
        active = row.active
        created = row.created.timeIntervalSinceReferenceDate
        note = row.note
    }
}

/// The graph's department as a Fluent model, its employees as Fluent children.
final class FluentDepartment: Model, @unchecked Sendable {
    static let schema = "department"

    @ID(custom: "id", generatedBy: .user) var id: Int?
    @Field(key: "name") var name: String
    @Field(key: "budget") var budget: Double
    @Children(for: \.$department) var employees: [FluentEmployee]

    init() {}
}

/// The graph's employee as a Fluent model, its department its parent.
final class FluentEmployee: Model, @unchecked Sendable {
    static let schema = "employee"

    @ID(custom: "id", generatedBy: .user) var id: Int?
    @Field(key: "name") var name: String
    @Field(key: "age") var age: Int
    @Parent(key: "department") var department: FluentDepartment

    init() {}
}

/// The PostgreSQL suite's operations through Fluent (fluent-postgres-driver), as a Fluent app
/// writes them: models created, fetched, changed and deleted one by one, writes in a transaction,
/// queries with Fluent's query builder; waited for from a plain thread, as the Core Data engine's
/// callers wait. Schema `bench_fluent`, the hand-written engine's table.
final class FluentPostgres: PostgresBenchmarkEngine {
    let name = "Fluent"
    private let threadPool: NIOThreadPool
    private let databases: Databases
    private let database: any Database
    private let admin = RawPostgresAdmin()
    private var nextID = 0
    private var count: Int { PostgresBenchmarks.count }

    init() {
        threadPool = NIOThreadPool(numberOfThreads: 1)
        threadPool.start()
        let group = MultiThreadedEventLoopGroup.singleton
        databases = Databases(threadPool: threadPool, on: group)
        let core = PostgresConnection.Configuration(
            host: PostgresBenchmarks.host, port: PostgresBenchmarks.port, username: PostgresBenchmarks.user,
            password: nil, database: PostgresBenchmarks.database, tls: .disable)
        databases.use(
            .postgres(configuration: SQLPostgresConfiguration(coreConfiguration: core, searchPath: ["bench_fluent"])),
            as: .psql)
        database = databases.database(.psql, logger: Logger(label: "bench-fluent"), on: group.any())!
    }

    func reset() {
        admin.dropSchema("bench_fluent")
        for statement in RawPostgres.personTable(in: "bench_fluent") + RawPostgres.graphTables(in: "bench_fluent") {
            admin.run(statement)
        }
        nextID = 0
    }

    func prepareGraph() {
        for statement in RawPostgres.graphRows(in: "bench_fluent") { admin.run(statement) }
    }

    func followToOne() -> Int {
        var budgets: [Int: Double] = [:]
        var total = 0
        for employee in try! FluentEmployee.query(on: database).all().wait() {
            let department = employee.$department.id
            if budgets[department] == nil {
                budgets[department] = try! employee.$department.get(on: database).wait().budget
            }
            total &+= Int(budgets[department] ?? 0)
        }
        return total
    }

    func followToMany() -> Int {
        var total = 0
        for department in try! FluentDepartment.query(on: database).all().wait() {
            total &+= try! department.$employees.get(on: database).wait().reduce(0) { $0 &+ $1.age }
        }
        return total
    }

    func insertAll() -> Int {
        let count = count
        try! database.transaction { database in
            var future = database.eventLoop.makeSucceededVoidFuture()
            for index in 0..<count {
                future = future.flatMap { FluentPerson(SQLiteBenchmarks.Row(index)).create(on: database) }
            }
            return future
        }.wait()
        nextID = count
        return count
    }

    func fetchAll() -> Int {
        try! FluentPerson.query(on: database).all().wait().reduce(0) { $0 &+ $1.age }
    }

    private func matching() -> QueryBuilder<FluentPerson> {
        FluentPerson.query(on: database).filter(\.$age >= 30).filter(\.$active == true).filter(\.$salary > 1000.0)
    }

    func query() -> Int {
        var total = 0
        for _ in 0..<10 {
            total &+= try! matching().sort(\.$salary, .descending).limit(100).all().wait().reduce(0) { $0 &+ $1.id! }
        }
        return total
    }

    func queryByName() -> Int {
        var total = 0
        for _ in 0..<10 {
            total &+= try! matching().sort(\.$name).limit(100).all().wait().reduce(0) { $0 &+ $1.id! }
        }
        return total
    }

    func countMatching() -> Int {
        var total = 0
        for _ in 0..<10 { total &+= try! matching().count().wait() }
        return total
    }

    func indexedLookups() -> Int {
        var total = 0
        for index in stride(from: 0, to: count, by: count / 1000) {
            total &+= try! FluentPerson.query(on: database).filter(\.$email == "person\(index)@example.com").all()
                .wait().reduce(0) { $0 &+ $1.id! }
        }
        return total
    }

    private var tenth: [Int] { Array(stride(from: 0, to: count, by: 10)) }

    func updateTenth() -> Int {
        let ids = tenth
        return try! database.transaction { database in
            FluentPerson.query(on: database).filter(\.$id ~~ ids).all().flatMap { people in
                var future = database.eventLoop.makeSucceededVoidFuture()
                for person in people {
                    person.salary += 1
                    person.note = "raised"
                    future = future.flatMap { person.update(on: database) }
                }
                return future.map { people.count }
            }
        }.wait()
    }

    func deleteTenth() -> Int {
        let ids = tenth
        return try! database.transaction { database in
            FluentPerson.query(on: database).filter(\.$id ~~ ids).all().flatMap { people in
                var future = database.eventLoop.makeSucceededVoidFuture()
                for person in people { future = future.flatMap { person.delete(on: database) } }
                return future.map { people.count }
            }
        }.wait()
    }

    func singleInserts() -> Int {
        for _ in 0..<1000 {
            try! FluentPerson(SQLiteBenchmarks.Row(nextID)).create(on: database).wait()
            nextID += 1
        }
        return 1000
    }
}
