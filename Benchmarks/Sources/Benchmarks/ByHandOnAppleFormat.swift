import Foundation
import GRDBSQLite

// MARK: Hand-written SQLite on Apple's format

/// Hand-written SQLite C on the typed engine's own file, as a programmer would write it against
/// Apple's tables: `ZPERSON`, its key `Z_PK` and Apple's `Z_ENT` and `Z_OPT` before the
/// `Z`-named columns in Apple's order, and `Z_PRIMARYKEY`, whose `Z_MAX` a save that inserts
/// keeps. The baselines' table is their own, with eight columns; where the store and GRDB run the
/// same statement, what this measures on the same rows is what the format alone costs.
final class ByHandOnAppleFormat {
    /// The typed engine's store file, read while its coordinator has it open.
    private let path: String
    /// A copy of the store file the single-insert saves write to, so that the engine's own
    /// file keeps the rows the suite's later operations expect.
    private let copyPath: String
    private var db: OpaquePointer?
    private var copy: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    private var copyStatements: [String: OpaquePointer] = [:]
    private var personEntity: Int64 = 0
    private var nextID = 0

    init(path: String) {
        self.path = path
        copyPath = path + "-by-hand-copy.sqlite"
    }

    /// The rows this engine measures, to add to the typed engine's.
    func rows() -> [ExtraRow] {
        [
            ExtraRow(name: SQLiteBenchmarks.byHandQuery, setup: openFile) { self.query(orderBy: "ZSALARY DESC, Z_PK") },
            ExtraRow(name: SQLiteBenchmarks.byHandSorted, setup: openFile) { self.query(orderBy: "ZNAME, Z_PK") },
            ExtraRow(name: SQLiteBenchmarks.byHandCount, setup: openFile, body: count),
            ExtraRow(name: SQLiteBenchmarks.byHandSaves, setup: copyFile, body: singleInserts),
        ]
    }

    /// Closes both connections and removes the copy.
    func close() {
        closeCopy()
        for statement in statements.values { sqlite3_finalize(statement) }
        statements = [:]
        if db != nil { sqlite3_close(db) }
        db = nil
    }

    private func openFile() {
        guard db == nil else { return }
        sqlite3_open(path, &db)
    }

    /// Copies the store file as it is now (untimed) and opens the copy as the saves' connection.
    private func copyFile() {
        openFile()
        closeCopy()
        let vacuum = statement("VACUUM INTO ?", on: db, cache: &statements)
        SQLiteBenchmarks.Row.bindText(vacuum, 1, copyPath)
        sqlite3_step(vacuum)
        sqlite3_reset(vacuum)
        sqlite3_open(copyPath, &copy)
        sqlite3_exec(copy, "PRAGMA journal_mode = WAL", nil, nil, nil)
        let entity = statement(
            "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Person'", on: copy, cache: &copyStatements)
        if sqlite3_step(entity) == SQLITE_ROW { personEntity = sqlite3_column_int64(entity, 0) }
        sqlite3_reset(entity)
        let highest = statement("SELECT MAX(ZID) FROM ZPERSON", on: copy, cache: &copyStatements)
        if sqlite3_step(highest) == SQLITE_ROW { nextID = Int(sqlite3_column_int64(highest, 0)) + 1 }
        sqlite3_reset(highest)
    }

    private func closeCopy() {
        for statement in copyStatements.values { sqlite3_finalize(statement) }
        copyStatements = [:]
        if copy != nil { sqlite3_close(copy) }
        copy = nil
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: copyPath + suffix) }
    }

    private func statement(_ sql: String, on db: OpaquePointer?, cache: inout [String: OpaquePointer]) -> OpaquePointer
    {
        RawSQLite.statement(sql, on: db, cache: &cache)
    }

    /// The suite's query, ten times, sorted by `orderBy` (a constant of this file, not a value),
    /// each row read as the hand-written baseline reads its own.
    private func query(orderBy: String) -> Int {
        var total = 0
        for _ in 0..<10 {
            let statement = statement(
                "SELECT Z_PK, Z_ENT, Z_OPT, ZID, ZNAME, ZEMAIL, ZAGE, ZSALARY, ZACTIVE, ZCREATED, ZNOTE FROM ZPERSON"
                    + " WHERE ZAGE >= ? AND ZACTIVE = 1 AND ZSALARY > ? ORDER BY \(orderBy) LIMIT 100",
                on: db, cache: &statements)
            sqlite3_bind_int64(statement, 1, 30)
            sqlite3_bind_double(statement, 2, 1000)
            while sqlite3_step(statement) == SQLITE_ROW {
                let row = SQLiteBenchmarks.Row(statement, from: 3)
                total &+= row.id
            }
        }
        return total
    }

    /// The suite's count, ten times.
    private func count() -> Int {
        var total = 0
        for _ in 0..<10 {
            let statement = statement(
                "SELECT COUNT(*) FROM ZPERSON WHERE ZAGE >= ? AND ZACTIVE = 1 AND ZSALARY > ?", on: db,
                cache: &statements)
            sqlite3_bind_int64(statement, 1, 30)
            sqlite3_bind_double(statement, 2, 1000)
            if sqlite3_step(statement) == SQLITE_ROW { total &+= Int(sqlite3_column_int64(statement, 0)) }
            // Reset, as a finished statement is: a statement left on its row keeps a read
            // transaction open on the store's file.
            sqlite3_reset(statement)
        }
        return total
    }

    /// 1,000 saves of one insert each on the copy, each keeping `Z_PRIMARYKEY`'s `Z_MAX` as a
    /// save that inserts does in Apple's format: the key read, the key written, the row.
    private func singleInserts() -> Int {
        for _ in 0..<1000 {
            sqlite3_exec(copy, "BEGIN IMMEDIATE", nil, nil, nil)
            let read = statement("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?", on: copy, cache: &copyStatements)
            sqlite3_bind_int64(read, 1, personEntity)
            let key = sqlite3_step(read) == SQLITE_ROW ? sqlite3_column_int64(read, 0) + 1 : 1
            sqlite3_reset(read)
            let write = statement("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?", on: copy, cache: &copyStatements)
            sqlite3_bind_int64(write, 1, key)
            sqlite3_bind_int64(write, 2, personEntity)
            sqlite3_step(write)
            let row = SQLiteBenchmarks.Row(nextID)
            nextID += 1
            let insert = statement(
                "INSERT INTO ZPERSON (Z_PK, Z_ENT, Z_OPT, ZID, ZNAME, ZEMAIL, ZAGE, ZSALARY, ZACTIVE, ZCREATED, ZNOTE)"
                    + " VALUES (?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?)", on: copy, cache: &copyStatements)
            sqlite3_bind_int64(insert, 1, key)
            sqlite3_bind_int64(insert, 2, personEntity)
            row.bind(to: insert, from: 3)
            sqlite3_step(insert)
            sqlite3_exec(copy, "COMMIT", nil, nil, nil)
        }
        return 1000
    }
}
