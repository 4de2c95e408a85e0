import Foundation
import OpenCoreData

/// Saving to an SQL store: rows written by their entity's plan, versions read for the
/// coordinator's conflict check, keys from `Z_PRIMARYKEY`, the metadata row.
extension SQLStore {
    /// Writes a save's rows on `link`, inside the caller's write transaction: deleted rows (with
    /// their join-table rows), inserted rows, updated rows (each only if its `Z_OPT` is still the
    /// version read, then incremented), then the to-many relationships that changed.
    ///
    /// - Throws: `NSPersistentStoreSaveError` (134030) for an object without a permanent ID;
    ///   `NSManagedObjectMergeError` (133020) when a row changed since it was read; the database's
    ///   error.
    package func writeRows(of transaction: StoreTransaction, on link: Link) throws {
        for id in transaction.deleted { try deleteRow(id, on: link) }
        for row in transaction.inserted { try writeRow(row, insert: true, on: link) }
        for row in transaction.updated { try writeRow(row, insert: false, on: link) }
        try writeRelationships(of: transaction.inserted, on: link)
        try writeRelationships(of: transaction.updated, on: link)
    }

    /// Deletes `id`'s row and its rows in the join tables of its many-to-many relationships.
    ///
    /// - Throws: the database's error.
    package func deleteRow(_ id: NSManagedObjectID, on link: Link) throws {
        guard let pk = id.sqlKey else { return }
        let mapping = schema[id.entity]
        try link.change(text(schema.deleteRows(mapping.table.name)), [.integer(pk)])
        for case .join(let join, let source, _, _) in mapping.storage {
            try link.change(text(schema.deleteRows(join.name, where: source)), [.integer(pk)])
        }
    }

    private func writeRow(_ row: StoreTransaction.Row, insert: Bool, on link: Link) throws {
        let (sql, values) = try rowStatement(row, insert: insert)
        let changed = try link.change(sql, values)
        if !insert, changed == 0 { throw SQLRowPlan.lockingFailure(row.objectID) }
    }

    /// The insert (`insert`) or update statement of `row`, with its values in order.
    ///
    /// - Throws: `NSPersistentStoreSaveError` (134030) for an object without a permanent ID.
    package func rowStatement(_ row: StoreTransaction.Row, insert: Bool) throws -> (sql: String, values: [SQLValue]) {
        guard let pk = row.objectID.sqlKey else { throw SQLRowPlan.missingKey(row.objectID) }
        let mapping = schema[row.entity]
        let plan = self.plan(mapping)
        var values: [SQLValue] = []
        values.reserveCapacity(plan.writes.count + 5)
        try plan.forEachValue(
            of: row, pk: pk, entityNumber: mapping.number, insert: insert, schema: schema,
            external: { slot, _ in
                SQLValues.column(row.snapshot.values, slot: slot, type: .binaryDataAttributeType, attribute: nil)
            }
        ) { values.append($0) }
        return (insert ? plan.insertSQL : plan.updateSQL, values)
    }

    /// Join-table rows and `Z_FOK_` positions for the to-many relationships of `rows` that
    /// changed (``SQLSchema/toManyWrites(_:key:)``); rows of entities with none are passed over
    /// without being copied.
    ///
    /// - Throws: the database's error.
    package func writeRelationships(of rows: [StoreTransaction.Row], on link: Link) throws {
        var entity: NSEntityDescription?
        var writes = false
        for index in rows.indices {
            let rowEntity = rows[index].entity
            if rowEntity !== entity {
                entity = rowEntity
                writes = !schema[rowEntity].toManyWriteSlots.isEmpty
            }
            guard writes else { continue }
            for write in schema.toManyWrites(rows[index], key: { $0.sqlKey }) {
                let sql = text(write.statement)
                for values in write.runs { try link.change(sql, values) }
            }
        }
    }

    /// The `Z_OPT` of each of `objectIDs`, in order, read a table at a time in lists of keys;
    /// `nil` for a row no longer in the store.
    ///
    /// - Throws: the database's error.
    package func currentVersions(of objectIDs: [NSManagedObjectID]) throws -> [UInt64?] {
        let rows = objectIDs.map { id in id.sqlKey.map { (table: schema[id.entity].table.name, pk: $0) } }
        var byTable: [String: Set<Int64>] = [:]
        for case let (table, pk)? in rows { byTable[table, default: []].insert(pk) }
        var versions: [String: [Int64: UInt64]] = [:]
        try withReadLink(nil) { link in
            for (table, keys) in byTable.sorted(by: { $0.key < $1.key }) {
                let all = keys.sorted()
                for start in stride(from: 0, to: all.count, by: 500) {
                    let chunk = all[start..<min(start + 500, all.count)]
                    let select = SQLSelect(
                        columns: [.column("t0", "Z_PK"), .column("t0", "Z_OPT")], from: .table(table, alias: "t0"),
                        filter: .inList(.column("t0", "Z_PK"), Array(repeating: .slot, count: chunk.count)))
                    for row in try link.select(text(.select(select)), chunk.map { .integer($0) }) {
                        guard case .integer(let pk) = row[0], case .integer(let version) = row[1] else { continue }
                        versions[table, default: [:]][pk] = UInt64(max(0, version))
                    }
                }
            }
        }
        return rows.map { row in row.flatMap { versions[$0.table]?[$0.pk] } }
    }

    /// New permanent IDs from `Z_MAX` of each entity's root entity, reserved with one
    /// `UPDATE … RETURNING` per root in a write transaction, so writers never get the same key.
    ///
    /// - Throws: `NSPersistentStoreSaveError` (134030) when `Z_PRIMARYKEY` has no row for a root
    ///   entity; the database's error.
    package func permanentIDs(for entities: [NSEntityDescription]) throws -> [NSManagedObjectID] {
        guard !entities.isEmpty else { return [] }
        let allocation = SQLKeyAllocation(entities, schema: schema)
        let reserve = text(SQLBookkeeping.reserveKeys)
        var next: [Int64] = []
        try withWriteTransaction { link in
            for (root, count) in allocation.counts {
                guard
                    case .integer(let maximum)? = try link.select(reserve, [.integer(count), .integer(root)]).first?
                        .first
                else {
                    throw CoreDataError.make(
                        NSPersistentStoreSaveError, "The store's Z_PRIMARYKEY has no row for entity \(root).")
                }
                next.append(maximum - count + 1)
            }
        }
        return zip(entities, allocation.keys(first: next)).map { objectID($0, $1) }
    }

    /// Writes the store's metadata to its `Z_METADATA` row (`insert`: the first one), the UUID in
    /// `Z_UUID` and the rest as a binary property list in `Z_PLIST`.
    ///
    /// - Throws: the database's error; a metadata value a property list cannot hold.
    package func writeMetadata(insert: Bool, on link: Link) throws {
        try link.change(
            text(insert ? SQLBookkeeping.insertMetadata : SQLBookkeeping.updateMetadata),
            try SQLStoreMetadata.row(metadata ?? [:]))
        writtenMetadataRevision = metadataRevision
    }
}

/// The `Z_METADATA` row of an SQL store: `Z_UUID` and `Z_PLIST`.
package enum SQLStoreMetadata {
    /// The longest store identifier a store opens with: far above the 36 characters of the UUIDs
    /// Core Data writes, so that an identifier a program chose itself still opens.
    package static let maximumIdentifierLength = 1024

    /// The values of the row, in the order of `Z_UUID, Z_PLIST`.
    ///
    /// - Throws: a metadata value a property list cannot hold.
    package static func row(_ metadata: [String: Any]) throws -> [SQLValue] {
        var plist = metadata
        let uuid = plist.removeValue(forKey: NSStoreUUIDKey) as? String ?? ""
        let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        return [.text(uuid), .blob([UInt8](data))]
    }

    /// The metadata dictionary of a `Z_METADATA` row (`Z_UUID`, `Z_PLIST`); `place` names the
    /// store in the error.
    ///
    /// - Throws: `NSPersistentStoreOpenError` (134080) for a property list that cannot be read,
    ///   or a store identifier longer than ``maximumIdentifierLength``.
    package static func decode(_ row: [SQLValue], place: String, url: URL?) throws -> [String: Any] {
        let info: [String: Any] = url.map { [NSURLErrorKey: $0] } ?? [:]
        guard row.count == 2, case .blob(let bytes) = row[1],
            let plist = try? PropertyListReader.propertyList(from: Data(bytes)),
            var metadata = plist as? [String: Any]
        else {
            throw CoreDataError.make(NSPersistentStoreOpenError, "The store at \(place) has unreadable metadata.", info)
        }
        if case .text(let uuid) = row[0] {
            // Core Data writes a 36-character UUID here, and every object ID's URI carries it: an
            // identifier of a megabyte (a damaged or hostile file) made each URI a megabyte and a
            // query that named its objects spin for seconds.
            guard uuid.utf8.count <= maximumIdentifierLength else {
                throw CoreDataError.make(
                    NSPersistentStoreOpenError,
                    "The store at \(place) has a store identifier (Z_UUID) of \(uuid.utf8.count) bytes; Core Data writes a 36-character UUID (a damaged store).",
                    info)
            }
            metadata[NSStoreUUIDKey] = uuid
        }
        return metadata
    }
}
