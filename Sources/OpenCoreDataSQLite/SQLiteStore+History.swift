import Foundation
internal import Logging
import OpenCoreData
import OpenCoreDataSQL

/// Persistent history in Apple's tables: `ATRANSACTION` (one row per save or batch request),
/// `ACHANGE` (one row per object changed), `ATRANSACTIONSTRING` (author, bundle, process and
/// context names, each stored once), with the system entity numbers 16001–16003 in
/// `Z_PRIMARYKEY` — the layout of Apple-written stores (`SampleModel2` in the fixtures), so a
/// store with history moves between Apple platforms and Linux.
///
/// `ZCOLUMNS` of an update holds a bitmap of the properties changed (bit *n* for the *n*-th
/// property of the entity, by name order), and of a delete the tombstone, a binary property list;
/// Apple's encoding of both is not public (DEVIATIONS.md).
///
/// Related documentation: NSPersistentHistoryTrackingKey; NSPersistentHistoryChangeRequest;
/// NSAttributeDescription `preservesValueInHistoryOnDeletion`.
extension SQLiteStore: HistoryStore {
    static let changeEntity: Int64 = 16001
    static let transactionEntity: Int64 = 16002
    static let stringEntity: Int64 = 16003

    /// Apple's history tables and indexes, as its stores have them.
    static let historyTables = [
        "CREATE TABLE IF NOT EXISTS ACHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER, ZENTITY INTEGER, ZENTITYPK INTEGER, ZTRANSACTIONID INTEGER, ZCOLUMNS BLOB )",
        "CREATE TABLE IF NOT EXISTS ATRANSACTION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAUTHORTS INTEGER, ZBUNDLEIDTS INTEGER, ZCONTEXTNAMETS INTEGER, ZPROCESSIDTS INTEGER, ZTIMESTAMP FLOAT, ZAUTHOR VARCHAR, ZBUNDLEID VARCHAR, ZCONTEXTNAME VARCHAR, ZPROCESSID VARCHAR, ZQUERYGEN BLOB )",
        "CREATE TABLE IF NOT EXISTS ATRANSACTIONSTRING ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR )",
        "CREATE INDEX IF NOT EXISTS ACHANGE_ZTRANSACTIONID_INDEX ON ACHANGE (ZTRANSACTIONID)",
        "CREATE INDEX IF NOT EXISTS ATRANSACTION_ZAUTHORTS_INDEX ON ATRANSACTION (ZAUTHORTS)",
        "CREATE INDEX IF NOT EXISTS ATRANSACTION_ZBUNDLEIDTS_INDEX ON ATRANSACTION (ZBUNDLEIDTS)",
        "CREATE INDEX IF NOT EXISTS ATRANSACTION_ZCONTEXTNAMETS_INDEX ON ATRANSACTION (ZCONTEXTNAMETS)",
        "CREATE INDEX IF NOT EXISTS ATRANSACTION_ZPROCESSIDTS_INDEX ON ATRANSACTION (ZPROCESSIDTS)",
        "CREATE INDEX IF NOT EXISTS Z_TRANSACTION_TransactionAuthorIndex ON ATRANSACTION (ZAUTHOR COLLATE BINARY ASC)",
        "CREATE INDEX IF NOT EXISTS Z_TRANSACTION_TransactionTimestampIndex ON ATRANSACTION (ZTIMESTAMP COLLATE BINARY ASC)",
        "CREATE UNIQUE INDEX IF NOT EXISTS Z_TRANSACTIONSTRING_UNIQUE_NAME ON ATRANSACTIONSTRING (ZNAME COLLATE BINARY ASC)",
    ]

    /// Whether the store was added with `NSPersistentHistoryTrackingKey` set (to `true`, or to
    /// a dictionary of options, as Apple also accepts).
    package var tracksHistory: Bool {
        let value = options?[NSPersistentHistoryTrackingKey]
        return Self.flag(value) || value is [AnyHashable: Any] || value is NSDictionary
    }

    /// The table of old values (``PersistentHistoryOldValuesKey``, an addition): one row per
    /// change, keyed as its `ACHANGE` row. Apple's Core Data ignores tables it does not know.
    static let oldValuesTable =
        "CREATE TABLE IF NOT EXISTS OCD_ACHANGE_OLDVALUES ( Z_PK INTEGER PRIMARY KEY, ZVALUES BLOB )"

    /// Whether the store also records old values (``PersistentHistoryOldValuesKey``).
    var recordsOldValues: Bool {
        tracksHistory && Self.flag(options?[PersistentHistoryOldValuesKey])
    }

    static let historyLog = LoggerBox(Logger(label: "OpenCoreData.SQLite"))

    /// A store whose history holds transactions, opened without `NSPersistentHistoryTrackingKey`,
    /// is opened read-only, as Apple's Core Data does ("Store opened without
    /// NSPersistentHistoryTrackingKey but previously had been opened with
    /// NSPersistentHistoryTrackingKey - Forcing into Read Only mode"): saves it did not record
    /// would leave a gap that readers of the history would take for nothing having changed. Delete
    /// the history first (`deleteHistory(before: .distantFuture)`, with the key) to stop tracking.
    func refuseWritesWithoutHistory() throws {
        guard !tracksHistory, !isReadOnly, try hasHistoryTables(),
            !(try connection.rows("SELECT Z_PK FROM ATRANSACTION LIMIT 1").isEmpty)
        else { return }
        isReadOnly = true
        Self.historyLog.logger.warning(
            "Store opened without NSPersistentHistoryTrackingKey but previously had been opened with NSPersistentHistoryTrackingKey - Forcing into Read Only mode store at \(url?.path ?? "?")"
        )
    }

    /// Creates the history tables and their `Z_PRIMARYKEY` rows when the store tracks history and
    /// they are missing.
    func prepareHistory() throws {
        guard tracksHistory, !isReadOnly else { return }
        try transaction {
            for statement in Self.historyTables { try connection.execute(statement) }
            if recordsOldValues { try connection.execute(Self.oldValuesTable) }
            for (number, name) in [
                (Self.changeEntity, "CHANGE"), (Self.transactionEntity, "TRANSACTION"),
                (Self.stringEntity, "TRANSACTIONSTRING"),
            ] where try connection.rows(SQLBookkeeping.keyMaximum, [.integer(number)]).isEmpty {
                try connection.run(SQLBookkeeping.insertEntity, [.integer(number), .text(name), .integer(0)])
            }
        }
    }

    // MARK: Recording

    /// One object's change, as recorded.
    struct HistoryChange {
        let objectID: NSManagedObjectID
        let type: NSPersistentHistoryChangeType
        /// An update's changed slots (`nil`: all); a delete's tombstone.
        var slots: SlotSet? = nil
        var tombstone: [String: Any]? = nil
        /// The attributes' values before the change (``PersistentHistoryOldValuesKey``).
        var oldValues: [String: Any]? = nil
    }

    /// The stored values of `id`'s attributes in `slots` (all attributes for `nil`), encoded for
    /// the old-values table: `values` by name, `nil` listing the attributes without a value.
    func oldValues(of id: NSManagedObjectID, slots: SlotSet?) throws -> [String: Any]? {
        guard recordsOldValues, let stored = try? read(id, generation: nil, cachedRow: { _ in nil }).snapshot else {
            return nil
        }
        let layout = id.entity.layout
        var values: [String: Any] = [:]
        var missing: [String] = []
        for (slot, kind) in layout.kinds.enumerated() where kind == .attribute && layout.isPersistent(slot) {
            if let slots, !slots.contains(slot) { continue }
            let name = layout.properties[slot].name
            if let value = stored.values[slot] {
                values[name] = Self.propertyListValue(value)
            } else {
                missing.append(name)
            }
        }
        return ["values": values, "nil": missing]
    }

    /// The values a deleted object leaves in its change: its attributes marked
    /// `preservesValueInHistoryOnDeletion`, read before the row goes.
    func tombstone(of id: NSManagedObjectID) throws -> [String: Any]? {
        let layout = id.entity.layout
        let preserved = layout.properties.enumerated().filter {
            ($0.element as? NSAttributeDescription)?.preservesValueInHistoryOnDeletion == true
        }
        guard !preserved.isEmpty,
            let stored = try? read(id, generation: nil, cachedRow: { _ in nil }).snapshot
        else { return nil }
        var values: [String: Any] = [:]
        for (slot, property) in preserved {
            guard let value = stored.values[slot] else { continue }
            values[property.name] = Self.propertyListValue(value)
        }
        return values
    }

    /// Records one transaction with its changes; call inside the write transaction that makes them.
    func recordHistory(_ changes: [HistoryChange], author: String?, contextName: String?, timestamp: Date) throws {
        guard tracksHistory, !changes.isEmpty else { return }
        let process = ProcessInfo.processInfo.processName
        let bundle = Bundle.main.bundleIdentifier ?? process
        let number = try allocate(Self.transactionEntity, count: 1)
        try connection.run(
            "INSERT INTO ATRANSACTION (Z_PK, Z_ENT, Z_OPT, ZAUTHORTS, ZBUNDLEIDTS, ZCONTEXTNAMETS, ZPROCESSIDTS, ZTIMESTAMP) VALUES (?, ?, 1, ?, ?, ?, ?, ?)",
            [
                .integer(number), .integer(Self.transactionEntity), try stringKey(author), try stringKey(bundle),
                try stringKey(contextName), try stringKey(process), .real(timestamp.timeIntervalSinceReferenceDate),
            ])
        var key = try allocate(Self.changeEntity, count: Int64(changes.count))
        let insert = try connection.statement(
            "INSERT INTO ACHANGE (Z_PK, Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS) VALUES (?, ?, 1, ?, ?, ?, ?, ?)"
        )
        for change in changes {
            guard let pk = Self.primaryKey(change.objectID) else { continue }
            var columns = SQLValue.null
            if change.type == .update, let slots = change.slots {
                columns = .blob(Self.bitmap(slots, layout: change.objectID.entity.layout))
            } else if change.type == .delete, let tombstone = change.tombstone,
                let data = try? PropertyListSerialization.data(fromPropertyList: tombstone, format: .binary, options: 0)
            {
                columns = .blob([UInt8](data))
            }
            insert.reset()
            try insert.bind([
                .integer(key), .integer(Self.changeEntity), .integer(Int64(change.type.rawValue)),
                .integer(schema[change.objectID.entity].number), .integer(pk), .integer(number), columns,
            ])
            while try insert.step() {}
            if let old = change.oldValues,
                let data = try? PropertyListSerialization.data(fromPropertyList: old, format: .binary, options: 0)
            {
                try connection.run(
                    "INSERT INTO OCD_ACHANGE_OLDVALUES (Z_PK, ZVALUES) VALUES (?, ?)",
                    [.integer(key), .blob([UInt8](data))])
            }
            key += 1
        }
        insert.reset()
    }

    /// The first of `count` keys of a history table, from its `Z_PRIMARYKEY` row.
    /// Past the larger of `Z_MAX` and the table's last key too: a `Z_MAX` that lags its table
    /// (a store another program wrote, a row lost) must not hand out a key already used.
    private func allocate(_ entity: Int64, count: Int64) throws -> Int64 {
        var maximum: Int64 = 0
        let row = try connection.rows(SQLBookkeeping.keyMaximum, [.integer(entity)]).first
        if case .integer(let value)? = row?.first { maximum = value }
        let table =
            [Self.changeEntity: "ACHANGE", Self.transactionEntity: "ATRANSACTION"][entity] ?? "ATRANSACTIONSTRING"
        if case .integer(let last)? = try connection.rows("SELECT MAX(Z_PK) FROM \(table)").first?.first {
            maximum = max(maximum, last)
        }
        if row == nil {
            let name =
                [Self.changeEntity: "CHANGE", Self.transactionEntity: "TRANSACTION"][entity] ?? "TRANSACTIONSTRING"
            try connection.run(SQLBookkeeping.insertEntity, [.integer(entity), .text(name), .integer(0)])
        }
        try connection.run(SQLBookkeeping.setKeyMaximum, [.integer(maximum + count), .integer(entity)])
        return maximum + 1
    }

    /// The `ATRANSACTIONSTRING` key of `text`, stored once.
    private func stringKey(_ text: String?) throws -> SQLValue {
        guard let text else { return .null }
        if case .integer(let key)? = try connection.rows(
            "SELECT Z_PK FROM ATRANSACTIONSTRING WHERE ZNAME = ?", [.text(text)]
        ).first?.first {
            return .integer(key)
        }
        let key = try allocate(Self.stringEntity, count: 1)
        try connection.run(
            "INSERT INTO ATRANSACTIONSTRING (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (?, ?, 1, ?)",
            [.integer(key), .integer(Self.stringEntity), .text(text)])
        return .integer(key)
    }

    /// Bit *n* (least significant first) for each changed slot, numbered by the entity's
    /// properties in name order.
    static func bitmap(_ slots: SlotSet, layout: EntityLayout) -> [UInt8] {
        let order = layout.properties.indices.sorted { layout.properties[$0].name < layout.properties[$1].name }
        var position: [Int: Int] = [:]
        for (index, slot) in order.enumerated() { position[slot] = index }
        var bytes = [UInt8](repeating: 0, count: (order.count + 7) / 8)
        for slot in slots {
            guard let bit = position[slot] else { continue }
            bytes[bit / 8] |= 1 << UInt8(bit % 8)
        }
        return bytes
    }

    /// A value as a property list holds it: UUIDs and URLs as strings, IDs as URIs.
    static func propertyListValue(_ value: Any) -> Any {
        switch value {
        case let uuid as UUID: uuid.uuidString
        case let url as URL: url.absoluteString
        case let id as NSManagedObjectID: id.uriRepresentation().absoluteString
        case let decimal as Decimal: decimal.description
        default: value
        }
    }

    // MARK: Reading

    package func lastHistoryNumber() throws -> Int64 {
        guard try hasHistoryTables() else { return 0 }
        if case .integer(let number)? = try connection.rows("SELECT MAX(Z_PK) FROM ATRANSACTION").first?.first {
            return number
        }
        return 0
    }

    func hasHistoryTables() throws -> Bool { try hasTable("ATRANSACTION") }

    private func hasTable(_ name: String) throws -> Bool {
        try !connection.rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(name)]).isEmpty
    }

    /// The old values recorded for the changes with keys in `range`, as stored.
    private func recordedOldValues(_ range: ClosedRange<Int64>) throws -> [Int64: [UInt8]] {
        guard try hasTable("OCD_ACHANGE_OLDVALUES") else { return [:] }
        var found: [Int64: [UInt8]] = [:]
        for row in try connection.rows(
            "SELECT Z_PK, ZVALUES FROM OCD_ACHANGE_OLDVALUES WHERE Z_PK BETWEEN ? AND ?",
            [.integer(range.lowerBound), .integer(range.upperBound)])
        {
            if case .integer(let key) = row[0], case .blob(let bytes) = row[1] { found[key] = bytes }
        }
        return found
    }

    /// Old values as recorded, each value of its attribute's type again (`NSNull` for none).
    static func decodeOldValues(_ bytes: [UInt8], entity: NSEntityDescription) -> [String: Any]? {
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

    package func historyTransactions(_ bound: NSPersistentHistoryChangeRequest.Bound, withChanges: Bool) throws
        -> [HistoryRecord]
    {
        try withReadConnection(nil) { try readHistory(bound, withChanges: withChanges) }
    }

    private func readHistory(_ bound: NSPersistentHistoryChangeRequest.Bound, withChanges: Bool) throws
        -> [HistoryRecord]
    {
        guard try hasHistoryTables() else { return [] }
        var filter = ""
        var arguments: [SQLValue] = []
        switch bound {
        case .afterToken(let token?):
            let number = token.numbers[identifier] ?? 0
            try checkNotExpired(number)
            filter = "WHERE Z_PK > ?"
            arguments = [.integer(number)]
        case .afterDate(let date):
            filter = "WHERE ZTIMESTAMP > ?"
            arguments = [.real(date.timeIntervalSinceReferenceDate)]
        default:
            break
        }
        var strings: [Int64: String] = [:]
        for row in try connection.rows("SELECT Z_PK, ZNAME FROM ATRANSACTIONSTRING") {
            if case .integer(let key) = row[0], case .text(let name) = row[1] { strings[key] = name }
        }
        func text(_ reference: SQLValue, _ direct: SQLValue) -> String? {
            if case .integer(let key) = reference, let string = strings[key] { return string }
            if case .text(let string) = direct { return string }
            return nil
        }
        var records: [HistoryRecord] = []
        var index: [Int64: Int] = [:]
        let rows = try connection.rows(
            "SELECT Z_PK, ZTIMESTAMP, ZAUTHORTS, ZBUNDLEIDTS, ZCONTEXTNAMETS, ZPROCESSIDTS, ZAUTHOR, ZBUNDLEID, ZCONTEXTNAME, ZPROCESSID FROM ATRANSACTION \(filter) ORDER BY Z_PK",
            arguments)
        for row in rows {
            guard case .integer(let number) = row[0] else { continue }
            var time = 0.0
            if case .real(let value) = row[1] {
                time = value
            } else if case .integer(let value) = row[1] {
                time = Double(value)
            }
            index[number] = records.count
            records.append(
                HistoryRecord(
                    number: number, timestamp: Date(timeIntervalSinceReferenceDate: time), author: text(row[2], row[6]),
                    bundleID: text(row[3], row[7]) ?? "", processID: text(row[5], row[9]) ?? "",
                    contextName: text(row[4], row[8]), changes: []))
        }
        guard withChanges, let first = records.first?.number, let last = records.last?.number else { return records }
        let changes = try connection.statement(
            "SELECT Z_PK, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS FROM ACHANGE WHERE ZTRANSACTIONID BETWEEN ? AND ? ORDER BY Z_PK"
        )
        try changes.bind([.integer(first), .integer(last)])
        var oldValues: [Int64: [UInt8]] = [:]
        let keys = try connection.rows(
            "SELECT MIN(Z_PK), MAX(Z_PK) FROM ACHANGE WHERE ZTRANSACTIONID BETWEEN ? AND ?",
            [.integer(first), .integer(last)])
        if case .integer(let low)? = keys.first?[0], case .integer(let high)? = keys.first?[1], low <= high {
            oldValues = try recordedOldValues(low...high)
        }
        while try changes.step() {
            guard let position = index[changes.int64(at: 4)],
                let type = NSPersistentHistoryChangeType(rawValue: Int(changes.int64(at: 1))),
                let entity = schema.entitiesByNumber[changes.int64(at: 2)]?.entity
            else { continue }
            let id = objectID(entity, changes.int64(at: 3))
            var updated: Set<NSPropertyDescription>?
            var tombstone: [AnyHashable: Any]?
            if !changes.isNull(at: 5) {
                let bytes = changes.bytes(at: 5)
                if type == .update {
                    updated = Self.properties(inBitmap: bytes, layout: entity.layout)
                } else if type == .delete,
                    let plist = try? PropertyListReader.propertyList(from: Data(bytes)) as? [String: Any]
                {
                    tombstone = plist
                }
            }
            let changeKey = changes.int64(at: 0)
            records[position].changes.append(
                HistoryRecord.Change(
                    id: changeKey, objectID: id, type: type, updatedProperties: updated, tombstone: tombstone,
                    oldValues: oldValues[changeKey].flatMap { Self.decodeOldValues($0, entity: entity) }))
        }
        changes.reset()
        return records
    }

    /// The properties a change bitmap marks.
    static func properties(inBitmap bytes: [UInt8], layout: EntityLayout) -> Set<NSPropertyDescription> {
        let order = layout.properties.indices.sorted { layout.properties[$0].name < layout.properties[$1].name }
        var properties = Set<NSPropertyDescription>()
        for (bit, slot) in order.enumerated() where bit / 8 < bytes.count && bytes[bit / 8] & (1 << UInt8(bit % 8)) != 0
        {
            properties.insert(layout.properties[slot])
        }
        return properties
    }

    /// A token is expired when history after it was deleted: the oldest transaction kept is
    /// past the one just after the token.
    private func checkNotExpired(_ number: Int64) throws {
        guard case .integer(let oldest)? = try connection.rows("SELECT MIN(Z_PK) FROM ATRANSACTION").first?.first
        else { return }
        if oldest > number + 1 {
            throw CoreDataError.make(
                NSPersistentHistoryTokenExpiredError,
                "The persistent history token is expired: history after transaction \(number) was deleted (the oldest kept is \(oldest)).",
                [NSAffectedStoresErrorKey: [self]])
        }
    }

    // MARK: Deleting

    package func deleteHistory(_ bound: NSPersistentHistoryChangeRequest.Bound) throws -> Int {
        guard try hasHistoryTables() else { return 0 }
        var count = 0
        try transaction {
            switch bound {
            case .beforeToken(let token?):
                let number = token.numbers[identifier] ?? 0
                try connection.run("DELETE FROM ACHANGE WHERE ZTRANSACTIONID <= ?", [.integer(number)])
                try connection.run("DELETE FROM ATRANSACTION WHERE Z_PK <= ?", [.integer(number)])
            case .beforeDate(let date):
                let time = SQLValue.real(date.timeIntervalSinceReferenceDate)
                try connection.run(
                    "DELETE FROM ACHANGE WHERE ZTRANSACTIONID IN (SELECT Z_PK FROM ATRANSACTION WHERE ZTIMESTAMP < ?)",
                    [time])
                try connection.run("DELETE FROM ATRANSACTION WHERE ZTIMESTAMP < ?", [time])
            default:
                return
            }
            count = connection.changes
            if try hasTable("OCD_ACHANGE_OLDVALUES") {
                try connection.run("DELETE FROM OCD_ACHANGE_OLDVALUES WHERE Z_PK NOT IN (SELECT Z_PK FROM ACHANGE)")
            }
        }
        return count
    }
}
