/// How the objects of one entity store their values: one slot per property, inherited properties
/// first, with a name → slot table. Objects and snapshots keep values in arrays indexed by slot
/// (DESIGN.md, "Values by index"); nothing keeps a dictionary per object.
final class EntityLayout: @unchecked Sendable {
    /// What a slot holds.
    enum Kind: Equatable {
        case attribute
        case toOne
        case toMany(ordered: Bool)
        case fetched
    }

    let entity: NSEntityDescription
    let properties: [NSPropertyDescription]
    let kinds: [Kind]
    let slotByName: [String: Int]
    /// Relationship slots, in property order.
    let relationshipSlots: [Int]
    /// Attribute slots with a default value, and the value.
    let defaults: [(slot: Int, value: Any)]

    init(entity: NSEntityDescription) {
        self.entity = entity
        properties = entity.properties
        var kinds: [Kind] = []
        var slotByName: [String: Int] = [:]
        var relationshipSlots: [Int] = []
        var defaults: [(slot: Int, value: Any)] = []
        for (slot, property) in properties.enumerated() {
            slotByName[property.name] = slot
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
        self.relationshipSlots = relationshipSlots
        self.defaults = defaults
    }

    var count: Int { properties.count }

    func relationship(at slot: Int) -> NSRelationshipDescription {
        // Only called for slots whose kind is a relationship.
        properties[slot] as! NSRelationshipDescription
    }

    func isPersistent(_ slot: Int) -> Bool {
        kinds[slot] != .fetched && !properties[slot].isTransient
    }
}

extension NSEntityDescription {
    /// The entity's slot layout. Cached once the model is immutable (a coordinator uses it);
    /// rebuilt on each call while the model can still change.
    var layout: EntityLayout {
        if let cached = cachedLayout { return cached }
        let layout = EntityLayout(entity: self)
        if let model = managedObjectModel, !model.isEditable { cachedLayout = layout }
        return layout
    }
}
