import Foundation
import Logging
import OpenCoreData
import OpenCoreDataSQL

/// Persistent history in Apple's tables (``SQLHistory``, the same as the SQLite store's), in the
/// store's schema, so every process and machine reads one history.
///
/// A save records its transaction while it holds the store's write lock, so transaction numbers
/// grow in the order saves commit, and tells the others its number in its `NOTIFY`
/// (``PostgresChangeListener``): they post `NSPersistentStoreRemoteChange` with that token and
/// pull the history after their own last token.
///
/// Related documentation: NSPersistentHistoryTrackingKey; NSPersistentHistoryChangeRequest;
/// "Consuming Relevant Store Changes".
extension PostgreSQLStore: HistoryStore {
    package var tracksHistory: Bool { historyTrackingRequested }

    /// The store's history, written in PostgreSQL's dialect.
    var history: SQLHistory { SQLHistory(dialect: PostgreSQLDialect(), schema: schema) }

    static let historyLog = LoggerBox(Logger(label: "OpenCoreData.PostgreSQL"))

    /// Creates the history tables when the store tracks history and they are missing; opens a
    /// store whose history holds transactions read-only when it is opened without
    /// `NSPersistentHistoryTrackingKey`, as Apple's Core Data does ("Forcing into Read Only
    /// mode"), so no save leaves a gap in the history other processes read. Runs in the opening
    /// transaction, under the store's lock.
    func prepareHistory(on link: PostgresLink) throws {
        guard !isReadOnly else { return }
        if tracksHistory {
            try history.prepare(oldValues: oldValuesRequested, on: link)
        } else if try history.holdsTransactions(on: link) {
            isReadOnly = true
            Self.historyLog.logger.warning(
                "Store opened without NSPersistentHistoryTrackingKey but previously had been opened with NSPersistentHistoryTrackingKey - Forcing into Read Only mode store at \(location.description)"
            )
        }
    }

    /// The history changes of a save, read before its rows change, and recorded after them;
    /// returns the transaction's number (`nil` when the store does not track history).
    func recordHistory(of transaction: StoreTransaction, around write: () throws -> Void) throws -> Int64? {
        guard tracksHistory else {
            try write()
            return nil
        }
        let changes = try SQLHistory.changes(of: transaction, recordingOldValues: oldValuesRequested) { id in
            try? read(id, generation: nil, cachedRow: { _ in nil }).snapshot
        }
        try write()
        return try history.record(
            changes, author: transaction.author, contextName: transaction.contextName,
            timestamp: transaction.timestamp, on: writer)
    }

    package func lastHistoryNumber() throws -> Int64 { try withReadLink { try history.lastNumber(on: $0) } }

    package func historyTransactions(_ bound: NSPersistentHistoryChangeRequest.Bound, withChanges: Bool) throws
        -> [HistoryRecord]
    {
        try withReadLink { link in
            try history.transactions(
                bound, withChanges: withChanges, store: self, objectID: { objectID($0, $1) }, on: link)
        }
    }

    package func deleteHistory(_ bound: NSPersistentHistoryChangeRequest.Bound) throws -> Int {
        var count = 0
        try transaction {
            try lockForWriting()
            count = try history.delete(bound, store: self, on: writer)
        }
        return count
    }
}

extension PostgresLink: SQLRowRunner {
    func select(_ sql: String, _ values: [SQLValue]) throws -> [[SQLValue]] { try query(sql, values).rows }

    func change(_ sql: String, _ values: [SQLValue]) throws -> Int { try query(sql, values).changes }

    func hasTable(_ name: String) throws -> Bool {
        let quoted = PostgreSQLDialect().quote(name)
        return try query("SELECT to_regclass($1)::text", [.text(quoted)]).rows.first?.first.map { $0 != .null } ?? false
    }
}
