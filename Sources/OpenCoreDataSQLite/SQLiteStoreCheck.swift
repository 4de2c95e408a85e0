import OpenCoreData
import OpenCoreDataSQL

/// Consistency checks of a SQLite store file against a model: SQLite's integrity check, Apple's
/// bookkeeping (`Z_PRIMARYKEY` entity numbers and `Z_MAX`, every `Z_ENT` known), dangling to-one
/// and join-table references, and the version hashes. What `coredata check` reports.
///
/// Reads through its own read-only connection and writes nothing beside the file.
@_spi(Tools) public enum SQLiteStoreCheck {
    /// Apple's persistent-history entities, numbered in Z_PRIMARYKEY beside the model's own
    /// (tables `ACHANGE`, `ATRANSACTION`, `ATRANSACTIONSTRING`; STORE-FORMAT.md, SampleModel2).
    static let historyEntities: Set<String> = ["CHANGE", "TRANSACTION", "TRANSACTIONSTRING"]

    /// The problems found, one sentence each; empty when the store is sound.
    ///
    /// - Parameter compareVersionHashes: false when `model` is the store's own cached model, whose
    ///   hashes are the store's by construction.
    /// - Throws: an `NSError` when the file cannot be read as a SQLite database at all.
    public static func findings(
        storeAt url: URL, model: NSManagedObjectModel, compareVersionHashes: Bool = true
    ) throws -> [String] {
        try StoreFile.refuseNonRegularFile(at: url, code: NSPersistentStoreOpenError, "read")
        let connection = try SQLiteConnection(path: url.path, mode: .readOnly)
        defer { connection.close() }
        var findings: [String] = []
        for row in try connection.rows("PRAGMA integrity_check") {
            if case .text(let text) = row.first, text != "ok" { findings.append("SQLite integrity: \(text)") }
        }
        guard findings.isEmpty else { return findings }

        if compareVersionHashes {
            let metadata = try SQLiteStore.metadataForPersistentStore(with: url)
            let stored = metadata[NSStoreModelVersionHashesKey] as? [String: Data] ?? [:]
            let current = model.entityVersionHashesByName
            for name in Set(stored.keys).union(current.keys).sorted() where stored[name] != current[name] {
                if stored[name] == nil {
                    findings.append("version hashes: the store has no hash for entity \(name) of the model")
                } else if current[name] == nil {
                    findings.append("version hashes: the store's entity \(name) is not in the model")
                } else {
                    findings.append("version hashes: entity \(name) differs between the model and the store")
                }
            }
        }

        var numbers: [String: Int64] = [:]
        var maxima: [Int64: Int64] = [:]
        for row in try connection.rows("SELECT Z_ENT, Z_NAME, Z_MAX FROM Z_PRIMARYKEY") {
            guard case .integer(let number) = row[0], case .text(let name) = row[1] else {
                findings.append("Z_PRIMARYKEY: a row without an entity number or name")
                continue
            }
            numbers[name] = number
            if case .integer(let maximum) = row[2] { maxima[number] = maximum }
        }
        // A renamed entity keeps its old name in Z_PRIMARYKEY (STORE-FORMAT.md, SampleModel_V2).
        let renamed = Set(model.entities.compactMap(\.renamingIdentifier))
        for entity in model.entities
        where numbers[entity.name ?? ""] == nil && entity.renamingIdentifier.flatMap({ numbers[$0] }) == nil {
            findings.append("Z_PRIMARYKEY: no row for entity \(entity.name ?? "?")")
        }
        for name in numbers.keys.sorted()
        where model.entitiesByName[name] == nil && !renamed.contains(name) && !historyEntities.contains(name) {
            findings.append("Z_PRIMARYKEY: entity \(name) is not in the model")
        }
        guard findings.isEmpty else { return findings }

        let schema = SQLSchema(model: model, numbers: numbers)
        for table in schema.tables {
            let root = schema[table.root]
            let known = Set(root.numbers)
            let maximum = maxima[root.number] ?? 0
            let name = quote(table.name)
            if case .integer(let largest)? = try connection.rows("SELECT MAX(Z_PK) FROM \(name)").first?.first,
                largest > maximum
            {
                findings.append(
                    "\(table.name): Z_PK \(largest) is above Z_MAX \(maximum) of \(table.root.name ?? "?") in Z_PRIMARYKEY"
                )
            }
            for row in try connection.rows("SELECT DISTINCT Z_ENT FROM \(name) ORDER BY Z_ENT") {
                guard case .integer(let number) = row[0], known.contains(number) else {
                    findings.append("\(table.name): rows with Z_ENT \(describe(row[0])), not an entity of this table")
                    continue
                }
            }
        }
        findings += try danglingReferences(schema, connection)
        return findings
    }

    /// To-one columns and join-table columns whose key names no row of the destination.
    private static func danglingReferences(_ schema: SQLSchema, _ connection: SQLiteConnection) throws -> [String] {
        var findings: [String] = []
        var checkedJoinColumns: Set<String> = []
        for mapping in schema.ordered {
            let layout = mapping.entity.layout
            for slot in layout.relationshipSlots {
                let relationship = layout.relationship(at: slot)
                // Inherited relationships are checked once, on the entity that declares them.
                guard relationship.entity === mapping.entity, let destination = relationship.destinationEntity else {
                    continue
                }
                let target = schema[destination].table
                switch mapping.storage[slot] {
                case .toOne(let column, _):
                    let count = try dangling(connection, mapping.table.name, column, target.name)
                    if count > 0 {
                        findings.append(
                            "\(mapping.table.name).\(column): \(rows(count)) to a missing \(destination.name ?? "?") "
                                + "(\(mapping.entity.name ?? "?").\(relationship.name))")
                    }
                case .join(let join, let sourceColumn, let destinationColumn, _):
                    for (column, table) in [(sourceColumn, mapping.table), (destinationColumn, target)]
                    where checkedJoinColumns.insert("\(join.name).\(column)").inserted {
                        let count = try dangling(connection, join.name, column, table.name)
                        if count > 0 {
                            findings.append("\(join.name).\(column): \(rows(count)) to a missing row of \(table.name)")
                        }
                    }
                default:
                    break
                }
            }
        }
        return findings
    }

    /// How many rows of `table` hold in `column` a key that no row of `destination` has.
    private static func dangling(
        _ connection: SQLiteConnection, _ table: String, _ column: String, _ destination: String
    ) throws -> Int64 {
        let sql =
            "SELECT COUNT(*) FROM \(quote(table)) t WHERE t.\(quote(column)) IS NOT NULL"
            + " AND NOT EXISTS (SELECT 1 FROM \(quote(destination)) d WHERE d.Z_PK = t.\(quote(column)))"
        if case .integer(let value)? = try connection.rows(sql).first?.first { return value }
        return 0
    }

    private static func rows(_ count: Int64) -> String { count == 1 ? "1 row refers" : "\(count) rows refer" }

    private static func describe(_ value: SQLiteValue) -> String {
        switch value {
        case .integer(let number): return "\(number)"
        case .null: return "NULL"
        default: return "\(value)"
        }
    }
}
