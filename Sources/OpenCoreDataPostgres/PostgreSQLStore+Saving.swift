import Foundation
import OpenCoreData
import OpenCoreDataSQL

/// Keys and the saves that need no transaction of their own: each statement sent to the server is
/// a round trip, and a save is often one object.
extension PostgreSQLStore {
    /// Keys reserved ahead, beyond what a save asked for, when the reservation commits on its own.
    static let keyBlock: Int64 = 64

    /// New permanent IDs from `Z_MAX` of each entity's root entity. A reservation runs on its own
    /// (committed at once, so `Z_PRIMARYKEY`'s row is locked for one statement, not for the whole
    /// save that asked) and takes ``keyBlock`` keys at least, the rest kept for the next saves of
    /// this store; inside a write transaction that has already sent statements it takes exactly
    /// the keys asked for, as its reservation may roll back with the transaction.
    ///
    /// - Throws: `NSPersistentStoreSaveError` (134030) when `Z_PRIMARYKEY` has no row for a root
    ///   entity; the server's error.
    func permanentIDs(for entities: [NSEntityDescription]) throws -> [NSManagedObjectID] {
        guard !entities.isEmpty else { return [] }
        let allocation = SQLKeyAllocation(entities, schema: schema)
        var first: [Int64] = []
        first.reserveCapacity(allocation.counts.count)
        // The writer's lock guards the spare keys, and is the lock a reservation takes anyway.
        writer.lock.lock()
        defer { writer.lock.unlock() }
        for (root, count) in allocation.counts {
            if let spare = spareKeys[root], spare.last - spare.next + 1 >= count {
                first.append(spare.next)
                spareKeys[root] = (spare.next + count, spare.last)
                continue
            }
            var reserved = count
            let result = try writer.queryBeforeTransaction(text(SQLBookkeeping.reserveKeys)) { onItsOwn in
                if onItsOwn { reserved = max(count, Self.keyBlock) }
                return [.integer(reserved), .integer(root)]
            }
            guard case .integer(let maximum)? = result.rows.first?.first else {
                throw CoreDataError.make(
                    NSPersistentStoreSaveError, "The store's Z_PRIMARYKEY has no row for entity \(root).")
            }
            first.append(maximum - reserved + 1)
            if reserved > count { spareKeys[root] = (maximum - reserved + 1 + count, maximum) }
        }
        return zip(entities, allocation.keys(first: first)).map { objectID($0, $1) }
    }

    /// Saves one inserted object as one statement that commits on its own — the insert, and the
    /// notification to the store's other coordinators in the same statement — when nothing else
    /// makes the save a transaction: no history to record, no metadata to write, no update or
    /// delete (which would take the store's lock and check versions), no join-table rows, and no
    /// statement of the save's write transaction sent yet (a uniqueness check reads inside it).
    /// Returns whether it saved.
    ///
    /// - Throws: the server's error — nothing is kept.
    func saveOnItsOwn(_ transaction: StoreTransaction) throws -> Bool {
        guard !isReadOnly, !tracksHistory, !metadataAwaitsSave, transaction.updated.isEmpty,
            transaction.deleted.isEmpty, transaction.inserted.count == 1, let row = transaction.inserted.first,
            schema[row.entity].toManyWriteSlots.isEmpty
        else { return false }
        writer.lock.lock()
        defer { writer.lock.unlock() }
        guard !writer.transactionHasBegun else { return false }
        let (insert, values) = try rowStatement(row, insert: true)
        let dialect = PostgreSQLDialect()
        let sql =
            "WITH \(dialect.quote("saved")) AS (\(insert) RETURNING 1) SELECT pg_notify("
            + "\(dialect.placeholder(values.count + 1)), \(dialect.placeholder(values.count + 2))) FROM "
            + dialect.quote("saved")
        _ = try writer.queryBeforeTransaction(sql) { _ in values + [.text(channel), .text(origin)] }
        return true
    }
}
