import Foundation

/// A store that records persistent history (opened with `NSPersistentHistoryTrackingKey`) and
/// answers history requests: the SQLite store, in Apple's tables.
package protocol HistoryStore: CoordinatedStore {
    /// Whether the store records history.
    var tracksHistory: Bool { get }
    /// The recorded transactions `bound` selects, oldest first, with their changes when asked.
    ///
    /// - Throws: `NSPersistentHistoryTokenExpiredError` (134301) for a token older than the
    ///   oldest transaction kept (history after it was deleted).
    func historyTransactions(_ bound: NSPersistentHistoryChangeRequest.Bound, withChanges: Bool) throws
        -> [HistoryRecord]
    /// Deletes the transactions `bound` selects and their changes; returns how many.
    func deleteHistory(_ bound: NSPersistentHistoryChangeRequest.Bound) throws -> Int
    /// The number of the last transaction recorded; 0 when there is none.
    func lastHistoryNumber() throws -> Int64
}

/// A transaction as a store reads it.
package struct HistoryRecord {
    package var number: Int64
    package var timestamp: Date
    package var author: String?
    package var bundleID: String
    package var processID: String
    package var contextName: String?
    package var changes: [Change]

    package struct Change {
        package var id: Int64
        package var objectID: NSManagedObjectID
        package var type: NSPersistentHistoryChangeType
        package var updatedProperties: Set<NSPropertyDescription>?
        package var tombstone: [AnyHashable: Any]?
        package var oldValues: [String: Any]?

        package init(
            id: Int64, objectID: NSManagedObjectID, type: NSPersistentHistoryChangeType,
            updatedProperties: Set<NSPropertyDescription>?, tombstone: [AnyHashable: Any]?,
            oldValues: [String: Any]? = nil
        ) {
            self.oldValues = oldValues
            self.id = id
            self.objectID = objectID
            self.type = type
            self.updatedProperties = updatedProperties
            self.tombstone = tombstone
        }
    }

    package init(
        number: Int64, timestamp: Date, author: String?, bundleID: String, processID: String, contextName: String?,
        changes: [Change]
    ) {
        self.number = number
        self.timestamp = timestamp
        self.author = author
        self.bundleID = bundleID
        self.processID = processID
        self.contextName = contextName
        self.changes = changes
    }
}
