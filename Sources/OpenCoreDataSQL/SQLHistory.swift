import Foundation
import OpenCoreData

/// What a SQL store gives the SQL layer's shared code to run statements on the connection it
/// chose (the writer inside a save, a reader otherwise): text in the store's dialect, values bound
/// in order.
package protocol SQLRowRunner {
    /// Runs `sql` with `values` bound to its placeholders in order and returns its rows.
    ///
    /// - Throws: the database's error, as the store reports it.
    func select(_ sql: String, _ values: [SQLValue]) throws -> [[SQLValue]]
    /// Runs `sql` with `values` bound to its placeholders in order and gives `body` each row, in
    /// order, on the caller's thread. A connection that receives rows while the caller reads them
    /// gives each as it arrives; `body` gets one array, emptied and filled again for each row, so
    /// a row it does not keep costs no allocation. When `body` throws, the rest of the rows are
    /// read and dropped and this throws that error.
    ///
    /// - Throws: the database's error, as the store reports it, or what `body` throws.
    func select(_ sql: String, _ values: [SQLValue], eachRow body: (_ row: [SQLValue]) throws -> Void) throws
    /// Runs `sql` with `values` bound to its placeholders in order and returns how many rows it
    /// inserted, changed or deleted.
    ///
    /// - Throws: the database's error, as the store reports it.
    @discardableResult func change(_ sql: String, _ values: [SQLValue]) throws -> Int
    /// Whether the database has a table `name` (in the store's schema).
    ///
    /// - Throws: the database's error, as the store reports it.
    func hasTable(_ name: String) throws -> Bool
}

extension SQLRowRunner {
    /// Each row of ``select(_:_:)``, given to `body` once all are read.
    ///
    /// - Throws: the database's error, as the store reports it, or what `body` throws.
    package func select(_ sql: String, _ values: [SQLValue], eachRow body: (_ row: [SQLValue]) throws -> Void) throws {
        for row in try select(sql, values) { try body(row) }
    }
}

/// Persistent history in Apple's tables, for every SQL store: `ATRANSACTION` (one row per save or
/// batch request), `ACHANGE` (one row per object changed), `ATRANSACTIONSTRING` (author, bundle,
/// process and context names, each stored once), with the system entity numbers 16001–16003 in
/// `Z_PRIMARYKEY` — the layout of Apple-written stores (`SampleModel2` in the fixtures), so a
/// store with history moves between Apple platforms and Linux, and the same history reads the
/// same from a SQLite file and a PostgreSQL schema.
///
/// `ZCOLUMNS` of an update holds a bitmap of the properties changed (bit *n* for the *n*-th
/// property of the entity, by name order), and of a delete the tombstone, a binary property list;
/// Apple's encoding of both is not public (DEVIATIONS.md).
///
/// Transaction numbers must grow in the order transactions commit, or a reader that pulled up
/// to a number would never see a smaller one committed later: a store records history only while
/// it holds its write lock, so numbers are handed out in commit order.
///
/// Related documentation: NSPersistentHistoryTrackingKey; NSPersistentHistoryChangeRequest;
/// NSAttributeDescription `preservesValueInHistoryOnDeletion`.
package struct SQLHistory {
    package static let changeEntity: Int64 = 16001
    package static let transactionEntity: Int64 = 16002
    package static let stringEntity: Int64 = 16003

    /// The table of old values (`PersistentHistoryOldValuesKey`, an addition): one row per change,
    /// keyed as its `ACHANGE` row. Apple's Core Data ignores tables it does not know.
    package static let oldValuesTable = "OCD_ACHANGE_OLDVALUES"

    /// One object's change, as recorded.
    package struct Change {
        package let objectID: NSManagedObjectID
        package let type: NSPersistentHistoryChangeType
        /// An update's changed slots (`nil`: all).
        package var slots: SlotSet? = nil
        /// A delete's tombstone: the values of its attributes kept on deletion.
        package var tombstone: [String: Any]? = nil
        /// The attributes' values before the change (`PersistentHistoryOldValuesKey`).
        package var oldValues: [String: Any]? = nil

        package init(
            objectID: NSManagedObjectID, type: NSPersistentHistoryChangeType, slots: SlotSet? = nil,
            tombstone: [String: Any]? = nil, oldValues: [String: Any]? = nil
        ) {
            self.objectID = objectID
            self.type = type
            self.slots = slots
            self.tombstone = tombstone
            self.oldValues = oldValues
        }
    }

    let dialect: any SQLDialect
    let schema: SQLSchema

    /// The history of a store whose tables `schema` maps, written in `dialect`.
    package init(dialect: any SQLDialect, schema: SQLSchema) {
        self.dialect = dialect
        self.schema = schema
    }

    private func text(_ statement: SQLStatement) -> String { SQLWriter.write(statement, dialect: dialect).sql }

    private func written(_ statement: SQLStatement) -> (sql: String, parameters: [SQLValue]) {
        SQLWriter.write(statement, dialect: dialect)
    }

    // MARK: Tables

    /// Apple's history tables, as its stores declare them.
    static let tables: [SQLTableDefinition] = [
        SQLTableDefinition(
            name: "ACHANGE",
            columns: [
                .init("Z_PK", .integer, isPrimaryKey: true), .init("Z_ENT", .integer), .init("Z_OPT", .integer),
                .init("ZCHANGETYPE", .integer), .init("ZENTITY", .integer), .init("ZENTITYPK", .integer),
                .init("ZTRANSACTIONID", .integer), .init("ZCOLUMNS", .blob),
            ]),
        SQLTableDefinition(
            name: "ATRANSACTION",
            columns: [
                .init("Z_PK", .integer, isPrimaryKey: true), .init("Z_ENT", .integer), .init("Z_OPT", .integer),
                .init("ZAUTHORTS", .integer), .init("ZBUNDLEIDTS", .integer), .init("ZCONTEXTNAMETS", .integer),
                .init("ZPROCESSIDTS", .integer), .init("ZTIMESTAMP", .float), .init("ZAUTHOR", .varchar),
                .init("ZBUNDLEID", .varchar), .init("ZCONTEXTNAME", .varchar), .init("ZPROCESSID", .varchar),
                .init("ZQUERYGEN", .blob),
            ]),
        SQLTableDefinition(
            name: "ATRANSACTIONSTRING",
            columns: [
                .init("Z_PK", .integer, isPrimaryKey: true), .init("Z_ENT", .integer), .init("Z_OPT", .integer),
                .init("ZNAME", .varchar),
            ]),
    ]

    /// Apple's indexes on the history tables, by table.
    static let indexes: [String: [SQLIndexDefinition]] = [
        "ACHANGE": [
            SQLIndexDefinition(
                name: "ACHANGE_ZTRANSACTIONID_INDEX", table: "ACHANGE", columns: [.init("ZTRANSACTIONID")])
        ],
        "ATRANSACTION": [
            SQLIndexDefinition(
                name: "ATRANSACTION_ZAUTHORTS_INDEX", table: "ATRANSACTION", columns: [.init("ZAUTHORTS")]),
            SQLIndexDefinition(
                name: "ATRANSACTION_ZBUNDLEIDTS_INDEX", table: "ATRANSACTION", columns: [.init("ZBUNDLEIDTS")]),
            SQLIndexDefinition(
                name: "ATRANSACTION_ZCONTEXTNAMETS_INDEX", table: "ATRANSACTION", columns: [.init("ZCONTEXTNAMETS")]),
            SQLIndexDefinition(
                name: "ATRANSACTION_ZPROCESSIDTS_INDEX", table: "ATRANSACTION", columns: [.init("ZPROCESSIDTS")]),
            SQLIndexDefinition(
                name: "Z_TRANSACTION_TransactionAuthorIndex", table: "ATRANSACTION",
                columns: [.init("ZAUTHOR", order: .ascending)]),
            SQLIndexDefinition(
                name: "Z_TRANSACTION_TransactionTimestampIndex", table: "ATRANSACTION",
                columns: [.init("ZTIMESTAMP", order: .ascending)]),
        ],
        "ATRANSACTIONSTRING": [
            SQLIndexDefinition(
                name: "Z_TRANSACTIONSTRING_UNIQUE_NAME", table: "ATRANSACTIONSTRING",
                columns: [.init("ZNAME", order: .ascending)], isUnique: true)
        ],
    ]

    /// Creates the history tables that are missing, with their indexes, and their `Z_PRIMARYKEY`
    /// rows; with `oldValues`, the old-values table too. Run inside a write transaction.
    ///
    /// - Throws: the database's error.
    package func prepare(oldValues: Bool, on runner: some SQLRowRunner) throws {
        for table in Self.tables where try !runner.hasTable(table.name) {
            try runner.change(text(.createTable(table)), [])
            for index in Self.indexes[table.name] ?? [] { try runner.change(text(.createIndex(index)), []) }
        }
        if oldValues, try !runner.hasTable(Self.oldValuesTable) {
            let table = SQLTableDefinition(
                name: Self.oldValuesTable,
                columns: [.init("Z_PK", .integer, isPrimaryKey: true), .init("ZVALUES", .blob)])
            try runner.change(text(.createTable(table)), [])
        }
        for entity in [Self.changeEntity, Self.transactionEntity, Self.stringEntity] {
            try keyRow(entity, on: runner)
        }
    }

    /// Whether the store has history tables.
    ///
    /// - Throws: the database's error.
    package func exists(on runner: some SQLRowRunner) throws -> Bool { try runner.hasTable("ATRANSACTION") }

    /// Whether the store's history holds any transaction: a store that recorded history and is
    /// opened without `NSPersistentHistoryTrackingKey` is read-only, as Apple's Core Data makes it
    /// ("Forcing into Read Only mode"), so no save leaves a gap in the history.
    ///
    /// - Throws: the database's error.
    package func holdsTransactions(on runner: some SQLRowRunner) throws -> Bool { try lastNumber(on: runner) > 0 }

    /// The number of the last transaction recorded; 0 when there is none.
    ///
    /// - Throws: the database's error.
    package func lastNumber(on runner: some SQLRowRunner) throws -> Int64 {
        guard try exists(on: runner) else { return 0 }
        if case .integer(let number)? = try runner.select(text(.select(extreme(.maximum, of: "ATRANSACTION"))), [])
            .first?.first
        {
            return number
        }
        return 0
    }

    private func extreme(_ aggregate: SQLAggregate, of table: String) -> SQLSelect {
        SQLSelect(columns: [.aggregate(aggregate, .column("t0", "Z_PK"))], from: .table(table, alias: "t0"))
    }

    /// The names the history's system entities have in `Z_PRIMARYKEY`.
    package static let entityNames: Set<String> = ["CHANGE", "TRANSACTION", "TRANSACTIONSTRING"]

    private static func tableName(of entity: Int64) -> (table: String, name: String) {
        switch entity {
        case changeEntity: ("ACHANGE", "CHANGE")
        case transactionEntity: ("ATRANSACTION", "TRANSACTION")
        default: ("ATRANSACTIONSTRING", "TRANSACTIONSTRING")
        }
    }

    /// Adds `entity`'s `Z_PRIMARYKEY` row when it has none.
    private func keyRow(_ entity: Int64, on runner: some SQLRowRunner) throws {
        guard try runner.select(text(SQLBookkeeping.keyMaximum), [.integer(entity)]).isEmpty else { return }
        try runner.change(
            text(SQLBookkeeping.insertEntity), [.integer(entity), .text(Self.tableName(of: entity).name), .integer(0)])
    }

    // MARK: Recording

    /// The changes a save makes, for its history: deletes (with their tombstones and, when the
    /// store records them, old values, read through `storedRow` before the rows go), inserts and
    /// updates.
    ///
    /// - Throws: what `storedRow` throws.
    package static func changes(
        of transaction: StoreTransaction, recordingOldValues: Bool,
        storedRow: (NSManagedObjectID) throws -> Snapshot?
    ) throws -> [Change] {
        var changes: [Change] = []
        changes.reserveCapacity(transaction.deleted.count + transaction.inserted.count + transaction.updated.count)
        for id in transaction.deleted {
            let keepsValues = id.entity.layout.properties.contains {
                ($0 as? NSAttributeDescription)?.preservesValueInHistoryOnDeletion == true
            }
            let stored = recordingOldValues || keepsValues ? try storedRow(id) : nil
            changes.append(
                Change(
                    objectID: id, type: .delete, tombstone: stored.flatMap { tombstone(of: id, stored: $0) },
                    oldValues: recordingOldValues ? stored.map { oldValues(of: id, stored: $0, slots: nil) } : nil))
        }
        changes += transaction.inserted.map { Change(objectID: $0.objectID, type: .insert) }
        for row in transaction.updated {
            var oldValues: [String: Any]?
            if recordingOldValues, let stored = try storedRow(row.objectID) {
                oldValues = Self.oldValues(of: row.objectID, stored: stored, slots: row.modifiedSlots)
            }
            changes.append(
                Change(objectID: row.objectID, type: .update, slots: row.modifiedSlots, oldValues: oldValues))
        }
        return changes
    }

    /// The stored values of `id`'s attributes in `slots` (all attributes for `nil`), encoded for
    /// the old-values table: `values` by name, `nil` listing the attributes without a value.
    package static func oldValues(of id: NSManagedObjectID, stored: Snapshot, slots: SlotSet?) -> [String: Any] {
        let layout = id.entity.layout
        var values: [String: Any] = [:]
        var missing: [String] = []
        for (slot, kind) in layout.kinds.enumerated() where kind == .attribute && layout.isPersistent(slot) {
            if let slots, !slots.contains(slot) { continue }
            let name = layout.properties[slot].name
            if let value = stored.values[slot] {
                values[name] = propertyListValue(value)
            } else {
                missing.append(name)
            }
        }
        return ["values": values, "nil": missing]
    }

    /// The values a deleted object leaves in its change: its attributes marked
    /// `preservesValueInHistoryOnDeletion`; `nil` when it has none.
    package static func tombstone(of id: NSManagedObjectID, stored: Snapshot) -> [String: Any]? {
        let layout = id.entity.layout
        let preserved = layout.properties.enumerated().filter {
            ($0.element as? NSAttributeDescription)?.preservesValueInHistoryOnDeletion == true
        }
        guard !preserved.isEmpty else { return nil }
        var values: [String: Any] = [:]
        for (slot, property) in preserved {
            guard let value = stored.values[slot] else { continue }
            values[property.name] = propertyListValue(value)
        }
        return values
    }

    /// Records one transaction with its changes and returns its number (`nil` when there was
    /// nothing to record). Call inside the write transaction that makes the changes, holding the
    /// store's write lock.
    ///
    /// - Throws: the database's error.
    @discardableResult
    package func record(
        _ changes: [Change], author: String?, contextName: String?, timestamp: Date, on runner: some SQLRowRunner
    ) throws -> Int64? {
        guard !changes.isEmpty else { return nil }
        let process = ProcessInfo.processInfo.processName
        let bundle = Bundle.main.bundleIdentifier ?? process
        var strings: [String: SQLValue] = [:]
        func string(_ text: String?) throws -> SQLValue {
            guard let text else { return .null }
            if let key = strings[text] { return key }
            let key = try stringKey(text, on: runner)
            strings[text] = key
            return key
        }
        let number = try allocate(Self.transactionEntity, count: 1, on: runner)
        let transactionColumns = [
            "Z_PK", "Z_ENT", "Z_OPT", "ZAUTHORTS", "ZBUNDLEIDTS", "ZCONTEXTNAMETS", "ZPROCESSIDTS", "ZTIMESTAMP",
        ]
        try runner.change(
            text(.insert(SQLInsert(table: "ATRANSACTION", columns: transactionColumns, values: slots(8)))),
            [
                .integer(number), .integer(Self.transactionEntity), .integer(1), try string(author), try string(bundle),
                try string(contextName), try string(process), .real(timestamp.timeIntervalSinceReferenceDate),
            ])
        var key = try allocate(Self.changeEntity, count: Int64(changes.count), on: runner)
        let changeColumns = [
            "Z_PK", "Z_ENT", "Z_OPT", "ZCHANGETYPE", "ZENTITY", "ZENTITYPK", "ZTRANSACTIONID", "ZCOLUMNS",
        ]
        let insertChange = text(.insert(SQLInsert(table: "ACHANGE", columns: changeColumns, values: slots(8))))
        let insertOldValues = text(
            .insert(SQLInsert(table: Self.oldValuesTable, columns: ["Z_PK", "ZVALUES"], values: slots(2))))
        for change in changes {
            guard case .integer(let pk) = change.objectID.key else { continue }
            var columns = SQLValue.null
            if change.type == .update, let slots = change.slots {
                columns = .blob(Self.bitmap(slots, layout: change.objectID.entity.layout))
            } else if change.type == .delete, let tombstone = change.tombstone,
                let data = try? PropertyListSerialization.data(fromPropertyList: tombstone, format: .binary, options: 0)
            {
                columns = .blob([UInt8](data))
            }
            try runner.change(
                insertChange,
                [
                    .integer(key), .integer(Self.changeEntity), .integer(1), .integer(Int64(change.type.rawValue)),
                    .integer(schema[change.objectID.entity].number), .integer(pk), .integer(number), columns,
                ])
            if let old = change.oldValues,
                let data = try? PropertyListSerialization.data(fromPropertyList: old, format: .binary, options: 0)
            {
                try runner.change(insertOldValues, [.integer(key), .blob([UInt8](data))])
            }
            key += 1
        }
        return number
    }

    private func slots(_ count: Int) -> [SQLExpression] { Array(repeating: .slot, count: count) }

    /// The first of `count` keys of a history table, from its `Z_PRIMARYKEY` row — and past the
    /// table's last key too: a `Z_MAX` that lags its table (a store another program wrote, a row
    /// lost) must not hand out a key already used.
    private func allocate(_ entity: Int64, count: Int64, on runner: some SQLRowRunner) throws -> Int64 {
        var maximum: Int64 = 0
        let row = try runner.select(text(SQLBookkeeping.keyMaximum), [.integer(entity)]).first
        if case .integer(let value)? = row?.first { maximum = value }
        let (table, name) = Self.tableName(of: entity)
        if case .integer(let last)? = try runner.select(text(.select(extreme(.maximum, of: table))), []).first?.first {
            maximum = max(maximum, last)
        }
        if row == nil {
            try runner.change(text(SQLBookkeeping.insertEntity), [.integer(entity), .text(name), .integer(0)])
        }
        try runner.change(text(SQLBookkeeping.setKeyMaximum), [.integer(maximum + count), .integer(entity)])
        return maximum + 1
    }

    /// The `ATRANSACTIONSTRING` key of `text`, stored once.
    private func stringKey(_ name: String, on runner: some SQLRowRunner) throws -> SQLValue {
        let find = SQLSelect(
            columns: [.column("t0", "Z_PK")], from: .table("ATRANSACTIONSTRING", alias: "t0"),
            filter: .compare(.column("t0", "ZNAME"), .equal, .slot))
        if case .integer(let key)? = try runner.select(text(.select(find)), [.text(name)]).first?.first {
            return .integer(key)
        }
        let key = try allocate(Self.stringEntity, count: 1, on: runner)
        try runner.change(
            text(
                .insert(
                    SQLInsert(
                        table: "ATRANSACTIONSTRING", columns: ["Z_PK", "Z_ENT", "Z_OPT", "ZNAME"], values: slots(4)))),
            [.integer(key), .integer(Self.stringEntity), .integer(1), .text(name)])
        return .integer(key)
    }

    /// The properties of `layout` in the order of a change bitmap's bits: by name.
    private static func bitOrder(_ layout: EntityLayout) -> [Int] {
        layout.properties.indices.sorted { layout.properties[$0].name < layout.properties[$1].name }
    }

    /// Bit *n* (least significant first) for each changed slot, numbered by the entity's
    /// properties in name order.
    package static func bitmap(_ slots: SlotSet, layout: EntityLayout) -> [UInt8] {
        let order = bitOrder(layout)
        var position: [Int: Int] = [:]
        for (index, slot) in order.enumerated() { position[slot] = index }
        var bytes = [UInt8](repeating: 0, count: (order.count + 7) / 8)
        for slot in slots {
            guard let bit = position[slot] else { continue }
            bytes[bit / 8] |= 1 << UInt8(bit % 8)
        }
        return bytes
    }

    /// The properties a change bitmap marks.
    package static func properties(inBitmap bytes: [UInt8], layout: EntityLayout) -> Set<NSPropertyDescription> {
        var properties = Set<NSPropertyDescription>()
        for (bit, slot) in bitOrder(layout).enumerated()
        where bit / 8 < bytes.count && bytes[bit / 8] & (1 << UInt8(bit % 8)) != 0 {
            properties.insert(layout.properties[slot])
        }
        return properties
    }

    /// A value as a property list holds it: UUIDs and URLs as strings, IDs as URIs.
    package static func propertyListValue(_ value: Any) -> Any {
        switch value {
        case let uuid as UUID: uuid.uuidString
        case let url as URL: url.absoluteString
        case let id as NSManagedObjectID: id.uriRepresentation().absoluteString
        case let decimal as Decimal: decimal.description
        default: value
        }
    }

    /// Old values as recorded, each value of its attribute's type again (`NSNull` for none).
    package static func decodeOldValues(_ bytes: [UInt8], entity: NSEntityDescription) -> [String: Any]? {
        guard let plist = try? PropertyListReader.propertyList(from: Data(bytes)) as? [String: Any],
            let values = plist["values"] as? [String: Any]
        else { return nil }
        var result: [String: Any] = [:]
        for (name, value) in values {
            let attribute = entity.attributesByName[name]
            switch (attribute?.attributeType, value) {
            case (.UUIDAttributeType?, let text as String): result[name] = UUID(uuidString: text) ?? text
            case (.URIAttributeType?, let text as String): result[name] = URL(string: text) ?? text
            case (.decimalAttributeType?, let text as String): result[name] = Decimal(string: text) ?? text
            default: result[name] = value
            }
        }
        for case let name as String in plist["nil"] as? [Any] ?? [] { result[name] = NSNull() }
        return result
    }
}
