import Foundation
import Synchronization

/// A property as the accessors `CoreDataModelGenerator` writes name it: its key, and the slot it
/// had in the last object it was read from or written to, so that a typed accessor finds its
/// value by index instead of by name. The slot is checked against the object's layout before it is
/// used (a class can serve several entities, or several models), and looked up by name again
/// when it does not match. Not meant to be used directly.
public final class _ManagedProperty: Sendable {
    /// The property's name in the model.
    public let key: String
    private let lastSlot = Atomic<Int>(-1)

    /// For `primitive<Key>`, the modelled property `<key>` it names: Apple generates a
    /// `primitive<Key>` accessor for every modelled property, and declaring it `@NSManaged` is the
    /// Swift spelling of reading and setting the primitive value.
    let primitiveOf: String?

    /// A property named `key`.
    public init(_ key: String) {
        self.key = key
        let prefix = "primitive"
        if key.hasPrefix(prefix), let first = key.dropFirst(prefix.count).first, first.isUppercase {
            primitiveOf = first.lowercased() + key.dropFirst(prefix.count + 1)
        } else {
            primitiveOf = nil
        }
    }

    /// The modelled property of `layout` that this `primitive<Key>` accessor reads and sets,
    /// when the entity has no property named `primitive<Key>` itself.
    func primitiveKey(in layout: EntityLayout) -> String? {
        guard let primitiveOf, layout.slotByName[key] == nil, layout.slotByName[primitiveOf] != nil else { return nil }
        return primitiveOf
    }

    /// The property's slot in `layout`, nil when the entity has no such property.
    @inline(__always)
    func slot(in layout: EntityLayout) -> Int? {
        let cached = lastSlot.load(ordering: .relaxed)
        if cached >= 0, cached < layout.names.count, layout.names[cached] == key { return cached }
        guard let slot = layout.slotByName[key] else { return nil }
        lastSlot.store(slot, ordering: .relaxed)
        return slot
    }
}

/// What the accessors `CoreDataModelGenerator` writes for `@NSManaged` declarations call (the
/// "Sharing model code" article). They are public because the generated code lives in the app's module;
/// they are not meant to be called directly. Each finds its property by a slot remembered in a
/// ``_ManagedProperty`` instead of by name, and does everything `value(forKey:)` and
/// `setValue(_:forKey:)` do: fires the fault, records the change for saving and undo, keeps
/// inverse relationships consistent.
extension NSManagedObject {
    /// The value of `property` as a decimal number (Xcode declares a Decimal attribute
    /// `NSDecimalNumber?`; the attribute holds `Decimal`).
    public func _managedDecimalNumber(_ property: _ManagedProperty) -> NSDecimalNumber? {
        switch _managedValue(property) {
        case let number as NSDecimalNumber: return number
        case let decimal as Decimal: return NSDecimalNumber(decimal: decimal)
        default: return nil
        }
    }

    /// The value of a to-many `property` as `NSSet` (Xcode's type for an unordered to-many).
    ///
    /// The `NSSet` is made from the relationship's objects directly: from the array they were
    /// read as, or from the Swift set the slot keeps. Not bridged through Foundation, which
    /// converts each member on its own (about three times the cost a member).
    public func _managedNSSet(_ property: _ManagedProperty) -> NSSet? {
        if let slot = property.slot(in: layout), case .toMany(false) = layout.kinds[slot] {
            checkContextQueue("value(forKey: \"\(property.key)\")")
            realize()
            return Self.nsSet(of: toManyMembers(slot: slot))
        }
        switch _managedValue(property) {
        case let objects as Set<NSManagedObject>: return Self.nsSet(of: Array(objects))
        case let set as NSSet: return set
        default: return nil
        }
    }

    /// An `NSSet` of `objects`, their references handed over as `AnyObject`s, which are laid out
    /// as they are: an array conversion cast each one.
    private static func nsSet(of objects: [NSManagedObject]) -> NSSet {
        objects.withUnsafeBufferPointer { members in
            members.withMemoryRebound(to: AnyObject.self) { NSSet(objects: $0.baseAddress, count: $0.count) }
        }
    }

    /// The members of the unordered to-many `property` as a set of `Member`: the getter of a
    /// to-many declared `Set<Member>` (Apple bridges the relationship's `NSSet` to it, copying).
    /// The set is made from the members as they are kept, at the caller's concrete type, so no
    /// set of `NSManagedObject` is made first and cast member by member into a second one.
    /// `nil` when a member is not a `Member` or `property` is not an unordered to-many (as the
    /// bridging cast fails).
    @inlinable
    public func _managedSet<Member: NSManagedObject>(_ property: _ManagedProperty, of: Member.Type) -> Set<Member>? {
        guard let members = _managedMembers(property) else { return nil }
        var set = Set<Member>(minimumCapacity: members.count)
        for member in members {
            guard let member = member as? Member else { return nil }
            set.insert(member)
        }
        return set
    }

    /// The members of the unordered to-many `property` as the object keeps them, with the fault
    /// fired and the relationship's members faulted in as a read by key does; `nil` when
    /// `property` is not an unordered to-many.
    public func _managedMembers(_ property: _ManagedProperty) -> [NSManagedObject]? {
        if let slot = property.slot(in: layout), case .toMany(false) = layout.kinds[slot] {
            checkContextQueue("value(forKey: \"\(property.key)\")")
            return toManyMembers(slot: slot)
        }
        switch _managedValue(property) {
        case let objects as Set<NSManagedObject>: return Array(objects)
        case let set as NSSet: return set.allObjects as? [NSManagedObject]
        default: return nil
        }
    }

    /// Sets the unordered to-many `property` to `members` (nil: no members): the setter of a
    /// to-many declared `Set<Member>`. The members are handed over as the objects they are,
    /// without the runtime cast of a `Set<Member>` into a set of `NSManagedObject`.
    @inlinable
    public func _setManagedMembers<Member: NSManagedObject>(_ members: Set<Member>?, _ property: _ManagedProperty) {
        guard let members else { return _setManagedValue(nil, property) }
        _setManagedValue(members.map { $0 as NSManagedObject }, property)
    }

    /// The value of `property`, declared non-optional. A property without a value traps naming
    /// it, as reading a nil object through a non-optional `@NSManaged` property does on Apple
    /// platforms; declare such properties optional (Xcode does for object types).
    @inlinable
    public func _managedRequiredValue<T>(_ property: _ManagedProperty) -> T {
        guard let value = _managedValue(property) as? T else {
            preconditionFailure(
                "\(entity.name ?? "").\(property.key) has no value of type \(T.self); declare the @NSManaged property optional"
            )
        }
        return value
    }

    // MARK: By precomputed slot

    /// The value of `property` as `value(forKey:)` hands it out, found by its slot: the getter of
    /// an object-typed `@NSManaged` property. Does what a read by key does — checks the queue when
    /// concurrency debugging is on and fires the fault — without looking the name up.
    public func _managedValue(_ property: _ManagedProperty) -> Any? {
        guard let slot = property.slot(in: layout) else { return valueByKey(property) }
        checkContextQueue("value(forKey: \"\(property.key)\")")
        realize()
        return publicValue(slot: slot)
    }

    /// The attribute `property` as its cell holds it, read as a getter reads it (the queue checked
    /// when concurrency debugging is on, the fault fired): the common scalars as themselves, where
    /// ``_managedValue(_:)`` answers a number as the `NSNumber` `value(forKey:)` hands out, which
    /// a typed reader then casts back through Foundation's bridging (a second `NSNumber` made and
    /// compared a read). ``SlotScalar/other`` for any other value, and for a property that is not
    /// an attribute with a slot in the entity: read those with ``_managedValue(_:)``.
    package func _managedScalar(_ property: _ManagedProperty) -> SlotScalar {
        guard let slot = property.slot(in: layout), layout.kinds[slot] == .attribute else { return .other }
        checkContextQueue("value(forKey: \"\(property.key)\")")
        realize()
        return values.scalar(at: slot)
    }

    /// `property` read by its name, for an accessor whose property has no slot in the entity: a
    /// `primitive<Key>` accessor reads the primitive value of `<key>`; anything else reads as
    /// `value(forKey:)` does.
    private func valueByKey(_ property: _ManagedProperty) -> Any? {
        if let primitive = property.primitiveKey(in: layout) { return primitiveValue(forKey: primitive) }
        return value(forKey: property.key)
    }

    /// The value of `property` as a class instance: the getter of an `@NSManaged` property whose
    /// type is an optional class of its module, as a to-one's destination class is. A to-one is
    /// read as the object it is, not through `Any`, so the getter's cast to its class is a class
    /// check, not the runtime's search a cast from `Any` makes. Any other property
    /// reads as ``_managedValue(_:)`` does, as an object.
    public func _managedObject(_ property: _ManagedProperty) -> AnyObject? {
        guard let slot = property.slot(in: layout), case .toOne = layout.kinds[slot] else {
            return _managedValue(property).map { $0 as AnyObject }
        }
        checkContextQueue("value(forKey: \"\(property.key)\")")
        realize()
        return toOneObject(slot: slot)
    }

    /// The attribute `property` as a scalar getter reads it. The cell's value is read without
    /// boxing it in `Any` when it is one of the common scalars (``SlotValues/scalar(at:)``), and
    /// `exact` converts it when the conversion cannot lose anything; any other value, or one
    /// `exact` refuses (nil), converts as its `NSNumber` does (``_ManagedScalar/_managedScalar(stored:)``).
    /// No value reads as zero (false). Issue 21: going through `Any` cost three runtime casts a
    /// read, most of a typed getter.
    @inline(__always)
    private func scalarAttribute<T: _ManagedScalar>(_ property: _ManagedProperty, _ exact: (SlotScalar) -> T?) -> T {
        guard let slot = property.slot(in: layout), layout.kinds[slot] == .attribute else {
            return T._managedScalar(stored: valueByKey(property))
        }
        checkContextQueue("value(forKey: \"\(property.key)\")")
        realize()
        let scalar = values.scalar(at: slot)
        if case .none = scalar { return T._managedScalar(from: nil) }
        if let value = exact(scalar) { return value }
        return T._managedScalar(stored: values[slot])
    }

    /// The number attribute `property` as `Int64`; no value reads as zero.
    public func _managedInt64(_ property: _ManagedProperty) -> Int64 {
        scalarAttribute(property) { if case .int(let value) = $0 { Int64(exactly: value) } else { nil } }
    }

    /// The number attribute `property` as `Int32`; no value reads as zero.
    public func _managedInt32(_ property: _ManagedProperty) -> Int32 {
        scalarAttribute(property) { if case .int(let value) = $0 { Int32(exactly: value) } else { nil } }
    }

    /// The number attribute `property` as `Int16`; no value reads as zero.
    public func _managedInt16(_ property: _ManagedProperty) -> Int16 {
        scalarAttribute(property) { if case .int(let value) = $0 { Int16(exactly: value) } else { nil } }
    }

    /// The number attribute `property` as `Int`; no value reads as zero.
    public func _managedInt(_ property: _ManagedProperty) -> Int {
        scalarAttribute(property) { if case .int(let value) = $0 { value } else { nil } }
    }

    /// The number attribute `property` as `Double`; no value reads as zero.
    public func _managedDouble(_ property: _ManagedProperty) -> Double {
        scalarAttribute(property) { if case .double(let value) = $0 { value } else { nil } }
    }

    /// The number attribute `property` as `Float`; no value reads as zero.
    public func _managedFloat(_ property: _ManagedProperty) -> Float {
        // A `Float` is stored as itself, which `scalar(at:)` does not read: the general path.
        scalarAttribute(property) { _ in nil }
    }

    /// The Boolean attribute `property`; no value reads as false.
    public func _managedBool(_ property: _ManagedProperty) -> Bool {
        scalarAttribute(property) { if case .bool(let value) = $0 { value } else { nil } }
    }

    /// Sets `property`, found by its slot, to `value` (nil: no value): the setter of an
    /// `@NSManaged` property. Does what `setValue(_:forKey:)` does — records the change for saving,
    /// undo and notifications, keeps the inverse relationship — without looking the name up.
    public func _setManagedValue(_ value: Any?, _ property: _ManagedProperty) {
        guard let slot = property.slot(in: layout) else {
            if let primitive = property.primitiveKey(in: layout) {
                setPrimitiveValue(value, forKey: primitive)
            } else {
                setValue(value, forKey: property.key)
            }
            return
        }
        checkContextQueue("setValue(_:forKey: \"\(property.key)\")")
        setValue(value, slot: slot, key: property.key)
    }

    // Typed setters: the generated setter of a scalar, string or date property passes its value
    // as it is, and an attribute's cell takes it with the tag of its type — what the `Any?`
    // setter stores after unwrapping the `Any` and testing its type against each type a cell
    // holds unboxed, which was half the cost of a setter.

    /// Sets the `Int64` property `property` (Xcode's Integer 64).
    public func _setManagedValue(_ value: Int64, _ property: _ManagedProperty) { setAttribute(value, .int64, property) }

    /// Sets the `Int32` property `property` (Xcode's Integer 32).
    public func _setManagedValue(_ value: Int32, _ property: _ManagedProperty) { setAttribute(value, .int32, property) }

    /// Sets the `Int16` property `property` (Xcode's Integer 16).
    public func _setManagedValue(_ value: Int16, _ property: _ManagedProperty) { setAttribute(value, .int16, property) }

    /// Sets the `Int` property `property`.
    public func _setManagedValue(_ value: Int, _ property: _ManagedProperty) { setAttribute(value, .int, property) }

    /// Sets the `Double` property `property` (Xcode's Double).
    public func _setManagedValue(_ value: Double, _ property: _ManagedProperty) {
        setAttribute(value, .double, property)
    }

    /// Sets the `Float` property `property` (Xcode's Float).
    public func _setManagedValue(_ value: Float, _ property: _ManagedProperty) { setAttribute(value, .float, property) }

    /// Sets the `Bool` property `property` (Xcode's Boolean).
    public func _setManagedValue(_ value: Bool, _ property: _ManagedProperty) { setAttribute(value, .bool, property) }

    /// Sets the `String` property `property` (Xcode's String).
    public func _setManagedValue(_ value: String, _ property: _ManagedProperty) {
        setAttribute(value, .string, property)
    }

    /// Sets the `Date` property `property` (Xcode's Date).
    public func _setManagedValue(_ value: Date, _ property: _ManagedProperty) { setAttribute(value, .date, property) }

    /// Stores `value`, of the type `tag` names, in the attribute `property`, as
    /// `setValue(_:forKey:)` does: fires the fault, records the change, then fills the cell.
    /// A property that is not an attribute of the object's entity goes the way of any value.
    @inline(__always)
    private func setAttribute<Value>(_ value: Value, _ tag: SlotTag, _ property: _ManagedProperty) {
        guard let slot = property.slot(in: layout), layout.kinds[slot] == .attribute else {
            _setManagedValue(value as Any?, property)
            return
        }
        checkContextQueue("setValue(_:forKey: \"\(property.key)\")")
        realize()
        willMutate(slot)
        values.set(value, tag, at: slot)
    }

    // MARK: To-many accessors

    /// Adds `object` to the to-many Xcode's accessors name `name` (`addToEmployees(_:)`).
    public func _managedAddObject(_ object: NSManagedObject, toRelationshipNamed name: String) {
        let (key, ordered) = generatedRelationship(name)
        if ordered { mutableOrderedSetValue(forKey: key).add(object) } else { mutableSetValue(forKey: key).add(object) }
    }

    /// Adds every object of `objects` (a set, an ordered set or an array).
    public func _managedAddObjects(_ objects: Any, toRelationshipNamed name: String) {
        let (key, ordered) = generatedRelationship(name)
        let members = Self.objects(in: objects, key: key)
        if ordered {
            mutableOrderedSetValue(forKey: key).addObjects(from: members)
        } else {
            let set = mutableSetValue(forKey: key)
            for member in members { set.add(member) }
        }
    }

    /// Removes `object` from the to-many (`removeFromEmployees(_:)`).
    public func _managedRemoveObject(_ object: NSManagedObject, fromRelationshipNamed name: String) {
        let (key, ordered) = generatedRelationship(name)
        if ordered {
            mutableOrderedSetValue(forKey: key).remove(object)
        } else {
            mutableSetValue(forKey: key).remove(object)
        }
    }

    /// Removes every object of `objects` from the to-many.
    public func _managedRemoveObjects(_ objects: Any, fromRelationshipNamed name: String) {
        let (key, ordered) = generatedRelationship(name)
        let members = Self.objects(in: objects, key: key)
        if ordered {
            let set = mutableOrderedSetValue(forKey: key)
            for member in members { set.remove(member) }
        } else {
            let set = mutableSetValue(forKey: key)
            for member in members { set.remove(member) }
        }
    }

    /// Removes the members at `positions` of an ordered to-many (`removeFromEmployees(at:)`).
    public func _managedRemoveObjects(at positions: [Int], fromRelationshipNamed name: String) {
        let set = mutableOrderedSetValue(forKey: generatedRelationship(name).key)
        for position in positions.sorted(by: >) { set.removeObject(at: position) }
    }

    /// Inserts `objects` at `positions` of an ordered to-many, each at its position in increasing
    /// order (`insertIntoEmployees(_:at:)`).
    public func _managedInsertObjects(
        _ objects: [NSManagedObject], at positions: [Int], intoRelationshipNamed name: String
    ) {
        let set = mutableOrderedSetValue(forKey: generatedRelationship(name).key)
        for (object, position) in zip(objects, positions.sorted()) { set.insert(object, at: position) }
    }

    /// Replaces the members at `positions` of an ordered to-many with `objects`
    /// (`replaceEmployees(at:with:)`).
    public func _managedReplaceObjects(
        at positions: [Int], with objects: [NSManagedObject], inRelationshipNamed name: String
    ) {
        let set = mutableOrderedSetValue(forKey: generatedRelationship(name).key)
        for (position, object) in zip(positions.sorted(), objects) { set.replaceObject(at: position, with: object) }
    }

    /// The relationship Xcode's accessor names spell `name` (its name with the first letter
    /// uppercased) and whether it is ordered.
    private func generatedRelationship(_ name: String) -> (key: String, ordered: Bool) {
        let match = entity.relationshipsByName.values.first { relationship in
            relationship.isToMany && relationship.name.prefix(1).uppercased() + relationship.name.dropFirst() == name
        }
        guard let relationship = match else {
            preconditionFailure("\(entity.name ?? "") has no to-many relationship that accessors name \(name)")
        }
        return (relationship.name, relationship.isOrdered)
    }
}

/// The positions of an index set, for the generated accessors.
public func _managedPositions(_ indexes: NSIndexSet) -> [Int] {
    var positions: [Int] = []
    var index = indexes.firstIndex
    while index != NSNotFound {
        positions.append(index)
        index = indexes.indexGreaterThanIndex(index)
    }
    return positions
}

/// A number type a scalar `@NSManaged` property can have (Xcode's "Use Scalar Type").
public protocol _ManagedScalar {
    /// The value of an attribute read by key: its number, or zero (false) for none.
    static func _managedScalar(from value: Any?) -> Self
}

extension _ManagedScalar {
    /// An attribute's stored value as this type: directly when it is stored as this type (or as
    /// an integer that fits it), otherwise as its `NSNumber` converts — what reading it by key
    /// and converting gives.
    @inline(__always)
    static func _managedScalar(stored value: Any?) -> Self {
        if let same = value as? Self { return same }
        if let integer = value as? Int, let converted = Self.exactly(integer) { return converted }
        guard let value, !DynamicValue.isObject(value) else { return _managedScalar(from: value) }
        return _managedScalar(from: NSNumber.boxing(value) ?? value)
    }

    private static func exactly(_ integer: Int) -> Self? {
        switch Self.self {
        case is Int64.Type: return Int64(integer) as? Self
        case is Int32.Type: return Int32(exactly: integer) as? Self
        case is Int16.Type: return Int16(exactly: integer) as? Self
        default: return nil
        }
    }
}

extension NSNumber {
    /// A Swift number or Boolean boxed as the `NSNumber` key-value coding hands out; nil for
    /// anything else.
    ///
    /// The value's type is compared first and only the matching cast made: a chain of `as?`
    /// casts, each failing one going through the runtime's general path, was most of the cost
    /// of reading a number.
    static func boxing(_ value: Any) -> NSNumber? {
        let type = Swift.type(of: value)
        if type == Int.self, let number = value as? Int { return SmallNumbers.number(number) }
        if type == Double.self, let number = value as? Double { return NSNumber(value: number) }
        if type == Int64.self, let number = value as? Int64 { return SmallNumbers.number(number) }
        if type == Bool.self, let number = value as? Bool { return SmallNumbers.number(number) }
        if type == Int32.self, let number = value as? Int32 { return SmallNumbers.number(number) }
        if type == Int16.self, let number = value as? Int16 { return SmallNumbers.number(number) }
        if type == Float.self, let number = value as? Float { return NSNumber(value: number) }
        // A number wrapped in an Optional inside the `Any`, as `as?` casts would have unwrapped.
        if DynamicValue.isOptional(value), let unwrapped = DynamicValue.unwrap(value) { return boxing(unwrapped) }
        return nil
    }
}

extension Int: _ManagedScalar {
    /// The number's `Int` value, 0 for none.
    public static func _managedScalar(from value: Any?) -> Int { (value as? NSNumber)?.intValue ?? 0 }
}

extension Int16: _ManagedScalar {
    /// The number's `Int16` value, 0 for none.
    public static func _managedScalar(from value: Any?) -> Int16 { (value as? NSNumber)?.int16Value ?? 0 }
}

extension Int32: _ManagedScalar {
    /// The number's `Int32` value, 0 for none.
    public static func _managedScalar(from value: Any?) -> Int32 { (value as? NSNumber)?.int32Value ?? 0 }
}

extension Int64: _ManagedScalar {
    /// The number's `Int64` value, 0 for none.
    public static func _managedScalar(from value: Any?) -> Int64 { (value as? NSNumber)?.int64Value ?? 0 }
}

extension Float: _ManagedScalar {
    /// The number's `Float` value, 0 for none.
    public static func _managedScalar(from value: Any?) -> Float { (value as? NSNumber)?.floatValue ?? 0 }
}

extension Double: _ManagedScalar {
    /// The number's `Double` value, 0 for none.
    public static func _managedScalar(from value: Any?) -> Double { (value as? NSNumber)?.doubleValue ?? 0 }
}

extension Bool: _ManagedScalar {
    /// Whether the number is nonzero; false for none.
    public static func _managedScalar(from value: Any?) -> Bool { (value as? NSNumber)?.boolValue ?? false }
}
