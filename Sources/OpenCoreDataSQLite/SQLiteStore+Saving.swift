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
                try writeRelationships(of: inserted, on: connection)
                try writeRelationships(of: updated, on: connection)
                if metadataAwaitsSave { try writeMetadata(insert: false, on: connection) }
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
    /// scattering them through the file, and every scan of the table reads the empty space. In
    /// key order each table grows at its end, full
    /// pages after full pages, and updates and deletes visit the pages one after another.
    static func inKeyOrder<Element>(_ elements: [Element], id: (Element) -> NSManagedObjectID) -> [Element] {
        guard elements.count > 1 else { return elements }
        var keys: [(key: Int64, index: Int)] = []
        keys.reserveCapacity(elements.count)
        var ascending = true
        for (index, element) in elements.enumerated() {
            let key = id(element).sqlKey ?? .min
            if let last = keys.last, key < last.key { ascending = false }
            keys.append((key, index))
        }
        guard !ascending else { return elements }
        keys.sort { $0.key != $1.key ? $0.key < $1.key : $0.index < $1.index }
        return keys.map { elements[$0.index] }
    }

    /// Each row's `Z_OPT`, read by key with one prepared statement a table, in key order. The
    /// answers go to their positions: no dictionary keyed by object ID, whose hashing and
    /// `isEqual(_:)` would be a large part of the conflict check before a save of many deletes.
    func currentVersions(of objectIDs: [NSManagedObjectID]) throws -> [UInt64?] {
        var versions = [UInt64?](repeating: nil, count: objectIDs.count)
        var byTable: [String: [(pk: Int64, index: Int)]] = [:]
        // The IDs are mostly of one entity: its table is looked up when the entity changes.
        var lastLayout: EntityLayout?
        var table = ""
        for (index, id) in objectIDs.enumerated() {
            guard let pk = id.sqlKey else { continue }
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
        guard let pk = id.sqlKey else { return }
        let mapping = schema[id.entity]
        let external = plan(mapping).externalColumns
        for case .blob(let bytes) in try storedExternalColumns(external, table: mapping.table.name, pk: pk).values {
            if let file = externalFile(bytes) { files.unreferenced.append(file) }
        }
        try connection.run(schema.deleteRows(mapping.table.name), [.integer(pk)])
        for case .join(let join, let source, _, _) in mapping.storage {
            try connection.run(schema.deleteRows(join.name, where: source), [.integer(pk)])
        }
    }

    private func writeRow(_ row: StoreTransaction.Row, insert: Bool, files: ExternalDataChanges) throws {
        guard let pk = row.objectID.sqlKey else { throw SQLRowPlan.missingKey(row.objectID) }
        let mapping = schema[row.entity]
        let plan = self.plan(mapping)
        let stored = insert ? [:] : try storedExternalColumns(plan.externalColumns, table: mapping.table.name, pk: pk)
        let statement = try connection.statement(insert ? plan.insertSQL : plan.updateSQL)
        var index: Int32 = 1
        try plan.forEachValue(
            of: row, pk: pk, entityNumber: mapping.number, insert: insert, schema: schema,
            external: { slot, column in
                if let old = stored[column], row.modifiedSlots?.contains(slot) == false {
                    return old  // unchanged: keep the reference, no new file
                }
                if case .blob(let bytes)? = stored[column], let file = externalFile(bytes) {
                    files.unreferenced.append(file)
                }
                return try externalColumn(row.snapshot.values[slot], changes: files)
            }
        ) { value in
            try statement.bind(value, at: index)
            index += 1
        }
        while try statement.step() {}
        if !insert, connection.changes == 0 { throw SQLRowPlan.lockingFailure(row.objectID) }
    }
}
