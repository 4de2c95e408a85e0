/// The ways a save resolves conflicts, with Apple's raw values.
public enum NSMergePolicyType: UInt, Sendable {
    /// Fail the save with the conflicts (the default).
    case errorMergePolicyType = 0
    /// Per property, the store's changed values win.
    case mergeByPropertyStoreTrumpMergePolicyType = 1
    /// Per property, the context's changed values win.
    case mergeByPropertyObjectTrumpMergePolicyType = 2
    /// The context's objects overwrite the store's.
    case overwriteMergePolicyType = 3
    /// The context's changes are discarded in favour of the store's.
    case rollbackMergePolicyType = 4
}

/// A policy that resolves conflicts found while saving. Subclass it and override the `resolve`
/// methods to resolve conflicts in code.
open class NSMergePolicy: NSObject, @unchecked Sendable {
    /// The kind of policy.
    public let mergeType: NSMergePolicyType

    /// Creates a policy of the given kind.
    public init(merge ty: NSMergePolicyType) {
        mergeType = ty
        super.init()
    }

    /// Fails the save with the conflicts.
    public static let error = NSMergePolicy(merge: .errorMergePolicyType)
    /// Per property, the store's changed values win.
    public static let mergeByPropertyStoreTrump = NSMergePolicy(merge: .mergeByPropertyStoreTrumpMergePolicyType)
    /// Per property, the context's changed values win.
    public static let mergeByPropertyObjectTrump = NSMergePolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType)
    /// The context's objects overwrite the store's.
    public static let overwrite = NSMergePolicy(merge: .overwriteMergePolicyType)
    /// The context's changes are discarded in favour of the store's.
    public static let rollback = NSMergePolicy(merge: .rollbackMergePolicyType)

    /// Resolves optimistic-locking and constraint conflicts together.
    open func resolve(mergeConflicts list: [Any]) throws {
        try resolve(optimisticLockingConflicts: list.compactMap { $0 as? NSMergeConflict })
        try resolve(constraintConflicts: list.compactMap { $0 as? NSConstraintConflict })
    }

    /// Resolves optimistic-locking conflicts as the policy's type says (Core Data Programming
    /// Guide, "Change Management"; NSMergePolicy reference):
    ///
    /// * error — the save fails;
    /// * overwrite — the object's values are saved over the row;
    /// * rollback — the object takes the row's values, dropping its changes;
    /// * merge by property, object trump — the object's changed properties win, every other
    ///   property takes the row's value;
    /// * merge by property, store trump — a property changed in the store takes the row's value,
    ///   a property changed only in the object keeps it.
    ///
    /// - Throws: for the error policy, `NSManagedObjectMergeError` (133020) with the conflicts
    ///   under `"conflictList"`.
    open func resolve(optimisticLockingConflicts list: [NSMergeConflict]) throws {
        guard !list.isEmpty else { return }
        switch mergeType {
        case .errorMergePolicyType:
            throw CoreDataError.make(
                NSManagedObjectMergeError, "Could not merge changes.",
                ["conflictList": list, NSAffectedObjectsErrorKey: list.map(\.sourceObject)])
        case .overwriteMergePolicyType:
            return
        case .rollbackMergePolicyType:
            for conflict in list { conflict.takeStoreValues { _ in true } }
        case .mergeByPropertyObjectTrumpMergePolicyType:
            for conflict in list {
                let changed = conflict.sourceObject.changedSlots
                conflict.takeStoreValues { !changed.contains($0) }
            }
        case .mergeByPropertyStoreTrumpMergePolicyType:
            for conflict in list {
                let changed = conflict.sourceObject.changedSlots
                conflict.takeStoreValues { !changed.contains($0) || conflict.storeChanged($0) }
            }
        }
    }

    /// Resolves uniqueness-constraint conflicts as the policy's type says:
    ///
    /// * error — the save fails;
    /// * merge by property, object trump — the stored object takes the values the conflicting
    ///   objects set, and they leave the save (an upsert);
    /// * merge by property, store trump — the stored object keeps its values, taking only those
    ///   it lacks, and the conflicting objects leave the save;
    /// * overwrite — the stored object is deleted and the last conflicting object saved instead;
    /// * rollback — the conflicting objects leave the save.
    ///
    /// An inserted object leaves a save by being deleted, a changed one by losing its changes.
    /// Between objects of one save (no stored row), the first saved-before or first inserted object
    /// plays the stored object's part (overwrite keeps the last).
    ///
    /// - Throws: for the error policy, `NSManagedObjectConstraintMergeError` (133021) with the
    ///   conflicts under `"conflictList"`.
    open func resolve(constraintConflicts list: [NSConstraintConflict]) throws {
        guard !list.isEmpty else { return }
        guard mergeType != .errorMergePolicyType else {
            throw CoreDataError.make(
                NSManagedObjectConstraintMergeError, "Uniqueness constraints were violated.", ["conflictList": list])
        }
        for conflict in list {
            guard let context = (conflict.databaseObject ?? conflict.conflictingObjects.first)?.context else {
                continue
            }
            conflict.resolve(as: mergeType, in: context)
        }
    }
}

/// The policy that fails a save with its conflicts (the default of every context).
nonisolated(unsafe) public let NSErrorMergePolicy: Any = NSMergePolicy.error
/// The policy in which the store's changed values win per property.
nonisolated(unsafe) public let NSMergeByPropertyStoreTrumpMergePolicy: Any = NSMergePolicy.mergeByPropertyStoreTrump
/// The policy in which the context's changed values win per property.
nonisolated(unsafe) public let NSMergeByPropertyObjectTrumpMergePolicy: Any = NSMergePolicy.mergeByPropertyObjectTrump
/// The policy in which the context's objects overwrite the store's.
nonisolated(unsafe) public let NSOverwriteMergePolicy: Any = NSMergePolicy.overwrite
/// The policy in which the context's changes are discarded.
nonisolated(unsafe) public let NSRollbackMergePolicy: Any = NSMergePolicy.rollback
