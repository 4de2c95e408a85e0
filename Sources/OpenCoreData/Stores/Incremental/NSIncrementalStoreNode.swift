/// The values of one object as an incremental store reports them, with a version number.
///
/// Follow Apple's contract: values are keyed by property name; a to-one is the destination's
/// `NSManagedObjectID` or `NSNull`; a to-many is a collection of object IDs (an empty collection,
/// never `nil`); leave a relationship out to have Core Data ask
/// ``NSIncrementalStore/newValue(forRelationship:forObjectWith:with:)`` when it is first used.
/// `version` is 0 for an object that was never saved and grows by one with each save; it drives
/// optimistic locking as `Z_OPT` does for SQLite.
open class NSIncrementalStoreNode: NSObject, @unchecked Sendable {
    private let id: NSManagedObjectID
    var snapshot: Snapshot

    /// Creates a node for the object with `objectID`, with values keyed by property name.
    public init(objectID: NSManagedObjectID, withValues values: [String: Any], version: UInt64) {
        id = objectID
        snapshot = Snapshot(layout: objectID.entity.layout, values: values, version: version)
        super.init()
    }

    /// A node over an existing snapshot, for the built-in stores.
    init(objectID: NSManagedObjectID, snapshot: Snapshot) {
        id = objectID
        self.snapshot = snapshot
        super.init()
    }

    /// Replaces the node's values and version.
    open func update(withValues values: [String: Any], version: UInt64) {
        snapshot = Snapshot(layout: id.entity.layout, values: values, version: version)
    }

    /// The object's ID.
    open var objectID: NSManagedObjectID { id }

    /// The version of the values: 0 before the first save.
    open var version: UInt64 { snapshot.version }

    /// The value of `prop`: an attribute's value, a to-one's object ID or `NSNull`, a to-many's
    /// object IDs; `nil` for an attribute with no value or a relationship not reported.
    open func value(for prop: NSPropertyDescription) -> Any? {
        let layout = id.entity.layout
        guard let slot = layout.slotByName[prop.name] else { return nil }
        return snapshot.publicValue(slot: slot, kind: layout.kinds[slot])
    }
}
