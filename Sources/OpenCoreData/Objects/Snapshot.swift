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
/// protocol's two (it took the object to a larger heap block).
class SnapshotHolder: @unchecked Sendable {
    /// Counts one holder of `row`'s snapshot less. The base class holds nothing.
    func release(_ row: CachedRow) {}
    /// Counts one holder less for each of `rows`, at once. The base class holds nothing.
    func release(_ rows: [CachedRow]) {}
    /// The snapshot of `row`, held by an object, as the holder answers it now: with the row that
    /// superseded `row` and now counts the hold (`nil` while `row` itself does), or `nil` when the
    /// holder no longer answers it (invalidated, or older than `maxAge` seconds; any age when
    /// negative). The base class answers none.
    func snapshot(of row: CachedRow, maxAge: TimeInterval) -> (successor: CachedRow?, snapshot: Snapshot)? { nil }
}

/// One row of a snapshot cache: the storage of the row's snapshot, whose header also holds when
/// the row was read and how many objects hold it (``SlotHeader``).
///
/// An object that holds its row keeps this storage, so firing its fault and letting it go reach
/// the row directly instead of looking its ID up in the cache's table. The row is its snapshot's
/// own storage, not an entry beside it: a fetched object's values, its snapshot and its row are
/// one heap block, not two (64 bytes and an allocation a row). A storage is a row of
/// one version for good: a newer version of the row is another storage, which takes over the
/// count of holders, and the older one, *superseded*, sends those who still hold it to its
/// successor by its ID. The row fields belong to the cache that took the storage and are read and
/// written only under its lock.
typealias CachedRow = SlotStorage

extension SlotStorage {
    /// ``SlotHeader/rowState`` bits.
    enum RowState {
        /// The snapshot was invalidated: never handed out again.
        static let invalid: UInt8 = 1
        /// The row has left the cache's table, or is left there to be swept out (its last holder
        /// let go): it is not handed out again.
        static let dropped: UInt8 = 2
        /// A newer row of the same object took this one's place and its holders' count.
        static let superseded: UInt8 = 4
    }

    /// Takes the storage as the row of `id` at `version`, read or written at `time`, held by
    /// nobody yet. The storage must not be any cache's row already (``isRow``).
    func takeAsRow(of id: IDValue, version: UInt64, time: TimeInterval) {
        withUnsafeMutablePointerToHeader { header in
            header.pointee.rowTail = id.tail
            header.pointee.rowKey = id
            header.pointee.version = version
            header.pointee.time = time
            header.pointee.uses = 0
            header.pointee.rowState = 0
        }
    }

    /// Whether a cache has taken the storage as a row.
    var isRow: Bool { withUnsafeMutablePointerToHeader { $0.pointee.rowKey != nil } }

    /// The row's object's ID, as a value (the row keeps no ID instance).
    var rowKey: IDValue {
        withUnsafeMutablePointerToHeader { header in
            guard let id = header.pointee.rowKey else {
                preconditionFailure("CachedRow: a storage no cache took as a row has no row ID")
            }
            return id
        }
    }

    /// The row's version.
    var version: UInt64 { withUnsafeMutablePointerToHeader { $0.pointee.version } }

    /// When the row was read or written (`ProcessInfo.systemUptime`), for staleness.
    var time: TimeInterval {
        get { withUnsafeMutablePointerToHeader { $0.pointee.time } }
        set { withUnsafeMutablePointerToHeader { $0.pointee.time = newValue } }
    }

    /// How many registered objects (at most one per context) hold the row.
    var uses: Int32 {
        get { withUnsafeMutablePointerToHeader { $0.pointee.uses } }
        set { withUnsafeMutablePointerToHeader { $0.pointee.uses = newValue } }
    }

    /// Where the row read a few rows after this one is in memory (``SlotHeader/nextRow``);
    /// zero when unknown.
    var nextRow: UInt {
        get { withUnsafeMutablePointerToHeader { $0.pointee.nextRow } }
        set { withUnsafeMutablePointerToHeader { $0.pointee.nextRow = newValue } }
    }

    /// The row's ``RowState`` bits; zero while its snapshot is current.
    var rowState: UInt8 {
        get { withUnsafeMutablePointerToHeader { $0.pointee.rowState } }
        set { withUnsafeMutablePointerToHeader { $0.pointee.rowState = newValue } }
    }

    /// Whether the row left the cache's table or waits there to be swept out.
    var isDropped: Bool { rowState & RowState.dropped != 0 }

    /// Whether a newer row of the object took this one's place.
    var isSuperseded: Bool { rowState & RowState.superseded != 0 }

    /// The row's snapshot: its values at its version; `nil` once invalidated, dropped or superseded.
    var snapshot: Snapshot? {
        guard rowState == 0 else { return nil }
        return Snapshot(values: SlotValues(storage: self), version: version)
    }
}

extension SlotStorage: IDTableEntry {
    var tableKey: IDValue { rowKey }
}

/// Marks a relationship slot whose destination is not known yet.
package final class UnresolvedRelationship: @unchecked Sendable {
    package static let marker = UnresolvedRelationship()
    private init() {}

    /// Whether `value` is the marker: a test of the value's dynamic type. `value is
    /// UnresolvedRelationship` gives the same answer, but for a Swift array or set (a resolved
    /// to-many) the runtime first bridges the whole collection to an `NSArray` or `NSSet` to
    /// see whether that is one: one bridge a member of a walked to-many.
    @inline(__always)
    package static func isMarker(_ value: Any?) -> Bool {
        guard let value else { return false }
        return type(of: value) == UnresolvedRelationship.self
    }
}
