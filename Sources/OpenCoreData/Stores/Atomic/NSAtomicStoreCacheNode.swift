/// One object of an atomic store, as the store keeps it in memory between loading and saving
/// its file: the object's ID and its values.
///
/// Values are keyed by property name, as Apple's `propertyCache` holds them: an attribute's
/// value; for a to-one relationship, the destination's cache node; for a to-many, a collection
/// (`NSSet`, or `NSOrderedSet` for an ordered relationship) of the destinations' cache nodes.
///
/// ```swift
/// let node = NSAtomicStoreCacheNode(objectID: objectID(for: entity, withReferenceObject: 7))
/// node.setValue("Ada", forKey: "name")
/// node.setValue(departmentNode, forKey: "department")
/// ```
///
/// > Note: Until `propertyCache` is first read or set, the values live in an array by property
/// > (the built-in XML and binary stores load their objects that way, which saves a dictionary
/// > per object); `value(forKey:)` and `setValue(_:forKey:)` read and write either form.
open class NSAtomicStoreCacheNode: NSObject, @unchecked Sendable {
    private let id: NSManagedObjectID
    /// Values by slot of the entity's layout, while no one has asked for ``propertyCache``:
    /// attribute values, a to-one's node, a to-many's nodes as `[NSAtomicStoreCacheNode]`.
    var slots: SlotValues?
    private var cache: NSMutableDictionary?
    /// The version of the values, which plays `Z_OPT`'s part for optimistic locking: 1 after
    /// the first save, one more with each save that changes the object.
    var version: UInt64 = 1
    /// The node's place in its store's list of its entity's objects.
    var position = 0

    /// Creates a node for the object with `moid`, with no values yet.
    public init(objectID moid: NSManagedObjectID) {
        id = moid
        super.init()
    }

    /// A node with values by slot (the built-in stores' loading).
    init(objectID: NSManagedObjectID, slots: SlotValues) {
        id = objectID
        self.slots = slots
        super.init()
    }

    /// The ID of the object the node holds.
    open var objectID: NSManagedObjectID { id }

    /// The node's values by property name; `nil` until a value is set.
    open var propertyCache: NSMutableDictionary? {
        get {
            materialize()
            return cache
        }
        set {
            cache = newValue
            slots = nil
        }
    }

    /// The value for `key`: an attribute's value, a to-one's node, a to-many's nodes.
    open func value(forKey key: String) -> Any? {
        if let slots {
            let layout = id.entity.layout
            guard let slot = layout.slotByName[key] else { return nil }
            return Self.publicValue(slots[slot], kind: layout.kinds[slot])
        }
        return cache?[key]
    }

    /// Sets the value for `key`, creating the property cache when there is none.
    open func setValue(_ value: Any?, forKey key: String) {
        let value = value is NSNull ? nil : value
        if cache == nil {
            let layout = id.entity.layout
            if let slot = layout.slotByName[key] {
                if slots == nil { slots = SlotValues(shape: layout.slotShape) }
                slots![slot] = Self.slotValue(value, kind: layout.kinds[slot])
                return
            }
            materialize()
            if cache == nil { cache = NSMutableDictionary() }
        }
        if let value { cache![key] = value } else { cache!.removeObject(forKey: key) }
    }

    /// Moves values from slots into a dictionary, once someone asks for the dictionary.
    private func materialize() {
        guard let slots else { return }
        let layout = id.entity.layout
        let dictionary = NSMutableDictionary()
        for (slot, value) in slots.enumerated() {
            if let value = Self.publicValue(value, kind: layout.kinds[slot]) {
                dictionary[layout.names[slot]] = value
            }
        }
        cache = dictionary
        self.slots = nil
    }

    /// A slot's value as the public API gives it: a to-many's nodes as a set.
    private static func publicValue(_ value: Any?, kind: EntityLayout.Kind) -> Any? {
        guard case .toMany(let ordered) = kind, let nodes = value as? [NSAtomicStoreCacheNode] else { return value }
        return ordered ? NSOrderedSet(array: nodes) : NSSet(array: nodes)
    }

    /// A value set through the public API as a slot keeps it: a to-many's collection as nodes.
    private static func slotValue(_ value: Any?, kind: EntityLayout.Kind) -> Any? {
        guard case .toMany = kind, let value else { return value }
        if let nodes = value as? [NSAtomicStoreCacheNode] { return nodes }
        return (DynamicValue.elements(value) ?? []).compactMap { $0 as? NSAtomicStoreCacheNode }
    }

    /// The node's values as a row snapshot: relationships become the destinations' IDs (a
    /// destination given as an `NSManagedObjectID` is taken as it is).
    func snapshot() -> Snapshot {
        let layout = id.entity.layout
        var values = SlotValues(shape: layout.slotShape)
        for (slot, kind) in layout.kinds.enumerated() {
            let value: Any? = slots.map { $0[slot] } ?? cache?[layout.names[slot]]
            switch kind {
            case .attribute:
                values[slot] = DynamicValue.unwrap(value)
            case .toOne:
                values[slot] = Self.destinationID(value)
            case .toMany:
                if let nodes = value as? [NSAtomicStoreCacheNode] {
                    values[slot] = nodes.map(\.id)
                } else {
                    values[slot] = value.flatMap(DynamicValue.elements)?.compactMap(Self.destinationID) ?? []
                }
            case .fetched:
                values[slot] = UnresolvedRelationship.marker
            }
        }
        return Snapshot(values: values, version: version)
    }

    private static func destinationID(_ value: Any?) -> NSManagedObjectID? {
        (value as? NSAtomicStoreCacheNode)?.id ?? (value as? NSManagedObjectID)
    }

    override open var description: String {
        "<NSAtomicStoreCacheNode> \(id)"
    }
}
