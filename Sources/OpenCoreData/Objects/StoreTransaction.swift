import Foundation

/// One save as a store receives it: values, never objects. The coordinator builds it from a
/// context's changes (after conflicts are resolved and permanent IDs assigned) and hands each
/// store the rows it holds; the store writes it in one transaction or not at all.
///
/// Who saved and when travel with the rows, for stores that record persistent history.
package struct StoreTransaction {
    /// One row to write: its values at the version being written.
    package struct Row {
        package let objectID: NSManagedObjectID
        /// The values to write; `snapshot.version` is the row's new version (1 for an insert,
        /// one past the version the saving context read for an update).
        package let snapshot: Snapshot
        /// The slots whose values differ from the stored row; `nil` for every slot (inserts).
        /// A store may write only these (join tables and external files are rewritten only when
        /// their slot changed).
        package let modifiedSlots: SlotSet?

        /// The entity the row belongs to.
        package var entity: NSEntityDescription { objectID.entity }

        package init(objectID: NSManagedObjectID, snapshot: Snapshot, modifiedSlots: SlotSet?) {
            self.objectID = objectID
            self.snapshot = snapshot
            self.modifiedSlots = modifiedSlots
        }
    }

    package var inserted: [Row] = []
    package var updated: [Row] = []
    package var deleted: [NSManagedObjectID] = []
    /// The saving context's `transactionAuthor`.
    package var author: String?
    /// The saving context's `name`.
    package var contextName: String?
    /// When the save began.
    package var timestamp = Date()

    package init() {}

    package var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }

    /// The snapshots written, by object ID: what the coordinator's row cache takes after the save.
    /// Keyed by ``IDKey``, not by the ID's `NSObject` hashing (a save of 100,000 objects
    /// looks each one up in this table).
    package var snapshots: [IDKey: Snapshot] {
        var snapshots: [IDKey: Snapshot] = [:]
        snapshots.reserveCapacity(inserted.count + updated.count)
        for row in inserted { snapshots[IDKey(row.objectID)] = row.snapshot }
        for row in updated { snapshots[IDKey(row.objectID)] = row.snapshot }
        return snapshots
    }
}

extension StoreTransaction {
    /// The transaction of a save's objects: inserted objects at version 1, updated ones one past
    /// the version `previousVersion` reports (else the one their context read).
    ///
    /// Each object is asked for a few objects ahead of its turn (`prefetch`), so the cache misses
    /// of reading a large save's objects overlap.
    init(
        inserted: [NSManagedObject], updated: [NSManagedObject], deleted: [NSManagedObject],
        previousVersion: (NSManagedObjectID) -> UInt64? = { _ in nil }
    ) {
        let ahead = Prefetching.distance
        self.inserted.reserveCapacity(inserted.count)
        for (index, object) in inserted.enumerated() {
            if index + ahead < inserted.count { inserted[index + ahead].prefetch() }
            self.inserted.append(
                Row(objectID: object.objectID, snapshot: object.makeSnapshot(version: 1), modifiedSlots: nil))
        }
        self.updated.reserveCapacity(updated.count)
        for (index, object) in updated.enumerated() {
            if index + ahead < updated.count { updated[index + ahead].prefetch() }
            let version = (previousVersion(object.objectID) ?? object.committed?.version ?? 0) + 1
            self.updated.append(
                Row(
                    objectID: object.objectID, snapshot: object.makeSnapshot(version: version),
                    modifiedSlots: object.changedSlots))
        }
        self.deleted = deleted.map(\.objectID)
    }
}
