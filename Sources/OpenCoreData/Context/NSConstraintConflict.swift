/// A uniqueness-constraint conflict: objects whose constrained values collide.
open class NSConstraintConflict: NSObject {
    /// The names of the constrained properties.
    public let constraint: [String]
    /// The colliding values, keyed by property name.
    public let constraintValues: [String: Any]
    /// The object already in the store, if the collision is with a saved row.
    public let databaseObject: NSManagedObject?
    /// The stored row's values (attributes and to-one destinations by name), when the collision
    /// is with a saved row.
    public let databaseSnapshot: [String: Any]?
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
        self.databaseSnapshot = databaseSnapshot.map { snapshot in
            Dictionary(snapshot.compactMap { key, value in (key.base as? String).map { ($0, value) } }) { a, _ in a }
        }
        self.conflictingObjects = conflictingObjects
        conflictingSnapshots = snapshots.compactMap { $0 as? [AnyHashable: Any] }
        var values: [String: Any] = [:]
        if let first = conflictingObjects.first {
            for key in contraint { values[key] = first.value(forKeyPath: key) ?? NSNull() }
        }
        constraintValues = values
        super.init()
    }
}
