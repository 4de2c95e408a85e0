internal import CSQLite
import OpenCoreData
import OpenCoreDataSQL

/// One SQLite database connection with a cache of prepared statements (ARCHITECTURE.md, "Values
/// and snapshots").
///
/// Not thread-safe: one thread uses a connection at a time (the store's writer under the
/// coordinator's lock, a pooled reader while checked out, a generation's reader under `useLock`).
final class SQLiteConnection {
    private(set) var handle: OpaquePointer?
    let path: String
    let isReadOnly: Bool
    private var statements: [String: SQLiteStatement] = [:]
    /// The statements ``statement(_:)`` answered lately, some of `statements`.
    private var recentStatements: [SQLiteStatement] = []
    /// The place in `recentStatements` the next statement to remember takes, once it is full.
    private var nextRecent = 0
    /// The statement ``statement(_:)`` answered last, one of `statements`.
    private var lastStatement: SQLiteStatement?
    /// Counts the statements run on this connection and the others of its store.
    var counter = StatementCounter()
    /// Held while a thread uses a connection others may also reach (a query generation's).
    let useLock = NSLock()
    /// How many statements have run on this connection and the others sharing its counter (each
    /// run of a prepared statement counts once), so tests can pin how many queries an operation
    /// costs.
    var statementsRun: Int { counter.value }

    /// How a connection opens its file.
    enum Mode {
        /// Read and write; `create` allows a new file.
        case readWrite(create: Bool)
        /// `SQLITE_OPEN_READONLY`. A WAL store with no `-wal` beside it opens `immutable`, so
        /// nothing is written beside the file (SQLite would otherwise create `-wal`/`-shm`).
        case readOnly
    }

    /// The path of a private in-memory database (SQLite's `:memory:`), never a file.
    static let memoryPath = ":memory:"

    /// Opens the database at `path` (``memoryPath``: a new private in-memory database).
    ///
    /// - Throws: `NSSQLiteError` (134180) when SQLite refuses; the SQLite result code is in
    ///   the userInfo under `NSSQLiteErrorDomain`.
    init(path: String, mode: Mode) throws {
        self.path = path
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        var query = ""
        switch mode {
        case .readWrite(let create):
            isReadOnly = false
            flags |= SQLITE_OPEN_READWRITE
            if create { flags |= SQLITE_OPEN_CREATE }
        case .readOnly:
            isReadOnly = true
            flags |= SQLITE_OPEN_READONLY
            query = "?mode=ro"
            if !FileManager.default.fileExists(atPath: path + "-wal") { query += "&immutable=1" }
        }
        var db: OpaquePointer?
        let name = path == SQLiteConnection.memoryPath ? path : SQLiteConnection.uri(path) + query
        let code = sqlite3_open_v2(name, &db, flags, nil)
        handle = db
        guard code == SQLITE_OK else {
            let error = SQLiteConnection.error(code: code, db: db, "Cannot open the SQLite file at \(path)")
            sqlite3_close_v2(db)
            handle = nil
            throw error
        }
        sqlite3_extended_result_codes(db, 1)
    }

    /// `path` as a `file:` URI (RFC 3986 percent-encoding of everything but unreserved
    /// characters and `/`), so no character of a path is read as URI syntax.
    static func uri(_ path: String) -> String {
        var result = "file:"
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"), UInt8(ascii: "/"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                result += byte < 16 ? "%0\(hex)" : "%\(hex)"
            }
        }
        return result
    }

    deinit { close() }

    func close() {
        for statement in statements.values { statement.finalize() }
        statements.removeAll()
        recentStatements.removeAll()
        nextRecent = 0
        lastStatement = nil
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    /// Runs SQL that returns no rows (schema statements, pragmas, transactions). Never pass
    /// values here: values are bound through ``statement(_:)``.
    func execute(_ sql: String) throws {
        counter.increment()
        let start = SQLDebug.level > 0 ? DispatchTime.now().uptimeNanoseconds : 0
        defer {
            if start != 0 {
                SQLDebug.log(sql: sql, bindings: [], rows: 0, nanoseconds: DispatchTime.now().uptimeNanoseconds - start)
            }
        }
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        guard code == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? ""
            sqlite3_free(message)
            throw SQLiteConnection.error(code: code, db: handle, "\(text) (in \(sql.prefix(200)))")
        }
    }

    /// A prepared statement for `sql`, from the cache when it was prepared before; reset and
    /// with its bindings cleared.
    func statement(_ sql: String) throws -> SQLiteStatement {
        // The statements asked for lately are usually asked for again, with the very string
        // they were prepared from (a store's statements are made once and kept): a save writes
        // its rows one statement after another, and a one-object save runs the same five
        // (`BEGIN`, the key's read and update, the row's insert, `COMMIT`) each time. Knowing the
        // string by its two words skips hashing its text, which costs as much as the text is
        // long. Text equal in another string is found by the hash, as before.
        for recent in recentStatements where Self.isSameString(recent.sql, sql) {
            recent.reset()
            lastStatement = recent
            return recent
        }
        // SQL made again for each row it is run for (a join table's delete) is the text of the
        // statement answered last: compared with it, it is found without hashing too.
        if let last = lastStatement, last.sql == sql {
            last.reset()
            return last
        }
        if let cached = statements[sql] {
            cached.reset()
            if !recentStatements.contains(where: { $0 === cached }) { remember(cached) }
            lastStatement = cached
            return cached
        }
        let statement = try prepare(sql)
        statements[sql] = statement
        remember(statement)
        lastStatement = statement
        return statement
    }

    /// Whether `first` and `second` are the same string value — the same storage, or the same
    /// small or literal string — compared as the two words a `String` is, without reading its
    /// characters. `false` says nothing: equal text can be held twice.
    @inline(__always)
    private static func isSameString(_ first: String, _ second: String) -> Bool {
        unsafeBitCast(first, to: (UInt, UInt).self) == unsafeBitCast(second, to: (UInt, UInt).self)
    }

    /// How many statements ``statement(_:)`` looks at before hashing the text.
    private static let recentCount = 8

    /// Adds `statement` to the recent statements, in place of the one added longest ago when
    /// there are ``recentCount``.
    private func remember(_ statement: SQLiteStatement) {
        if recentStatements.count < Self.recentCount {
            recentStatements.append(statement)
        } else {
            recentStatements[nextRecent] = statement
            nextRecent = (nextRecent + 1) % Self.recentCount
        }
    }

    /// A statement that is not cached (one-off SQL); finalized when released.
    func prepare(_ sql: String) throws -> SQLiteStatement {
        var raw: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
        guard code == SQLITE_OK, let raw else {
            throw SQLiteConnection.error(code: code, db: handle, "Cannot prepare \(sql.prefix(300))")
        }
        return SQLiteStatement(raw, connection: self, sql: sql)
    }

    /// Copies this whole database into `destination` with SQLite's online backup API, page by
    /// page under SQLite's locks — never by copying files, which can tear a WAL store.
    func backup(into destination: SQLiteConnection) throws {
        guard let backup = sqlite3_backup_init(destination.handle, "main", handle, "main") else {
            throw SQLiteConnection.error(
                code: sqlite3_errcode(destination.handle), db: destination.handle,
                "Cannot back up \(path) to \(destination.path)")
        }
        var code: Int32
        repeat {
            code = sqlite3_backup_step(backup, -1)
            if code == SQLITE_BUSY || code == SQLITE_LOCKED { sqlite3_sleep(10) }
        } while code == SQLITE_OK || code == SQLITE_BUSY || code == SQLITE_LOCKED
        let finish = sqlite3_backup_finish(backup)
        guard code == SQLITE_DONE, finish == SQLITE_OK else {
            throw SQLiteConnection.error(
                code: code == SQLITE_DONE ? finish : code, db: destination.handle,
                "Cannot back up \(path) to \(destination.path)")
        }
    }

    /// Rows of a query as arrays of values, for small bookkeeping reads.
    func rows(_ sql: String, _ arguments: [SQLiteValue] = []) throws -> [[SQLiteValue]] {
        let statement = try self.statement(sql)
        try statement.bind(arguments)
        var result: [[SQLiteValue]] = []
        while try statement.step() {
            result.append((0..<statement.columnCount).map(statement.value(at:)))
        }
        return result
    }

    /// The first column of a query's first row when it is an integer, else `nil` (no row, or
    /// another type); the query is run to its end. One value read without the arrays
    /// ``rows(_:_:)`` makes: every save that inserts reads its keys this way.
    func integer(_ sql: String, _ argument: Int64) throws -> Int64? {
        let statement = try self.statement(sql)
        statement.bind(int64: argument, at: 1)
        guard try statement.step() else { return nil }
        let value = statement.type(at: 0) == SQLITE_INTEGER ? statement.int64(at: 0) : nil
        while try statement.step() {}
        return value
    }

    /// Runs one statement with arguments, returning nothing.
    func run(_ sql: String, _ arguments: [SQLiteValue] = []) throws {
        let statement = try self.statement(sql)
        try statement.bind(arguments)
        while try statement.step() {}
    }

    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }
    var changes: Int { Int(sqlite3_changes(handle)) }
    /// Whether a transaction is open on the connection.
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Commits the open transaction; on failure it is rolled back and the error thrown.
    ///
    /// When the commit fails with an I/O error (`SQLITE_IOERR_*`, `SQLITE_FULL`) — the sync of
    /// the WAL failing, typically — the WAL can already hold the transaction's frames with a valid
    /// commit record. SQLite treats the transaction as rolled back, and so does the caller, who
    /// was told it failed; but a process that opens the file after this one is killed recovers
    /// those frames, and the save that failed is there. So one more small transaction, `rewrite`
    /// (a statement that writes a row back unchanged), is committed over them: its frames take
    /// their place, and recovery stops at its commit record. If that fails too, the disk is gone
    /// and nothing more can be known.
    ///
    /// - Throws: the commit's error (`NSSQLiteError`, SQLite's code under `NSSQLiteErrorDomain`).
    func commit(rewrite: String) throws {
        do {
            // Prepared once and kept, as `BEGIN IMMEDIATE` is (``SQLiteStore/transaction(_:)``).
            try run("COMMIT")
        } catch let error as NSError {
            if isInTransaction { try? execute("ROLLBACK") }
            let code = Self.primaryCode(of: error)
            if code == SQLITE_IOERR || code == SQLITE_FULL, (try? execute("BEGIN IMMEDIATE")) != nil {
                if (try? execute(rewrite)) == nil || (try? execute("COMMIT")) == nil {
                    if isInTransaction { try? execute("ROLLBACK") }
                }
            }
            throw error
        }
    }

    func setBusyTimeout(milliseconds: Int32) { sqlite3_busy_timeout(handle, milliseconds) }

    static func error(code: Int32, db: OpaquePointer?, _ description: String) -> NSError {
        let detail = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
        var coreDataCode = NSSQLiteError
        let primary = code & 0xFF
        if primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT || primary == SQLITE_CANTOPEN {
            coreDataCode = NSPersistentStoreOpenError
        } else if code == SQLITE_CONSTRAINT | (8 << 8) {
            // SQLITE_CONSTRAINT_UNIQUE: a uniqueness constraint's index refused a row.
            coreDataCode = NSManagedObjectConstraintMergeError
        }
        return CoreDataError.make(
            coreDataCode, "\(description): \(detail)", [NSSQLiteErrorDomain: Int(code)])
    }

    /// The primary SQLite result code (`SQLITE_BUSY`, `SQLITE_IOERR`…) of an error made by
    /// ``error(code:db:_:)``, whose userInfo keeps the extended code; `nil` for any other error.
    static func primaryCode(of error: NSError) -> Int32? {
        (error.userInfo[NSSQLiteErrorDomain] as? Int).map { Int32(truncatingIfNeeded: $0) & 0xFF }
    }
}

/// A thread-safe count of statements run, shared by the connections of one store.
final class StatementCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }

    func increment() {
        lock.lock()
        count += 1
        lock.unlock()
    }
}

/// A value as SQLite stores it.
typealias SQLiteValue = SQLValue

/// A prepared statement. Bind, then ``step()`` until it returns `false`.
final class SQLiteStatement {
    private(set) var raw: OpaquePointer?
    unowned let connection: SQLiteConnection
    let sql: String
    /// When the current run started, while `COREDATA_SQLDEBUG` is on (0 otherwise).
    private var debugStart: UInt64 = 0
    private var debugRows = 0
    private var debugBindings: [SQLiteValue] = []
    private var isRunning = false

    init(_ raw: OpaquePointer, connection: SQLiteConnection, sql: String) {
        self.raw = raw
        self.connection = connection
        self.sql = sql
    }

    deinit { finalize() }

    func finalize() {
        if let raw { sqlite3_finalize(raw) }
        raw = nil
    }

    func reset() {
        isRunning = false
        if debugStart != 0 { finishDebug() }
        sqlite3_reset(raw)
        sqlite3_clear_bindings(raw)
    }

    var columnCount: Int32 { sqlite3_column_count(raw) }

    func bind(_ values: [SQLiteValue]) throws {
        for (index, value) in values.enumerated() { try bind(value, at: Int32(index + 1)) }
    }

    func bind(_ value: SQLiteValue, at index: Int32) throws {
        if SQLDebug.level > 1 { noteBinding(value, at: index) }
        let code: Int32
        switch value {
        case .null: code = sqlite3_bind_null(raw, index)
        case .integer(let int): code = sqlite3_bind_int64(raw, index, int)
        case .real(let double): code = sqlite3_bind_double(raw, index, double)
        case .text(let string):
            // `withCString` hands SQLite the string's own bytes; passing the `String` itself made
            // a `utf8CString` array first, an allocation for every text column bound.
            code = string.withCString { sqlite3_bind_text(raw, index, $0, -1, csqlite_transient()) }
        case .blob(let bytes):
            code = bytes.withUnsafeBytes {
                sqlite3_bind_blob(
                    raw, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32($0.count), csqlite_transient())
            }
        }
        guard code == SQLITE_OK else {
            throw SQLiteConnection.error(code: code, db: connection.handle, "Cannot bind parameter \(index)")
        }
    }

    func bind(int64 value: Int64, at index: Int32) {
        if SQLDebug.level > 1 { noteBinding(.integer(value), at: index) }
        sqlite3_bind_int64(raw, index, value)
    }

    /// Advances to the next row: `true` when a row is ready, `false` when done.
    func step() throws -> Bool {
        if !isRunning {
            // Once per run, not per row: the log level is an atomic read.
            isRunning = true
            connection.counter.increment()
            if SQLDebug.level > 0 { debugStart = DispatchTime.now().uptimeNanoseconds }
        }
        let code = sqlite3_step(raw)
        if code == SQLITE_ROW {
            if debugStart != 0 { debugRows += 1 }
            return true
        }
        isRunning = false
        if debugStart != 0 { finishDebug() }
        if code == SQLITE_DONE { return false }
        let error = SQLiteConnection.error(code: code, db: connection.handle, "Cannot run \(sql.prefix(300))")
        sqlite3_reset(raw)
        throw error
    }

    private func noteBinding(_ value: SQLiteValue, at index: Int32) {
        let position = Int(index) - 1
        if debugBindings.count <= position {
            debugBindings.append(contentsOf: repeatElement(.null, count: position + 1 - debugBindings.count))
        }
        debugBindings[position] = value
    }

    private func finishDebug() {
        SQLDebug.log(
            sql: sql, bindings: debugBindings, rows: debugRows,
            nanoseconds: DispatchTime.now().uptimeNanoseconds - debugStart)
        debugStart = 0
        debugRows = 0
        debugBindings = []
    }

    func type(at column: Int32) -> Int32 { sqlite3_column_type(raw, column) }
    func isNull(at column: Int32) -> Bool { sqlite3_column_type(raw, column) == SQLITE_NULL }
    func int64(at column: Int32) -> Int64 { sqlite3_column_int64(raw, column) }
    func double(at column: Int32) -> Double { sqlite3_column_double(raw, column) }

    func string(at column: Int32) -> String? {
        guard let text = sqlite3_column_text(raw, column) else { return nil }
        let count = Int(sqlite3_column_bytes(raw, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    func bytes(at column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(raw, column))
        guard count > 0, let pointer = sqlite3_column_blob(raw, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    func data(at column: Int32) -> Data {
        let count = Int(sqlite3_column_bytes(raw, column))
        guard count > 0, let pointer = sqlite3_column_blob(raw, column) else { return Data() }
        return Data(bytes: pointer, count: count)
    }

    func value(at column: Int32) -> SQLiteValue {
        switch sqlite3_column_type(raw, column) {
        case SQLITE_INTEGER: return .integer(int64(at: column))
        case SQLITE_FLOAT: return .real(double(at: column))
        case SQLITE_TEXT: return .text(string(at: column) ?? "")
        case SQLITE_BLOB: return .blob(bytes(at: column))
        default: return .null
        }
    }
}
