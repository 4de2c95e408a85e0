import Foundation
import OpenCoreData

/// What in-place migration asks a SQL store's database beside its rows: the catalog.
package protocol SQLCatalog: SQLRowRunner {
    /// The indexes of `table` that a statement created (not those backing its primary key).
    ///
    /// - Throws: the database's error.
    func createdIndexes(of table: String) throws -> [String]
    /// The names of the triggers on `table`.
    ///
    /// - Throws: the database's error.
    func triggers(on table: String) throws -> [String]
}

/// The statements that move a store from one schema to another, worked out before any runs; it
/// refuses, naming what, a change it does not make yet.
package struct SQLMigrationPlan {
    /// Marks a refusal of in-place migration for a change it does not make (not a failure of the
    /// data): the store may then migrate another way (the SQLite store through the migration
    /// manager).
    package static let inPlaceUnsupportedKey = "OpenCoreDataInPlaceUnsupported"

    package let source: SQLSchema
    package let destination: SQLSchema
    /// Destination tables rebuilt from a source table: destination table → source table.
    private var rebuilt: [(table: SQLSchema.Table, from: String)] = []
    /// The mapped entities: destination → source.
    private var pairs: [(destination: SQLSchema.Entity, source: SQLSchema.Entity)] = []
    /// Join tables of the destination filled from another storage of the source, by name.
    private var joinFills: [String: JoinFill] = [:]

    /// Where the rows of a destination join table come from.
    private enum JoinFill {
        /// A to-one that became a to-many: its column (with the inverse's order column, when the
        /// inverse is an ordered to-many) on the source table.
        case toOne(
            join: SQLSchema.JoinTable, owner: String, related: String, order: String?, table: String, column: String,
            sourceOrder: String?, numbers: [Int64])
        /// A join table of another name or shape: its rows, column for column.
        case join(columns: [String], from: String, sourceColumns: [String])
    }
    /// Per destination entity: destination property → the source property it reads.
    private let sources: [String: [String: String?]]
    private let url: URL?

    /// The plan for `mapping` between the two schemas.
    ///
    /// - Throws: `NSMigrationError` (134110) marked ``inPlaceUnsupportedKey`` for a change it
    ///   does not make yet.
    package init(source: SQLSchema, destination: SQLSchema, mapping: NSMappingModel, url: URL?) throws {
        self.source = source
        self.destination = destination
        self.sources = Self.propertySources(mapping)
        self.url = url
        for entityMapping in mapping.entityMappings {
            guard let from = entityMapping.sourceEntityName.flatMap({ source.entitiesByName[$0] }),
                let to = entityMapping.destinationEntityName.flatMap({ destination.entitiesByName[$0] })
            else { continue }
            guard from.number == to.number else {
                throw unsupported("\(to.entity.name ?? "") would change its entity number")
            }
            pairs.append((to, from))
        }
        for table in destination.tables {
            let feeding = Set(pairs.filter { $0.destination.table === table }.map(\.source.table.name))
            guard feeding.count <= 1 else {
                throw unsupported(
                    "the table \(table.name) would take rows from \(feeding.sorted().joined(separator: " and "))")
            }
            if let from = feeding.first { rebuilt.append((table, from)) }
        }
        try checkRelationships()
    }

    /// The plan of the mapping inferred between `source` and `destination`, whose entities keep
    /// the store's `numbers`.
    ///
    /// - Throws: `NSMigrationMissingMappingModelError` (134140) when no mapping can be inferred
    ///   (the inference error under `NSUnderlyingErrorKey`); `NSMigrationError` (134110) marked
    ///   ``inPlaceUnsupportedKey`` for a change the plan does not make yet.
    package static func inferred(
        from source: NSManagedObjectModel, to destination: NSManagedObjectModel, numbers: [String: Int64],
        joinTables: SQLSchema.JoinTableCatalog, url: URL?
    ) throws -> SQLMigrationPlan {
        let mapping: NSMappingModel
        do {
            mapping = try NSMappingModel.inferredMappingModel(forSourceModel: source, destinationModel: destination)
        } catch {
            throw CoreDataError.make(
                NSMigrationMissingMappingModelError, "Can't find mapping model for migration.",
                [NSURLErrorKey: url as Any, NSUnderlyingErrorKey: error])
        }
        return try SQLMigrationPlan(
            source: SQLSchema(model: source, numbers: numbers, joinTables: joinTables),
            destination: SQLSchema(model: destination, numbers: numbers, joinTables: joinTables), mapping: mapping,
            url: url)
    }

    /// The model that wrote a store: `cached`, the model the store keeps, when it matches the
    /// store's version hashes, else the version among the program's models that does.
    ///
    /// - Throws: `NSMigrationMissingSourceModelError` (134130) when neither is found.
    package static func sourceModel(cached: NSManagedObjectModel?, metadata: [String: Any], url: URL?) throws
        -> NSManagedObjectModel
    {
        if let cached, cached.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) { return cached }
        if let found = NSManagedObjectModel.mergedModel(from: ModelVersions.programBundles, forStoreMetadata: metadata)
        {
            return found
        }
        throw CoreDataError.make(
            NSMigrationMissingSourceModelError, "Can't find model for source store.", [NSURLErrorKey: url as Any])
    }

    /// The join tables the store holds, with their columns in order: a store's own names are the
    /// truth (Apple's may carry a digit where a name was taken, or name a pair from its other side).
    ///
    /// - Throws: the database's error.
    package static func joinTables(on runner: some SQLRowRunner, _ dialect: any SQLDialect) throws
        -> SQLSchema.JoinTableCatalog
    {
        guard let query = dialect.joinTableColumnsQuery else { return [:] }
        var catalog: SQLSchema.JoinTableCatalog = [:]
        for row in try runner.select(query, []) {
            guard row.count == 2, case .text(let table) = row[0], case .text(let column) = row[1] else { continue }
            catalog[table, default: []].append(column)
        }
        return catalog
    }

    /// The entity numbers `Z_PRIMARYKEY` holds, by name (history's system entities left out).
    ///
    /// - Throws: the database's error.
    package static func entityNumbers(on runner: some SQLRowRunner, _ dialect: any SQLDialect) throws -> [String: Int64]
    {
        var numbers: [String: Int64] = [:]
        for row in try runner.select(SQLWriter.write(SQLBookkeeping.entities, dialect: dialect).sql, []) {
            guard case .integer(let number) = row[0], case .text(let name) = row[1], number < SQLHistory.changeEntity
            else { continue }
            numbers[name] = number
        }
        return numbers
    }

    /// Runs the plan's statements in order, inside the caller's transaction.
    ///
    /// - Throws: the errors of ``statements(checking:dialect:)``; `NSMigrationError` (134110)
    ///   naming the step that failed, the database's error under `NSUnderlyingErrorKey`. The
    ///   caller rolls the transaction back.
    package func run(on catalog: some SQLCatalog, dialect: any SQLDialect, url: URL?) throws {
        for (statement, context) in try statements(checking: catalog, dialect: dialect) {
            do {
                let (sql, parameters) = SQLWriter.write(statement, dialect: dialect)
                try catalog.change(sql, parameters)
            } catch {
                throw CoreDataError.make(
                    NSMigrationError, "The migration failed while \(context).",
                    [NSURLErrorKey: url as Any, NSUnderlyingErrorKey: error])
            }
        }
    }

    private func unsupported(_ what: String) -> NSError {
        CoreDataError.make(
            NSMigrationError, "In-place migration cannot make this change yet: \(what).",
            [NSURLErrorKey: url as Any, "reason": what, Self.inPlaceUnsupportedKey: true])
    }

    /// Relationships are kept where they are stored the same way in both schemas (a to-one's
    /// column, a join table of the same name), move to a join table from a to-one's column or
    /// another join table, or are new; anything else is refused.
    private mutating func checkRelationships() throws {
        // Sides whose source is the to-many of a pair (stored through its inverse's column) wait
        // until the other side, stored in a column, has said how its join table is filled.
        var waiting: [(SQLSchema.Entity, SQLSchema.Entity, Int)] = []
        for (to, from) in pairs {
            for slot in to.storage.indices {
                if try !checkSide(to, from, slot, waited: false) { waiting.append((to, from, slot)) }
            }
        }
        for (to, from, slot) in waiting { _ = try checkSide(to, from, slot, waited: true) }
    }

    /// Checks one destination slot against the source property it comes from, recording how a
    /// join table is filled; false when it has to wait for the other side of its pair.
    private mutating func checkSide(_ to: SQLSchema.Entity, _ from: SQLSchema.Entity, _ slot: Int, waited: Bool) throws
        -> Bool
    {
        let storage = to.storage[slot]
        let name = to.entity.layout.names[slot]
        guard let sourceName = propertySources(of: to.entity.name ?? "")[name] ?? nil,
            let sourceSlot = from.entity.layout.slotByName[sourceName]
        else { return true }
        let old = from.storage[sourceSlot]
        switch (storage, old) {
        case (.attribute, .attribute), (.composite, .composite), (.none, _), (_, .none),
            (.toManyByInverse, .toManyByInverse):
            break
        case (.toOne(_, let entityColumn), .toOne(_, let oldEntityColumn))
        where (entityColumn == nil) == (oldEntityColumn == nil)
            && (to.orderColumns[slot] == nil) == (from.orderColumns[sourceSlot] == nil):
            break
        case (.join(let table, _, _, _), .join(let oldTable, _, _, _))
        where table.name == oldTable.name && table.columns == oldTable.columns
            && (table.orderColumn == nil) == (oldTable.orderColumn == nil):
            break
        case (.join(let table, let owner, let related, let order), .join(let oldTable, let oldOwner, let oldRelated, _))
        where order == nil && table.columns.count == 2 && oldTable.columns.count == 2 && table.name != oldTable.name:
            // Renamed or reshaped: the rows move column for column (an order column the
            // source does not have stays empty).
            if joinFills[table.name] == nil {
                joinFills[table.name] = .join(
                    columns: [owner, related] + (table.orderColumn.map { [$0] } ?? []),
                    from: oldTable.name,
                    sourceColumns: [oldOwner, oldRelated] + (oldTable.orderColumn.map { [$0] } ?? []))
            }
        case (.join(let table, let owner, let related, nil), .toOne(let column, nil))
        where table.columns.count == 2:
            // A to-one that became a to-many (its inverse a to-many already): one join row
            // per non-empty column, in the inverse's order when that is ordered.
            if joinFills[table.name] == nil {
                let numbers = pairs.filter { $0.source.table === from.table }.map(\.source.number)
                joinFills[table.name] = .toOne(
                    join: table, owner: owner, related: related, order: table.orderColumn,
                    table: from.table.name, column: column, sourceOrder: from.orderColumns[sourceSlot],
                    numbers: numbers)
            }
        case (.join(let table, _, _, _), _) where joinFills[table.name] != nil:
            break  // the other side of the pair fills it
        case (.join, .toManyByInverse) where !waited:
            return false
        default:
            throw unsupported(
                "\(to.entity.name ?? "").\(name) is stored differently than \(from.entity.name ?? "").\(sourceName)")
        }
        return true
    }

    /// Destination property → the source property it reads (nil: new), from the entity mapping.
    private func propertySources(of entity: String) -> [String: String?] { sources[entity] ?? [:] }

    /// Per destination entity, ``propertySources(of:)``, worked out once.
    private static func propertySources(_ mapping: NSMappingModel) -> [String: [String: String?]] {
        var result: [String: [String: String?]] = [:]
        for entityMapping in mapping.entityMappings {
            guard let entity = entityMapping.destinationEntityName, result[entity] == nil else { continue }
            var properties: [String: String?] = [:]
            for property in (entityMapping.attributeMappings ?? []) + (entityMapping.relationshipMappings ?? []) {
                properties[property.name ?? ""] = property.valueExpression?.arguments?.first?.constantValue as? String
            }
            result[entity] = properties
        }
        return result
    }

    private static func staging(_ table: String) -> String { "Z_MIGRATING_" + table }

    /// The statements, in order, each with what it does (for an error); `catalog` answers the
    /// checks that need the data (a required value missing, written in `dialect`) and the indexes
    /// and triggers of the tables rebuilt.
    ///
    /// - Throws: `NSMigrationError` (134110): a table with triggers (marked
    ///   ``inPlaceUnsupportedKey``), or a required value some row lacks (the validation error
    ///   under `NSUnderlyingErrorKey`); the database's error.
    package func statements(checking catalog: some SQLCatalog, dialect: any SQLDialect) throws -> [(
        SQLStatement, String
    )] {
        var statements: [(SQLStatement, String)] = []
        let sourceTables = Set(source.tables.map(\.name))
        let fed = Set(rebuilt.map(\.from))
        // Triggers (derived attributes, persistent history) would be lost with a rebuilt table.
        for table in source.tables.map(\.name) where fed.contains(table) {
            guard try catalog.triggers(on: table).isEmpty else { throw unsupported("the table \(table) has triggers") }
        }
        // Tables that feed a rebuilt one are moved aside, without their indexes.
        for table in source.tables.map(\.name) where fed.contains(table) {
            for index in try catalog.createdIndexes(of: table) {
                statements.append((.dropIndex(index), "dropping the index \(index)"))
            }
            statements.append((.renameTable(table, to: Self.staging(table)), "moving \(table) aside"))
        }
        // Source tables nothing reads any more (every destination table is created anew).
        let keptJoins = Set(destination.joinTables.map(\.name))
        for table in sourceTables.subtracting(fed).sorted() {
            statements.append((.dropTable(table), "dropping \(table)"))
        }
        // The destination's tables: rebuilt ones and new ones (tables it shares unchanged with the
        // source are rebuilt too: their entities' columns may have moved).
        let existingJoins = Set(source.joinTables.map(\.name))
        let created = Set(destination.tables.map(\.name)).union(keptJoins.subtracting(existingJoins))
        for statement in destination.createStatements() {
            switch statement {
            case .createTable(let table) where created.contains(table.name):
                statements.append((statement, "creating \(table.name)"))
            case .createIndex(let index) where created.contains(index.table):
                statements.append((statement, "creating the index \(index.name)"))
            default:
                continue
            }
        }
        for (table, from) in rebuilt {
            try checkRequiredValues(table, from: from, catalog, dialect)
            let markers = try externalMarkers(table, from: from, catalog, dialect)
            statements.append(
                (
                    copy(into: table, from: Self.staging(from), markers: markers),
                    "copying the rows of \(from) into \(table.name)"
                ))
        }
        for (name, fill) in joinFills.sorted(by: { $0.key < $1.key }) {
            statements.append((self.fill(name, fill), "filling \(name)"))
        }
        for from in fed.sorted() {
            statements.append((.dropTable(Self.staging(from)), "dropping the old \(from)"))
        }
        // Join tables the destination does not keep, once their rows have moved.
        for join in source.joinTables where !keptJoins.contains(join.name) {
            statements.append((.dropTable(join.name), "dropping \(join.name)"))
        }
        statements += bookkeeping()
        return statements
    }

    /// The `INSERT … SELECT` that fills the destination join table `name`.
    private func fill(_ name: String, _ fill: JoinFill) -> SQLStatement {
        switch fill {
        case .toOne(_, let owner, let related, let order, let table, let column, let sourceOrder, let numbers):
            var columns = [owner, related]
            var values: [SQLExpression] = [.column(table: nil, name: "Z_PK"), .column(table: nil, name: column)]
            if let order {
                columns.append(order)
                values.append(sourceOrder.map { .column(table: nil, name: $0) } ?? .parameter(.null))
            }
            let staging = Self.staging(table)
            let select = SQLSelect(
                columns: values, from: .table(staging, alias: staging),
                filter: .and([
                    .isNotNull(.column(table: nil, name: column)),
                    .inList(.column(table: nil, name: "Z_ENT"), numbers.map { .integer($0) }),
                ]))
            return .insertSelect(table: name, columns: columns, select: select)
        case .join(let columns, let from, let sourceColumns):
            let values = columns.indices.map { index -> SQLExpression in
                index < sourceColumns.count ? .column(table: nil, name: sourceColumns[index]) : .parameter(.null)
            }
            return .insertSelect(
                table: name, columns: columns, select: SQLSelect(columns: values, from: .table(from, alias: from)))
        }
    }

    /// How a binary column's values change when its attribute starts or stops allowing external
    /// storage, in a database that marks such values (``SQLDialect/marksExternalBinaryData``).
    private enum ExternalMarker {
        /// The inline marker goes before each value.
        case add
        /// The inline marker is taken off each value that has it.
        case remove
    }

    /// A destination column, for the rows of one source entity.
    private struct MarkerKey: Hashable {
        let column: String
        let entity: Int64
    }

    /// The destination columns of `table` whose attribute changes its external storage, and what
    /// the values of each source entity's rows need.
    ///
    /// A column that gains the option keeps its values as they are when every one already starts
    /// with a marker byte (a store an earlier version of this module wrote before the option took
    /// part in version hashes); one that loses it refuses in-place migration when a value lives
    /// in a file, so the migration manager moves it into the column.
    ///
    /// - Throws: `NSMigrationError` (134110) marked ``inPlaceUnsupportedKey``; the database's error.
    private func externalMarkers(
        _ table: SQLSchema.Table, from source: String, _ catalog: some SQLCatalog, _ dialect: any SQLDialect
    ) throws -> [MarkerKey: ExternalMarker] {
        guard dialect.marksExternalBinaryData else { return [:] }
        let inline = SQLExpression.parameter(.blob([1]))
        let file = SQLExpression.parameter(.blob([2]))
        func count(_ column: String, _ entity: Int64, _ condition: SQLExpression) throws -> Bool {
            let select = SQLSelect(
                columns: [.aggregate(.count, nil)], from: .table(source, alias: "t0"),
                filter: .and([
                    .compare(.column("t0", "Z_ENT"), .equal, .integer(entity)), .isNotNull(.column("t0", column)),
                    condition,
                ]))
            let (sql, parameters) = SQLWriter.write(.select(select), dialect: dialect)
            return try catalog.select(sql, parameters).first?.first != .integer(0)
        }
        var markers: [MarkerKey: ExternalMarker] = [:]
        for (to, from) in pairs where to.table === table {
            let mapped = propertySources(of: to.entity.name ?? "")
            for (slot, storage) in to.storage.enumerated() {
                guard case .attribute(let column, .binaryDataAttributeType) = storage,
                    let attribute = to.entity.layout.properties[slot] as? NSAttributeDescription,
                    let sourceSlot = (mapped[attribute.name] ?? nil).flatMap({ from.entity.layout.slotByName[$0] }),
                    case .attribute(let oldColumn, .binaryDataAttributeType) = from.storage[sourceSlot],
                    let old = from.entity.layout.properties[sourceSlot] as? NSAttributeDescription,
                    old.allowsExternalBinaryDataStorage != attribute.allowsExternalBinaryDataStorage
                else { continue }
                let first = SQLExpression.blobSlice(.column("t0", oldColumn), from: 1, length: 1)
                if attribute.allowsExternalBinaryDataStorage {
                    if try count(oldColumn, from.number, .not(.inList(first, [inline, file]))) {
                        markers[MarkerKey(column: column, entity: from.number)] = .add
                    }
                } else {
                    if try count(oldColumn, from.number, .compare(first, .equal, file)) {
                        throw unsupported(
                            "\(to.entity.name ?? "").\(attribute.name) no longer allows external storage and some "
                                + "values are in files")
                    }
                    markers[MarkerKey(column: column, entity: from.number)] = .remove
                }
            }
        }
        return markers
    }

    /// `INSERT INTO table (…) SELECT … FROM staging WHERE Z_ENT IN (…)`: the rows of the mapped
    /// entities, each destination column from the source column its property comes from (with the
    /// external-storage marker `markers` says, by column and source entity).
    private func copy(into table: SQLSchema.Table, from staging: String, markers: [MarkerKey: ExternalMarker])
        -> SQLStatement
    {
        let members = pairs.filter { $0.destination.table === table }
        var columns = ["Z_PK", "Z_ENT", "Z_OPT"]
        var values: [SQLExpression] = [
            .column(table: nil, name: "Z_PK"), .column(table: nil, name: "Z_ENT"), .column(table: nil, name: "Z_OPT"),
        ]
        for column in table.columns {
            var whens: [SQLWhen] = []
            for (to, from) in members {
                if var value = value(of: column.name, in: to, from: from) {
                    let inline = SQLExpression.parameter(.blob([1]))
                    switch markers[MarkerKey(column: column.name, entity: from.number)] {
                    case .add?: value = .blobConcat(inline, value)
                    case .remove?:
                        value = .caseOf(
                            .blobSlice(value, from: 1, length: 1),
                            [SQLWhen(inline, then: .blobSlice(value, from: 2, length: nil))], otherwise: value)
                    case nil: break
                    }
                    whens.append(SQLWhen(.integer(from.number), then: value))
                }
            }
            columns.append(column.name)
            if whens.count == members.count, let first = whens.first, whens.allSatisfy({ $0.result == first.result }) {
                values.append(first.result)
            } else if whens.isEmpty {
                values.append(.parameter(.null))
            } else {
                values.append(.caseOf(.column(table: nil, name: "Z_ENT"), whens, otherwise: nil))
            }
        }
        let select = SQLSelect(
            columns: values, from: .table(staging, alias: staging),
            filter: .inList(.column(table: nil, name: "Z_ENT"), members.map { .integer($0.source.number) }))
        return .insertSelect(table: table.name, columns: columns, select: select)
    }

    /// The value of destination `column` for the rows of `to` (migrated from `from`): the source
    /// column of the property it comes from, its default when it is new (or, for a required
    /// attribute, when the source has none); nil when `to` does not use the column.
    private func value(of column: String, in to: SQLSchema.Entity, from: SQLSchema.Entity) -> SQLExpression? {
        let mapped = propertySources(of: to.entity.name ?? "")
        for (slot, storage) in to.storage.enumerated() {
            let name = to.entity.layout.names[slot]
            let sourceSlot = (mapped[name] ?? nil).flatMap { from.entity.layout.slotByName[$0] }
            let old = sourceSlot.map { from.storage[$0] }
            switch storage {
            case .attribute(let own, let type) where own == column:
                let attribute = to.entity.layout.properties[slot] as? NSAttributeDescription
                let fallback = attribute?.defaultValue.map {
                    SQLExpression.parameter(SQLValues.column($0, type: type, attribute: attribute))
                }
                guard case .attribute(let oldColumn, _)? = old else { return fallback ?? .parameter(.null) }
                let copied = SQLExpression.column(table: nil, name: oldColumn)
                if let fallback, attribute?.isOptional == false { return .coalesce([copied, fallback]) }
                return copied
            case .composite(let leaves):
                guard let leaf = leaves.first(where: { $0.column == column }) else { continue }
                // A leaf keeps its value when the source composite has an element at the same path.
                if case .composite(let oldLeaves)? = old, let oldLeaf = oldLeaves.first(where: { $0.path == leaf.path })
                {
                    return .column(table: nil, name: oldLeaf.column)
                }
                return leaf.attribute.defaultValue.map {
                    .parameter(SQLValues.column($0, type: leaf.type, attribute: leaf.attribute))
                } ?? .parameter(.null)
            case .toOne(let own, let entityColumn):
                guard case .toOne(let oldColumn, let oldEntityColumn)? = old else {
                    if own == column || entityColumn == column || to.orderColumns[slot] == column {
                        return .parameter(.null)
                    }
                    continue
                }
                if own == column { return .column(table: nil, name: oldColumn) }
                if let entityColumn, entityColumn == column, let oldEntityColumn {
                    return .column(table: nil, name: oldEntityColumn)
                }
                if let order = to.orderColumns[slot], order == column,
                    let oldOrder = sourceSlot.flatMap({ from.orderColumns[$0] })
                {
                    return .column(table: nil, name: oldOrder)
                }
            default:
                continue
            }
        }
        return nil
    }

    /// A required attribute with no default whose value some migrated row lacks: Apple's
    /// validation error (1570) under a migration error, before anything is written.
    private func checkRequiredValues(
        _ table: SQLSchema.Table, from staging: String, _ catalog: some SQLCatalog, _ dialect: any SQLDialect
    ) throws {
        for (to, from) in pairs where to.table === table {
            let mapped = propertySources(of: to.entity.name ?? "")
            for (slot, storage) in to.storage.enumerated() {
                guard case .attribute = storage,
                    let attribute = to.entity.layout.properties[slot] as? NSAttributeDescription,
                    !attribute.isOptional, attribute.defaultValue == nil
                else { continue }
                let sourceSlot = (mapped[attribute.name] ?? nil).flatMap { from.entity.layout.slotByName[$0] }
                var missing = true
                if let sourceSlot, case .attribute(let oldColumn, _) = from.storage[sourceSlot] {
                    let count = SQLSelect(
                        columns: [.aggregate(.count, nil)], from: .table(staging, alias: "t0"),
                        filter: .and([
                            .compare(.column("t0", "Z_ENT"), .equal, .integer(from.number)),
                            .not(.isNotNull(.column("t0", oldColumn))),
                        ]))
                    let sql = SQLWriter.write(.select(count), dialect: dialect).sql
                    missing = try catalog.select(sql, []).first?.first != .integer(0)
                }
                guard missing else { continue }
                let validation = CoreDataError.make(
                    NSValidationMissingMandatoryPropertyError,
                    "\(to.entity.name ?? "").\(attribute.name) is required and some rows have no value for it.",
                    [NSValidationKeyErrorKey: attribute.name])
                throw CoreDataError.make(
                    NSMigrationError, "The migration failed: a required value is missing.",
                    [NSURLErrorKey: url as Any, NSUnderlyingErrorKey: validation])
            }
        }
    }

    /// `Z_PRIMARYKEY`: rows for new entities, none for removed ones, each entity's parent.
    private func bookkeeping() -> [(SQLStatement, String)] {
        var statements: [(SQLStatement, String)] = []
        let kept = Set(destination.ordered.map(\.number))
        for entity in source.ordered where !kept.contains(entity.number) {
            statements.append(
                (
                    .delete(
                        table: "Z_PRIMARYKEY",
                        filter: .compare(.column(table: nil, name: "Z_ENT"), .equal, .integer(entity.number))),
                    "forgetting the entity \(entity.entity.name ?? "")"
                ))
        }
        let known = Set(source.ordered.map(\.number))
        for entity in destination.ordered {
            let parent = entity.entity.superentity.map { destination[$0].number } ?? 0
            if known.contains(entity.number) {
                statements.append(
                    (
                        .update(
                            table: "Z_PRIMARYKEY", set: [SQLAssignment("Z_SUPER", .integer(parent))],
                            filter: .compare(.column(table: nil, name: "Z_ENT"), .equal, .integer(entity.number))),
                        "recording the parent of \(entity.entity.name ?? "")"
                    ))
            } else {
                statements.append(
                    (
                        .insert(
                            SQLInsert(
                                table: "Z_PRIMARYKEY", columns: ["Z_ENT", "Z_NAME", "Z_SUPER", "Z_MAX"],
                                values: [
                                    .integer(entity.number), .parameter(.text(entity.entity.name ?? "")),
                                    .integer(parent),
                                    .integer(0),
                                ])),
                        "recording the entity \(entity.entity.name ?? "")"
                    ))
            }
        }
        return statements
    }
}
