import Foundation
import OpenCoreData

/// Creating and opening an SQL store's tables, and its persistent history (``SQLHistory``):
/// the same bookkeeping in every database.
extension SQLStore {
    /// Creates the tables of `model`'s layout and the bookkeeping tables on `link`, inside the
    /// caller's transaction, with `Z_PRIMARYKEY`'s entity rows, a new metadata row (type `type`, a
    /// new UUID, the model's version hashes, `extraMetadata`) and `Z_MODELCACHE` holding the model
    /// (``SQLStore/modelCache(for:)``). Returns the layout.
    ///
    /// - Throws: the database's error.
    package func createTables(
        for model: NSManagedObjectModel, type: String, extraMetadata: [String: Any] = [:], on link: Link
    ) throws -> SQLSchema {
        let schema = SQLSchema(model: model)
        for statement in schema.createStatements() + SQLBookkeeping.createTables {
            try link.change(SQLWriter.write(statement, dialect: dialect).sql, [])
        }
        let insertEntity = SQLWriter.write(SQLBookkeeping.insertEntity, dialect: dialect).sql
        for mapping in schema.ordered {
            let parent = mapping.entity.superentity.map { schema[$0].number } ?? 0
            try link.change(
                insertEntity, [.integer(mapping.number), .text(mapping.entity.name ?? ""), .integer(parent)])
        }
        var metadata = self.metadata ?? [:]
        metadata[NSStoreTypeKey] = type
        metadata[NSStoreUUIDKey] = UUID().uuidString
        metadata.merge(StoreMetadata.keys(for: model)) { _, new in new }
        metadata.merge(extraMetadata) { _, new in new }
        self.metadata = metadata
        try writeMetadata(insert: true, on: link)
        try link.change(
            SQLWriter.write(SQLBookkeeping.insertModelCache, dialect: dialect).sql,
            [.blob([UInt8](try Self.modelCache(for: model)))])
        return schema
    }

    /// Reads the store's `Z_METADATA` row on `link` into the store's metadata (what the program
    /// set before the store opened wins); `place` names the store in errors.
    ///
    /// - Throws: `NSPersistentStoreOpenError` (134080) when there is no row or it cannot be read.
    package func readMetadata(on link: Link, place: String) throws -> [String: Any] {
        guard let row = try link.select(SQLWriter.write(SQLBookkeeping.metadata, dialect: dialect).sql, []).first
        else {
            throw CoreDataError.make(
                NSPersistentStoreOpenError, "The store at \(place) has no metadata row.", [NSURLErrorKey: url as Any])
        }
        var metadata = try SQLStoreMetadata.decode(row, place: place, url: url)
        if let existing = self.metadata { metadata.merge(existing as [String: Any]) { old, _ in old } }
        self.metadata = metadata
        writtenMetadataRevision = metadataRevision
        return metadata
    }

    /// The layout of `model` in the store open on `link`, with the store's own entity numbers and
    /// join tables, checked against the tables the store has: a store whose layout differs is an
    /// error when it opens, not at the first fetch.
    ///
    /// - Throws: `NSPersistentStoreIncompatibleSchemaError` (134020) naming a table's missing
    ///   columns; the database's error.
    package func openedSchema(of model: NSManagedObjectModel, on link: Link) throws -> SQLSchema {
        let schema = SQLSchema(
            model: model, numbers: try SQLMigrationPlan.entityNumbers(on: link, dialect),
            joinTables: try SQLMigrationPlan.joinTables(on: link, dialect))
        var existing: [String: Set<String>] = [:]
        for row in try link.select(dialect.tableColumnsQuery, []) {
            guard row.count == 2, case .text(let table) = row[0], case .text(let column) = row[1] else { continue }
            existing[table, default: []].insert(column)
        }
        for table in schema.tables {
            let columns = existing[table.name] ?? []
            let missing = (["Z_PK", "Z_ENT", "Z_OPT"] + table.columns.map(\.name)).filter { !columns.contains($0) }
            guard missing.isEmpty else {
                throw CoreDataError.make(
                    NSPersistentStoreIncompatibleSchemaError,
                    "The store's table \(table.name) lacks columns \(missing.joined(separator: ", ")) of the model.",
                    [NSURLErrorKey: url as Any])
            }
        }
        return schema
    }
}

extension SQLStore {
    /// The store's history, in its dialect.
    package var history: SQLHistory { SQLHistory(dialect: dialect, schema: schema) }

    /// Creates the history tables on `link` when the store tracks history and they are missing.
    /// Returns true when the store must open read-only instead: it was opened without
    /// `NSPersistentHistoryTrackingKey` and its history holds transactions, as Apple's Core Data
    /// does ("Forcing into Read Only mode"), so no save leaves a gap that readers of the history
    /// would take for nothing having changed.
    ///
    /// - Throws: the database's error.
    package func prepareHistory(oldValues: Bool, on link: Link) throws -> Bool {
        guard !isReadOnly else { return false }
        if tracksHistory {
            try history.prepare(oldValues: oldValues, on: link)
            return false
        }
        return try history.holdsTransactions(on: link)
    }

    /// The warning Apple's Core Data logs when it opens a store read-only because its history
    /// holds transactions (``prepareHistory(oldValues:on:)``).
    package func historyForcesReadOnlyWarning(place: String) -> String {
        "Store opened without NSPersistentHistoryTrackingKey but previously had been opened with NSPersistentHistoryTrackingKey - Forcing into Read Only mode store at \(place)"
    }

    /// Writes one save on `link` inside the caller's write transaction: its rows, its metadata when
    /// it was set, and — when the store tracks history — its history transaction, whose number it
    /// returns. The write lock is taken first unless the save only inserts and records nothing
    /// (its keys are its own; no other save's check depends on rows that did not exist).
    ///
    /// - Throws: `NSPersistentStoreSaveError` (134030) for a read-only store; the errors of
    ///   ``writeRows(of:on:)``.
    package func saveRows(_ transaction: StoreTransaction, oldValues: Bool, on link: Link) throws -> Int64? {
        guard !isReadOnly else {
            throw CoreDataError.make(
                NSPersistentStoreSaveError, "Cannot save to a read-only store.", [NSAffectedStoresErrorKey: [self]])
        }
        // History numbers are handed out under the lock, so they grow in commit order.
        if tracksHistory || !transaction.updated.isEmpty || !transaction.deleted.isEmpty || metadataAwaitsSave {
            try lockForWriting()
        }
        let changes =
            tracksHistory
            ? try SQLHistory.changes(of: transaction, recordingOldValues: oldValues) { id in
                try? read(id, generation: nil, cachedRow: { _ in nil }).snapshot
            } : []
        try writeRows(of: transaction, on: link)
        if metadataAwaitsSave { try writeMetadata(insert: false, on: link) }
        guard tracksHistory else { return nil }
        return try history.record(
            changes, author: transaction.author, contextName: transaction.contextName,
            timestamp: transaction.timestamp, on: link)
    }

    /// The number of the last history transaction; 0 when there is none.
    ///
    /// - Throws: the database's error.
    package func lastHistoryNumber() throws -> Int64 { try withReadLink(nil) { try history.lastNumber(on: $0) } }

    /// The history transactions `bound` selects, oldest first.
    ///
    /// - Throws: `NSPersistentHistoryTokenExpiredError` (134301) for a token before the history
    ///   kept; the database's error.
    package func historyTransactions(_ bound: NSPersistentHistoryChangeRequest.Bound, withChanges: Bool) throws
        -> [HistoryRecord]
    {
        try withReadLink(nil) { link in
            try history.transactions(
                bound, withChanges: withChanges, store: self, objectID: { objectID($0, $1) }, on: link)
        }
    }

    /// Deletes the history transactions `bound` selects, in one write transaction; returns how many.
    ///
    /// - Throws: the database's error.
    package func deleteHistory(_ bound: NSPersistentHistoryChangeRequest.Bound) throws -> Int {
        var count = 0
        try withWriteTransaction { link in
            try lockForWriting()
            count = try history.delete(bound, store: self, on: link)
        }
        return count
    }
}
