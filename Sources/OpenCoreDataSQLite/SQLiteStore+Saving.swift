import OpenCoreData
import OpenCoreDataSQL

/// Saving to the SQLite store: one transaction per save.
extension SQLiteStore {
    /// Writes one save in one `BEGIN IMMEDIATE` transaction: rows inserted, updated (with the row
    /// version checked and incremented) and deleted, join tables and order columns rewritten.
    @discardableResult
    func save(_ transaction: StoreTransaction) throws -> Int64? {
        guard !isReadOnly else {
            throw CoreDataError.make(
                NSPersistentStoreSaveError, "Cannot save to a read-only store.", [NSAffectedStoresErrorKey: [self]])
        }
        // Prefetched to-many members are as of their fetch; a save may change them.
        stateLock.lock()
        prefetchedToMany.removeAll()
        stateLock.unlock()
        let files = ExternalDataChanges()
        var historyNumber: Int64?
        do {
            try self.transaction {
                let history = try historyChanges(of: transaction)
                let inserted = Self.inKeyOrder(transaction.inserted, id: \.objectID)
                let updated = Self.inKeyOrder(transaction.updated, id: \.objectID)
                for id in Self.inKeyOrder(transaction.deleted, id: { $0 }) { try deleteRow(id, files: files) }
                for row in inserted { try writeRow(row, insert: true, files: files) }
                for row in updated { try writeRow(row, insert: false, files: files) }
                try writeRelationships(of: inserted)
                try writeRelationships(of: updated)
                if metadata != nil, writtenMetadataRevision != metadataRevision {
                    try writeMetadata(insert: false)
                }
                historyNumber = try recordHistory(
                    history, author: transaction.author, contextName: transaction.contextName,
                    timestamp: transaction.timestamp)
            }
        } catch {
            for file in files.written { try? FileManager.default.removeItem(at: file) }
            throw error
        }
        for file in files.unreferenced { try? FileManager.default.removeItem(at: file) }
        if !transaction.deleted.isEmpty { releaseFreePages() }
        return historyNumber
    }

    /// `elements` in the order of their objects' primary keys (those without an integer key
    /// first, in their order). A save's changes come as sets, in hash order; rows inserted in
    /// that order land in the middle of their table, splitting its pages half empty and
    /// scattering them through the file (issue 21: 11 % of a 100,000-row table's pages unused,
    /// and every scan of it reading those). In key order each table grows at its end, full
    /// pages after full pages, and updates and deletes visit the pages one after another.
    static func inKeyOrder<Element>(_ elements: [Element], id: (Element) -> NSManagedObjectID) -> [Element] {
        guard elements.count > 1 else { return elements }
        var keys: [(key: Int64, index: Int)] = []
        keys.reserveCapacity(elements.count)
        var ascending = true
        for (index, element) in elements.enumerated() {
            let key = primaryKey(id(element)) ?? .min
            if let last = keys.last, key < last.key { ascending = false }
            keys.append((key, index))
        }
        guard !ascending else { return elements }
        keys.sort { $0.key != $1.key ? $0.key < $1.key : $0.index < $1.index }
        return keys.map { elements[$0.index] }
    }

    /// Each row's `Z_OPT`, read by key with one prepared statement a table, in key order. The
    /// answers go to their positions: no dictionary keyed by object ID, whose hashing and
    /// `isEqual(_:)` were a fifth of the conflict check before a save of 10,000 deletes (issue 21).
    func currentVersions(of objectIDs: [NSManagedObjectID]) throws -> [UInt64?] {
        var versions = [UInt64?](repeating: nil, count: objectIDs.count)
        var byTable: [String: [(pk: Int64, index: Int)]] = [:]
        // The IDs are mostly of one entity: its table is looked up when the entity changes.
        var lastLayout: EntityLayout?
        var table = ""
        for (index, id) in objectIDs.enumerated() {
            guard let pk = Self.primaryKey(id) else { continue }
            if id.layout !== lastLayout {
                lastLayout = id.layout
                table = schema[id.entity].table.name
            }
            byTable[table, default: []].append((pk, index))
        }
        for (table, keys) in byTable {
            let statement = try connection.statement(.select(schema.columnsSelect(["Z_OPT"], table: table)))
            for (pk, index) in keys.sorted(by: { $0.pk < $1.pk }) {
                statement.reset()
                try statement.bind(.integer(pk), at: 1)
                if try statement.step(), case .integer(let version) = statement.value(at: 0) {
                    versions[index] = UInt64(max(0, version))
                }
            }
            statement.reset()
        }
        return versions
    }

    func withWriteLock(_ body: () throws -> Void) throws { try transaction(body) }

    func deleteRow(_ id: NSManagedObjectID, files: ExternalDataChanges) throws {
        guard let pk = Self.primaryKey(id) else { return }
        let mapping = schema[id.entity]
        let external = writer(for: mapping).externalColumns
        for case .blob(let bytes) in try storedExternalColumns(external, table: mapping.table.name, pk: pk).values {
            if let file = externalFile(bytes) { files.unreferenced.append(file) }
        }
        try connection.run(schema.deleteRows(mapping.table.name), [.integer(pk)])
        for case .join(let join, let source, _, _) in mapping.storage {
            try connection.run(schema.deleteRows(join.name, where: source), [.integer(pk)])
        }
    }

    private func writeRow(_ row: StoreTransaction.Row, insert: Bool, files: ExternalDataChanges) throws {
        guard let pk = Self.primaryKey(row.objectID) else {
            throw CoreDataError.make(
                NSPersistentStoreSaveError, "The object \(row.objectID) has no permanent ID.",
                [NSAffectedObjectsErrorKey: [row.objectID]])
        }
        let snapshot = row.snapshot
        let mapping = schema[row.entity]
        let writer = self.writer(for: mapping)
        let stored =
            insert ? [:] : try storedExternalColumns(writer.externalColumns, table: mapping.table.name, pk: pk)
        let statement = try connection.statement(insert ? writer.insertSQL : writer.updateSQL)
        var index: Int32 = 1
        func bind(_ value: SQLiteValue) throws {
            try statement.bind(value, at: index)
            index += 1
        }
        if insert {
            try bind(.integer(pk))
            try bind(.integer(mapping.number))
        }
        try bind(.integer(Int64(snapshot.version)))
        for write in insert ? writer.writes : writer.updateWrites {
            switch write {
            case .attribute(let slot, let type, let attribute):
                try bind(SQLValues.column(snapshot.values, slot: slot, type: type, attribute: attribute))
            case .external(let slot, let column):
                if let old = stored[column], row.modifiedSlots?.contains(slot) == false {
                    try bind(old)  // unchanged: keep the reference, no new file
                    continue
                }
                if case .blob(let bytes)? = stored[column], let file = externalFile(bytes) {
                    files.unreferenced.append(file)
                }
                try bind(try externalColumn(snapshot.values[slot], changes: files))
            case .toOne(let slot, let hasEntityColumn):
                let destination = snapshot.values[slot] as? NSManagedObjectID
                try bind(destination.flatMap(Self.primaryKey).map(SQLiteValue.integer) ?? .null)
                if hasEntityColumn {
                    try bind(destination.map { .integer(schema[$0.entity].number) } ?? .null)
                }
            }
        }
        if !insert {
            try bind(.integer(pk))
            try bind(.integer(Int64(snapshot.version) - 1))
        }
        while try statement.step() {}
        if !insert, connection.changes == 0 {
            throw CoreDataError.make(
                NSManagedObjectMergeError,
                "Optimistic locking failure: \(row.objectID) changed in the store since it was fetched.",
                ["conflictList": [row.objectID], NSAffectedObjectsErrorKey: [row.objectID]])
        }
    }

    /// Join-table rows and `Z_FOK_` positions for the row's to-many relationships that changed
    /// (``SQLSchema/toManyWrites(_:key:)``).
    /// ``writeRelationships(_:)`` for each of `rows` whose entity writes to-many relationships
    /// by statement; the others are passed over without being copied (issue 21: copying each row
    /// of a save to find that its entity has none cost a retain and a release of its snapshot).
    private func writeRelationships(of rows: [StoreTransaction.Row]) throws {
        var entity: NSEntityDescription?
        var writes = false
        for index in rows.indices {
            let rowEntity = rows[index].entity
            if rowEntity !== entity {
                entity = rowEntity
                writes = !schema[rowEntity].toManyWriteSlots.isEmpty
            }
            if writes { try writeRelationships(rows[index]) }
        }
    }

    private func writeRelationships(_ row: StoreTransaction.Row) throws {
        for write in schema.toManyWrites(row, key: Self.primaryKey) {
            let statement = try connection.statement(write.statement)
            for values in write.runs {
                statement.reset()
                try statement.bind(values)
                while try statement.step() {}
            }
            statement.reset()
        }
    }

    /// The cached insert and update statements of one entity.
    final class RowWriter {
        enum Write {
            case attribute(slot: Int, type: NSAttributeType, NSAttributeDescription?)
            /// A binary attribute with external storage allowed.
            case external(slot: Int, column: String)
            case toOne(slot: Int, hasEntityColumn: Bool)
        }
        let writes: [Write]
        /// `writes` without derived attributes: the store computes those (Apple's `Z_DA_`
        /// triggers), and an update must not write back the value its object read earlier.
        let updateWrites: [Write]
        /// The columns of `external` writes.
        let externalColumns: [String]
        let insertSQL: String
        let updateSQL: String

        init(mapping: SQLSchema.Entity, schema: SQLSchema) {
            var writes: [Write] = []
            var columns: [String] = []
            var updateWrites: [Write] = []
            var updateColumns: [String] = []
            let layout = mapping.entity.layout
            for (slot, storage) in mapping.storage.enumerated() {
                switch storage {
                case .attribute(let column, let type):
                    let attribute = layout.properties[slot] as? NSAttributeDescription
                    if type == .binaryDataAttributeType, attribute?.allowsExternalBinaryDataStorage == true {
                        writes.append(.external(slot: slot, column: column))
                    } else {
                        writes.append(.attribute(slot: slot, type: type, attribute))
                    }
                    columns.append(column)
                    if !(attribute is NSDerivedAttributeDescription) {
                        updateWrites.append(writes[writes.count - 1])
                        updateColumns.append(column)
                    }
                case .toOne(let column, let entityColumn):
                    writes.append(.toOne(slot: slot, hasEntityColumn: entityColumn != nil))
                    updateWrites.append(writes[writes.count - 1])
                    columns.append(column)
                    updateColumns.append(column)
                    if let entityColumn {
                        columns.append(entityColumn)
                        updateColumns.append(entityColumn)
                    }
                default:
                    continue
                }
            }
            self.writes = writes
            self.updateWrites = updateWrites
            externalColumns = writes.compactMap {
                if case .external(_, let column) = $0 { return column }
                return nil
            }
            insertSQL = SQLiteDialect.text(schema.insertRow(mapping.table, columns: columns))
            updateSQL = SQLiteDialect.text(schema.updateRow(mapping.table, columns: updateColumns))
        }
    }

    private func writer(for mapping: SQLSchema.Entity) -> RowWriter {
        stateLock.lock()
        defer { stateLock.unlock() }
        if let writer = writers[ObjectIdentifier(mapping)] { return writer }
        let writer = RowWriter(mapping: mapping, schema: schema)
        writers[ObjectIdentifier(mapping)] = writer
        return writer
    }
}
