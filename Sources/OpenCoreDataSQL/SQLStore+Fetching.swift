import Foundation
import OpenCoreData

/// Fetching from an SQL store: as much of a request as SQL can say with the in-memory rules, in
/// one statement (``SQLQuery``); what it cannot say is left to the coordinator, which does it in
/// memory on the rows returned.
extension SQLStore {
    /// The answer to a fetch: a count or dictionaries computed in SQL, the IDs alone when no
    /// values are asked for, else the objects' rows (``fetchRows(_:fetch:mapping:on:)``), with
    /// what SQL left to do.
    ///
    /// - Throws: the database's error; `NSCoreDataError` (134060) for a damaged row.
    package func fetch(_ fetch: StoreFetch) throws -> StoreFetchResult {
        let request = fetch.request
        guard let entity = request.entity else { return StoreFetchResult(values: []) }
        let mapping = schema[entity]
        let query = SQLQuery(schema: schema, mapping: mapping, request: request, dialect: dialect)
        return try withReadLink(fetch.generation) { link in
            if query.isComplete, request.resultType == .countResultType {
                let count = query.count
                guard case .integer(let number)? = try link.select(count.sql, count.parameters).first?.first else {
                    return StoreFetchResult(values: [0])
                }
                return StoreFetchResult(values: [NSNumber(value: Int(number))])
            }
            if request.resultType == .dictionaryResultType, let plan = query.dictionary {
                return StoreFetchResult(values: try dictionaries(plan, request: request, on: link))
            }
            var result: StoreFetchResult
            if query.isComplete, request.resultType == .managedObjectIDResultType, !request.includesPropertyValues {
                // IDs only, as asked ("includesPropertyValues: false"): the keys, no row read.
                let identifiers = query.identifiers
                result = StoreFetchResult(
                    objectIDs: objectIDs(try link.select(identifiers.sql, identifiers.parameters), of: entity))
            } else {
                result = try fetchRows(query, fetch: fetch, mapping: mapping, on: link)
            }
            if !query.predicateInSQL { result.remaining.insert(.predicate) }
            if !query.sortInSQL { result.remaining.insert(.sort) }
            if !query.windowInSQL { result.remaining.insert(.window) }
            return result
        }
    }

    /// Each row of `query`'s statement as an ID and a snapshot.
    ///
    /// - Throws: the database's error; `NSCoreDataError` (134060) for a damaged row.
    package func fetchRows(_ query: SQLQuery, fetch: StoreFetch, mapping: SQLSchema.Entity, on link: Link) throws
        -> StoreFetchResult
    {
        var result = StoreFetchResult()
        (result.objectIDs, result.rowsOfObjectIDs) = try readRows(
            query.select.sql, query.select.parameters, fallback: mapping, on: link)
        return result
    }

    /// Each row of `sql` as an ID and a snapshot, in order (``readRow(_:fallback:fallbackPlan:space:destinations:)``
    /// with the plan, the ID space and the to-one destinations' IDs shared by all of them), each
    /// read as the connection gives it: no row is kept as values to be read a second time.
    ///
    /// - Throws: the database's error; `NSCoreDataError` (134060) for a damaged row.
    package func readRows(_ sql: String, _ parameters: [SQLValue], fallback: SQLSchema.Entity, on link: Link)
        throws -> (ids: [NSManagedObjectID], snapshots: [Snapshot])
    {
        var ids: [NSManagedObjectID] = []
        var snapshots: [Snapshot] = []
        let plan = plan(fallback)
        let (space, destinations) = (objectIDSpace, DestinationIDs())
        try link.select(sql, parameters) { row in
            let (id, snapshot) = try readRow(
                row, fallback: fallback, fallbackPlan: plan, space: space, destinations: destinations)
            ids.append(id)
            snapshots.append(snapshot)
        }
        return (ids, snapshots)
    }

    /// The slot of the to-many `relationship` in `objectID`'s entity, with the entity's mapping
    /// and the object's key; `nil` for a to-one or an object not saved.
    package func toManySlot(
        _ relationship: NSRelationshipDescription, of objectID: NSManagedObjectID
    ) -> (mapping: SQLSchema.Entity, slot: Int, pk: Int64)? {
        guard relationship.isToMany, let slot = objectID.entity.layout.slotByName[relationship.name],
            let pk = objectID.sqlKey
        else { return nil }
        return (schema[objectID.entity], slot, pk)
    }

    /// A dictionary-result fetch planned in SQL; nil values leave their key out, as Apple's do.
    ///
    /// - Throws: the database's error.
    package func dictionaries(
        _ plan: SQLQuery.DictionaryPlan, request: NSFetchRequest<NSFetchRequestResult>, on link: Link
    ) throws -> [Any] {
        var dictionaries: [[String: Any]] = []
        for row in try link.select(plan.statement.sql, plan.statement.parameters) {
            var dictionary: [String: Any] = [:]
            var index = 0
            for column in plan.columns {
                guard index < row.count else { break }
                switch column.reader {
                case .value(let type, let attribute):
                    dictionary[column.name] = SQLValues.attributeValue(row[index], type: type, attribute: attribute)
                    index += 1
                case .object(let hasEntityColumn, let destination):
                    if case .integer(let pk) = row[index] {
                        let number = hasEntityColumn && index + 1 < row.count ? row[index + 1] : nil
                        dictionary[column.name] = objectID(entity(numbered: number, kindOf: destination), pk)
                    }
                    index += hasEntityColumn ? 2 : 1
                }
            }
            dictionaries.append(dictionary)
        }
        return plan.finish(dictionaries, request: request)
    }

    /// The row of `objectID`, read by key.
    ///
    /// - Throws: `NSManagedObjectReferentialIntegrityError` (133000) when the row is gone; the
    ///   database's error.
    package func read(
        _ objectID: NSManagedObjectID, generation: QueryGeneration?,
        cachedRow: @escaping (NSManagedObjectID) -> Snapshot?
    ) throws -> StoreRead {
        let mapping = schema[objectID.entity]
        guard let pk = objectID.sqlKey,
            let row = try withReadLink(generation, { try $0.select(plan(mapping).keySQL, [.integer(pk)]).first })
        else {
            throw CoreDataError.make(
                NSManagedObjectReferentialIntegrityError, "The \(type) store has no object \(objectID).",
                [NSAffectedObjectsErrorKey: [objectID]])
        }
        return StoreRead(snapshot: try readRow(row, fallback: mapping).1)
    }

    /// A to-many's members and their rows, in the relationship's order, in one statement by the
    /// owner's key (``SQLSchema/memberRowsSelect(_:destination:owners:)``): one round trip where
    /// the IDs and then each member's row were one each. When the first member's row is cached
    /// already (objects another context holds), the IDs alone are returned and the cached rows
    /// stay. `nil` for a to-one.
    ///
    /// - Throws: the database's error; `NSCoreDataError` (134060) for a damaged row.
    package func members(
        of relationship: NSRelationshipDescription, for objectID: NSManagedObjectID, requester: any StoreRequester,
        generation: QueryGeneration?, cachedRow: @escaping (NSManagedObjectID) -> Snapshot?
    ) throws -> StoreMembers? {
        guard let (mapping, slot, pk) = toManySlot(relationship, of: objectID) else { return nil }
        guard let destinationEntity = relationship.destinationEntity, let sql = plan(mapping).memberRowsSQL[slot]
        else { return StoreMembers(ids: []) }
        let (ids, snapshots) = try withReadLink(generation) {
            try readRows(sql, [.integer(pk)], fallback: schema[destinationEntity], on: $0)
        }
        // Rows cached already (objects another context holds) stay as cached.
        if let first = ids.first, cachedRow(first) != nil { return StoreMembers(ids: ids) }
        return StoreMembers(ids: ids, rows: snapshots)
    }

    /// A to-one's destination ID or `NSNull`; a to-many's member IDs, in the relationship's order.
    ///
    /// - Throws: as ``read(_:generation:cachedRow:)``.
    package func destination(
        of relationship: NSRelationshipDescription, for objectID: NSManagedObjectID, generation: QueryGeneration?,
        cachedRow: @escaping (NSManagedObjectID) -> Snapshot?
    ) throws -> Any {
        let mapping = schema[objectID.entity]
        guard let slot = objectID.entity.layout.slotByName[relationship.name], let pk = objectID.sqlKey else {
            return NSNull()
        }
        switch mapping.storage[slot] {
        case .toOne:
            return try read(objectID, generation: generation, cachedRow: cachedRow).snapshot.values[slot] ?? NSNull()
        case .toManyByInverse, .join:
            guard let destination = relationship.destinationEntity,
                let select = schema.memberKeysSelect(mapping.storage[slot], destination: schema[destination])
            else { return NSNull() }
            // `Z_ENT` is selected only for a destination with sub-entities.
            return objectIDs(
                try withReadLink(generation) { try $0.select(text(.select(select)), [.integer(pk)]) }, of: destination)
        default:
            return NSNull()
        }
    }
}
