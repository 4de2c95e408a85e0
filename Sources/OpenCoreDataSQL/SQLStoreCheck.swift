import Foundation
import OpenCoreData

/// Consistency checks of a store of Apple's layout against a model, for every SQL store: the
/// version hashes, Apple's bookkeeping (`Z_PRIMARYKEY` entity numbers and `Z_MAX`, every `Z_ENT`
/// known), and dangling to-one and join-table references. What `coredata check` reports beside
/// each database's own integrity check.
package enum SQLStoreCheck {
    /// The problems found, one sentence each; empty when the store is sound.
    ///
    /// - Parameter compareVersionHashes: false when `model` is the store's own cached model, whose
    ///   hashes are the store's by construction.
    /// - Throws: the database's error.
    package static func findings(
        on runner: some SQLRowRunner, dialect: any SQLDialect, metadata: [String: Any], model: NSManagedObjectModel,
        compareVersionHashes: Bool
    ) throws -> [String] {
        func rows(_ select: SQLSelect) throws -> [[SQLValue]] {
            let (sql, parameters) = SQLWriter.write(select, dialect: dialect)
            return try runner.select(sql, parameters)
        }
        var findings: [String] = []
        if compareVersionHashes {
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
        let keys = SQLSelect(
            columns: ["Z_ENT", "Z_NAME", "Z_MAX"].map { .column("t0", $0) }, from: .table("Z_PRIMARYKEY", alias: "t0"))
        for row in try rows(keys) {
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
        where model.entitiesByName[name] == nil && !renamed.contains(name) && !SQLHistory.entityNames.contains(name) {
            findings.append("Z_PRIMARYKEY: entity \(name) is not in the model")
        }
        guard findings.isEmpty else { return findings }

        let schema = SQLSchema(
            model: model, numbers: numbers, joinTables: try SQLMigrationPlan.joinTables(on: runner, dialect))
        for table in schema.tables {
            let root = schema[table.root]
            let known = Set(root.numbers)
            let maximum = maxima[root.number] ?? 0
            let largest = SQLSelect(
                columns: [.aggregate(.maximum, .column("t0", "Z_PK"))], from: .table(table.name, alias: "t0"))
            if case .integer(let largest)? = try rows(largest).first?.first, largest > maximum {
                findings.append(
                    "\(table.name): Z_PK \(largest) is above Z_MAX \(maximum) of \(table.root.name ?? "?") in Z_PRIMARYKEY"
                )
            }
            let entity = SQLExpression.column("t0", "Z_ENT")
            let distinct = SQLSelect(
                columns: [entity], from: .table(table.name, alias: "t0"), groupBy: [entity],
                orderBy: [.init(expression: entity)])
            for row in try rows(distinct) {
                guard case .integer(let number) = row[0], known.contains(number) else {
                    findings.append("\(table.name): rows with Z_ENT \(describe(row[0])), not an entity of this table")
                    continue
                }
            }
        }
        findings += try danglingReferences(schema, rows)
        return findings
    }

    /// To-one columns and join-table columns whose key names no row of the destination.
    private static func danglingReferences(_ schema: SQLSchema, _ rows: (SQLSelect) throws -> [[SQLValue]]) throws
        -> [String]
    {
        /// How many rows of `table` hold in `column` a key that no row of `destination` has.
        func dangling(_ table: String, _ column: String, _ destination: String) throws -> Int64 {
            let key = SQLExpression.column("t", column)
            let select = SQLSelect(
                columns: [.aggregate(.count, nil)], from: .table(table, alias: "t"),
                filter: .and([
                    .isNotNull(key),
                    .not(
                        .exists(
                            SQLSelect(
                                columns: [.integer(1)], from: .table(destination, alias: "d"),
                                filter: .compare(.column("d", "Z_PK"), .equal, key)))),
                ]))
            if case .integer(let value)? = try rows(select).first?.first { return value }
            return 0
        }
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
                    let count = try dangling(mapping.table.name, column, target.name)
                    if count > 0 {
                        findings.append(
                            "\(mapping.table.name).\(column): \(rowsRefer(count)) to a missing \(destination.name ?? "?") "
                                + "(\(mapping.entity.name ?? "?").\(relationship.name))")
                    }
                case .join(let join, let sourceColumn, let destinationColumn, _):
                    for (column, table) in [(sourceColumn, mapping.table), (destinationColumn, target)]
                    where checkedJoinColumns.insert("\(join.name).\(column)").inserted {
                        let count = try dangling(join.name, column, table.name)
                        if count > 0 {
                            findings.append(
                                "\(join.name).\(column): \(rowsRefer(count)) to a missing row of \(table.name)")
                        }
                    }
                default:
                    break
                }
            }
        }
        return findings
    }

    private static func rowsRefer(_ count: Int64) -> String { count == 1 ? "1 row refers" : "\(count) rows refer" }

    private static func describe(_ value: SQLValue) -> String {
        switch value {
        case .integer(let number): return "\(number)"
        case .null: return "NULL"
        default: return "\(value)"
        }
    }
}
