import OpenCoreData

/// How a model maps onto Apple's store layout (STORE-FORMAT.md, "Entity tables"): entity numbers,
/// one table per root entity, a column per attribute and to-one, join tables for many-to-many
/// relationships, `Z_FOK_` order columns. The layout is the SQL databases' common ground: each
/// store writes its statements (``createStatements()``, `SQLSchema+Statements.swift`) through its
/// own dialect.
///
/// Identifiers come from the model only; they are made of the model's names, upper-cased, and
/// quoted by the dialect. No value ever becomes part of SQL text.
package final class SQLSchema: @unchecked Sendable {
    /// Where one slot of an entity's layout lives.
    package enum Storage {
        /// Not stored (transient, fetched property).
        case none
        case attribute(column: String, type: NSAttributeType)
        /// A composite attribute: a column per leaf element.
        case composite([CompositeColumn])
        /// A to-one: the destination's `Z_PK`, and its `Z_ENT` when the destination has sub-entities.
        case toOne(column: String, entityColumn: String?)
        /// A to-many whose inverse is a to-one: the inverse's column on the destination's table.
        case toManyByInverse(table: String, column: String, orderColumn: String?)
        /// A many-to-many (or a to-many without inverse): a join table.
        case join(JoinTable, sourceColumn: String, destinationColumn: String, orderColumn: String?)
    }

    /// One leaf element of a composite attribute and its column. Apple's store names the column
    /// after the leaf alone (`ZRICHTER` for `magnitude.richter`), numbered when the name is taken.
    package struct CompositeColumn {
        /// The element names from the composite to the leaf (`["richter"]`).
        package let path: [String]
        package let column: String
        package let type: NSAttributeType
        package let attribute: NSAttributeDescription
    }

    /// A many-to-many join table, shared by both relationships.
    package struct JoinTable {
        package let name: String
        package let columns: [String]
        package let orderColumn: String?
    }

    /// One root entity's table.
    package final class Table {
        package let name: String
        package let root: NSEntityDescription
        /// Columns after `Z_PK, Z_ENT, Z_OPT`, in creation order, with their types.
        package var columns: [(name: String, type: SQLColumnType)] = []
        /// Indexed columns: every to-one's, and those of attributes marked Indexed.
        package var indexedColumns: [String] = []
        package var hasSubentities = false

        init(name: String, root: NSEntityDescription) {
            self.name = name
            self.root = root
        }
    }

    /// One entity's mapping.
    package final class Entity {
        package let entity: NSEntityDescription
        package let number: Int64
        package let table: Table
        /// Storage per slot of `entity.layout`.
        package var storage: [Storage] = []
        /// This entity's number and every descendant's, for `Z_ENT IN (…)`.
        package var numbers: [Int64] = []
        /// Order columns on this entity's table written for its to-one slots: slot → column.
        package var orderColumns: [Int: String] = [:]
        /// The slots whose to-many a save writes outside the row (an ordered to-many's order
        /// column, a many-to-many's join table), so a save of a row without them looks at none.
        package var toManyWriteSlots: [Int] = []

        init(entity: NSEntityDescription, number: Int64, table: Table) {
            self.entity = entity
            self.number = number
            self.table = table
        }
    }

    package let model: NSManagedObjectModel
    package private(set) var tables: [Table] = []
    package private(set) var joinTables: [JoinTable] = []
    package private(set) var entities: [ObjectIdentifier: Entity] = [:]
    package private(set) var entitiesByNumber: [Int64: Entity] = [:]
    package private(set) var entitiesByName: [String: Entity] = [:]
    /// Entities in `Z_ENT` order.
    package private(set) var ordered: [Entity] = []

    /// The join tables an existing store holds, by name, with their columns.
    package typealias JoinTableCatalog = [String: [String]]

    /// The mapping of `model`; `numbers` are the entity numbers of an existing store's
    /// `Z_PRIMARYKEY` by name (a new store numbers entities itself), and `joinTables` the join
    /// tables it holds: an existing store's own names win over the names a new store would be given.
    package init(
        model: NSManagedObjectModel, numbers: [String: Int64] = [:], joinTables existing: JoinTableCatalog = [:]
    ) {
        self.model = model
        numberEntities(existing: numbers)
        for table in tables { assignColumns(table) }
        planJoinTables(existing: existing)
        for mapping in ordered { mapRelationships(mapping) }
        for mapping in ordered {
            mapping.numbers = descendants(of: mapping.entity).compactMap { entities[ObjectIdentifier($0)]?.number }
            mapping.toManyWriteSlots = mapping.storage.indices.filter { slot in
                switch mapping.storage[slot] {
                case .toManyByInverse(_, _, .some), .join: return true
                default: return false
                }
            }
        }
    }

    package subscript(entity: NSEntityDescription) -> Entity {
        if let mapping = entities[ObjectIdentifier(entity)] { return mapping }
        // An entity of an equal model loaded separately: match by name.
        return entitiesByName[entity.name ?? ""]!
    }

    /// `Z_ENT` numbers from 1: roots in name order, each followed depth-first by its
    /// sub-entities in name order [seen in every fixture with inheritance].
    private func numberEntities(existing: [String: Int64]) {
        // An entity the store does not know yet (a migration's new entity) takes a number after
        // every number the store has; in a new store, entities are numbered in visiting order.
        var next = (existing.values.max() ?? 0) + 1
        func visit(_ entity: NSEntityDescription, table: Table) {
            // A renamed entity keeps its old name in an existing store's Z_PRIMARYKEY [seen:
            // SampleModel_V2, where LuxuryCar is still ExpensiveSportCar].
            let known = existing[entity.name ?? ""] ?? entity.renamingIdentifier.flatMap { existing[$0] }
            let number = known ?? next
            if known == nil { next += 1 }
            let mapping = Entity(entity: entity, number: number, table: table)
            entities[ObjectIdentifier(entity)] = mapping
            entitiesByNumber[mapping.number] = mapping
            entitiesByName[entity.name ?? ""] = mapping
            ordered.append(mapping)
            let children = entity.subentities.sorted { ($0.name ?? "") < ($1.name ?? "") }
            if !children.isEmpty { table.hasSubentities = true }
            for child in children { visit(child, table: table) }
        }
        let roots = model.entities.filter { $0.superentity == nil }.sorted { ($0.name ?? "") < ($1.name ?? "") }
        for root in roots {
            let table = Table(name: "Z" + (root.name ?? "").uppercased(), root: root)
            tables.append(table)
            visit(root, table: table)
        }
    }

    private func descendants(of entity: NSEntityDescription) -> [NSEntityDescription] {
        [entity] + entity.subentities.flatMap(descendants(of:))
    }

    /// Columns for every attribute and to-one declared anywhere in the hierarchy. A name already
    /// used in the table gets a numeric suffix (`ZTITLE`, `ZTITLE1`, …).
    private func assignColumns(_ table: Table) {
        var used = UsedNames(["Z_PK", "Z_ENT", "Z_OPT"])
        var integers: [(String, SQLColumnType)] = []
        var toOnes: [(String, [(String, SQLColumnType)])] = []
        var orders: [(String, SQLColumnType)] = []
        var numbers: [(String, SQLColumnType)] = []
        var texts: [(String, SQLColumnType)] = []
        var blobs: [(String, SQLColumnType)] = []
        func unique(_ base: String) -> String { used.unique(base) }
        for entity in descendants(of: table.root) {
            let mapping = self[entity]
            let layout = entity.layout
            mapping.storage = Array(repeating: .none, count: layout.count)
            for (slot, property) in layout.properties.enumerated() where layout.isPersistent(slot) {
                // Inherited (a model archive may repeat the parent's properties in the child): the parent's column.
                if let parent = entity.superentity, let parentSlot = parent.layout.slotByName[property.name] {
                    mapping.storage[slot] = self[parent].storage[parentSlot]
                    if let order = self[parent].orderColumns[parentSlot] { mapping.orderColumns[slot] = order }
                    continue
                }
                let base = "Z" + property.name.uppercased()
                switch property {
                case let composite as NSCompositeAttributeDescription:
                    var columns: [CompositeColumn] = []
                    for leaf in composite.leaves where !leaf.attribute.isTransient {
                        let column = unique("Z" + leaf.attribute.name.uppercased())
                        let type = Self.columnType(leaf.attribute.attributeType)
                        switch type {
                        case .integer: integers.append((column, type))
                        case .varchar: texts.append((column, type))
                        case .blob: blobs.append((column, type))
                        case .float, .decimal, .timestamp: numbers.append((column, type))
                        }
                        columns.append(
                            CompositeColumn(
                                path: leaf.path, column: column, type: leaf.attribute.attributeType,
                                attribute: leaf.attribute))
                    }
                    mapping.storage[slot] = .composite(columns)
                case let attribute as NSAttributeDescription:
                    let column = unique(base)
                    let type = Self.columnType(attribute.attributeType)
                    switch type {
                    case .integer: integers.append((column, type))
                    case .varchar: texts.append((column, type))
                    case .blob: blobs.append((column, type))
                    case .float, .decimal, .timestamp: numbers.append((column, type))
                    }
                    mapping.storage[slot] = .attribute(column: column, type: attribute.attributeType)
                    // An attribute marked Indexed gets Apple's `Z<TABLE>_Z<COLUMN>_INDEX` (the objc.io
                    // Moody stores in ../shared/fixtures hold ZMOOD_ZREMOTEID_INDEX for `remoteID`).
                    if attribute.isIndexed { table.indexedColumns.append(column) }
                case let relationship as NSRelationshipDescription where !relationship.isToMany:
                    let column = unique(base)
                    var group = [(column, SQLColumnType.integer)]
                    table.indexedColumns.append(column)
                    var entityColumn: String?
                    if let destination = relationship.destinationEntity, !destination.subentities.isEmpty {
                        let number = entities[ObjectIdentifier(destination)]?.number ?? 0
                        let name = unique("Z\(number)_" + property.name.uppercased())
                        group.append((name, .integer))
                        entityColumn = name
                    }
                    toOnes.append((column, group))
                    mapping.storage[slot] = .toOne(column: column, entityColumn: entityColumn)
                    if let inverse = relationship.inverseRelationship, inverse.isToMany, inverse.isOrdered {
                        let order = unique("Z_FOK_" + property.name.uppercased())
                        orders.append((order, .integer))
                        mapping.orderColumns[slot] = order
                    }
                default:
                    continue
                }
            }
        }
        func byName(_ list: [(String, SQLColumnType)]) -> [(String, SQLColumnType)] { list.sorted { $0.0 < $1.0 } }
        table.columns =
            (byName(integers) + toOnes.sorted { $0.0 < $1.0 }.flatMap(\.1) + orders + byName(numbers) + byName(texts)
            + byName(blobs))
            .map { (name: $0.0, type: $0.1) }
    }

    /// To-many storage: through the inverse's column, or a join table.
    private func mapRelationships(_ mapping: Entity) {
        let layout = mapping.entity.layout
        for (slot, kind) in layout.kinds.enumerated() {
            guard case .toMany = kind, layout.isPersistent(slot), case .none = mapping.storage[slot] else { continue }
            let relationship = layout.relationship(at: slot)
            if let parent = mapping.entity.superentity, let parentSlot = parent.layout.slotByName[relationship.name] {
                // Inherited: the parent's storage, mapped first (entities are visited in number order).
                mapping.storage[slot] = self[parent].storage[parentSlot]
                continue
            }
            guard let destination = relationship.destinationEntity else { continue }
            let target = self[destination]
            if let inverse = relationship.inverseRelationship, !inverse.isToMany,
                let inverseSlot = destination.layout.slotByName[inverse.name],
                case .toOne(let column, _) = target.storage[inverseSlot]
            {
                mapping.storage[slot] = .toManyByInverse(
                    table: target.table.name, column: column, orderColumn: target.orderColumns[inverseSlot])
                continue
            }
            if let planned = plannedJoins[ObjectIdentifier(relationship)] { mapping.storage[slot] = planned }
        }
    }

    /// Each many-to-many's storage, by the relationship (both of a pair), decided for the whole
    /// model at once because the names of one pair depend on the pairs named before it.
    private var plannedJoins: [ObjectIdentifier: Storage] = [:]

    /// One many-to-many (or to-many without inverse), from the side that names its table.
    private struct JoinPair {
        let relationship: NSRelationshipDescription
        let source: Entity
        let inverse: NSRelationshipDescription?
        let destination: Entity
    }

    /// Names every join table (STORE-FORMAT.md, "Join tables"): `Z_<n><NAME>` after one of the pair
    /// (the relationship of the lower-numbered root entity; between equals, the later name), with a
    /// column `Z_<n><INVERSE>` of the naming side's keys and `Z_<m><NAME>` of the other's. A column
    /// name already given to another pair gets a digit, pairs taken in the order of their naming
    /// entity's name [seen: `Z_19USERS (Z_19REACTIONS, Z_23USERS)` and then `Z_15USERS
    /// (Z_15SYSTEMMESSAGES, Z_23USERS1)`]. A relationship that is its own inverse keeps the other
    /// end in the column `REFLEXIVE` (its order in `FOK_REFLEXIVE`). Where the store already has
    /// the table, its own column names are used.
    private func planJoinTables(existing: JoinTableCatalog) {
        var pairs: [JoinPair] = []
        var seen: Set<ObjectIdentifier> = []
        for mapping in ordered {
            let layout = mapping.entity.layout
            for (slot, kind) in layout.kinds.enumerated() {
                guard case .toMany = kind, layout.isPersistent(slot) else { continue }
                let relationship = layout.relationship(at: slot)
                guard relationship.entity === mapping.entity, !seen.contains(ObjectIdentifier(relationship)),
                    let destination = relationship.destinationEntity
                else { continue }
                let inverse = relationship.inverseRelationship
                // A to-many whose inverse is a stored to-one lives in the inverse's column.
                if let inverse, !inverse.isToMany, !inverse.isTransient { continue }
                seen.insert(ObjectIdentifier(relationship))
                if let inverse { seen.insert(ObjectIdentifier(inverse)) }
                let target = self[destination]
                let sourceRoot = self[mapping.table.root].number
                let destinationRoot = self[target.table.root].number
                if let inverse, inverse !== relationship,
                    destinationRoot < sourceRoot || (destinationRoot == sourceRoot && inverse.name > relationship.name)
                {
                    pairs.append(
                        JoinPair(relationship: inverse, source: target, inverse: relationship, destination: mapping))
                } else {
                    pairs.append(
                        JoinPair(relationship: relationship, source: mapping, inverse: inverse, destination: target))
                }
            }
        }
        pairs.sort {
            ($0.source.entity.name ?? "", $0.relationship.name) < ($1.source.entity.name ?? "", $1.relationship.name)
        }
        var used = UsedNames([])
        func unique(_ base: String) -> String { used.unique(base) }
        for pair in pairs {
            let relationship = pair.relationship
            let reflexive = pair.inverse === relationship
            let inverseName = pair.inverse?.name ?? relationship.name + "_INVERSE"
            // The naming side's keys, then the other side's.
            let bases = [
                "Z_\(pair.source.number)" + inverseName.uppercased(),
                reflexive ? "REFLEXIVE" : "Z_\(pair.destination.number)" + relationship.name.uppercased(),
            ]
            let candidates = [
                "Z_\(pair.source.number)" + relationship.name.uppercased(),
                pair.inverse.map { "Z_\(pair.destination.number)" + $0.name.uppercased() },
            ].compactMap { $0 }
            let orderedSide = [relationship, pair.inverse].compactMap { $0 }.first(where: \.isOrdered)
            let table: JoinTable
            if let name = candidates.first(where: { existing[$0] != nil }), let columns = existing[name],
                let found = Self.joinColumns(bases, in: columns), (found.order != nil) == (orderedSide != nil)
            {
                used.insert(found.keys + (found.order.map { [$0] } ?? []))
                table = JoinTable(name: name, columns: found.keys, orderColumn: found.order)
            } else {
                let columns = reflexive ? [unique(bases[0]), bases[1]] : bases.map(unique)
                let order = orderedSide.map { side in
                    reflexive
                        ? "FOK_REFLEXIVE"
                        : unique("Z_FOK_" + (side === relationship ? bases[1] : bases[0]).dropFirst(2))
                }
                table = JoinTable(name: candidates[0], columns: columns, orderColumn: order)
            }
            joinTables.append(table)
            plannedJoins[ObjectIdentifier(relationship)] = .join(
                table, sourceColumn: table.columns[0], destinationColumn: table.columns[1],
                orderColumn: relationship.isOrdered ? table.orderColumn : nil)
            if let inverse = pair.inverse, !reflexive {
                plannedJoins[ObjectIdentifier(inverse)] = .join(
                    table, sourceColumn: table.columns[1], destinationColumn: table.columns[0],
                    orderColumn: inverse.isOrdered ? table.orderColumn : nil)
            }
        }
    }

    /// An existing join table's key columns for the computed `bases` (the name itself, or the name
    /// with the digit a collision gave it) and its order column; `nil` when they cannot be told.
    private static func joinColumns(_ bases: [String], in columns: [String]) -> (keys: [String], order: String?)? {
        let keys = columns.filter { !$0.hasPrefix("Z_FOK_") && $0 != "FOK_REFLEXIVE" }
        var found: [String] = []
        for base in bases {
            let match =
                keys.first { $0 == base }
                ?? keys.first {
                    $0.hasPrefix(base) && !found.contains($0) && $0.dropFirst(base.count).allSatisfy(\.isNumber)
                }
            guard let match, !found.contains(match) else { return nil }
            found.append(match)
        }
        return (found, columns.first { $0.hasPrefix("Z_FOK_") || $0 == "FOK_REFLEXIVE" })
    }

    /// Apple's column type for an attribute type (STORE-FORMAT.md, "Types").
    package static func columnType(_ type: NSAttributeType) -> SQLColumnType {
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .booleanAttributeType:
            return .integer
        case .doubleAttributeType, .floatAttributeType: return .float
        case .decimalAttributeType: return .decimal
        case .dateAttributeType: return .timestamp
        case .stringAttributeType, .URIAttributeType: return .varchar
        default: return .blob
        }
    }

    // MARK: Creating

    /// The statements that create the store's tables and indexes in Apple's layout: one table per
    /// root entity (`Z_PK` its key), an index per to-one and Indexed attribute and on `Z_ENT` of a
    /// table with sub-entities, join tables keyed by their pair with the reverse pair indexed, a
    /// unique index per uniqueness constraint and an index per fetch index (STORE-FORMAT.md).
    package func createStatements() -> [SQLStatement] {
        var statements: [SQLStatement] = []
        for table in tables {
            let columns =
                [.init("Z_PK", .integer, isPrimaryKey: true), .init("Z_ENT", .integer), .init("Z_OPT", .integer)]
                + table.columns.map { SQLTableDefinition.Column($0.name, $0.type) }
            statements.append(.createTable(SQLTableDefinition(name: table.name, columns: columns)))
            for column in table.indexedColumns {
                statements.append(
                    .createIndex(
                        SQLIndexDefinition(
                            name: table.name + "_" + column + "_INDEX", table: table.name, columns: [.init(column)])))
            }
            if table.hasSubentities {
                statements.append(
                    .createIndex(
                        SQLIndexDefinition(
                            name: table.name + "_Z_ENT_INDEX", table: table.name, columns: [.init("Z_ENT")])
                    ))
            }
        }
        for join in joinTables {
            let columns = (join.columns + (join.orderColumn.map { [$0] } ?? [])).map {
                SQLTableDefinition.Column($0, .integer)
            }
            statements.append(
                .createTable(SQLTableDefinition(name: join.name, columns: columns, primaryKey: join.columns)))
            statements.append(
                .createIndex(
                    SQLIndexDefinition(
                        name: join.name + "_" + join.columns[1] + "_INDEX", table: join.name,
                        columns: join.columns.reversed().map { .init($0) })))
        }
        for mapping in ordered {
            let name = mapping.entity.name ?? ""
            for constraint in mapping.entity.uniquenessConstraints {
                let names = constraint.compactMap { ($0 as? String) ?? ($0 as? NSPropertyDescription)?.name }
                let columns = names.compactMap { column(of: $0, in: mapping) }
                guard !columns.isEmpty, columns.count == names.count else { continue }
                statements.append(
                    .createIndex(
                        SQLIndexDefinition(
                            name: "Z_\(name)_UNIQUE_" + names.joined(separator: "_"), table: mapping.table.name,
                            columns: columns.map { .init($0, order: .ascending) }, isUnique: true)))
            }
            for index in mapping.entity.indexes {
                var columns: [SQLIndexDefinition.Column] = []
                for element in index.elements {
                    guard let property = element.property?.name ?? element.propertyName,
                        let column = column(of: property, in: mapping)
                    else { continue }
                    columns.append(.init(column, order: element.isAscending ? .ascending : .descending))
                }
                guard !columns.isEmpty else { continue }
                statements.append(
                    .createIndex(
                        SQLIndexDefinition(name: "Z_\(name)_\(index.name)", table: mapping.table.name, columns: columns)
                    ))
            }
        }
        return statements
    }

    /// The column of an attribute or to-one named `property` of `mapping`'s entity, or of a
    /// composite's leaf element named by its namespaced key path (`magnitude.richter`).
    package func column(of property: String, in mapping: Entity) -> String? {
        let path = property.split(separator: ".").map(String.init)
        guard let first = path.first, let slot = mapping.entity.layout.slotByName[first] else { return nil }
        switch mapping.storage[slot] {
        case .attribute(let column, _), .toOne(let column, _): return path.count == 1 ? column : nil
        case .composite(let columns): return columns.first { $0.path == Array(path.dropFirst()) }?.column
        default: return nil
        }
    }
}

/// Names given so far in one naming space (a table's columns, the model's join-table columns): a
/// name already given gets the first free number after it (`ZTITLE`, `ZTITLE1`, …), as Apple's
/// store mapping does.
private struct UsedNames {
    private var names: Set<String>

    init(_ names: Set<String>) { self.names = names }

    mutating func insert(_ given: [String]) { names.formUnion(given) }

    mutating func unique(_ base: String) -> String {
        var name = base
        var suffix = 1
        while names.contains(name) {
            name = base + String(suffix)
            suffix += 1
        }
        names.insert(name)
        return name
    }
}
