/// How the objects of one entity store their values: one slot per property, inherited properties
/// first, with a name → slot table. Objects and snapshots keep values in arrays indexed by slot
/// (ARCHITECTURE.md, "Values and snapshots"); nothing keeps a dictionary per object.
package final class EntityLayout: @unchecked Sendable {
    /// What a slot holds.
    package enum Kind: Equatable {
        case attribute
        case toOne
        case toMany(ordered: Bool)
        case fetched
    }

    package let entity: NSEntityDescription
    /// The identity and name of the entity at the top of the entity's inheritance: sub-entities
    /// share their root's key space, so object IDs compare by root entity
    /// (``NSManagedObjectID/isSame(as:)``). Found once: `superentity` is a weak reference, slow
    /// to read, each retain of an entity takes the runtime's slow path, and each read of its
    /// `name` is checked for exclusivity (a registry lookup that met an ID of another
    /// entity with the same key read both names).
    let rootIdentity: ObjectIdentifier
    let rootName: String?
    /// The hash of ``rootName``, which object IDs mix into theirs (``NSManagedObjectID/cachedHash``):
    /// IDs of one root are equal only by name or identity, so a hash of the name is the same for
    /// every ID equal to another.
    let rootHash: Int
    /// The root entity, held so its identity stays its own while the layout lives.
    private let rootEntity: NSEntityDescription
    /// Whether the entity is abstract, found once for each object made and each row read.
    package let isAbstract: Bool
    package let properties: [NSPropertyDescription]
    package let kinds: [Kind]
    package let slotByName: [String: Int]
    /// The names again, by their bytes: what ``slot(named:)`` tries before ``slotByName``.
    private let slotNames: SlotNames
    /// Per slot, the property's name.
    package let names: [String]
    /// Relationship slots, in property order.
    package let relationshipSlots: [Int]
    /// Attribute slots with a default value, and the value.
    let defaults: [(slot: Int, value: Any)]
    /// A new object's values: each attribute's default, an empty collection for each to-many.
    /// Built once and shared copy-on-write, so an object made as a fault (which drops them) or
    /// inserted and left unchanged allocates no values of its own.
    let initialValues: SlotValues
    /// How the entity's values lay out their cells: 16 bytes for a string, binary, UUID or URI
    /// attribute, 8 for every other slot (a number, date, object, ID, or a box).
    package let slotShape: SlotShape
    /// Per slot, whether the attribute is a scalar number or Boolean, whose value the public
    /// accessors hand out as an `NSNumber` (as Apple's do, so `as? Int16`, `as? Int` and
    /// `as? NSNumber` all work whatever width the value was stored with).
    let numberSlots: [Bool]
    /// Transient attribute slots with a default value, and the value.
    let transientDefaults: [(slot: Int, value: Any)]
    /// Per slot, the common case of its validation, decided without the general checks.
    let quickChecks: [QuickCheck]
    /// Per slot, whether the property is stored: not transient, not fetched.
    private let persistentSlots: [Bool]
    /// Whether every slot is a stored attribute, so an object's values are its row snapshot as
    /// they are (no relationship to turn into IDs, no transient value to leave out).
    let valuesAreSnapshots: Bool

    init(entity: NSEntityDescription) {
        self.entity = entity
        var root = entity
        while let parent = root.superentity { root = parent }
        rootEntity = root
        rootIdentity = ObjectIdentifier(root)
        rootName = root.name
        rootHash = root.name.hashValue
        isAbstract = entity.isAbstract
        properties = entity.properties
        var kinds: [Kind] = []
        var slotByName: [String: Int] = [:]
        var relationshipSlots: [Int] = []
        var defaults: [(slot: Int, value: Any)] = []
        var numberSlots: [Bool] = []
        for (slot, property) in properties.enumerated() {
            slotByName[property.name] = slot
            numberSlots.append(
                (property as? NSAttributeDescription).map { Self.numberTypes.contains($0.attributeType) } ?? false)
            switch property {
            case let relationship as NSRelationshipDescription:
                kinds.append(relationship.isToMany ? .toMany(ordered: relationship.isOrdered) : .toOne)
                relationshipSlots.append(slot)
            case is NSFetchedPropertyDescription:
                kinds.append(.fetched)
            default:
                kinds.append(.attribute)
                if let attribute = property as? NSAttributeDescription, let value = attribute.defaultValue {
                    defaults.append((slot, value))
                }
            }
        }
        self.kinds = kinds
        self.slotByName = slotByName
        names = properties.map(\.name)
        slotNames = SlotNames(names: names, winners: slotByName)
        self.relationshipSlots = relationshipSlots
        self.defaults = defaults
        slotShape = SlotShape.interned(
            wide: properties.map { property in
                switch (property as? NSAttributeDescription)?.attributeType {
                case .stringAttributeType, .binaryDataAttributeType, .UUIDAttributeType, .URIAttributeType: return true
                default: return false
                }
            })
        var initialValues = SlotValues(shape: slotShape)
        for (slot, value) in defaults { initialValues[slot] = value }
        for slot in relationshipSlots {
            if case .toMany(let ordered) = kinds[slot] {
                initialValues[slot] = ordered ? [NSManagedObject]() as Any : Set<NSManagedObject>() as Any
            }
        }
        self.initialValues = initialValues
        self.numberSlots = numberSlots
        let all = properties
        transientDefaults = defaults.filter { all[$0.slot].isTransient }
        quickChecks = all.map(QuickCheck.init)
        persistentSlots = zip(all, kinds).map { property, kind in kind != .fetched && !property.isTransient }
        valuesAreSnapshots = zip(kinds, persistentSlots).allSatisfy { $0 == .attribute && $1 }
    }

    /// The slot of the property named `key`, as ``slotByName`` answers it: a key spelled as the
    /// model spells it (the common case, a literal in the app's code) is found by its bytes first.
    @inline(__always)
    package func slot(named key: String) -> Int? {
        slotNames.slot(of: key) ?? slotByName[key]
    }

    private static let numberTypes: Set<NSAttributeType> = [
        .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .doubleAttributeType,
        .floatAttributeType, .booleanAttributeType,
    ]

    /// An attribute's stored value as the public accessors hand it out: scalar numbers and
    /// Booleans as `NSNumber`, everything else as stored.
    @inline(__always)
    func publicAttributeValue(_ raw: Any?, slot: Int) -> Any? {
        // An object is handed out as it is; only Swift numbers are boxed (a cast of a Swift
        // number to NSNumber would bridge it first, an allocation for nothing).
        guard numberSlots[slot], let raw, !DynamicValue.isObject(raw) else { return raw }
        return NSNumber.boxing(raw) ?? raw
    }

    package var count: Int { properties.count }

    package func relationship(at slot: Int) -> NSRelationshipDescription {
        // Only called for slots whose kind is a relationship.
        properties[slot] as! NSRelationshipDescription
    }

    package func isPersistent(_ slot: Int) -> Bool {
        persistentSlots[slot]
    }
}

extension NSEntityDescription {
    /// The entity's slot layout. Cached once the model is immutable (a coordinator uses it);
    /// rebuilt on each call while the model can still change.
    package var layout: EntityLayout {
        if let cached = cachedLayout { return cached }
        let layout = EntityLayout(entity: self)
        if let model = managedObjectModel, !model.isEditable { return cacheLayout(layout) }
        return layout
    }
}
