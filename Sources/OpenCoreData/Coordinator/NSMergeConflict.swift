/// An optimistic-locking conflict: the object's values against the snapshot its context read
/// (cached) and the row as it is in the store now (persisted).
open class NSMergeConflict: NSObject {
    /// The object whose save conflicted.
    public let sourceObject: NSManagedObject
    /// The object's current values: attributes and to-one destinations by name.
    public let objectSnapshot: [String: Any]?
    /// The row as the object's context last read it.
    public let cachedSnapshot: [String: Any]?
    /// The row as it is in the store now; `nil` when it was deleted there.
    public let persistedSnapshot: [String: Any]?
    /// The row's version in the store; 0 when it was deleted there.
    public let newVersionNumber: Int
    /// The row version the object was based on.
    public let oldVersionNumber: Int
    /// The persisted row by slot, when the coordinator found the conflict.
    let persistedRow: Snapshot?

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
        objectSnapshot = srcObject.makeSnapshot(version: 0).dictionary(layout: srcObject.layout)
        persistedRow = nil
        super.init()
    }

    /// The conflict between `object` and the row `persisted` (nil: deleted in the store).
    init(object: NSManagedObject, persisted: Snapshot?) {
        let layout = object.layout
        sourceObject = object
        newVersionNumber = persisted.map { Int($0.version) } ?? 0
        oldVersionNumber = Int(object.committed?.version ?? 0)
        cachedSnapshot = object.committed?.dictionary(layout: layout)
        persistedSnapshot = persisted?.dictionary(layout: layout)
        objectSnapshot = object.makeSnapshot(version: 0).dictionary(layout: layout)
        persistedRow = persisted
        super.init()
    }

    /// Gives the object the persisted value of each slot `takesStoreValue` chooses.
    func takeStoreValues(where takesStoreValue: (Int) -> Bool) {
        guard let persisted = persistedRow else { return }
        let object = sourceObject
        object.realize()
        for slot in 0..<object.layout.count where object.layout.isPersistent(slot) && takesStoreValue(slot) {
            object.values[slot] = persisted.values[slot]
        }
    }

    /// Whether the store changed `slot` since the object's context read the row.
    func storeChanged(_ slot: Int) -> Bool {
        let persisted = persistedRow?.values[slot] ?? nil
        let cached = sourceObject.committed?.values[slot] ?? nil
        if UnresolvedRelationship.isMarker(persisted) || UnresolvedRelationship.isMarker(cached) { return false }
        return !DynamicValue.equal(persisted, cached)
    }
}
