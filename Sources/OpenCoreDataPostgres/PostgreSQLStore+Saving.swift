import Foundation
import OpenCoreData
import OpenCoreDataSQL

/// Saving to the PostgreSQL store: one transaction per save, holding the store's write lock.
extension PostgreSQLStore {
    /// Writes one save in one transaction: rows inserted, updated (each only if its `Z_OPT` is
    /// still the version read, then incremented) and deleted, join tables and order columns
    /// rewritten, metadata when it changed.
    ///
    /// - Throws: `NSPersistentStoreSaveError` (134030) for a read-only store;
    ///   `NSManagedObjectMergeError` (133020) when a row changed since it was read; the server's
    ///   error as `NSPersistentStoreOperationError` (134070) — nothing of the save is kept.
    @discardableResult
    func save(_ transaction: StoreTransaction) throws -> Int64? {
        guard !isReadOnly else {
            throw CoreDataError.make(
                NSPersistentStoreSaveError, "Cannot save to a read-only store.", [NSAffectedStoresErrorKey: [self]])
        }
        var recorded: Int64?
        try self.transaction {
            // History numbers are handed out under the lock, so they grow in commit order.
            if tracksHistory || !transaction.updated.isEmpty || !transaction.deleted.isEmpty || metadataAwaitsSave {
                try lockForWriting()
            }
            let number = try recordHistory(of: transaction) {
                for id in transaction.deleted { try deleteRow(id) }
                for row in transaction.inserted { try writeRow(row, insert: true) }
                for row in transaction.updated { try writeRow(row, insert: false) }
                for row in transaction.inserted { try writeRelationships(row) }
                for row in transaction.updated { try writeRelationships(row) }
                if metadataAwaitsSave { try writeMetadata(insert: false, on: writer) }
            }
            try notifyOthers(on: writer, historyNumber: number)
            recorded = number
        }
        return recorded
    }

    /// Runs `body` in one write transaction; the store's lock is taken as the transaction needs it
    /// (``transaction(_:)``).
    func withWriteLock(_ body: () throws -> Void) throws { try transaction(body) }

    func currentVersions(of objectIDs: [NSManagedObjectID]) throws -> [UInt64?] {
        // Each ID's table and key, found once; the versions read go to their positions.
        let rows = objectIDs.map { id in Self.primaryKey(id).map { (table: schema[id.entity].table.name, pk: $0) } }
        var byTable: [String: Set<Int64>] = [:]
        for case let (table, pk)? in rows { byTable[table, default: []].insert(pk) }
        var versions: [String: [Int64: UInt64]] = [:]
        try withReadLink { link in
            for (table, keys) in byTable.sorted(by: { $0.key < $1.key }) {
                let all = keys.sorted()
                for start in stride(from: 0, to: all.count, by: 1000) {
                    let chunk = all[start..<min(start + 1000, all.count)]
                    let select = SQLSelect(
                        columns: [.column("t0", "Z_PK"), .column("t0", "Z_OPT")], from: .table(table, alias: "t0"),
                        filter: .inList(.column("t0", "Z_PK"), Array(repeating: .slot, count: chunk.count)))
                    for row in try link.query(PostgreSQLDialect.text(.select(select)), chunk.map { .integer($0) }).rows
                    {
                        guard case .integer(let pk) = row[0], case .integer(let version) = row[1] else { continue }
                        versions[table, default: [:]][pk] = UInt64(max(0, version))
                    }
                }
            }
        }
        return rows.map { row in row.flatMap { versions[$0.table]?[$0.pk] } }
    }

    /// Permanent IDs from `Z_MAX` of each entity's root entity: one `UPDATE … RETURNING` per root,
    /// which PostgreSQL runs atomically, so writers in any process never get the same key.
    func permanentIDs(for entities: [NSEntityDescription]) throws -> [NSManagedObjectID] {
        guard !entities.isEmpty else { return [] }
        let allocation = SQLKeyAllocation(entities, schema: schema)
        let reserve = PostgreSQLDialect.text(SQLBookkeeping.reserveKeys)
        var next: [Int64] = []
        for (root, count) in allocation.counts {
            let rows = try writer.query(reserve, [.integer(count), .integer(root)]).rows
            guard case .integer(let maximum)? = rows.first?.first else {
                throw CoreDataError.make(
                    NSPersistentStoreSaveError, "The store's Z_PRIMARYKEY has no row for entity \(root).")
            }
            next.append(maximum - count + 1)
        }
        return zip(entities, allocation.keys(first: next)).map { objectID($0, $1) }
    }

    private func deleteRow(_ id: NSManagedObjectID) throws {
        guard let pk = Self.primaryKey(id) else { return }
        let mapping = schema[id.entity]
        try writer.query(PostgreSQLDialect.text(schema.deleteRows(mapping.table.name)), [.integer(pk)])
        for case .join(let join, let source, _, _) in mapping.storage {
            try writer.query(PostgreSQLDialect.text(schema.deleteRows(join.name, where: source)), [.integer(pk)])
        }
    }

    private func writeRow(_ row: StoreTransaction.Row, insert: Bool) throws {
        guard let pk = Self.primaryKey(row.objectID) else {
            throw CoreDataError.make(
                NSPersistentStoreSaveError, "The object \(row.objectID) has no permanent ID.",
                [NSAffectedObjectsErrorKey: [row.objectID]])
        }
        let snapshot = row.snapshot
        let mapping = schema[row.entity]
        let plan = rowWriter(for: mapping)
        var values: [SQLValue] = []
        values.reserveCapacity(plan.count + 5)
        if insert { values += [.integer(pk), .integer(mapping.number)] }
        values.append(.integer(Int64(snapshot.version)))
        for write in plan.writes {
            switch write {
            case .attribute(let slot, let type, let attribute):
                values.append(SQLValues.column(snapshot.values, slot: slot, type: type, attribute: attribute))
            case .toOne(let slot, let hasEntityColumn):
                let destination = snapshot.values[slot] as? NSManagedObjectID
                values.append(destination.flatMap(Self.primaryKey).map(SQLValue.integer) ?? .null)
                if hasEntityColumn { values.append(destination.map { .integer(schema[$0.entity].number) } ?? .null) }
            }
        }
        if !insert { values += [.integer(pk), .integer(Int64(snapshot.version) - 1)] }
        let result = try writer.query(insert ? plan.insertSQL : plan.updateSQL, values)
        if !insert, result.changes == 0 {
            throw CoreDataError.make(
                NSManagedObjectMergeError,
                "Optimistic locking failure: \(row.objectID) changed in the store since it was fetched.",
                ["conflictList": [row.objectID], NSAffectedObjectsErrorKey: [row.objectID]])
        }
    }

    /// Join-table rows and `Z_FOK_` positions for the row's to-many relationships that changed
    /// (``SQLSchema/toManyWrites(_:key:)``).
    private func writeRelationships(_ row: StoreTransaction.Row) throws {
        for write in schema.toManyWrites(row, key: Self.primaryKey) {
            let text = PostgreSQLDialect.text(write.statement)
            for values in write.runs { try writer.query(text, values) }
        }
    }
}

/// The insert and update statements of one entity, and where each value comes from.
final class PostgresRowWriter {
    enum Write {
        case attribute(slot: Int, type: NSAttributeType, NSAttributeDescription?)
        case toOne(slot: Int, hasEntityColumn: Bool)
    }
    let writes: [Write]
    /// The number of columns written after the version.
    let count: Int
    let insertSQL: String
    let updateSQL: String

    init(mapping: SQLSchema.Entity, schema: SQLSchema) {
        var writes: [Write] = []
        var columns: [String] = []
        let layout = mapping.entity.layout
        for (slot, storage) in mapping.storage.enumerated() {
            switch storage {
            case .attribute(let column, let type):
                // Binary data allowed external storage is kept in the row (BYTEA) here.
                writes.append(.attribute(slot: slot, type: type, layout.properties[slot] as? NSAttributeDescription))
                columns.append(column)
            case .toOne(let column, let entityColumn):
                writes.append(.toOne(slot: slot, hasEntityColumn: entityColumn != nil))
                columns.append(column)
                if let entityColumn { columns.append(entityColumn) }
            default:
                continue
            }
        }
        self.writes = writes
        count = columns.count
        insertSQL = PostgreSQLDialect.text(schema.insertRow(mapping.table, columns: columns))
        updateSQL = PostgreSQLDialect.text(schema.updateRow(mapping.table, columns: columns))
    }
}
