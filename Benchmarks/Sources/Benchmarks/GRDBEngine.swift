import Foundation
import GRDB

// MARK: GRDB records

struct PersonRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "person"
    var id: Int64
    var name: String
    var email: String
    var age: Int
    var salary: Double
    var active: Bool
    var created: Date
    var note: String?

    init(_ row: SQLiteBenchmarks.Row) {
        id = Int64(row.id)
        name = row.name
        email = row.email
        age = row.age
        salary = row.salary
        active = row.active
        created = row.created
        note = row.note
    }
}

struct DepartmentRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "department"
    var id: Int64
    var name: String
    var budget: Double
}

struct EmployeeRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "employee"
    var id: Int64
    var name: String
    var age: Int
    var department: Int64
}

final class GRDBRecords: Engine {
    let name = "GRDB records"
    let path = SQLiteBenchmarks.directory.appendingPathComponent("grdb.sqlite").path
    var queue: DatabaseQueue!
    var nextID = 0

    func reset() {
        queue = nil
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        queue = try! DatabaseQueue(path: path)
        try! queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.create(table: "person") { table in
                table.primaryKey("id", .integer)
                table.column("name", .text)
                table.column("email", .text)
                table.column("age", .integer)
                table.column("salary", .double)
                table.column("active", .boolean)
                table.column("created", .datetime)
                table.column("note", .text)
            }
            try db.create(index: "person_email", on: "person", columns: ["email"])
            try db.create(table: "department") { table in
                table.primaryKey("id", .integer)
                table.column("name", .text)
                table.column("budget", .double)
            }
            try db.create(table: "employee") { table in
                table.primaryKey("id", .integer)
                table.column("name", .text)
                table.column("age", .integer)
                table.column("department", .integer).indexed()
            }
        }
        nextID = 0
    }

    func reopen() { queue = try! DatabaseQueue(path: path) }

    func insertAll() -> Int {
        try! queue.write { db in
            for index in 0..<SQLiteBenchmarks.count { try PersonRecord(SQLiteBenchmarks.Row(index)).insert(db) }
        }
        nextID = SQLiteBenchmarks.count
        return SQLiteBenchmarks.count
    }

    func fetchAll() -> Int {
        try! queue.read { db in try PersonRecord.fetchAll(db) }.reduce(0) { $0 &+ $1.age }
    }

    func fetchFaultsAndFire() -> Int {
        try! queue.read { db in
            let ids = try Int64.fetchAll(db, sql: "SELECT id FROM person")
            var total = 0
            for id in ids { total &+= try PersonRecord.fetchOne(db, key: id)?.age ?? 0 }
            return total
        }
    }

    func query() -> Int { query(orderBy: "salary DESC, id") }

    func queryByName() -> Int { query(orderBy: "name, id") }

    private func query(orderBy: String) -> Int {
        try! queue.read { db in
            var total = 0
            for _ in 0..<10 {
                let records = try PersonRecord.filter(
                    sql: "age >= ? AND active = 1 AND salary > ?", arguments: [30, 1000]
                )
                .order(sql: orderBy).limit(100).fetchAll(db)
                total &+= records.reduce(0) { $0 &+ Int($1.id) }
            }
            return total
        }
    }

    func countMatching() -> Int {
        try! queue.read { db in
            var total = 0
            for _ in 0..<10 {
                total &+= try PersonRecord.filter(sql: "age >= ? AND active = 1 AND salary > ?", arguments: [30, 1000])
                    .fetchCount(db)
            }
            return total
        }
    }

    func indexedLookups() -> Int {
        try! queue.read { db in
            var total = 0
            for index in stride(from: 0, to: SQLiteBenchmarks.count, by: SQLiteBenchmarks.count / 1000) {
                let records = try PersonRecord.filter(sql: "email = ?", arguments: ["person\(index)@example.com"])
                    .fetchAll(db)
                total &+= records.reduce(0) { $0 &+ Int($1.id) }
            }
            return total
        }
    }

    func iterateInBatches() -> Int {
        try! queue.read { db in
            var total = 0
            let cursor = try PersonRecord.fetchCursor(db)
            while let record = try cursor.next() { total &+= record.age }
            return total
        }
    }

    func updateTenth() -> Int {
        try! queue.write { db in
            for id in stride(from: 0, to: SQLiteBenchmarks.count, by: 10) {
                guard var record = try PersonRecord.fetchOne(db, key: Int64(id)) else { continue }
                record.salary += 1
                record.note = "raised"
                try record.update(db)
            }
        }
        return SQLiteBenchmarks.count / 10
    }

    func deleteTenth() -> Int {
        try! queue.write { db in
            for id in stride(from: 0, to: SQLiteBenchmarks.count, by: 10) {
                _ = try PersonRecord.deleteOne(db, key: Int64(id))
            }
        }
        return SQLiteBenchmarks.count / 10
    }

    func singleInserts() -> Int {
        for _ in 0..<1000 {
            let record = PersonRecord(SQLiteBenchmarks.Row(nextID))
            nextID += 1
            try! queue.write { db in try record.insert(db) }
        }
        return 1000
    }

    func prepareGraph() {
        try! queue.write { db in
            for index in 0..<SQLiteBenchmarks.departments {
                try DepartmentRecord(id: Int64(index), name: "Department \(index)", budget: Double(index)).insert(db)
            }
            for index in 0..<SQLiteBenchmarks.count {
                try EmployeeRecord(
                    id: Int64(index), name: "Employee \(index)", age: 18 + index % 60,
                    department: Int64(index % SQLiteBenchmarks.departments)
                ).insert(db)
            }
        }
    }

    func followToOne() -> Int {
        try! queue.read { db in
            let employees = try EmployeeRecord.fetchAll(db)
            var departments: [Int64: DepartmentRecord] = [:]
            var total = 0
            for employee in employees {
                if departments[employee.department] == nil {
                    departments[employee.department] = try DepartmentRecord.fetchOne(db, key: employee.department)
                }
                total &+= Int(departments[employee.department]?.budget ?? 0)
            }
            return total
        }
    }

    func followToMany() -> Int {
        try! queue.read { db in
            var total = 0
            for department in try DepartmentRecord.fetchAll(db) {
                let members = try EmployeeRecord.filter(Column("department") == department.id).fetchAll(db)
                total &+= members.reduce(0) { $0 &+ $1.age }
            }
            return total
        }
    }

    var kept: [PersonRecord] = []
    func keepAll() -> Int {
        kept = try! queue.read { db in try PersonRecord.fetchAll(db) }
        return kept.count
    }

    func letGoOfAll() -> [Int] {
        kept = []
        return [SQLiteBenchmarks.residentAfterAMoment()]
    }
}
