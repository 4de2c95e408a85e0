import Foundation
import OpenCoreData

/// What every store over an SQL database shares, whatever the database: the layout of Apple's
/// SQLite store (``SQLSchema``), how a fetch becomes one statement and its rows objects, how a
/// save becomes rows written, versions checked and keys allocated, the metadata row and the
/// history tables. A store brings a connection type (``SQLRowRunner``), its dialect, and the
/// connection each call uses; it overrides a default only where it has a faster way of its own
/// (the SQLite store's prepared-statement reads).
///
/// A new SQL database is a connection and a dialect: ARCHITECTURE.md, "How to add a store".
package protocol SQLStore: RowStore, HistoryStore {
    /// The store's connection.
    associatedtype Link: SQLRowRunner
    /// The model's layout in the store; set when the store opens.
    var schema: SQLSchema! { get }
    /// How the store's database spells SQL.
    var dialect: any SQLDialect { get }
    /// The store's row plans, one per entity, made when first used.
    var rowPlans: SQLRowPlans { get }
    /// Runs `body` on the connection a read should use: the writer inside this thread's write
    /// transaction (so a save reads what it wrote), a query generation's own connection, or one
    /// of the store's readers.
    ///
    /// - Throws: the database's error, or `body`'s.
    func withReadLink<T>(_ generation: QueryGeneration?, _ body: (Link) throws -> T) throws -> T
    /// Runs `body` in one write transaction on the writer, or inside the one this thread already
    /// has open; nothing of it is kept when it throws. Reads `body` makes through
    /// ``withReadLink(_:_:)`` see its writes.
    ///
    /// - Throws: the database's error, or `body`'s.
    func withWriteTransaction(_ body: (Link) throws -> Void) throws
    /// Takes the store's write lock for the rest of this thread's write transaction, so no other
    /// writer changes a row between what the transaction reads and what it writes; a store whose
    /// transactions take it when they begin does nothing here.
    ///
    /// - Throws: the database's error.
    func lockForWriting() throws
    /// The metadata revision last written to (or read from) `Z_METADATA`.
    var writtenMetadataRevision: Int? { get set }
    /// The content of `Z_MODELCACHE` for `model`: the compiled model's archive (Apple's SQLite
    /// store deflates it).
    ///
    /// - Throws: when the archive cannot be made or packed.
    static func modelCache(for model: NSManagedObjectModel) throws -> Data
    /// The model a `Z_MODELCACHE` content holds.
    ///
    /// - Throws: for content that is not a model archive (a damaged or hostile store).
    static func model(fromCache bytes: [UInt8]) throws -> NSManagedObjectModel
    /// The objects or IDs, with their rows, of a fetch of objects or IDs whose statement is
    /// `query`'s; the store may read them its own faster way.
    ///
    /// - Throws: the database's error; `NSCoreDataError` (134060) for a row of no entity that can
    ///   have objects.
    func fetchRows(_ query: SQLQuery, fetch: StoreFetch, mapping: SQLSchema.Entity, on link: Link) throws
        -> StoreFetchResult
}

/// The row plans of one store's entities, made once each and shared by its threads.
package final class SQLRowPlans: @unchecked Sendable {
    private let lock = NSLock()
    private var plans: [ObjectIdentifier: SQLRowPlan] = [:]
    /// Whether binary attributes that allow external storage are written as Apple's SQLite store
    /// writes them (a marker byte, and large values in files beside the store) rather than in the
    /// row as they are.
    let externalStorage: Bool

    package init(externalStorage: Bool) { self.externalStorage = externalStorage }

    /// The plan of `mapping`'s entity.
    package func plan(_ mapping: SQLSchema.Entity, schema: SQLSchema, dialect: any SQLDialect) -> SQLRowPlan {
        lock.lock()
        defer { lock.unlock() }
        if let plan = plans[ObjectIdentifier(mapping)] { return plan }
        let plan = SQLRowPlan(mapping: mapping, schema: schema, dialect: dialect, externalStorage: externalStorage)
        plans[ObjectIdentifier(mapping)] = plan
        return plan
    }

    /// Forgets every plan (the layout changed).
    package func removeAll() {
        lock.lock()
        plans.removeAll()
        lock.unlock()
    }
}

extension NSManagedObjectID {
    /// The `Z_PK` of an object of an SQL store; `nil` for an ID that has none (a temporary one).
    package var sqlKey: Int64? {
        if case .integer(let pk) = key { return pk }
        return nil
    }
}

extension IDValue {
    /// ``NSManagedObjectID/sqlKey`` of an ID given as a value.
    package var sqlKey: Int64? {
        if case .integer(let pk) = key { return pk }
        return nil
    }
}

extension SQLStore {
    /// The compiled model's archive as it is.
    package static func modelCache(for model: NSManagedObjectModel) throws -> Data {
        CompiledModelEncoder.archive(model)
    }

    /// The model of an archive kept as it is.
    package static func model(fromCache bytes: [UInt8]) throws -> NSManagedObjectModel {
        try CompiledModelDecoder.model(from: Data(bytes))
    }

    /// Metadata set since it was last written to `Z_METADATA`, which the next save writes.
    package var metadataAwaitsSave: Bool { metadata != nil && writtenMetadataRevision != metadataRevision }

    /// The ID of row `pk` of `entity`'s table.
    package func objectID(_ entity: NSEntityDescription, _ pk: Int64) -> NSManagedObjectID {
        NSManagedObjectID(layout: entity.layout, integer: pk, space: objectIDSpace)
    }

    /// The row plan of `mapping`'s entity.
    package func plan(_ mapping: SQLSchema.Entity) -> SQLRowPlan {
        rowPlans.plan(mapping, schema: schema, dialect: dialect)
    }

    /// The text of `statement` in the store's dialect.
    package func text(_ statement: SQLStatement) -> String { SQLWriter.write(statement, dialect: dialect).sql }

    /// The entity a row's `Z_ENT` names when it is `base` or one of its sub-entities, else `base`
    /// (a damaged or foreign store).
    package func entity(numbered value: SQLValue?, kindOf base: NSEntityDescription) -> NSEntityDescription {
        guard case .integer(let number)? = value, let exact = schema.entitiesByNumber[number],
            exact.entity.isKindOf(entity: base)
        else { return base }
        return exact.entity
    }

    /// The ID and snapshot of a row whose first columns are `Z_PK, Z_ENT, Z_OPT`, followed by the
    /// table's columns (``SQLSchema/rowColumns(_:alias:)``). A caller reading many rows passes
    /// the store's ID space, found once (each answer of ``NSPersistentStore/objectIDSpace`` takes
    /// a lock), and `destinations`, so rows naming one to-one destination share its ID.
    ///
    /// - Throws: `NSCoreDataError` (134060) for a row without a key, or whose `Z_ENT` leaves it an
    ///   abstract entity (a damaged store).
    package func readRow(
        _ row: [SQLValue], fallback: SQLSchema.Entity, fallbackPlan: SQLRowPlan? = nil, space: ObjectIDSpace? = nil,
        destinations: DestinationIDs? = nil
    ) throws -> (NSManagedObjectID, Snapshot) {
        let space = space ?? objectIDSpace
        guard row.count >= 3, case .integer(let pk) = row[0] else {
            throw CoreDataError.make(NSCoreDataError, "A row of \(fallback.table.name) has no key.")
        }
        var mapping = fallback
        if case .integer(let number) = row[1], number != fallback.number, let exact = schema.entitiesByNumber[number],
            exact.entity.isKindOf(entity: fallback.entity)
        {
            mapping = exact
        }
        guard !mapping.entity.isAbstract else {
            throw CoreDataError.make(
                NSCoreDataError,
                "The row \(pk) of \(mapping.table.name) leaves it the abstract entity \(mapping.entity.name ?? "") (a damaged store)."
            )
        }
        let rowPlan = mapping === fallback ? fallbackPlan ?? plan(mapping) : plan(mapping)
        let index = rowPlan.columnIndex
        let layout = mapping.entity.layout
        var values = SlotValues(shape: layout.slotShape)
        for (slot, storage) in mapping.storage.enumerated() {
            switch storage {
            case .attribute:
                guard let column = rowPlan.attributeColumns[slot], column.position < row.count else { continue }
                SQLValues.store(
                    row[column.position], type: column.type, attribute: column.attribute, in: &values, at: slot)
            case .composite(let columns):
                values[slot] = NSCompositeAttributeDescription.value(
                    leaves: columns.map { leaf in
                        let value = index[leaf.column].flatMap { $0 < row.count ? row[$0] : nil }
                        return (
                            leaf.path,
                            value.flatMap { SQLValues.attributeValue($0, type: leaf.type, attribute: leaf.attribute) }
                        )
                    })
            case .toOne:
                guard let column = rowPlan.toOneColumns[slot], column.position < row.count,
                    case .integer(let key) = row[column.position]
                else { continue }
                var destinationLayout = column.layout
                if let position = column.entityPosition, position < row.count {
                    destinationLayout = entity(numbered: row[position], kindOf: column.destination).layout
                }
                // Set as the reference it is: through `Any`, each would be bridged to an object.
                values.setReference(
                    destinations?.id(destinationLayout, key, space: space)
                        ?? NSManagedObjectID(layout: destinationLayout, integer: key, space: space), at: slot)
            case .toManyByInverse, .join:
                values.setReference(UnresolvedRelationship.marker, at: slot)
            case .none:
                if layout.kinds[slot] == .fetched { values.setReference(UnresolvedRelationship.marker, at: slot) }
            }
        }
        var version: UInt64 = 0
        if case .integer(let stored) = row[2] { version = UInt64(max(0, stored)) }
        return (
            NSManagedObjectID(layout: mapping.entity.layout, integer: pk, space: space),
            Snapshot(values: values, version: version)
        )
    }

    /// The IDs of rows selected as `Z_PK` and, for a table of several entities, `Z_ENT`.
    package func objectIDs(_ rows: [[SQLValue]], of entity: NSEntityDescription) -> [NSManagedObjectID] {
        rows.compactMap { row in
            guard case .integer(let pk)? = row.first else { return nil }
            return objectID(self.entity(numbered: row.count > 1 ? row[1] : nil, kindOf: entity), pk)
        }
    }
}
