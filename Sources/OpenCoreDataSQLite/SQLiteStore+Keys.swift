import OpenCoreData
import OpenCoreDataSQL

/// Primary keys: `Z_MAX` of each root entity's `Z_PRIMARYKEY` row, handed out in blocks.
extension SQLiteStore {
    /// Permanent IDs from `Z_MAX` of each entity's root entity, allocated in one transaction.
    func permanentIDs(for entities: [NSEntityDescription]) throws -> [NSManagedObjectID] {
        guard !entities.isEmpty else { return [] }
        let allocation = SQLKeyAllocation(entities, schema: schema)
        var next: [Int64] = []
        next.reserveCapacity(allocation.counts.count)
        try transaction {
            for (root, count) in allocation.counts {
                let max = try connection.integer(Self.keyMaximumSQL, root) ?? 0
                let update = try connection.statement(Self.setKeyMaximumSQL)
                update.bind(int64: max + count, at: 1)
                update.bind(int64: root, at: 2)
                while try update.step() {}
                next.append(max + 1)
            }
        }
        // Each run of one entity finds the entity's layout once.
        let space = objectIDSpace
        var ids: [NSManagedObjectID] = []
        ids.reserveCapacity(entities.count)
        var last: (entity: NSEntityDescription, layout: EntityLayout)?
        for (entity, key) in zip(entities, allocation.keys(first: next)) {
            let layout: EntityLayout
            if let last, last.entity === entity {
                layout = last.layout
            } else {
                layout = entity.layout
                last = (entity, layout)
            }
            ids.append(NSManagedObjectID(layout: layout, integer: key, space: space))
        }
        return ids
    }

    /// The text of the bookkeeping statements every save that inserts runs, written once, not
    /// from the tree on each save: for a one-object save, writing the text was a large part of
    /// the work.
    private static let keyMaximumSQL = SQLiteDialect.text(SQLBookkeeping.keyMaximum)
    private static let setKeyMaximumSQL = SQLiteDialect.text(SQLBookkeeping.setKeyMaximum)
}
