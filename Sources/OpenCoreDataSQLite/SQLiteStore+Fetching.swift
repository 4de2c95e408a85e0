import OpenCoreData
import OpenCoreDataSQL

/// Fetching from the SQLite store: as much of a request as SQL can say, in one statement.
extension SQLiteStore {
    /// One SQL statement for as much of the fetch as SQL can say with the in-memory rules
    /// (``SQLQuery``); the rest is left to the coordinator.
    func fetch(_ fetch: StoreFetch) throws -> StoreFetchResult {
        try withReadConnection(fetch.generation) { try fetchOnConnection(fetch) }
    }

    private func fetchOnConnection(_ fetch: StoreFetch) throws -> StoreFetchResult {
        let request = fetch.request
        guard let entity = request.entity else { return StoreFetchResult(values: []) }
        let mapping = schema[entity]
        let query = SQLQuery(schema: schema, mapping: mapping, request: request, dialect: SQLiteDialect())
        if query.isComplete, request.resultType == .countResultType {
            let count = query.count
            let statement = try connection.prepare(count.sql)
            try statement.bind(count.parameters)
            _ = try statement.step()
            return StoreFetchResult(values: [NSNumber(value: Int(statement.int64(at: 0)))])
        }
        if request.resultType == .dictionaryResultType, let plan = query.dictionary {
            return StoreFetchResult(values: try fetchDictionaries(plan, request: request))
        }
        if request.fetchBatchSize > 0, query.isComplete, request.resultType == .managedObjectResultType {
            return try fetchInBatches(query, fetch: fetch)
        }
        if query.isComplete, request.resultType == .managedObjectIDResultType, !request.includesPropertyValues {
            // IDs only, as asked ("includesPropertyValues: false"): the keys, no row read.
            let identifiers = query.identifiers
            let statement = try connection.statement(identifiers.sql)
            try statement.bind(identifiers.parameters)
            let result = StoreFetchResult(objectIDs: try objectIDs(statement, fallback: mapping))
            statement.reset()
            return result
        }
        let statement = try connection.statement(query.select.sql)
        try statement.bind(query.select.parameters)
        var result = StoreFetchResult()
        let decoder = RowDecoder(store: self, fallback: mapping)
        let prefetches =
            request.resultType == .managedObjectResultType
            && !(request.relationshipKeyPathsForPrefetching ?? []).isEmpty
        if request.resultType == .managedObjectResultType, !prefetches {
            // Objects, each from its row: the IDs as values, made into instances only if asked.
            while try statement.step() {
                let (id, snapshot) = try decoder.readValue(statement)
                result.objectValues.append(id)
                result.rowsOfObjectIDs.append(snapshot)
            }
            // The decoder's ID space, which the values hold unretained.
            result.valuesKeptAlive = result.objectValues.first?.space
        } else {
            while try statement.step() {
                let (id, snapshot) = try decoder.read(statement)
                result.objectIDs.append(id)
                result.rowsOfObjectIDs.append(snapshot)
            }
        }
        statement.reset()
        if prefetches, let keyPaths = request.relationshipKeyPathsForPrefetching {
            var read: RowsByID = [:]
            read.reserveCapacity(result.objectIDs.count)
            for (id, snapshot) in zip(result.objectIDs, result.rowsOfObjectIDs) { read[IDKey(id)] = snapshot }
            var rows = RowsRead(cachedRow: fetch.cachedRow, rows: read)
            try prefetch(keyPaths, from: result.objectIDs, entity: entity, rows: &rows)
            result.rows = rows.rows
            result.rowsOfObjectIDs = []
        }
        if !query.predicateInSQL { result.remaining.insert(.predicate) }
        if !query.sortInSQL { result.remaining.insert(.sort) }
        if !query.windowInSQL { result.remaining.insert(.window) }
        return result
    }
}
