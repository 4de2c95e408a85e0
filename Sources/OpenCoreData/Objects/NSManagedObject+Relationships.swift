/// Relationships: resolving destinations, and keeping both sides of every relationship
/// consistent on every mutation.
///
/// Related documentation: Core Data Programming Guide, "Creating Managed Object Relationships"
/// ("Core Data … maintains the consistency of the object graph … with inverse relationships").
extension NSManagedObject {
    /// Whether the relationship `key` has not been loaded yet.
    public func hasFault(forRelationshipNamed key: String) -> Bool {
        guard let slot = layout.slot(named: key), layout.kinds[slot] != .attribute else {
            preconditionFailure("hasFault(forRelationshipNamed:): \(key) is not a relationship of \(entity.name ?? "")")
        }
        if isFaultFlag { return true }
        let value = values[slot]
        if UnresolvedRelationship.isMarker(value) { return true }
        // A to-one is read as a reference and a to-many as a collection: a class cast of a
        // collection would bridge it to an `NSSet` or `NSArray` first (as `isMarker` explains).
        if layout.kinds[slot] == .toOne {
            // A to-one followed before is resolved, whether its cell or the object keeps it.
            guard let id = values.reference(at: slot) as? NSManagedObjectID, resolvedDestination(of: id) == nil
            else { return false }
            return context?.registeredObject(for: id)?.isFault ?? true
        }
        guard let ids = value as? [NSManagedObjectID] else { return false }
        return !ids.isEmpty
    }

    /// The IDs of the objects of relationship `key`, without firing relationship faults.
    public func objectIDs(forRelationshipNamed key: String) -> [NSManagedObjectID] {
        guard let slot = layout.slot(named: key), layout.kinds[slot] != .attribute else {
            preconditionFailure(
                "objectIDs(forRelationshipNamed:): \(key) is not a relationship of \(entity.name ?? "")")
        }
        realize()
        let value = values[slot]
        if UnresolvedRelationship.isMarker(value) { return toManyOrOne(slot: slot).map(\.objectID) }
        // As in `hasFault(forRelationshipNamed:)`: no class cast of a collection.
        if layout.kinds[slot] == .toOne {
            switch values.reference(at: slot) {
            case let id as NSManagedObjectID: return [id]
            case let object as NSManagedObject: return [object.objectID]
            default: return []
            }
        }
        switch value {
        case let ids as [NSManagedObjectID]: return ids
        case let set as Set<NSManagedObject>: return set.map(\.objectID)
        case let array as [NSManagedObject]: return array.map(\.objectID)
        default: return []
        }
    }

    /// A mutable set proxy for the to-many relationship `key`: adding and removing objects through
    /// it changes the relationship (and its inverse) as `setValue(_:forKey:)` would.
    public func mutableSetValue(forKey key: String) -> NSMutableSet {
        guard let slot = layout.slot(named: key), case .toMany(false) = layout.kinds[slot] else {
            preconditionFailure("mutableSetValue(forKey:): \(key) is not an unordered to-many relationship")
        }
        return RelationshipMutableSet(owner: self, slot: slot)
    }

    /// A mutable ordered set proxy for the ordered to-many relationship `key`.
    public func mutableOrderedSetValue(forKey key: String) -> NSMutableOrderedSet {
        guard let slot = layout.slot(named: key), case .toMany(true) = layout.kinds[slot] else {
            preconditionFailure("mutableOrderedSetValue(forKey:): \(key) is not an ordered to-many relationship")
        }
        return RelationshipMutableOrderedSet(owner: self, slot: slot)
    }

    // MARK: Reading

    /// The destination of a to-one, resolving an ID to the context's object.
    func toOneObject(slot: Int) -> NSManagedObject? {
        // Read as a reference, not as `Any`: a class cast from `AnyObject` is a pointer check
        // (casts from `Any` were an eighth of following a to-one).
        switch values.reference(at: slot) {
        case let object as NSManagedObject:
            return object
        case let id as NSManagedObjectID:
            if let destination = resolvedDestination(of: id) { return destination }
            // A registered destination is found through the link, without loading the context
            // (``ContextLink``); any other is made by the context, as `object(with:)` makes it.
            guard let object = currentLink?.objects?[id] ?? context?.object(with: id) else {
                values[slot] = nil
                return nil
            }
            // Values shared with the snapshot keep the ID, and the object keeps the destination
            // beside them, unless it keeps another one already (``resolvedDestination``).
            if resolvedDestination == nil, values.isShared() {
                resolvedDestination = object
            } else {
                values.setReference(object, at: slot)
            }
            return object
        case is UnresolvedRelationship:
            context?.resolveRelationship(of: self, slot: slot)
            return values.reference(at: slot) is UnresolvedRelationship ? nil : toOneObject(slot: slot)
        default:
            return nil
        }
    }

    /// ``resolvedDestination`` when it is the object `id` names in this object's context: the
    /// to-one whose cell holds `id` resolved to it before.
    @inline(__always)
    private func resolvedDestination(of id: NSManagedObjectID) -> NSManagedObject? {
        guard let destination = resolvedDestination, destination.tableKey.isSame(as: id.value),
            destination.currentLink === currentLink
        else { return nil }
        return destination
    }

    /// Drops ``resolvedDestination`` when it is `old`, the destination a to-one no longer has: the
    /// object does not keep alive what it no longer refers to.
    private func forgetDestination(_ old: NSManagedObject?) {
        if let old, resolvedDestination === old { resolvedDestination = nil }
    }

    /// The members of a to-many, in order when the relationship is ordered. A fault fires first:
    /// `mutableSetValue(forKey:)`'s live set reads through here without a value access before it.
    func toManyMembers(slot: Int) -> [NSManagedObject] {
        realize()
        switch values[slot] {
        case let set as Set<NSManagedObject>:
            return Array(set)
        case let array as [NSManagedObject]:
            return array
        default:
            return materializedToMany(slot: slot)
        }
    }

    /// The unordered members of a to-many as a set (no copy when already resolved). Members
    /// kept as the array they were read as become the set the slot keeps from then on.
    func toManySet(slot: Int) -> Set<NSManagedObject> {
        realize()
        let members: [NSManagedObject]
        switch values[slot] {
        case let set as Set<NSManagedObject>:
            return set
        case let array as [NSManagedObject]:
            members = array
        default:
            members = materializedToMany(slot: slot)
        }
        let set = Set(members)
        if case .toMany(false) = layout.kinds[slot], !members.isEmpty { values[slot] = set }
        return set
    }

    /// Turns the slot's members into objects — resolved by the context with their rows when
    /// the slot is a relationship fault (``NSManagedObjectContext/resolveMembers(of:slot:)``),
    /// else from the member IDs it holds, registered together (one hold on the row cache for all
    /// the new faults) — and stores them as the array they were read as: unique (one
    /// object an ID, each ID read once), in order for an ordered to-many. An unordered one
    /// becomes a set when first asked for as one (``toManySet(slot:)``): a generated `NSSet`
    /// property is made from the array, without a Swift set between (each member of a
    /// walked to-many was hashed into both).
    private func materializedToMany(slot: Int) -> [NSManagedObject] {
        let objects: [NSManagedObject]
        if UnresolvedRelationship.isMarker(values[slot]) {
            guard let members = context?.resolveMembers(of: self, slot: slot) else { return [] }
            objects = members
        } else {
            objects = context?.objects(with: values[slot] as? [NSManagedObjectID] ?? [], rowsTogether: true) ?? []
        }
        values[slot] = objects
        return objects
    }

    /// The objects a relationship slot refers to, to-one or to-many.
    func toManyOrOne(slot: Int) -> [NSManagedObject] {
        if layout.kinds[slot] == .toOne { return toOneObject(slot: slot).map { [$0] } ?? [] }
        return toManyMembers(slot: slot)
    }

    // MARK: Writing with inverse maintenance

    /// Sets a to-one and updates the inverse on the old and the new destination.
    func setToOne(slot: Int, _ destination: NSManagedObject?) {
        let old = toOneObject(slot: slot)
        if old === destination { return }
        if let destination { checkSameContext(destination) }
        willMutate(slot)
        values[slot] = destination
        forgetDestination(old)
        guard let inverse = layout.relationship(at: slot).inverseRelationship?.name else { return }
        old?.unlink(self, inverseName: inverse)
        destination?.link(self, inverseName: inverse)
    }

    /// Replaces a to-many's members and updates the inverse of every object added or removed.
    func setToMany(slot: Int, _ members: [NSManagedObject]) {
        let ordered = layout.kinds[slot] == .toMany(ordered: true)
        let oldMembers = toManyMembers(slot: slot)
        let oldSet = Set(oldMembers.map(ObjectIdentifier.init))
        var seen = Set<ObjectIdentifier>()
        var unique: [NSManagedObject] = []
        for member in members where seen.insert(ObjectIdentifier(member)).inserted {
            checkSameContext(member)
            unique.append(member)
        }
        if !ordered, unique.count == oldMembers.count, seen == oldSet { return }
        if ordered, unique.elementsEqual(oldMembers, by: ===) { return }
        willMutate(slot)
        values[slot] = ordered ? unique as Any : Set(unique) as Any
        guard let inverse = layout.relationship(at: slot).inverseRelationship?.name else { return }
        for member in oldMembers where !seen.contains(ObjectIdentifier(member)) {
            member.unlink(self, inverseName: inverse)
        }
        for member in unique where !oldSet.contains(ObjectIdentifier(member)) {
            member.link(self, inverseName: inverse)
        }
    }

    /// Adds and removes members of an unordered to-many, maintaining inverses.
    func modifyToMany(slot: Int, adding added: [NSManagedObject], removing removed: [NSManagedObject]) {
        var members = toManySet(slot: slot)
        for object in removed { members.remove(object) }
        for object in added { members.insert(object) }
        setToMany(slot: slot, Array(members))
    }

    /// The inverse side of a change made on `source`: `source` now refers to this object through the
    /// relationship whose inverse is `inverseName`.
    func link(_ source: NSManagedObject, inverseName: String) {
        realize()
        guard let slot = layout.slotByName[inverseName] else { return }
        switch layout.kinds[slot] {
        case .toOne:
            let previous = toOneObject(slot: slot)
            if previous === source { return }
            willMutate(slot)
            values[slot] = source
            forgetDestination(previous)
            // One-to-one or many-to-one: the previous holder no longer refers to this object.
            if let previous, let forward = layout.relationship(at: slot).inverseRelationship?.name {
                previous.unlink(self, inverseName: forward)
            }
        case .toMany(let ordered):
            if ordered {
                var members = toManyMembers(slot: slot)
                if members.contains(where: { $0 === source }) { return }
                willMutate(slot)
                members.append(source)
                values[slot] = members
            } else {
                var members = toManySet(slot: slot)
                if members.contains(source) { return }
                willMutate(slot)
                members.insert(source)
                values[slot] = members
            }
        case .attribute, .fetched:
            return
        }
    }

    /// The inverse side of a change made on `source`: `source` no longer refers to this object.
    func unlink(_ source: NSManagedObject, inverseName: String) {
        realize()
        guard let slot = layout.slotByName[inverseName] else { return }
        switch layout.kinds[slot] {
        case .toOne:
            guard toOneObject(slot: slot) === source else { return }
            willMutate(slot)
            values[slot] = nil
            forgetDestination(source)
        case .toMany(let ordered):
            if ordered {
                var members = toManyMembers(slot: slot)
                guard let index = members.firstIndex(where: { $0 === source }) else { return }
                willMutate(slot)
                members.remove(at: index)
                values[slot] = members
            } else {
                var members = toManySet(slot: slot)
                guard members.contains(source) else { return }
                willMutate(slot)
                members.remove(source)
                values[slot] = members
            }
        case .attribute, .fetched:
            return
        }
    }

    /// Apple raises "Illegal attempt to establish a relationship between objects in different contexts".
    private func checkSameContext(_ other: NSManagedObject) {
        if let mine = context, let theirs = other.context, mine !== theirs {
            preconditionFailure(
                "Illegal attempt to establish a relationship between objects in different contexts "
                    + "(\(entity.name ?? "") and \(other.entity.name ?? ""))")
        }
    }

    /// The values of a fetched property, fetched on first use and cached until the object is refreshed.
    func fetchedObjects(slot: Int) -> [Any] {
        if let cached = fetchedValues[slot] { return cached }
        guard let property = layout.properties[slot] as? NSFetchedPropertyDescription,
            let context
        else { return [] }
        let objects = context.evaluateFetchedProperty(property, for: self)
        fetchedValues[slot] = objects
        return objects
    }

    /// The object's values as a snapshot for the row cache and stores: relationships as IDs.
    func makeSnapshot(version: UInt64) -> Snapshot {
        // Every slot a stored attribute: the snapshot shares the values array (copy-on-write).
        if layout.valuesAreSnapshots { return Snapshot(values: values, version: version) }
        var snapshot = SlotValues(shape: layout.slotShape)
        for slot in 0..<layout.count where layout.isPersistent(slot) {
            if layout.kinds[slot] == .attribute {
                snapshot[slot] = values[slot]
                continue
            }
            switch values[slot] {
            case let object as NSManagedObject: snapshot[slot] = object.objectID
            case let set as Set<NSManagedObject>: snapshot[slot] = set.map(\.objectID)
            case let array as [NSManagedObject]: snapshot[slot] = array.map(\.objectID)
            case let value: snapshot[slot] = value
            }
        }
        return Snapshot(values: snapshot, version: version)
    }
}

/// The set returned by `mutableSetValue(forKey:)`: a live view of a to-many relationship.
final class RelationshipMutableSet: NSMutableSet {
    private let owner: NSManagedObject
    private let slot: Int

    init(owner: NSManagedObject, slot: Int) {
        self.owner = owner
        self.slot = slot
        super.init(capacity: 0)
    }

    required init?(coder: NSCoder) { nil }

    required convenience init(arrayLiteral elements: Any...) {
        preconditionFailure("RelationshipMutableSet is created by mutableSetValue(forKey:)")
    }

    required init(capacity numItems: Int) {
        preconditionFailure("RelationshipMutableSet is created by mutableSetValue(forKey:)")
    }

    private var members: Set<NSManagedObject> { owner.toManySet(slot: slot) }

    override var count: Int { members.count }

    override func member(_ object: Any) -> Any? {
        guard let object = object as? NSManagedObject else { return nil }
        return members.contains(object) ? object : nil
    }

    override func objectEnumerator() -> NSEnumerator {
        NSArray(array: Array(members)).objectEnumerator()
    }

    override func add(_ object: Any) {
        guard let object = object as? NSManagedObject else {
            preconditionFailure("mutableSetValue(forKey:): only managed objects can be added")
        }
        owner.modifyToMany(slot: slot, adding: [object], removing: [])
    }

    override func remove(_ object: Any) {
        guard let object = object as? NSManagedObject else { return }
        owner.modifyToMany(slot: slot, adding: [], removing: [object])
    }

    override func removeAllObjects() {
        owner.setToMany(slot: slot, [])
    }
}

/// The ordered set returned by `mutableOrderedSetValue(forKey:)`: a live view of an ordered to-many.
final class RelationshipMutableOrderedSet: NSMutableOrderedSet {
    private let owner: NSManagedObject
    private let slot: Int

    init(owner: NSManagedObject, slot: Int) {
        self.owner = owner
        self.slot = slot
        super.init(capacity: 0)
    }

    required init?(coder: NSCoder) { nil }

    required convenience init(arrayLiteral elements: Any...) {
        preconditionFailure("RelationshipMutableOrderedSet is created by mutableOrderedSetValue(forKey:)")
    }

    private var members: [NSManagedObject] { owner.toManyMembers(slot: slot) }

    override var count: Int { members.count }

    override func object(at idx: Int) -> Any { members[idx] }

    override func index(of object: Any) -> Int {
        guard let object = object as? NSManagedObject else { return NSNotFound }
        return members.firstIndex { $0 === object } ?? NSNotFound
    }

    override func insert(_ object: Any, at idx: Int) {
        guard let object = object as? NSManagedObject else {
            preconditionFailure("mutableOrderedSetValue(forKey:): only managed objects can be inserted")
        }
        var updated = members.filter { $0 !== object }
        updated.insert(object, at: Swift.min(idx, updated.count))
        owner.setToMany(slot: slot, updated)
    }

    override func removeObject(at idx: Int) {
        var updated = members
        updated.remove(at: idx)
        owner.setToMany(slot: slot, updated)
    }

    override func replaceObject(at idx: Int, with object: Any) {
        guard let object = object as? NSManagedObject else { return }
        var updated = members
        updated[idx] = object
        owner.setToMany(slot: slot, updated)
    }

    override func add(_ object: Any?) {
        guard let object else { return }
        insert(object, at: members.count)
    }

    override func remove(_ object: Any) {
        let idx = index(of: object)
        if idx != NSNotFound { removeObject(at: idx) }
    }

    override func addObjects(from array: [Any]) {
        var updated = members
        for case let object as NSManagedObject in array where !updated.contains(where: { $0 === object }) {
            updated.append(object)
        }
        owner.setToMany(slot: slot, updated)
    }

    override func removeAllObjects() {
        owner.setToMany(slot: slot, [])
    }
}
