/// Resolving a save's conflicts in the context: the merge policy decides, then the context's
/// objects and change sets are brought in line with the outcome. The coordinator reports the
/// optimistic-locking conflicts (`OptimisticLocking.swift`), the context finds the constraint
/// conflicts (`UniquenessConstraints.swift`); only the context changes its own state.
///
/// Related documentation: NSMergePolicy, NSMergeConflict and NSConstraintConflict references;
/// Core Data Programming Guide, "Change Management".
extension NSManagedObjectContext {
    /// Hands the conflicts to the merge policy, then bases each surviving object on the row's
    /// current version so the save writes over it. An object whose row was deleted in the store
    /// leaves the context (the store's delete wins under every policy but the error policy).
    func resolve(_ conflicts: [NSMergeConflict]) throws {
        let policy = mergePolicy as? NSMergePolicy ?? NSMergePolicy.error
        try policy.resolve(mergeConflicts: conflicts)
        for conflict in conflicts {
            let object = conflict.sourceObject
            guard let persisted = conflict.persistedRow else {
                clearChangeFlags(object)
                forget(object)
                continue
            }
            object.rebase(on: persisted)
            if object.changedSlots.isEmpty, object.isUpdatedFlag { leaveUpdated(object) }
        }
    }
}

extension NSManagedObjectContext {
    /// Hands constraint conflicts to the merge policy and runs the delete rules of what it deleted.
    ///
    /// - Throws: the policy's error (`NSManagedObjectConstraintMergeError`, 133021, for the error policy).
    func resolve(_ conflicts: [NSConstraintConflict]) throws {
        let policy = mergePolicy as? NSMergePolicy ?? NSMergePolicy.error
        try policy.resolve(mergeConflicts: conflicts)
        propagateDeletes()
        processPendingChanges()
    }
}
