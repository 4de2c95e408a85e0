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

/// An optimistic-locking conflict: the object's values and versions, against the cached and the
/// persisted snapshot of its row.
open class NSMergeConflict: NSObject {
    /// The object whose save conflicted.
    public let sourceObject: NSManagedObject
    /// The object's values when the conflict was found.
    public let objectSnapshot: [String: Any]?
    /// The row as the context last saw it.
    public let cachedSnapshot: [String: Any]?
    /// The row as it is in the store now; `nil` when it was deleted there.
    public let persistedSnapshot: [String: Any]?
    /// The version of the row the object was based on.
    public let newVersionNumber: Int
    /// The version of the row in the store.
    public let oldVersionNumber: Int

    /// Creates a conflict record.
    public init(
        source srcObject: NSManagedObject, newVersion newvers: Int, oldVersion oldvers: Int,
        cachedSnapshot cachesnap: [String: Any]?, persistedSnapshot persnap: [String: Any]?
    ) {
        sourceObject = srcObject
        newVersionNumber = newvers
        oldVersionNumber = oldvers
        cachedSnapshot = cachesnap
        persistedSnapshot = persnap
        objectSnapshot = srcObject.changedValues()
        super.init()
    }
}

/// A uniqueness-constraint conflict: objects whose constrained values collide.
open class NSConstraintConflict: NSObject {
    /// The names of the constrained properties.
    public let constraint: [String]
    /// The colliding values, keyed by property name.
    public let constraintValues: [String: Any]
    /// The object already in the store, if the collision is with a saved row.
    public let databaseObject: NSManagedObject?
    /// The objects being saved that collide.
    public let conflictingObjects: [NSManagedObject]
    /// The snapshots of the colliding objects.
    public let conflictingSnapshots: [[AnyHashable: Any]]

    /// Creates a conflict record.
    public init(
        constraint contraint: [String], database databaseObject: NSManagedObject?,
        databaseSnapshot: [AnyHashable: Any]?,
        conflicting conflictingObjects: [NSManagedObject], conflictingSnapshots snapshots: [Any]
    ) {
        constraint = contraint
        self.databaseObject = databaseObject
        self.conflictingObjects = conflictingObjects
        conflictingSnapshots = snapshots.compactMap { $0 as? [AnyHashable: Any] }
        var values: [String: Any] = [:]
        if let first = conflictingObjects.first {
            for key in contraint { values[key] = first.value(forKey: key) ?? NSNull() }
        }
        constraintValues = values
        super.init()
    }
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

    /// Resolves optimistic-locking conflicts as the policy's type says.
    ///
    /// - Throws: for the error policy, `NSManagedObjectMergeError` (133020) with the conflicts
    ///   under `"conflictList"`.
    open func resolve(optimisticLockingConflicts list: [NSMergeConflict]) throws {
        guard !list.isEmpty else { return }
        switch mergeType {
        case .errorMergePolicyType:
            throw CoreDataError.make(NSManagedObjectMergeError, "Could not merge changes.", ["conflictList": list])
        case .overwriteMergePolicyType:
            return
        case .rollbackMergePolicyType:
            for conflict in list { apply(conflict.persistedSnapshot, to: conflict.sourceObject, only: nil) }
        case .mergeByPropertyObjectTrumpMergePolicyType:
            for conflict in list {
                // The object's own changes win; every property it did not change takes the store's value.
                let unchanged = Set(conflict.persistedSnapshot?.keys.map { $0 } ?? [])
                    .subtracting(conflict.objectSnapshot?.keys.map { $0 } ?? [])
                apply(conflict.persistedSnapshot, to: conflict.sourceObject, only: unchanged)
            }
        case .mergeByPropertyStoreTrumpMergePolicyType:
            for conflict in list {
                // Properties changed in the store since the context read them take the store's value.
                var changedInStore = Set<String>()
                for (key, value) in conflict.persistedSnapshot ?? [:]
                where !DynamicValue.equal(value, conflict.cachedSnapshot?[key]) {
                    changedInStore.insert(key)
                }
                let unchanged = Set(conflict.persistedSnapshot?.keys.map { $0 } ?? [])
                    .subtracting(conflict.objectSnapshot?.keys.map { $0 } ?? [])
                apply(conflict.persistedSnapshot, to: conflict.sourceObject, only: changedInStore.union(unchanged))
            }
        }
    }

    /// Resolves uniqueness-constraint conflicts as the policy's type says.
    ///
    /// - Throws: for the error policy, `NSManagedObjectConstraintMergeError` (133021) with the
    ///   conflicts under `"conflictList"`.
    open func resolve(constraintConflicts list: [NSConstraintConflict]) throws {
        guard !list.isEmpty else { return }
        throw CoreDataError.make(
            NSManagedObjectConstraintMergeError, "Uniqueness constraints were violated.", ["conflictList": list])
    }

    private func apply(_ snapshot: [String: Any]?, to object: NSManagedObject, only keys: Set<String>?) {
        guard let snapshot else { return }
        for (key, value) in snapshot where keys?.contains(key) ?? true {
            guard let slot = object.layout.slotByName[key], object.layout.kinds[slot] == .attribute else { continue }
            object.setPrimitiveValue(value is NSNull ? nil : value, forKey: key)
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
