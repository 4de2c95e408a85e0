import OpenCoreData
import OpenCoreDataSQL

/// Primary keys: `Z_MAX` of each root entity's `Z_PRIMARYKEY` row, handed out in blocks.
extension SQLiteStore {
    /// Permanent IDs from `Z_MAX` of each entity's root entity, allocated in one transaction.
    func permanentIDs(for entities: [NSEntityDescription]) throws -> [NSManagedObjectID] {
        guard !entities.isEmpty else { return [] }
        let allocation = SQLKeyAllocation(entities, schema: schema)
        var next: [Int64: Int64] = [:]
        try transaction {
            for (root, count) in allocation.counts {
                let rows = try connection.rows(SQLBookkeeping.keyMaximum, [.integer(root)])
                var max: Int64 = 0
                if case .integer(let value)? = rows.first?.first { max = value }
                try connection.run(
                    SQLBookkeeping.setKeyMaximum, [.integer(max + count), .integer(root)])
                next[root] = max + 1
            }
        }
        return zip(entities, allocation.keys(first: next)).map { objectID($0, $1) }
    }
}
