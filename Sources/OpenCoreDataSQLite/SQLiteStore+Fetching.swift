import OpenCoreData
import OpenCoreDataSQL

/// Fetching from the SQLite store: the rows of a fetch (``SQLStore/fetch(_:)`` decides what
/// SQL answers), read from prepared statements without arrays of values.
extension SQLiteStore {
    /// The objects or IDs of a fetch with their rows: in batches for a `fetchBatchSize`, with
    /// prefetched relationships when asked, else each row decoded straight from the statement.
    func fetchRows(_ query: SQLQuery, fetch: StoreFetch, mapping: SQLSchema.Entity, on link: SQLiteConnection) throws
        -> StoreFetchResult
    {
        let request = fetch.request
        let entity = mapping.entity
        if request.fetchBatchSize > 0, query.isComplete, request.resultType == .managedObjectResultType {
            return try fetchInBatches(query, fetch: fetch)
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
        return result
    }
}
