import OpenCoreData

/// The statements a store of Apple's layout runs besides fetches — reading rows by key, the
/// members of a to-many, row versions, a save's writes — as trees of the SQL layer, so each
/// database writes them through its own dialect. Keys and values are ``SQLExpression/slot``s,
/// bound by the store at each run of the one prepared statement.
extension SQLSchema {
    /// `Z_PK, Z_ENT, Z_OPT` and the table's columns, of the table with alias `alias`: a row as a
    /// store reads it.
    package func rowColumns(_ table: Table, alias: String) -> [SQLExpression] {
        (["Z_PK", "Z_ENT", "Z_OPT"] + table.columns.map(\.name)).map { .column(alias, $0) }
    }

    /// The rows of `table` with `keys` primary keys (`Z_PK = ?`, or an `IN` list of `keys` slots).
    package func rowSelect(_ table: Table, keys: Int) -> SQLSelect {
        let key = SQLExpression.column("t0", "Z_PK")
        return SQLSelect(
            columns: rowColumns(table, alias: "t0"), from: .table(table.name, alias: "t0"),
            filter: keys == 1 ? .compare(key, .equal, .slot) : .inList(key, Array(repeating: .slot, count: keys)))
    }

    /// The rows of `table` whose primary keys lie between two slots, both included, in key order.
    package func rowRangeSelect(_ table: Table) -> SQLSelect {
        let key = SQLExpression.column("t0", "Z_PK")
        return SQLSelect(
            columns: rowColumns(table, alias: "t0"), from: .table(table.name, alias: "t0"),
            filter: .and([.compare(key, .greaterOrEqual, .slot), .compare(key, .lessOrEqual, .slot)]),
            orderBy: [.key(key)])
    }

    /// Some columns of the row of `table` with one primary key.
    package func columnsSelect(_ columns: [String], table: String) -> SQLSelect {
        SQLSelect(
            columns: columns.map { .column("t0", $0) }, from: .table(table, alias: "t0"),
            filter: .compare(.column("t0", "Z_PK"), .equal, .slot))
    }

    /// The `Z_PK` and `Z_ENT` of the members of a to-many of one owner (the slot), in the
    /// relationship's order (an ordered one's `Z_FOK_` column, then the key); `nil` when
    /// `storage` is not a to-many's.
    ///
    /// A to-many kept by its inverse whose destination has no sub-entities selects `Z_PK` alone:
    /// every member is of the destination entity whatever its `Z_ENT` says, and without that
    /// column the index on the inverse's column answers the statement without reading each
    /// member's row, which was most of the cost of each member's key.
    package func memberKeysSelect(_ storage: Storage, destination: Entity) -> SQLSelect? {
        switch storage {
        case .toManyByInverse(let table, let column, let order):
            let keys: [SQLExpression] =
                destination.entity.subentities.isEmpty
                ? [.column("t0", "Z_PK")] : [.column("t0", "Z_PK"), .column("t0", "Z_ENT")]
            return SQLSelect(
                columns: keys, from: .table(table, alias: "t0"),
                filter: .compare(.column("t0", column), .equal, .slot),
                orderBy: Self.memberOrder(order, then: .column("t0", "Z_PK"), alias: "t0"))
        case .join(let join, let source, let target, let order):
            return SQLSelect(
                columns: [.column("j", target), .column("t0", "Z_ENT")], from: .table(join.name, alias: "j"),
                joins: [
                    .init(
                        kind: .inner, source: .table(destination.table.name, alias: "t0"),
                        on: .compare(.column("t0", "Z_PK"), .equal, .column("j", target)))
                ],
                filter: .compare(.column("j", source), .equal, .slot),
                orderBy: Self.memberOrder(order, then: .column("j", target), alias: "j"))
        default:
            return nil
        }
    }

    /// A to-many's order: an ordered one's order column (which may be `NULL` in a file), then
    /// the member's key, which is never `NULL` (a row's `Z_PK`, a join table's primary-key column).
    private static func memberOrder(_ order: String?, then key: SQLExpression, alias: String) -> [SQLSelect.Order] {
        (order.map { [SQLSelect.Order(expression: .column(alias, $0))] } ?? []) + [.key(key)]
    }

    /// The rows of the members of a to-many of `owners` owners (an `IN` list of slots), each
    /// followed by its owner's key, ordered by owner and then in the relationship's order; `nil`
    /// when `storage` is not a to-many's.
    package func memberRowsSelect(_ storage: Storage, destination: Entity, owners: Int) -> SQLSelect? {
        let slots = Array(repeating: SQLExpression.slot, count: owners)
        switch storage {
        case .toManyByInverse(let table, let column, let order):
            let owner = SQLExpression.column("t0", column)
            return SQLSelect(
                columns: rowColumns(destination.table, alias: "t0") + [owner], from: .table(table, alias: "t0"),
                filter: .inList(owner, slots),
                orderBy: [.key(owner)] + Self.memberOrder(order, then: .column("t0", "Z_PK"), alias: "t0"))
        case .join(let join, let source, let target, let order):
            let owner = SQLExpression.column("j", source)
            return SQLSelect(
                columns: rowColumns(destination.table, alias: "t0") + [owner], from: .table(join.name, alias: "j"),
                joins: [
                    .init(
                        kind: .inner, source: .table(destination.table.name, alias: "t0"),
                        on: .compare(.column("t0", "Z_PK"), .equal, .column("j", target)))
                ],
                filter: .inList(owner, slots),
                orderBy: [.key(owner)] + Self.memberOrder(order, then: .column("j", target), alias: "j"))
        default:
            return nil
        }
    }

    /// Inserts one row of `table`: `Z_PK, Z_ENT, Z_OPT` and then `columns`, all slots.
    package func insertRow(_ table: Table, columns: [String]) -> SQLStatement {
        let all = ["Z_PK", "Z_ENT", "Z_OPT"] + columns
        return .insert(
            SQLInsert(table: table.name, columns: all, values: Array(repeating: .slot, count: all.count)))
    }

    /// Updates one row of `table` if its version is still the one read: `Z_OPT` and `columns`
    /// are set (slots), then the key and the old version are bound.
    package func updateRow(_ table: Table, columns: [String]) -> SQLStatement {
        .update(
            table: table.name, set: (["Z_OPT"] + columns).map { SQLAssignment($0, .slot) },
            filter: .and([
                .compare(.column(table: nil, name: "Z_PK"), .equal, .slot),
                .compare(.column(table: nil, name: "Z_OPT"), .equal, .slot),
            ]))
    }

    /// Deletes the rows of `table` whose `column` holds the slot's value (a row by `Z_PK`, or a
    /// join table's pairs of one source).
    package func deleteRows(_ table: String, where column: String = "Z_PK") -> SQLStatement {
        .delete(table: table, filter: .compare(.column(table: nil, name: column), .equal, .slot))
    }

    /// Sets one row's to-many order column (`Z_FOK_…`): the position, then the key.
    package func updateOrder(_ table: String, column: String) -> SQLStatement {
        .update(
            table: table, set: [SQLAssignment(column, .slot)],
            filter: .compare(.column(table: nil, name: "Z_PK"), .equal, .slot))
    }

    /// Inserts one pair of `join` (source, target and, when given, the order column), replacing a
    /// pair already there.
    package func insertPair(_ join: JoinTable, source: String, target: String, order: String?) -> SQLStatement {
        let columns = [source, target] + (order.map { [$0] } ?? [])
        return .insert(
            SQLInsert(
                table: join.name, columns: columns, values: Array(repeating: .slot, count: columns.count),
                replacingOnConflictOf: join.columns))
    }
}

/// Apple's bookkeeping tables (STORE-FORMAT.md): `Z_PRIMARYKEY` (one row per entity: number,
/// name, parent, the largest key given), `Z_METADATA` (the store's UUID and metadata plist) and
/// `Z_MODELCACHE` (the compiled model that wrote the store).
package enum SQLBookkeeping {
    /// The three tables, as Apple declares them.
    package static let createTables: [SQLStatement] = [
        .createTable(
            SQLTableDefinition(
                name: "Z_PRIMARYKEY",
                columns: [
                    .init("Z_ENT", .integer, isPrimaryKey: true), .init("Z_NAME", .varchar), .init("Z_SUPER", .integer),
                    .init("Z_MAX", .integer),
                ])),
        .createTable(
            SQLTableDefinition(
                name: "Z_METADATA",
                columns: [
                    .init("Z_VERSION", .integer, isPrimaryKey: true), .init("Z_UUID", .varchar, length: 255),
                    .init("Z_PLIST", .blob),
                ])),
        .createTable(SQLTableDefinition(name: "Z_MODELCACHE", columns: [.init("Z_CONTENT", .blob)])),
    ]

    /// An entity's row: number, name and parent's number (slots), no key given yet.
    package static let insertEntity = SQLStatement.insert(
        SQLInsert(
            table: "Z_PRIMARYKEY", columns: ["Z_ENT", "Z_NAME", "Z_SUPER", "Z_MAX"],
            values: [.slot, .slot, .slot, .integer(0)]))

    /// Every entity's number and name.
    package static let entities = SQLStatement.select(
        SQLSelect(
            columns: [.column("t0", "Z_ENT"), .column("t0", "Z_NAME")], from: .table("Z_PRIMARYKEY", alias: "t0")))

    /// The largest key given in the hierarchy of one root entity (the slot).
    package static let keyMaximum = SQLStatement.select(
        SQLSelect(
            columns: [.column("t0", "Z_MAX")], from: .table("Z_PRIMARYKEY", alias: "t0"),
            filter: .compare(.column("t0", "Z_ENT"), .equal, .slot)))

    /// Records the largest key given (first slot) for one root entity (second slot).
    package static let setKeyMaximum = SQLStatement.update(
        table: "Z_PRIMARYKEY", set: [SQLAssignment("Z_MAX", .slot)],
        filter: .compare(.column(table: nil, name: "Z_ENT"), .equal, .slot))

    /// Reserves keys in one statement: adds the first slot to `Z_MAX` of one root entity (the
    /// second slot) and returns the new `Z_MAX` — atomic where several writers allocate at once.
    package static let reserveKeys = SQLStatement.updateReturning(
        table: "Z_PRIMARYKEY", alias: "t0",
        set: [SQLAssignment("Z_MAX", .plus(.column(table: nil, name: "Z_MAX"), .slot))],
        filter: .compare(.column(table: nil, name: "Z_ENT"), .equal, .slot),
        returning: [.column(table: nil, name: "Z_MAX")])

    /// The store's UUID and metadata plist.
    package static let metadata = SQLStatement.select(
        SQLSelect(
            columns: [.column("t0", "Z_UUID"), .column("t0", "Z_PLIST")], from: .table("Z_METADATA", alias: "t0"),
            filter: .compare(.column("t0", "Z_VERSION"), .equal, .integer(1))))

    /// The store's UUID alone.
    package static let metadataUUID = SQLStatement.select(
        SQLSelect(
            columns: [.column("t0", "Z_UUID")], from: .table("Z_METADATA", alias: "t0"),
            filter: .compare(.column("t0", "Z_VERSION"), .equal, .integer(1))))

    /// The metadata row of a new store: UUID and plist.
    package static let insertMetadata = SQLStatement.insert(
        SQLInsert(
            table: "Z_METADATA", columns: ["Z_VERSION", "Z_UUID", "Z_PLIST"], values: [.integer(1), .slot, .slot]))

    /// Replaces the UUID and plist.
    package static let updateMetadata = SQLStatement.update(
        table: "Z_METADATA", set: [SQLAssignment("Z_UUID", .slot), SQLAssignment("Z_PLIST", .slot)],
        filter: .compare(.column(table: nil, name: "Z_VERSION"), .equal, .integer(1)))

    /// Writes the metadata row back unchanged: a write that changes no value.
    package static let rewriteMetadata = SQLStatement.update(
        table: "Z_METADATA", set: [SQLAssignment("Z_VERSION", .column(table: nil, name: "Z_VERSION"))], filter: nil)

    /// The compiled model (slot).
    package static let insertModelCache = SQLStatement.insert(
        SQLInsert(table: "Z_MODELCACHE", columns: ["Z_CONTENT"], values: [.slot]))

    /// The compiled model's bytes.
    package static let modelCache = SQLStatement.select(
        SQLSelect(columns: [.column("t0", "Z_CONTENT")], from: .table("Z_MODELCACHE", alias: "t0")))
}

/// One statement of a save's to-many writes and the values of each run of it, in order.
package struct SQLBatchedStatement {
    package let statement: SQLStatement
    package let runs: [[SQLValue]]
}

extension SQLSchema {
    /// What writing `row`'s changed to-many relationships takes, in order: the order column
    /// (`Z_FOK_…`) of each member of an ordered to-many kept by its inverse, and for a join table
    /// its pairs of this row replaced by the new ones — written by one side only, the ordered
    /// one, else the one named first. Positions are Apple's: 2048, 3072, …
    ///
    /// `key` gives an object's primary key (`nil`: not stored, skipped).
    package func toManyWrites(_ row: StoreTransaction.Row, key: (NSManagedObjectID) -> Int64?)
        -> [SQLBatchedStatement]
    {
        guard let pk = key(row.objectID) else { return [] }
        let mapping = self[row.entity]
        var writes: [SQLBatchedStatement] = []
        for slot in mapping.toManyWriteSlots {
            let storage = mapping.storage[slot]
            guard row.modifiedSlots?.contains(slot) ?? true, let ids = row.snapshot.values[slot] as? [NSManagedObjectID]
            else { continue }
            switch storage {
            case .toManyByInverse(let table, _, let order?):
                let runs = ids.enumerated().compactMap { position, id -> [SQLValue]? in
                    key(id).map { [.integer(Int64(2048 + 1024 * position)), .integer($0)] }
                }
                writes.append(SQLBatchedStatement(statement: updateOrder(table, column: order), runs: runs))
            case .join(let join, let source, let target, let order):
                let relationship = mapping.entity.layout.relationship(at: slot)
                if let inverse = relationship.inverseRelationship {
                    let writes = relationship.isOrdered || (!inverse.isOrdered && relationship.name <= inverse.name)
                    if !writes { continue }
                }
                writes.append(
                    SQLBatchedStatement(statement: deleteRows(join.name, where: source), runs: [[.integer(pk)]]))
                let runs = ids.enumerated().compactMap { position, id -> [SQLValue]? in
                    guard let member = key(id) else { return nil }
                    return [.integer(pk), .integer(member)]
                        + (order != nil ? [.integer(Int64(2048 + 1024 * position))] : [])
                }
                writes.append(
                    SQLBatchedStatement(
                        statement: insertPair(join, source: source, target: target, order: order), runs: runs))
            default:
                continue
            }
        }
        return writes
    }
}

/// Permanent keys for new objects: one block of keys per root entity (keys are unique across an
/// entity hierarchy's table), handed out in the objects' order.
package struct SQLKeyAllocation {
    /// Each object's root entity number, in order.
    private let roots: [Int64]
    /// How many keys each root entity needs, in entity-number order.
    package let counts: [(root: Int64, count: Int64)]

    package init(_ entities: [NSEntityDescription], schema: SQLSchema) {
        var counts: [(root: Int64, count: Int64)] = []
        var roots: [Int64] = []
        roots.reserveCapacity(entities.count)
        // A save's objects come in runs of one entity: the root is found once a run, and each
        // run counted at its end, not with two schema lookups and a dictionary update for each
        // object. A save has few root entities, so they are counted in a short array, not a
        // dictionary, which a one-object save would make and hash for one entry.
        var lastEntity: NSEntityDescription?
        var number: Int64 = 0
        var run: Int64 = 0
        // Past a few roots, their places are found through a dictionary.
        var positions: [Int64: Int] = [:]
        func count() {
            let found =
                counts.count <= 8 ? counts.firstIndex { $0.root == number } : positions[number]
            if let found {
                counts[found].count += run
            } else {
                counts.append((number, run))
                if counts.count == 9 {
                    for (position, counted) in counts.enumerated() { positions[counted.root] = position }
                } else if counts.count > 9 {
                    positions[number] = counts.count - 1
                }
            }
        }
        for entity in entities {
            if entity !== lastEntity {
                if lastEntity != nil { count() }
                lastEntity = entity
                number = schema[schema[entity].table.root].number
                run = 0
            }
            run += 1
            roots.append(number)
        }
        if lastEntity != nil { count() }
        if counts.count > 1 { counts.sort { $0.root < $1.root } }
        self.roots = roots
        self.counts = counts
    }

    /// The objects' keys, in order, given the first key reserved for each root entity, in the
    /// order of ``counts``.
    package func keys(first: [Int64]) -> [Int64] {
        var next = first
        var keys: [Int64] = []
        keys.reserveCapacity(roots.count)
        var index = roots.startIndex
        while index < roots.endIndex {
            // A run of one root entity takes consecutive keys.
            let root = roots[index]
            let position = position(of: root)
            var key = next[position]
            while index < roots.endIndex, roots[index] == root {
                keys.append(key)
                key += 1
                index += 1
            }
            next[position] = key
        }
        return keys
    }

    /// The place of `root` in ``counts`` (sorted by root number), by binary search.
    private func position(of root: Int64) -> Int {
        var low = 0
        var high = counts.count - 1
        while low < high {
            let middle = (low + high) / 2
            if counts[middle].root < root { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
