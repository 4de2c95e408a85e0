/// The values of one row at one version, by slot of the entity's layout: what a store last
/// reported for an object. Snapshots are immutable and shared — by the coordinator's row cache,
/// by every context that holds the object, and (copy-on-write) by each object's current values
/// until it changes.
///
/// Slot contents: an attribute's value or `nil`; a to-one's destination `NSManagedObjectID` or
/// `nil`; a to-many's `[NSManagedObjectID]`; ``UnresolvedRelationship/marker`` for a relationship
/// the store did not report, fetched on first use.
package struct Snapshot: @unchecked Sendable {
    package var values: SlotValues
    package var version: UInt64

    package init(values: SlotValues, version: UInt64) {
        self.values = values
        self.version = version
    }

    /// A snapshot of `layout`'s entity from values keyed by property name, following
    /// `NSIncrementalStoreNode`'s contract: `NSNull` is no value, to-ones are object IDs, to-manys
    /// collections of object IDs, a missing relationship is resolved later, unknown keys are dropped.
    init(layout: EntityLayout, values dictionary: [String: Any], version: UInt64) {
        var values = SlotValues(shape: layout.slotShape)
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
        if UnresolvedRelationship.isMarker(value) { return nil }
        switch kind {
        case .toOne: return value ?? NSNull()
        case .toMany: return value ?? [NSManagedObjectID]()
        case .attribute, .fetched: return value
        }
    }
}

/// Something that keeps snapshots alive for the objects that hold them, counted per row —
/// the coordinator's row cache, its one subclass. An object keeps the ``CachedRow`` it holds and
/// gives it back when it goes away; the Objects layer knows no more of the cache than this.
///
/// A class rather than a protocol so that an object keeps its holder in one word, not a
/// protocol's two (issue 21: it took the object to a larger heap block).
class SnapshotHolder: @unchecked Sendable {
    /// Counts one holder of `row`'s snapshot less. The base class holds nothing.
    func release(_ row: CachedRow) {}
    /// Counts one holder less for each of `rows`, at once. The base class holds nothing.
    func release(_ rows: [CachedRow]) {}
}

/// One row of a snapshot cache: the snapshot, when it was read, and how many objects hold it.
///
/// An object that holds its row keeps this entry, so firing its fault and letting it go reach
/// the row directly instead of looking its ID up in the cache's table (issue 21). The fields
/// belong to the cache that made the row and are read and written only under its lock.
final class CachedRow: @unchecked Sendable {
    /// The row's object.
    let id: NSManagedObjectID
    /// The row's values; `nil` once invalidated (while objects still hold the row) or dropped.
    var snapshot: Snapshot?
    // The two small fields follow the snapshot's tag byte, so a row takes 56 bytes, not 65
    // (a smaller heap block for every row read; issue 21).
    /// Whether the row has left the cache's table (or is left there, empty, to be swept out):
    /// it is never handed out again, and holds no snapshot.
    var isDropped = false
    /// How many registered objects (at most one per context) hold the snapshot.
    var uses: Int32 = 0
    /// When the row was read or written (`ProcessInfo.systemUptime`), for staleness.
    var time: TimeInterval

    init(id: NSManagedObjectID, time: TimeInterval) {
        self.id = id
        self.time = time
    }
}

extension CachedRow: IDTableEntry {
    var tableID: NSManagedObjectID { id }
}

/// Marks a relationship slot whose destination is not known yet.
package final class UnresolvedRelationship: @unchecked Sendable {
    package static let marker = UnresolvedRelationship()
    private init() {}

    /// Whether `value` is the marker: a test of the value's dynamic type. `value is
    /// UnresolvedRelationship` gives the same answer, but for a Swift array or set (a resolved
    /// to-many) the runtime first bridges the whole collection to an `NSArray` or `NSSet` to
    /// see whether that is one (issue 21: 3.5 % of walking a to-many, one bridge a member).
    @inline(__always)
    package static func isMarker(_ value: Any?) -> Bool {
        guard let value else { return false }
        return type(of: value) == UnresolvedRelationship.self
    }
}
