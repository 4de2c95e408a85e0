import OpenCoreData
import OpenCoreDataSQL

/// Primary keys: `Z_MAX` of each root entity's `Z_PRIMARYKEY` row, handed out in blocks.
extension SQLiteStore {
    /// Permanent IDs from `Z_MAX` of each entity's root entity, allocated in one transaction.
    func permanentIDs(for entities: [NSEntityDescription]) throws -> [NSManagedObjectID] {
        guard !entities.isEmpty else { return [] }
        var countByRoot: [Int64: Int64] = [:]
        var roots: [Int64] = []
        roots.reserveCapacity(entities.count)
        for entity in entities {
            let root = schema[entity].table.root
            let number = schema[root].number
            roots.append(number)
            countByRoot[number, default: 0] += 1
        }
        var next: [Int64: Int64] = [:]
        try transaction {
            for (root, count) in countByRoot {
                let rows = try connection.rows(SQLBookkeeping.keyMaximum, [.integer(root)])
                var max: Int64 = 0
                if case .integer(let value)? = rows.first?.first { max = value }
                try connection.run(
                    SQLBookkeeping.setKeyMaximum, [.integer(max + count), .integer(root)])
                next[root] = max + 1
            }
        }
        var ids: [NSManagedObjectID] = []
        ids.reserveCapacity(entities.count)
        for (entity, root) in zip(entities, roots) {
            let pk = next[root] ?? 1
            next[root] = pk + 1
            ids.append(objectID(entity, pk))
        }
        return ids
    }
}
