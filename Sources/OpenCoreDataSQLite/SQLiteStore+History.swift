import Foundation
internal import Logging
import OpenCoreData
import OpenCoreDataSQL

/// Persistent history in Apple's tables (``SQLHistory``, shared with every SQL store), in the
/// store's file.
///
/// Related documentation: NSPersistentHistoryTrackingKey; NSPersistentHistoryChangeRequest;
/// NSAttributeDescription `preservesValueInHistoryOnDeletion`.
extension SQLiteStore: HistoryStore {
    typealias HistoryChange = SQLHistory.Change

    package var tracksHistory: Bool { historyOptions.tracks }

    /// Whether the store also records old values (``PersistentHistoryOldValuesKey``).
    var recordsOldValues: Bool { historyOptions.oldValues }

    static let historyLog = LoggerBox(Logger(label: "OpenCoreData.SQLite"))

    /// Creates the history tables when the store tracks history; opens a store whose history
    /// holds transactions read-only when it is opened without `NSPersistentHistoryTrackingKey`
    /// (``SQLStore/prepareHistory(oldValues:on:)``). Delete the history first
    /// (`deleteHistory(before: .distantFuture)`, with the key) to stop tracking.
    func prepareHistory() throws {
        guard !isReadOnly else { return }
        // Only creating the tables needs the write lock; a store without history only reads.
        var forcedReadOnly = false
        if tracksHistory {
            try transaction { _ = try prepareHistory(oldValues: recordsOldValues, on: connection) }
        } else {
            forcedReadOnly = try prepareHistory(oldValues: recordsOldValues, on: connection)
        }
        guard forcedReadOnly else { return }
        isReadOnly = true
        Self.historyLog.logger.warning("\(historyForcesReadOnlyWarning(place: url?.path ?? "?"))")
    }

    /// The row of `id` as the store holds it, for a history change; `nil` when it cannot be read.
    private func storedRow(_ id: NSManagedObjectID) -> Snapshot? {
        try? read(id, generation: nil, cachedRow: { _ in nil }).snapshot
    }

    /// The old values of `id`'s attributes in `slots`, when the store records them.
    func oldValues(of id: NSManagedObjectID, slots: SlotSet?) -> [String: Any]? {
        guard recordsOldValues, let stored = storedRow(id) else { return nil }
        return SQLHistory.oldValues(of: id, stored: stored, slots: slots)
    }

    /// The tombstone a deleted object leaves (``SQLHistory/tombstone(of:stored:)``).
    func tombstone(of id: NSManagedObjectID) -> [String: Any]? {
        storedRow(id).flatMap { SQLHistory.tombstone(of: id, stored: $0) }
    }

    /// The history changes of a save, read before its rows change.
    func historyChanges(of transaction: StoreTransaction) throws -> [HistoryChange] {
        guard tracksHistory else { return [] }
        return try SQLHistory.changes(of: transaction, recordingOldValues: recordsOldValues) { storedRow($0) }
    }

    /// Records one transaction with its changes and returns its number (`nil` when nothing was
    /// recorded); call inside the write transaction that makes them.
    @discardableResult
    func recordHistory(_ changes: [HistoryChange], author: String?, contextName: String?, timestamp: Date) throws
        -> Int64?
    {
        guard tracksHistory else { return nil }
        return try history.record(
            changes, author: author, contextName: contextName, timestamp: timestamp, on: connection)
    }
}

extension SQLiteConnection: SQLRowRunner {
    func select(_ sql: String, _ values: [SQLValue]) throws -> [[SQLValue]] { try rows(sql, values) }

    func change(_ sql: String, _ values: [SQLValue]) throws -> Int {
        try run(sql, values)
        return changes
    }

    func hasTable(_ name: String) throws -> Bool {
        try !rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(name)]).isEmpty
    }
}
