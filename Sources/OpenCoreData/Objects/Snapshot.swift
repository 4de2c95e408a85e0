/// The values of one row at one version, by slot of the entity's layout: what a store last
/// reported for an object. Snapshots are immutable and shared — by the coordinator's row cache,
/// by every context that holds the object, and (copy-on-write) by each object's current values
/// until it changes.
///
/// Slot contents: an attribute's value or `nil`; a to-one's destination `NSManagedObjectID` or
/// `nil`; a to-many's `[NSManagedObjectID]`; ``UnresolvedRelationship/marker`` for a relationship
/// the store did not report, fetched on first use.
package struct Snapshot: @unchecked Sendable {
    package var values: ContiguousArray<Any?>
    package var version: UInt64

    package init(values: ContiguousArray<Any?>, version: UInt64) {
        self.values = values
        self.version = version
    }

    /// A snapshot of `layout`'s entity from values keyed by property name, following
    /// `NSIncrementalStoreNode`'s contract: `NSNull` is no value, to-ones are object IDs, to-manys
    /// collections of object IDs, a missing relationship is resolved later, unknown keys are dropped.
    init(layout: EntityLayout, values dictionary: [String: Any], version: UInt64) {
        var values = ContiguousArray<Any?>(repeating: nil, count: layout.count)
        for (slot, kind) in layout.kinds.enumerated() {
            let name = layout.properties[slot].name
            let value = dictionary[name]
            switch kind {
            case .attribute:
                values[slot] = DynamicValue.unwrap(value)
            case .toOne:
                guard let value else {
                    values[slot] = UnresolvedRelationship.marker
                    continue
                }
                values[slot] = value as? NSManagedObjectID
            case .toMany:
                guard let value else {
                    values[slot] = UnresolvedRelationship.marker
                    continue
                }
                values[slot] = Snapshot.objectIDs(in: value)
            case .fetched:
                values[slot] = UnresolvedRelationship.marker
            }
        }
        self.init(values: values, version: version)
    }

    static func objectIDs(in collection: Any) -> [NSManagedObjectID] {
        if let ids = collection as? [NSManagedObjectID] { return ids }
        if let ids = collection as? Set<NSManagedObjectID> { return Array(ids) }
        return DynamicValue.elements(collection)?.compactMap { $0 as? NSManagedObjectID } ?? []
    }

    /// The value of a property for the node API: `NSNull` for an empty to-one, IDs for relationships.
    func publicValue(slot: Int, kind: EntityLayout.Kind) -> Any? {
        let value = values[slot]
        if value is UnresolvedRelationship { return nil }
        switch kind {
        case .toOne: return value ?? NSNull()
        case .toMany: return value ?? [NSManagedObjectID]()
        case .attribute, .fetched: return value
        }
    }
}

/// Something that keeps snapshots alive for the objects that hold them, counted per object ID —
/// the coordinator's row cache. An object releases its hold when it goes away; the Objects layer
/// knows no more of the cache than this.
protocol SnapshotHolder: AnyObject, Sendable {
    /// Counts one holder of `id`'s snapshot less.
    func release(_ id: NSManagedObjectID)
    /// Counts one holder less for each of `ids`, at once.
    func release(_ ids: [NSManagedObjectID])
}

/// Marks a relationship slot whose destination is not known yet.
package final class UnresolvedRelationship: @unchecked Sendable {
    package static let marker = UnresolvedRelationship()
    private init() {}
}
