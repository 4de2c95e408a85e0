import Foundation
import OpenCoreDataSQL

@testable import OpenCoreData
@testable import OpenCoreDataSQLite

/// A store over a third SQL database, made of nothing but a connection and a dialect on the SQL
/// store core (``SQLStore``): ARCHITECTURE.md's "How to add a store", followed to the letter. Its
/// database engine is SQLite's library, but the store uses none of the SQLite store's code, and
/// its dialect spells SQL as SQLite's never does — `[bracketed]` identifiers, `@p1` parameters,
/// `TRUE`/`FALSE` — so any SQL text the core wrote without asking the dialect would show. The
/// cross-store conformance suite runs it beside the real stores.
final class AlienSQLStore: NSIncrementalStore, SQLStore, @unchecked Sendable {
    static let typeName = "AlienSQL"

    /// SQLite's answers, but for the spellings that identify a dialect.
    struct Dialect: SQLDialect {
        let engine = SQLiteDialect()
        func quote(_ identifier: String) -> String { "[" + identifier.replacingOccurrences(of: "]", with: "]]") + "]" }
        func placeholder(_ index: Int) -> String { "@p\(index)" }
        func boolean(_ value: Bool) -> String { value ? "TRUE" : "FALSE" }
        func nullSafeComparison(negated: Bool) -> String { engine.nullSafeComparison(negated: negated) }
        func sum(_ operand: String, real: Bool) -> String { engine.sum(operand, real: real) }
        func average(_ operand: String) -> String { engine.average(operand) }
        func window(limit: Int?, offset: Int, bind: (SQLValue) -> String) -> String {
            engine.window(limit: limit, offset: offset, bind: bind)
        }
        func stringMatchParameter(
            _ type: OpenCoreData.NSComparisonPredicate.Operator, _ options: OpenCoreData.NSComparisonPredicate.Options,
            _ value: String
        ) -> SQLValue? { engine.stringMatchParameter(type, options, value) }
        func stringMatch(
            operator type: OpenCoreData.NSComparisonPredicate.Operator,
            options: OpenCoreData.NSComparisonPredicate.Options, _ lhs: String,
            _ rhs: String
        ) -> String { engine.stringMatch(operator: type, options: options, lhs, rhs) }
        func nullOrdering(descending: Bool) -> String { engine.nullOrdering(descending: descending) }
        func collation(forSelector selector: String) -> String? { engine.collation(forSelector: selector) }
        func columnType(_ type: SQLColumnType, length: Int?) -> String { engine.columnType(type, length: length) }
        var bytewiseCollation: String? { engine.bytewiseCollation }
        var joinTableColumnsQuery: String? { engine.joinTableColumnsQuery }
        var tableColumnsQuery: String { engine.tableColumnsQuery }
        func blobConcat(_ left: String, _ right: String) -> String { engine.blobConcat(left, right) }
        func blobSlice(_ operand: String, from: Int, length: Int?) -> String {
            engine.blobSlice(operand, from: from, length: length)
        }
        func upsert(key: [String], columns: [String]) -> (verb: String, suffix: String) {
            engine.upsert(key: key, columns: columns)
        }
    }

    /// The one connection; the coordinator serializes reads with writes (``readsConcurrently``).
    private var connection: SQLiteConnection!
    private(set) var schema: SQLSchema!
    let rowPlans = SQLRowPlans(externalStorage: false)
    var writtenMetadataRevision: Int?
    var dialect: any SQLDialect { Dialect() }
    var readsConcurrently: Bool { false }
    var tracksHistory: Bool { historyTrackingRequested }
    override var type: String { Self.typeName }

    deinit { connection?.close() }

    override func willRemove(from coordinator: NSPersistentStoreCoordinator?) { connection?.close() }

    private static func connect(_ url: URL, readOnly: Bool) throws -> SQLiteConnection {
        let connection = try SQLiteConnection(path: url.path, mode: readOnly ? .readOnly : .readWrite(create: true))
        connection.setBusyTimeout(milliseconds: 10_000)
        // The string-matching functions and collations the dialect's SQL calls.
        try SQLiteFunctions.register(on: connection)
        return connection
    }

    override func loadMetadata() throws {
        guard let url, let model = persistentStoreCoordinator?.managedObjectModel else {
            throw CoreDataError.make(NSPersistentStoreOpenError, "The alien store needs a file and a coordinator.")
        }
        connection = try Self.connect(url, readOnly: false)
        try withWriteTransaction { link in
            if try !link.hasTable("Z_METADATA") {
                schema = try createTables(for: model, type: Self.typeName, on: link)
            } else {
                let metadata = try readMetadata(on: link, place: url.path)
                try StoreMetadata.checkVersionHashes(metadata, model: model, options: options, url: url)
                schema = try openedSchema(of: model, on: link)
            }
            if try prepareHistory(oldValues: oldValuesRequested, on: link) { isReadOnly = true }
        }
    }

    override class func metadataForPersistentStore(with url: URL) throws -> [String: Any] {
        let connection = try connect(url, readOnly: true)
        defer { connection.close() }
        let query = SQLWriter.write(SQLBookkeeping.metadata, dialect: Dialect()).sql
        guard let row = try? connection.select(query, []).first else {
            throw CoreDataError.make(NSPersistentStoreOpenError, "There is no alien store at \(url.path).")
        }
        return try SQLStoreMetadata.decode(row, place: url.path, url: url)
    }

    func withReadLink<T>(_ generation: QueryGeneration?, _ body: (SQLiteConnection) throws -> T) throws -> T {
        try body(connection)
    }

    func withWriteTransaction(_ body: (SQLiteConnection) throws -> Void) throws {
        if connection.isInTransaction { return try body(connection) }
        try connection.execute("BEGIN IMMEDIATE")
        do {
            try body(connection)
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    func lockForWriting() {}

    func withWriteLock(_ body: () throws -> Void) throws { try withWriteTransaction { _ in try body() } }

    @discardableResult
    func save(_ transaction: StoreTransaction) throws -> Int64? {
        var number: Int64?
        try withWriteTransaction { number = try saveRows(transaction, oldValues: oldValuesRequested, on: $0) }
        return number
    }
}
