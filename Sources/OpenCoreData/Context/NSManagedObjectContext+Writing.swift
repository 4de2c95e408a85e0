/// Writing a save through the coordinator: under the stores' write locks the context finds its
/// conflicts (optimistic locking from the stores' row versions, then uniqueness constraints), has
/// its merge policy resolve them, and hands the coordinator what is left to write as one value
/// per store.
///
/// Related documentation: Core Data Programming Guide, "Change Management" ("Conflict Detection
/// and Optimistic Locking"); NSMergePolicy, NSMergeConflict and NSConstraintConflict references.
extension NSManagedObjectContext {
    /// Writes `request`'s changes through `coordinator`: with each row store's write lock held, optimistic-locking
    /// conflicts and then uniqueness-constraint conflicts are found and resolved by the merge
    /// policy, then each store gets the objects it holds. Returns the saved values with their
    /// versions incremented, for the row cache; the cache is not touched here, as the rows may
    /// still be rolled back: ``NSPersistentStoreCoordinator/withSaveLocks(_:_:)`` caches them
    /// after the commit.
    ///
    /// `fromChangeLists`: the request's sets are the context's change lists as they are (a
    /// context's own `save()`), so that the store's rows are built from the lists, in their order.
    ///
    /// - Throws: the merge policy's error; `NSManagedObjectConstraintMergeError` (133021) when
    ///   the policy leaves a constraint violated; the store's error, naming this context's objects.
    func writeSave(
        _ request: NSSaveChangesRequest, to coordinator: NSPersistentStoreCoordinator, fromChangeLists: Bool = false
    ) throws -> SavedRows {
        // One existential for the save's calls down, not one a call.
        let requester: any StoreRequester = self
        return try coordinator.withRequestLock {
            let changes = [
                request.insertedObjects ?? [], request.updatedObjects ?? [], request.deletedObjects ?? [],
                request.lockedObjects ?? [],
            ]
            var snapshots: [IDKey: Snapshot] = [:]
            var written = WrittenStores()
            var deleted = changes[2]
            try coordinator.withWriteLocks(ArraySlice(coordinator.storesWritten(by: changes))) {
                var inserted = changes[0]
                var updated = changes[1]
                let conflicts = try coordinator.lockingConflicts(
                    updated: updated, deleted: deleted, locked: changes[3], requester: requester)
                if !conflicts.isEmpty {
                    try resolve(conflicts)
                    let leaving = Set(conflicts.filter { $0.persistedRow == nil }.map(\.sourceObject))
                    inserted = inserted.filter { $0.isInsertedFlag }
                    updated = updated.filter { $0.isUpdatedFlag }.subtracting(leaving)
                    deleted = deleted.subtracting(leaving)
                }
                let constraintConflicts = try self.constraintConflicts(
                    inserted: inserted, updated: updated, deleted: deleted, in: coordinator)
                if !constraintConflicts.isEmpty {
                    // The policy may merge into stored objects and delete others: what the context
                    // holds afterwards is what is saved, and it must satisfy the constraints.
                    try resolve(constraintConflicts)
                    inserted = self.inserted.set
                    updated = self.updated.set
                    deleted = self.deleted.set
                    let left = try self.constraintConflicts(
                        inserted: inserted, updated: updated, deleted: deleted, in: coordinator)
                    guard left.isEmpty else {
                        throw CoreDataError.make(
                            NSManagedObjectConstraintMergeError, "Uniqueness constraints are still violated.",
                            ["conflictList": left])
                    }
                }
                // Saved as the context's lists hold them (nothing left or joined the sets): the rows
                // are built in the lists' order, about the order the objects were made in, where a
                // set's order is its hash order and each object a cache miss.
                let ordered =
                    fromChangeLists && conflicts.isEmpty && constraintConflicts.isEmpty
                    ? (Array(self.inserted.objects), Array(self.updated.objects), Array(self.deleted.objects))
                    : nil
                do {
                    (snapshots, written) = try coordinator.write(
                        inserted: inserted, updated: updated, deleted: deleted, ordered: ordered,
                        author: transactionAuthor, contextName: name, requester: requester)
                } catch let error as NSError {
                    throw namingObjects(in: error)
                }
            }
            return SavedRows(snapshots: snapshots, removed: deleted.map(\.objectID), stores: written)
        }
    }

    /// A store's error with the object IDs it names under `NSAffectedObjectsErrorKey` replaced by
    /// this context's objects, as Apple's errors name them.
    private func namingObjects(in error: NSError) -> NSError {
        guard let ids = error.userInfo[NSAffectedObjectsErrorKey] as? [NSManagedObjectID] else { return error }
        var userInfo = error.userInfo
        userInfo[NSAffectedObjectsErrorKey] = ids.map { registeredObject(for: $0) ?? $0 }
        return NSError(domain: error.domain, code: error.code, userInfo: userInfo)
    }
}
