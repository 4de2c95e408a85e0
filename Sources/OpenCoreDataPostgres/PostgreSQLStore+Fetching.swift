import Foundation
import OpenCoreData
import OpenCoreDataSQL

/// Fetching from the PostgreSQL store: the SQL layer's translation of the request, in PostgreSQL's
/// dialect, as one statement; what SQL cannot say is left to the coordinator, as the SQLite store
/// leaves it.
extension PostgreSQLStore {
    func fetch(_ fetch: StoreFetch) throws -> StoreFetchResult {
        let request = fetch.request
        guard let entity = request.entity else { return StoreFetchResult(values: []) }
        let mapping = schema[entity]
        let query = SQLQuery(schema: schema, mapping: mapping, request: request, dialect: PostgreSQLDialect())
        return try withReadLink { link in
            if query.isComplete, request.resultType == .countResultType {
                let count = query.count
                let rows = try link.query(count.sql, count.parameters).rows
                guard case .integer(let count)? = rows.first?.first else { return StoreFetchResult(values: [0]) }
                return StoreFetchResult(values: [NSNumber(value: Int(count))])
            }
            if request.resultType == .dictionaryResultType, let plan = query.dictionary {
                return StoreFetchResult(values: try dictionaries(plan, request: request, on: link))
            }
            var result = StoreFetchResult()
            if query.isComplete, request.resultType == .managedObjectIDResultType, !request.includesPropertyValues {
                // IDs only, as asked ("includesPropertyValues: false"): the keys, no row read.
                let identifiers = query.identifiers
                for row in try link.query(identifiers.sql, identifiers.parameters).rows {
                    guard case .integer(let pk) = row[0] else { continue }
                    var found = entity
                    if case .integer(let number) = row[1], let exact = schema.entitiesByNumber[number] {
                        found = exact.entity
                    }
                    result.objectIDs.append(objectID(found, pk))
                }
                return result
            }
            let rows = try link.query(query.select.sql, query.select.parameters).rows
            result.objectIDs.reserveCapacity(rows.count)
            result.rowsOfObjectIDs.reserveCapacity(rows.count)
            for row in rows {
                let (id, snapshot) = try readRow(row, fallback: mapping)
                result.objectIDs.append(id)
                result.rowsOfObjectIDs.append(snapshot)
            }
            if !query.predicateInSQL { result.remaining.insert(.predicate) }
            if !query.sortInSQL { result.remaining.insert(.sort) }
            if !query.windowInSQL { result.remaining.insert(.window) }
            return result
        }
    }

    /// A dictionary-result fetch planned in SQL; nil values leave their key out, as Apple's do.
    private func dictionaries(
        _ plan: SQLQuery.DictionaryPlan, request: NSFetchRequest<NSFetchRequestResult>, on link: PostgresLink
    ) throws -> [Any] {
        var dictionaries: [[String: Any]] = []
        for row in try link.query(plan.statement.sql, plan.statement.parameters).rows {
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
                        var entity = destination
                        if hasEntityColumn, index + 1 < row.count, case .integer(let number) = row[index + 1],
                            let exact = schema.entitiesByNumber[number]
                        {
                            entity = exact.entity
                        }
                        dictionary[column.name] = objectID(entity, pk)
                    }
                    index += hasEntityColumn ? 2 : 1
                }
            }
            dictionaries.append(dictionary)
        }
        return plan.finish(dictionaries, request: request)
    }

    func read(
        _ objectID: NSManagedObjectID, generation: QueryGeneration?,
        cachedRow: @escaping (NSManagedObjectID) -> Snapshot?
    ) throws -> StoreRead {
        let mapping = schema[objectID.entity]
        guard let pk = Self.primaryKey(objectID),
            let row = try withReadLink({ link in
                try link.query(
                    PostgreSQLDialect.text(.select(schema.rowSelect(mapping.table, keys: 1))), [.integer(pk)]
                ).rows.first
            })
        else {
            throw CoreDataError.make(
                NSManagedObjectReferentialIntegrityError, "The PostgreSQL store has no object \(objectID).",
                [NSAffectedObjectsErrorKey: [objectID]])
        }
        return StoreRead(snapshot: try readRow(row, fallback: mapping).1)
    }

    /// A to-one's destination ID or `NSNull`; a to-many's member IDs, in the relationship's order.
    func destination(
        of relationship: NSRelationshipDescription, for objectID: NSManagedObjectID, generation: QueryGeneration?,
        cachedRow: @escaping (NSManagedObjectID) -> Snapshot?
    ) throws -> Any {
        let mapping = schema[objectID.entity]
        guard let slot = objectID.entity.layout.slotByName[relationship.name], let pk = Self.primaryKey(objectID) else {
            return NSNull()
        }
        switch mapping.storage[slot] {
        case .toOne:
            return try read(objectID, generation: generation, cachedRow: cachedRow).snapshot.values[slot] ?? NSNull()
        case .toManyByInverse, .join:
            guard let destinationEntity = relationship.destinationEntity,
                let select = schema.memberKeysSelect(mapping.storage[slot], destination: schema[destinationEntity])
            else { return NSNull() }
            let rows = try withReadLink { link in
                try link.query(PostgreSQLDialect.text(.select(select)), [.integer(pk)]).rows
            }
            return rows.compactMap { row -> NSManagedObjectID? in
                guard case .integer(let key) = row[0] else { return nil }
                var entity = destinationEntity
                // `Z_ENT` is selected only for a destination with sub-entities.
                if row.count > 1, case .integer(let number) = row[1],
                    let stored = schema.entitiesByNumber[number]?.entity,
                    stored.isKindOf(entity: destinationEntity)
                {
                    entity = stored
                }
                return self.objectID(entity, key)
            }
        default:
            return NSNull()
        }
    }
}
