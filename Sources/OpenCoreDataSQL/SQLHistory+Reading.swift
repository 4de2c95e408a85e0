import Foundation
import OpenCoreData

/// Reading and deleting persistent history, the same for every SQL store.
extension SQLHistory {
    /// The recorded transactions `bound` selects, oldest first, with their changes when asked.
    /// `objectID` makes the ID of a changed object from its entity and key.
    ///
    /// - Throws: `NSPersistentHistoryTokenExpiredError` (134301) for a token older than the oldest
    ///   transaction kept (history after it was deleted), with `store` in
    ///   `NSAffectedStoresErrorKey`; the database's error.
    package func transactions(
        _ bound: NSPersistentHistoryChangeRequest.Bound, withChanges: Bool, store: NSPersistentStore,
        objectID: (NSEntityDescription, Int64) -> NSManagedObjectID, on runner: some SQLRowRunner
    ) throws -> [HistoryRecord] {
        guard try exists(on: runner) else { return [] }
        var filter: SQLExpression?
        switch bound {
        case .afterToken(let token?):
            let number = token.numbers[store.identifier] ?? 0
            try checkNotExpired(number, store: store, on: runner)
            filter = .compare(.column("t0", "Z_PK"), .greater, .parameter(.integer(number)))
        case .afterDate(let date):
            filter = .compare(
                .column("t0", "ZTIMESTAMP"), .greater, .parameter(.real(date.timeIntervalSinceReferenceDate)))
        default:
            break
        }
        var strings: [Int64: String] = [:]
        let allStrings = SQLSelect(
            columns: [.column("t0", "Z_PK"), .column("t0", "ZNAME")], from: .table("ATRANSACTIONSTRING", alias: "t0"))
        for row in try runner.select(SQLWriter.write(allStrings, dialect: dialect).sql, []) {
            if case .integer(let key) = row[0], case .text(let name) = row[1] { strings[key] = name }
        }
        func text(_ reference: SQLValue, _ direct: SQLValue) -> String? {
            if case .integer(let key) = reference, let string = strings[key] { return string }
            if case .text(let string) = direct { return string }
            return nil
        }
        let names = [
            "Z_PK", "ZTIMESTAMP", "ZAUTHORTS", "ZBUNDLEIDTS", "ZCONTEXTNAMETS", "ZPROCESSIDTS", "ZAUTHOR", "ZBUNDLEID",
            "ZCONTEXTNAME", "ZPROCESSID",
        ]
        let select = SQLWriter.write(
            SQLSelect(
                columns: names.map { .column("t0", $0) }, from: .table("ATRANSACTION", alias: "t0"), filter: filter,
                orderBy: [.init(expression: .column("t0", "Z_PK"))]),
            dialect: dialect)
        var records: [HistoryRecord] = []
        var index: [Int64: Int] = [:]
        for row in try runner.select(select.sql, select.parameters) {
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
        let inRange = SQLExpression.between(
            .column("t0", "ZTRANSACTIONID"), low: .parameter(.integer(first)), high: .parameter(.integer(last)))
        let changes = SQLWriter.write(
            SQLSelect(
                columns: ["Z_PK", "ZCHANGETYPE", "ZENTITY", "ZENTITYPK", "ZTRANSACTIONID", "ZCOLUMNS"].map {
                    .column("t0", $0)
                }, from: .table("ACHANGE", alias: "t0"), filter: inRange,
                orderBy: [.init(expression: .column("t0", "Z_PK"))]),
            dialect: dialect)
        let rows = try runner.select(changes.sql, changes.parameters)
        var oldValues: [Int64: [UInt8]] = [:]
        if case .integer(let low)? = rows.first?[0], case .integer(let high)? = rows.last?[0], low <= high {
            oldValues = try recordedOldValues(low...high, on: runner)
        }
        for row in rows {
            guard row.count == 6, case .integer(let changeKey) = row[0], case .integer(let typeNumber) = row[1],
                case .integer(let entityNumber) = row[2], case .integer(let key) = row[3],
                case .integer(let transaction) = row[4], let position = index[transaction],
                let type = NSPersistentHistoryChangeType(rawValue: Int(typeNumber)),
                let entity = schema.entitiesByNumber[entityNumber]?.entity
            else { continue }
            var updated: Set<NSPropertyDescription>?
            var tombstone: [AnyHashable: Any]?
            if case .blob(let bytes) = row[5] {
                if type == .update {
                    updated = Self.properties(inBitmap: bytes, layout: entity.layout)
                } else if type == .delete,
                    let plist = try? PropertyListReader.propertyList(from: Data(bytes)) as? [String: Any]
                {
                    tombstone = plist
                }
            }
            records[position].changes.append(
                HistoryRecord.Change(
                    id: changeKey, objectID: objectID(entity, key), type: type, updatedProperties: updated,
                    tombstone: tombstone,
                    oldValues: oldValues[changeKey].flatMap { Self.decodeOldValues($0, entity: entity) }))
        }
        return records
    }

    /// The old values recorded for the changes with keys in `range`, as stored.
    private func recordedOldValues(_ range: ClosedRange<Int64>, on runner: some SQLRowRunner) throws -> [Int64: [UInt8]]
    {
        guard try runner.hasTable(Self.oldValuesTable) else { return [:] }
        let select = SQLWriter.write(
            SQLSelect(
                columns: [.column("t0", "Z_PK"), .column("t0", "ZVALUES")],
                from: .table(Self.oldValuesTable, alias: "t0"),
                filter: .between(
                    .column("t0", "Z_PK"), low: .parameter(.integer(range.lowerBound)),
                    high: .parameter(.integer(range.upperBound)))),
            dialect: dialect)
        var found: [Int64: [UInt8]] = [:]
        for row in try runner.select(select.sql, select.parameters) {
            if case .integer(let key) = row[0], case .blob(let bytes) = row[1] { found[key] = bytes }
        }
        return found
    }

    /// A token is expired when history after it was deleted: the oldest transaction kept is
    /// past the one just after the token.
    private func checkNotExpired(_ number: Int64, store: NSPersistentStore, on runner: some SQLRowRunner) throws {
        let oldest = SQLSelect(
            columns: [.aggregate(.minimum, .column("t0", "Z_PK"))], from: .table("ATRANSACTION", alias: "t0"))
        guard
            case .integer(let first)? = try runner.select(SQLWriter.write(oldest, dialect: dialect).sql, []).first?
                .first
        else { return }
        if first > number + 1 {
            throw CoreDataError.make(
                NSPersistentHistoryTokenExpiredError,
                "The persistent history token is expired: history after transaction \(number) was deleted (the oldest kept is \(first)).",
                [NSAffectedStoresErrorKey: [store]])
        }
    }

    // MARK: Deleting

    /// Deletes the transactions `bound` selects, their changes and old values; returns how many
    /// transactions. Call inside a write transaction.
    ///
    /// - Throws: the database's error.
    package func delete(
        _ bound: NSPersistentHistoryChangeRequest.Bound, store: NSPersistentStore, on runner: some SQLRowRunner
    ) throws -> Int {
        guard try exists(on: runner) else { return 0 }
        let transactions: SQLExpression
        let changes: SQLExpression
        let transactionOfChange = SQLExpression.compare(
            .column(table: "t1", name: "Z_PK"), .equal, .column(table: "ACHANGE", name: "ZTRANSACTIONID"))
        switch bound {
        case .beforeToken(let token?):
            let number = SQLExpression.parameter(.integer(token.numbers[store.identifier] ?? 0))
            transactions = .compare(.column(table: nil, name: "Z_PK"), .lessOrEqual, number)
            changes = .compare(.column(table: nil, name: "ZTRANSACTIONID"), .lessOrEqual, number)
        case .beforeDate(let date):
            let time = SQLExpression.parameter(.real(date.timeIntervalSinceReferenceDate))
            transactions = .compare(.column(table: nil, name: "ZTIMESTAMP"), .less, time)
            changes = .exists(
                SQLSelect(
                    columns: [.integer(1)], from: .table("ATRANSACTION", alias: "t1"),
                    filter: .and([transactionOfChange, .compare(.column("t1", "ZTIMESTAMP"), .less, time)])))
        default:
            return 0
        }
        let deleteChanges = SQLWriter.write(.delete(table: "ACHANGE", filter: changes), dialect: dialect)
        try runner.change(deleteChanges.sql, deleteChanges.parameters)
        let deleteTransactions = SQLWriter.write(.delete(table: "ATRANSACTION", filter: transactions), dialect: dialect)
        let count = try runner.change(deleteTransactions.sql, deleteTransactions.parameters)
        if try runner.hasTable(Self.oldValuesTable) {
            let orphan = SQLExpression.not(
                .exists(
                    SQLSelect(
                        columns: [.integer(1)], from: .table("ACHANGE", alias: "t1"),
                        filter: .compare(
                            .column("t1", "Z_PK"), .equal, .column(table: Self.oldValuesTable, name: "Z_PK")))))
            try runner.change(
                SQLWriter.write(.delete(table: Self.oldValuesTable, filter: orphan), dialect: dialect).sql, [])
        }
        return count
    }
}
