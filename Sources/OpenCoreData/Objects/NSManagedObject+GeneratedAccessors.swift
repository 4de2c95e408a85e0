import Foundation

/// What the accessors `CoreDataModelGenerator` writes for `@NSManaged` declarations call (issue 22;
/// README, "Model classes"). They are public because the generated code lives in the app's module;
/// they are not meant to be called directly. Each goes through key-value coding, so a typed
/// property does everything `value(forKey:)` and `setValue(_:forKey:)` do: fires the fault,
/// records the change for saving and undo, keeps inverse relationships consistent.
extension NSManagedObject {
    /// The value of property `key` as `T` (`nil` when it has none, or none of that type). A
    /// Decimal attribute reads as `NSDecimalNumber`, and a to-many as `NSSet`, `NSOrderedSet` or
    /// `Set` of its class, as the declaration asks.
    @inlinable
    public func _managedValue<T>(forKey key: String) -> T? {
        let value = self.value(forKey: key)
        if let typed = value as? T { return typed }
        // The conversions Xcode's types need (decided when the caller is specialized).
        if T.self == NSDecimalNumber.self, let decimal = value as? Decimal {
            return NSDecimalNumber(decimal: decimal) as? T
        }
        if T.self == NSSet.self, let objects = value as? Set<NSManagedObject> {
            return NSSet(array: Array(objects)) as? T
        }
        return nil
    }

    /// The value of property `key`, declared non-optional. A property without a value traps
    /// naming it, as reading a nil object through a non-optional `@NSManaged` property does on
    /// Apple platforms; declare such properties optional (Xcode does for object types).
    @inlinable
    public func _managedRequiredValue<T>(forKey key: String) -> T {
        guard let value: T = _managedValue(forKey: key) else {
            preconditionFailure(
                "\(entity.name ?? "").\(key) has no value of type \(T.self); declare the @NSManaged property optional")
        }
        return value
    }

    /// The number attribute `key` as `T`; no value reads as zero (false), as Apple's scalar
    /// accessors read it.
    @inlinable
    public func _managedScalar<T: _ManagedScalar>(forKey key: String) -> T {
        T._managedScalar(from: value(forKey: key))
    }

    /// Sets property `key` to `value`: a typed setter's whole work.
    @inlinable
    public func _setManagedValue<T>(_ value: T, forKey key: String) {
        // A decimal attribute holds `Decimal`; Xcode declares it `NSDecimalNumber?`.
        if T.self == NSDecimalNumber.self, let decimal = value as? NSDecimalNumber {
            setValue(decimal.decimalValue, forKey: key)
        } else {
            setValue(value, forKey: key)
        }
    }

    /// Sets property `key` to an optional value: its value, or no value (an optional is not
    /// passed on wrapped in `Any`, which would cost an unwrapping cast at every set).
    @inlinable
    public func _setManagedValue<T>(_ value: T?, forKey key: String) {
        if let value {
            _setManagedValue(value, forKey: key)
        } else {
            setValue(nil, forKey: key)
        }
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
