import Foundation
import Logging
import OpenCoreData
import OpenCoreDataSQL
import PostgresNIO

/// One connection to the server, used synchronously: Core Data's API is synchronous, so each
/// statement is sent through postgres-nio and waited for on the calling thread (never on an event
/// loop, which the store's callers are not). One caller at a time, under ``lock``.
final class PostgresLink: @unchecked Sendable {
    private let connection: PostgresConnection
    private let logger: Logger
    /// Held for the length of one use: a statement, or a whole transaction on the writer.
    let lock = NSRecursiveLock()
    private(set) var isInTransaction = false
    /// Whether the open transaction has sent its `BEGIN`: it is sent with the transaction's first
    /// statement, so a statement run before it (``queryBeforeTransaction(_:_:)``) commits on its
    /// own, and a transaction that ran nothing sends nothing.
    private var hasBegun = false
    /// The statements prepared on this connection, and those run once (prepared at their second run).
    private var statements = PreparedStatements()

    private init(connection: PostgresConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    /// Closes the connection without waiting: the last reference may go on an event loop thread
    /// (a closed listener's), where waiting is not allowed.
    deinit {
        let closed: EventLoopFuture<Void> = connection.close()
        closed.whenComplete { _ in }
    }

    /// Opens a connection to the server `location` names.
    ///
    /// - Throws: `NSPersistentStoreOpenError` (134080) when the server cannot be reached or refuses
    ///   the credentials, with the server's message.
    static func connect(_ location: PostgresLocation) throws -> PostgresLink {
        let logger = Logger(label: "OpenCoreData.PostgreSQL")
        var configuration = PostgresConnection.Configuration(
            host: location.host, port: location.port, username: location.user, password: location.password,
            database: location.database, tls: try location.tls())
        if let schema = location.schema {
            // Every name the store writes is unqualified: the schema is the first on the path.
            configuration.options.additionalStartupParameters = [("search_path", PostgreSQLDialect().quote(schema))]
        }
        configuration.options.connectTimeout = .seconds(Int64(location.connectTimeout))
        do {
            let connection = try PostgresConnection.connect(
                on: PostgresConnection.defaultEventLoopGroup.any(), configuration: configuration,
                id: Int(nextID.add(1)), logger: logger
            ).wait()
            return PostgresLink(connection: connection, logger: logger)
        } catch {
            throw PostgresLink.cocoaError(
                error, code: NSPersistentStoreOpenError,
                "Cannot connect to the PostgreSQL server at \(location.host):\(location.port)")
        }
    }

    /// Runs one statement with `values` bound to its `$n` placeholders, in order, and returns its
    /// rows with the number of rows it changed.
    ///
    /// - Throws: `NSPersistentStoreOperationError` (134070) with the server's message, its
    ///   `SQLSTATE` under ``PostgresLink/sqlStateKey``.
    @discardableResult
    func query(_ sql: String, _ values: [SQLValue] = []) throws -> PostgresResult {
        lock.lock()
        defer { lock.unlock() }
        try beginIfDue()
        return try run(sql, values)
    }

    /// Runs one statement with `values` bound to its `$n` placeholders, in order, and gives `body`
    /// each row on the calling thread as it arrives, while the event loop receives the next ones;
    /// returns the number of rows it changed. `body` gets one array, emptied and filled again for
    /// each row, so a row it does not keep costs no allocation.
    ///
    /// - Throws: as ``query(_:_:)``, or what `body` throws (the statement's other rows are then
    ///   received and dropped).
    @discardableResult
    func query(_ sql: String, _ values: [SQLValue], eachRow body: ([SQLValue]) throws -> Void) throws -> Int {
        lock.lock()
        defer { lock.unlock() }
        try beginIfDue()
        return try run(sql, values, mayPrepare: true, eachRow: body).rows ?? 0
    }

    /// Runs a statement that only reads, whose rows are all its caller wants: as
    /// ``query(_:_:)``, but prepared on the server when it is run again (``PreparedStatements``).
    ///
    /// - Throws: as ``query(_:_:)``.
    func read(_ sql: String, _ values: [SQLValue]) throws -> [[SQLValue]] {
        lock.lock()
        defer { lock.unlock() }
        try beginIfDue()
        var rows: [[SQLValue]] = []
        _ = try run(sql, values, mayPrepare: true) { rows.append($0) }
        return rows
    }

    /// Sends the open transaction's `BEGIN` before its first statement. Called under ``lock``.
    private func beginIfDue() throws {
        guard isInTransaction, !hasBegun else { return }
        hasBegun = true
        try run("BEGIN ISOLATION LEVEL READ COMMITTED", [])
    }

    /// Runs one statement on its own — committed when it returns — if the open transaction has
    /// sent nothing yet, and inside it otherwise; `values` is told which, under the connection's
    /// lock, so the answer holds while the statement runs. On its own, a statement run again is
    /// prepared, as a read is (``read(_:_:)``): its caller wants its rows, not its count of changes.
    ///
    /// - Throws: as ``query(_:_:)``.
    func queryBeforeTransaction(_ sql: String, _ values: (_ onItsOwn: Bool) -> [SQLValue]) throws -> PostgresResult {
        lock.lock()
        defer { lock.unlock() }
        let onItsOwn = !(isInTransaction && hasBegun)
        return try run(sql, values(onItsOwn), mayPrepare: onItsOwn)
    }

    /// Whether a transaction is open and has sent statements (so a statement now runs inside it).
    var transactionHasBegun: Bool {
        lock.lock()
        defer { lock.unlock() }
        return isInTransaction && hasBegun
    }

    @discardableResult
    private func run(_ sql: String, _ values: [SQLValue], mayPrepare: Bool = false) throws -> PostgresResult {
        var rows: [[SQLValue]] = []
        let metadata = try run(sql, values, mayPrepare: mayPrepare) { rows.append($0) }
        return PostgresResult(rows: rows, changes: metadata.rows ?? 0, command: metadata.command)
    }

    /// Runs one statement, giving `body` each row; `mayPrepare`, a statement whose caller wants
    /// only its rows, which outside a transaction runs as a prepared statement once it is run
    /// again. The transaction's statements are never prepared: a statement the server would not
    /// prepare would abort the transaction with it.
    private func run(
        _ sql: String, _ values: [SQLValue], mayPrepare: Bool, eachRow body: ([SQLValue]) throws -> Void
    ) throws -> (rows: Int?, command: String) {
        guard mayPrepare, !(isInTransaction && hasBegun) else { return try runUnnamed(sql, values, eachRow: body) }
        let statement: PreparedQuery
        let text: String
        switch statements.plan(sql, values) {
        case .unnamed(let firstRun):
            let outcome = try runUnnamed(sql, values, eachRow: body)
            if let firstRun { statements.ranOnce(firstRun) }
            return outcome
        case .run(let prepared, let typedText):
            (statement, text) = (prepared, typedText)
        case .prepare(let typedText):
            do {
                statement = try connection.prepare(query: typedText).wait()
            } catch {
                statements.refuse(typedText)
                return try runUnnamed(sql, values, eachRow: body)
            }
            text = typedText
            close(statements.keep(statement, for: typedText))
        }
        var delivered = 0
        do {
            try runPrepared(statement, sql, values) { row in
                delivered += 1
                try body(row)
            }
            return (delivered, "SELECT")
        } catch let error as NSError where delivered == 0 && Self.isStaleStatement(error) {
            // The server no longer has the statement (a pooler in between) or its plan no longer
            // fits the tables: run it unnamed, as it would have been.
            if Self.sqlState(error) == "26000" {
                statements.disable()
            } else {
                close(statements.forget(text))
            }
        }
        return try runUnnamed(sql, values, eachRow: body)
    }

    /// Closes a statement the connection no longer keeps, on the server, without waiting: the
    /// next statements queue behind it.
    private func close(_ statement: PreparedQuery?) { statement?.deallocate().whenComplete { _ in } }

    /// Whether `error` says a prepared statement is gone (`26000`, invalid statement name) or its
    /// cached plan no longer fits (`0A000`: "cached plan must not change result type").
    private static func isStaleStatement(_ error: NSError) -> Bool {
        let state = sqlState(error)
        return state == "26000" || state == "0A000"
    }

    private static func sqlState(_ error: NSError) -> String? { error.userInfo[sqlStateKey] as? String }

    /// Runs a prepared statement, giving `body` each row as ``runUnnamed(_:_:eachRow:)`` does.
    private func runPrepared(
        _ statement: PreparedQuery, _ sql: String, _ values: [SQLValue], eachRow body: ([SQLValue]) throws -> Void
    ) throws {
        let stream = RowStream()
        let execution = statement.execute(PreparedStatements.bindings(values)) { stream.append($0) }
        execution.whenComplete { stream.finish($0.map { _ in PostgresQueryMetadata?.none }) }
        _ = try readRows(from: stream, sql, resultsAreBinary: true, eachRow: body)
    }

    private func runUnnamed(_ sql: String, _ values: [SQLValue], eachRow body: ([SQLValue]) throws -> Void) throws
        -> (rows: Int?, command: String)
    {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values {
            switch value {
            case .null: bindings.appendNull()
            case .integer(let integer): bindings.append(integer)
            case .real(let real): bindings.append(real)
            // Text is sent untyped, as a literal in the statement would be: the server reads it
            // as the column or function it meets needs (TEXT, NUMERIC for a decimal).
            case .text(let text): bindings.append(UntypedText(text: text))
            case .blob(let bytes): bindings.append(ByteBuffer(bytes: bytes))
            }
        }
        // The event loop only queues the driver's rows; this thread reads them into values while
        // the event loop receives and parses the next ones, so the two overlap, and what the
        // caller does with each row (making its object's values) runs here, not on the event loop.
        let stream = RowStream()
        let statement = connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger) {
            stream.append($0)
        }
        statement.whenComplete { stream.finish($0.map { $0 }) }
        let metadata = try readRows(from: stream, sql, resultsAreBinary: false, eachRow: body)
        return (metadata?.rows, metadata?.command ?? "")
    }

    /// Reads a statement's rows from `stream` as they come, giving `body` each; answers the
    /// statement's outcome. `resultsAreBinary`: every cell is in binary form, whatever it is
    /// labelled (the driver labels a prepared statement's cells with the forms the server
    /// described before the rows were asked for in binary).
    ///
    /// - Throws: the statement's error, else the first error `body` threw.
    private func readRows(
        from stream: RowStream, _ sql: String, resultsAreBinary: Bool, eachRow body: ([SQLValue]) throws -> Void
    ) throws -> PostgresQueryMetadata? {
        var batch: [PostgresRow] = []
        var row: [SQLValue] = []
        var failure: (any Error)?
        while stream.take(&batch) {
            guard failure == nil else { continue }
            do {
                for received in batch {
                    row.removeAll(keepingCapacity: true)
                    for cell in received { row.append(try Self.value(of: cell, binary: resultsAreBinary)) }
                    try body(row)
                }
            } catch {
                failure = error
            }
        }
        let metadata: PostgresQueryMetadata?
        do {
            // Read from the completion the stream was given: waiting on the future again would
            // cost another trip through the event loop, for every statement.
            metadata = try stream.result().get()
        } catch let error as NSError where error.domain == NSCocoaErrorDomain {
            throw error
        } catch {
            throw Self.cocoaError(error, code: NSPersistentStoreOperationError, "PostgreSQL failed to run \(sql)")
        }
        if let failure {
            if (failure as NSError).domain == NSCocoaErrorDomain { throw failure }
            throw Self.cocoaError(failure, code: NSPersistentStoreOperationError, "PostgreSQL failed to read \(sql)")
        }
        return metadata
    }

    /// Runs `body` in one transaction on this connection (or inside the one already open), with
    /// the connection held: `BEGIN` with its first statement, `COMMIT` when it returns, `ROLLBACK`
    /// when it throws (neither when it ran no statement).
    ///
    /// A statement that failed inside `body` aborts the transaction even when `body` went on
    /// (an error caught and set aside): PostgreSQL then answers the `COMMIT` with `ROLLBACK`, which
    /// is an error here, so nothing reports as saved that was not.
    ///
    /// - Throws: what `body` throws, or the server's error at `BEGIN` or `COMMIT`;
    ///   `NSPersistentStoreOperationError` (134070) when the server rolled the transaction back.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        if isInTransaction { return try body() }
        isInTransaction = true
        hasBegun = false
        defer {
            isInTransaction = false
            hasBegun = false
        }
        let result: T
        do {
            result = try body()
        } catch {
            if hasBegun { _ = try? run("ROLLBACK", []) }
            throw error
        }
        guard hasBegun else { return result }
        let commit = try run("COMMIT", [])
        guard commit.command != "ROLLBACK" else {
            throw CoreDataError.make(
                NSPersistentStoreOperationError,
                "PostgreSQL rolled the transaction back at COMMIT: a statement in it had failed. Nothing of it was kept."
            )
        }
        return result
    }

    /// Closes the connection, waiting for it unless called on its event loop.
    func close() {
        let closed: EventLoopFuture<Void> = connection.close()
        if !connection.eventLoop.inEventLoop { _ = try? closed.wait() }
    }

    /// Listens on `channel` (PostgreSQL's `LISTEN`): `handler` gets each notification's payload
    /// on an event loop thread, and must not block.
    ///
    /// - Throws: `NSPersistentStoreOperationError` when `LISTEN` fails.
    func listen(_ channel: String, _ handler: @escaping @Sendable (String) -> Void) throws {
        connection.addListener(channel: channel) { _, notification in handler(notification.payload) }
        try query("LISTEN " + PostgreSQLDialect().quote(channel))
    }

    /// Calls `body` once, when the connection closes (the server went away, or ``close()``).
    func whenClosed(_ body: @escaping @Sendable () -> Void) {
        connection.closeFuture.whenComplete { _ in body() }
    }

    private static let nextID = AtomicCounter()

    /// A cell as the SQL layer's value: integers, floating point, text, bytes; a `NUMERIC` as its
    /// decimal text, a Boolean as 1 or 0.
    private static func value(of cell: PostgresCell, binary: Bool) throws -> SQLValue {
        guard let bytes = cell.bytes else { return .null }
        if binary, cell.format != .binary {
            var relabelled = cell
            relabelled.format = .binary
            return try value(of: relabelled, binary: false)
        }
        // The binary forms of the types the store writes are read from the cell's bytes here:
        // the driver's generic decoding, with its context and error paths, costs several times
        // the read itself on every cell of every row. Any other form takes the driver's way.
        if cell.format == .binary {
            let (start, length) = (bytes.readerIndex, bytes.readableBytes)
            switch (cell.dataType, length) {
            case (.int8, 8): if let integer = bytes.getInteger(at: start, as: Int64.self) { return .integer(integer) }
            case (.int4, 4):
                if let integer = bytes.getInteger(at: start, as: Int32.self) { return .integer(Int64(integer)) }
            case (.int2, 2):
                if let integer = bytes.getInteger(at: start, as: Int16.self) { return .integer(Int64(integer)) }
            case (.float8, 8):
                if let bits = bytes.getInteger(at: start, as: UInt64.self) { return .real(Double(bitPattern: bits)) }
            case (.bool, 1):
                if let byte = bytes.getInteger(at: start, as: UInt8.self) { return .integer(byte == 0 ? 0 : 1) }
            case (.text, _), (.varchar, _):
                if let text = bytes.getString(at: start, length: length) { return .text(text) }
            default: break
            }
        }
        switch cell.dataType {
        case .int8, .int4, .int2: return .integer(try cell.decode(Int64.self))
        case .float8, .float4: return .real(try cell.decode(Double.self))
        case .bool: return .integer(try cell.decode(Bool.self) ? 1 : 0)
        case .numeric: return .text(try cell.decode(Decimal.self).description)
        case .bytea: return .blob(Array(buffer: try cell.decode(ByteBuffer.self)))
        default: return .text(try cell.decode(String.self))
        }
    }

    /// The userInfo key of the server's `SQLSTATE` code in the errors this store throws.
    static let sqlStateKey = "PostgreSQLState"

    /// A Cocoa error for a postgres-nio error, with the server's message and `SQLSTATE` when the
    /// server sent them.
    static func cocoaError(_ error: any Error, code: Int, _ what: String) -> NSError {
        var userInfo: [String: Any] = [NSUnderlyingErrorKey: error as NSError]
        var message = what
        if let psql = error as? PSQLError {
            if let info = psql.serverInfo {
                message += ": " + (info[.message] ?? "the server refused it")
                userInfo[sqlStateKey] = info[.sqlState]
            } else {
                message += " (\(psql.code))"
            }
        } else if case .server(let info) = error as? PostgresError {
            // How the driver reports the server's errors for a prepared statement.
            message += ": " + (info.fields[.message] ?? "the server refused it")
            userInfo[sqlStateKey] = info.fields[.sqlState]
        } else {
            message += " (\(error))"
        }
        return CoreDataError.make(code, message + ".", userInfo)
    }
}

/// The rows of a statement as the SQL layer's values, and how many rows it inserted, changed or
/// deleted.
struct PostgresResult {
    let rows: [[SQLValue]]
    let changes: Int
    /// The command tag's verb (`INSERT`, `COMMIT`, …): a `COMMIT` of a transaction an error
    /// aborted answers `ROLLBACK`.
    var command = ""
}

/// The driver's rows of one statement, queued by the connection's event loop as they arrive and
/// taken in batches by the thread that runs the statement, which sleeps while none are queued.
private final class RowStream: @unchecked Sendable {
    private let condition = NSCondition()
    private var rows: [PostgresRow] = []
    private var completion: Result<PostgresQueryMetadata?, any Error>?
    private var waiting = false
    /// How many rows wake a waiting reader before the statement completes: waking it for each
    /// row would cost the event loop a system call a row whenever the reader keeps up, and a
    /// statement of fewer rows (a to-many's members) wakes it once, when it completes.
    private static let batchSize = 256

    /// Queues `row` (on the event loop).
    func append(_ row: PostgresRow) {
        condition.lock()
        rows.append(row)
        if waiting, rows.count >= Self.batchSize { condition.signal() }
        condition.unlock()
    }

    /// Marks the statement complete with its outcome: no row follows.
    func finish(_ outcome: Result<PostgresQueryMetadata?, any Error>) {
        condition.lock()
        completion = outcome
        condition.signal()
        condition.unlock()
    }

    /// The statement's outcome, once ``take(_:)`` answered `false`.
    func result() -> Result<PostgresQueryMetadata?, any Error> {
        condition.lock()
        defer { condition.unlock() }
        return completion
            ?? .failure(
                CoreDataError.make(NSPersistentStoreOperationError, "A PostgreSQL statement had not completed."))
    }

    /// Replaces `batch` with the rows queued since the last call, waiting for some while none
    /// are; `false` once the statement completed and every row was taken. `batch`'s storage is
    /// reused for the next rows queued.
    func take(_ batch: inout [PostgresRow]) -> Bool {
        batch.removeAll(keepingCapacity: true)
        condition.lock()
        defer { condition.unlock() }
        while rows.isEmpty, completion == nil {
            waiting = true
            condition.wait()
            waiting = false
        }
        swap(&rows, &batch)
        return !batch.isEmpty
    }
}

/// A string bound without a type, as a literal in the text would be (PostgreSQL infers it).
private struct UntypedText: PostgresDynamicTypeEncodable {
    let text: String
    var psqlType: PostgresDataType { PostgresDataType(0) }
    var psqlFormat: PostgresFormat { .text }

    func encode<JSONEncoder: PostgresJSONEncoder>(
        into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>
    ) {
        byteBuffer.writeString(text)
    }
}

/// A thread-safe counter for connection IDs in postgres-nio's logs.
final class AtomicCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Int64 = 0

    func add(_ amount: Int64) -> Int64 {
        lock.lock()
        defer { lock.unlock() }
        value += amount
        return value
    }
}
