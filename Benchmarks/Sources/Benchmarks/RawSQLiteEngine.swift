import Foundation
import GRDBSQLite

// MARK: Hand-written SQLite

final class RawSQLite: Engine {
    let name = "SQLite C API"
    let path = SQLiteBenchmarks.directory.appendingPathComponent("raw.sqlite").path
    var db: OpaquePointer?
    var statements: [String: OpaquePointer] = [:]
    var nextID = 0

    func reset() {
        for statement in statements.values { sqlite3_finalize(statement) }
        statements = [:]
        if db != nil { sqlite3_close(db) }
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        sqlite3_open(path, &db)
        exec("PRAGMA journal_mode = WAL")
        exec(
            "CREATE TABLE person (id INTEGER PRIMARY KEY, name TEXT, email TEXT, age INTEGER, salary REAL, active INTEGER, created REAL, note TEXT)"
        )
        exec("CREATE INDEX person_email ON person (email)")
        exec("CREATE TABLE department (id INTEGER PRIMARY KEY, name TEXT, budget REAL)")
        exec("CREATE TABLE employee (id INTEGER PRIMARY KEY, name TEXT, age INTEGER, department INTEGER)")
        exec("CREATE INDEX employee_department ON employee (department)")
        nextID = 0
    }

    func reopen() { sqlite3_open(path, &db) }

    func exec(_ sql: String) { sqlite3_exec(db, sql, nil, nil, nil) }

    func statement(_ sql: String) -> OpaquePointer { Self.statement(sql, on: db, cache: &statements) }

    /// `sql` prepared on `db`, from `cache` (reset) when it was prepared before, else prepared
    /// and kept there.
    static func statement(_ sql: String, on db: OpaquePointer?, cache: inout [String: OpaquePointer]) -> OpaquePointer {
        if let cached = cache[sql] {
            sqlite3_reset(cached)
            return cached
        }
        var statement: OpaquePointer?
        sqlite3_prepare_v2(db, sql, -1, &statement, nil)
        cache[sql] = statement!
        return statement!
    }

    func bindText(_ statement: OpaquePointer, _ index: Int32, _ text: String?) {
        SQLiteBenchmarks.Row.bindText(statement, index, text)
    }

    func insert(_ row: SQLiteBenchmarks.Row) {
        let statement = statement(
            "INSERT INTO person (id, name, email, age, salary, active, created, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
        row.bind(to: statement, from: 1)
        sqlite3_step(statement)
    }

    func insertAll() -> Int {
        exec("BEGIN IMMEDIATE")
        for index in 0..<SQLiteBenchmarks.count { insert(SQLiteBenchmarks.Row(index)) }
        exec("COMMIT")
        nextID = SQLiteBenchmarks.count
        return SQLiteBenchmarks.count
    }

    func readAll(_ sql: String) -> [SQLiteBenchmarks.Row] {
        let statement = statement(sql)
        var rows: [SQLiteBenchmarks.Row] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            rows.append(read(statement))
        }
        return rows
    }

    func read(_ statement: OpaquePointer) -> SQLiteBenchmarks.Row { SQLiteBenchmarks.Row(statement, from: 0) }

    func fetchAll() -> Int {
        readAll("SELECT id, name, email, age, salary, active, created, note FROM person").reduce(0) { $0 &+ $1.age }
    }

    func fetchFaultsAndFire() -> Int {
        // By hand, a "fault" is a key fetched first and its row read by key afterwards.
        let keys = statement("SELECT id FROM person")
        var ids: [Int64] = []
        while sqlite3_step(keys) == SQLITE_ROW { ids.append(sqlite3_column_int64(keys, 0)) }
        var total = 0
        for id in ids {
            let statement = statement(
                "SELECT id, name, email, age, salary, active, created, note FROM person WHERE id = ?")
            sqlite3_bind_int64(statement, 1, id)
            if sqlite3_step(statement) == SQLITE_ROW { total &+= read(statement).age }
        }
        return total
    }

    func query() -> Int { query(orderBy: "salary DESC, id") }

    func queryByName() -> Int { query(orderBy: "name, id") }

    /// The benchmark's query, ten times, sorted by `orderBy` (a constant of this file, not a value).
    private func query(orderBy: String) -> Int {
        var total = 0
        for _ in 0..<10 {
            let statement = statement(
                "SELECT id, name, email, age, salary, active, created, note FROM person WHERE age >= ? AND active = 1 AND salary > ? ORDER BY \(orderBy) LIMIT 100"
            )
            sqlite3_bind_int64(statement, 1, 30)
            sqlite3_bind_double(statement, 2, 1000)
            while sqlite3_step(statement) == SQLITE_ROW { total &+= read(statement).id }
        }
        return total
    }

    func countMatching() -> Int {
        var total = 0
        for _ in 0..<10 {
            let statement = statement("SELECT COUNT(*) FROM person WHERE age >= ? AND active = 1 AND salary > ?")
            sqlite3_bind_int64(statement, 1, 30)
            sqlite3_bind_double(statement, 2, 1000)
            if sqlite3_step(statement) == SQLITE_ROW { total &+= Int(sqlite3_column_int64(statement, 0)) }
        }
        return total
    }

    func indexedLookups() -> Int {
        var total = 0
        for index in stride(from: 0, to: SQLiteBenchmarks.count, by: SQLiteBenchmarks.count / 1000) {
            let statement = statement(
                "SELECT id, name, email, age, salary, active, created, note FROM person WHERE email = ?")
            bindText(statement, 1, "person\(index)@example.com")
            while sqlite3_step(statement) == SQLITE_ROW { total &+= read(statement).id }
        }
        return total
    }

    func iterateInBatches() -> Int {
        let statement = statement("SELECT id, name, email, age, salary, active, created, note FROM person")
        var total = 0
        while sqlite3_step(statement) == SQLITE_ROW { total &+= read(statement).age }
        return total
    }

    func updateTenth() -> Int {
        exec("BEGIN IMMEDIATE")
        let statement = statement("UPDATE person SET salary = salary + 1, note = ? WHERE id = ?")
        for id in stride(from: 0, to: SQLiteBenchmarks.count, by: 10) {
            sqlite3_reset(statement)
            bindText(statement, 1, "raised")
            sqlite3_bind_int64(statement, 2, Int64(id))
            sqlite3_step(statement)
        }
        exec("COMMIT")
        return SQLiteBenchmarks.count / 10
    }

    func deleteTenth() -> Int {
        exec("BEGIN IMMEDIATE")
        let statement = statement("DELETE FROM person WHERE id = ?")
        for id in stride(from: 0, to: SQLiteBenchmarks.count, by: 10) {
            sqlite3_reset(statement)
            sqlite3_bind_int64(statement, 1, Int64(id))
            sqlite3_step(statement)
        }
        exec("COMMIT")
        return SQLiteBenchmarks.count / 10
    }

    func singleInserts() -> Int {
        for _ in 0..<1000 {
            exec("BEGIN IMMEDIATE")
            insert(SQLiteBenchmarks.Row(nextID))
            nextID += 1
            exec("COMMIT")
        }
        return 1000
    }

    func prepareGraph() {
        exec("BEGIN IMMEDIATE")
        let department = statement("INSERT INTO department (id, name, budget) VALUES (?, ?, ?)")
        for index in 0..<SQLiteBenchmarks.departments {
            sqlite3_reset(department)
            sqlite3_bind_int64(department, 1, Int64(index))
            bindText(department, 2, "Department \(index)")
            sqlite3_bind_double(department, 3, Double(index))
            sqlite3_step(department)
        }
        let employee = statement("INSERT INTO employee (id, name, age, department) VALUES (?, ?, ?, ?)")
        for index in 0..<SQLiteBenchmarks.count {
            sqlite3_reset(employee)
            sqlite3_bind_int64(employee, 1, Int64(index))
            bindText(employee, 2, "Employee \(index)")
            sqlite3_bind_int64(employee, 3, Int64(18 + index % 60))
            sqlite3_bind_int64(employee, 4, Int64(index % SQLiteBenchmarks.departments))
            sqlite3_step(employee)
        }
        exec("COMMIT")
    }

    struct Department {
        let id: Int64
        let name: String
        let budget: Double
    }

    struct Employee {
        let id: Int64
        let name: String
        let age: Int
        let department: Int64
    }

    func readEmployee(_ statement: OpaquePointer) -> Employee {
        Employee(
            id: sqlite3_column_int64(statement, 0), name: String(cString: sqlite3_column_text(statement, 1)),
            age: Int(sqlite3_column_int64(statement, 2)), department: sqlite3_column_int64(statement, 3))
    }

    func followToOne() -> Int {
        // By hand: the employees' rows, and each department read by key the first time it is
        // needed and kept — what a to-one fault and the row cache do.
        let all = statement("SELECT id, name, age, department FROM employee")
        var employees: [Employee] = []
        while sqlite3_step(all) == SQLITE_ROW { employees.append(readEmployee(all)) }
        var departments: [Int64: Department] = [:]
        var total = 0
        for employee in employees {
            if departments[employee.department] == nil {
                let statement = statement("SELECT id, name, budget FROM department WHERE id = ?")
                sqlite3_bind_int64(statement, 1, employee.department)
                if sqlite3_step(statement) == SQLITE_ROW {
                    departments[employee.department] = Department(
                        id: sqlite3_column_int64(statement, 0),
                        name: String(cString: sqlite3_column_text(statement, 1)),
                        budget: sqlite3_column_double(statement, 2))
                }
            }
            total &+= Int(departments[employee.department]?.budget ?? 0)
        }
        return total
    }

    func followToMany() -> Int {
        // By hand: the departments' rows, then each department's employees by the indexed key.
        let all = statement("SELECT id, name, budget FROM department")
        var departments: [Department] = []
        while sqlite3_step(all) == SQLITE_ROW {
            departments.append(
                Department(
                    id: sqlite3_column_int64(all, 0), name: String(cString: sqlite3_column_text(all, 1)),
                    budget: sqlite3_column_double(all, 2)))
        }
        var total = 0
        for department in departments {
            let statement = statement("SELECT id, name, age, department FROM employee WHERE department = ?")
            sqlite3_bind_int64(statement, 1, department.id)
            var members: [Employee] = []
            while sqlite3_step(statement) == SQLITE_ROW { members.append(readEmployee(statement)) }
            total &+= members.reduce(0) { $0 &+ $1.age }
        }
        return total
    }

    var kept: [SQLiteBenchmarks.Row] = []
    func keepAll() -> Int {
        kept = readAll("SELECT id, name, email, age, salary, active, created, note FROM person")
        return kept.count
    }

    func letGoOfAll() -> [Int] {
        kept = []
        return [SQLiteBenchmarks.residentAfterAMoment()]
    }
}

extension SQLiteBenchmarks.Row {
    /// The row read from `statement`'s current result, its eight columns in the baseline
    /// table's order from column `first` on.
    init(_ statement: OpaquePointer, from first: Int32) {
        self.init(
            id: Int(sqlite3_column_int64(statement, first)),
            name: String(cString: sqlite3_column_text(statement, first + 1)),
            email: String(cString: sqlite3_column_text(statement, first + 2)),
            age: Int(sqlite3_column_int64(statement, first + 3)), salary: sqlite3_column_double(statement, first + 4),
            active: sqlite3_column_int64(statement, first + 5) != 0,
            created: Date(timeIntervalSinceReferenceDate: sqlite3_column_double(statement, first + 6)),
            note: sqlite3_column_text(statement, first + 7).map { String(cString: $0) })
    }

    /// Binds the row's eight values, in the baseline table's column order, to `statement`'s
    /// parameters from `first` on.
    func bind(to statement: OpaquePointer, from first: Int32) {
        sqlite3_bind_int64(statement, first, Int64(id))
        Self.bindText(statement, first + 1, name)
        Self.bindText(statement, first + 2, email)
        sqlite3_bind_int64(statement, first + 3, Int64(age))
        sqlite3_bind_double(statement, first + 4, salary)
        sqlite3_bind_int64(statement, first + 5, active ? 1 : 0)
        sqlite3_bind_double(statement, first + 6, created.timeIntervalSinceReferenceDate)
        Self.bindText(statement, first + 7, note)
    }

    /// Binds `text` (SQLite copies it) or `NULL` to parameter `index`.
    static func bindText(_ statement: OpaquePointer, _ index: Int32, _ text: String?) {
        guard let text else {
            sqlite3_bind_null(statement, index)
            return
        }
        sqlite3_bind_text(statement, index, text, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
    }
}
