/// Key-value coding: values by name, primitive accessors, change reporting.
///
/// Related documentation: NSManagedObject reference, "Managing Change Events", "Supporting
/// Key-Value Coding" and "Getting Committed Values".
extension NSManagedObject {
    /// The value of the property named `key`: an attribute's value, a to-one's object, a to-many's
    func kvcValue(forKey key: String) -> Any? {
        checkContextQueue("value(forKey: \"\(key)\")")
        if let slot = layout.slot(named: key) {
            realize()
            return publicValue(slot: slot)
        }
        switch key {
        case "self": return self
        case "objectID": return objectID
        case "entity": return entity
        case "managedObjectContext": return managedObjectContext
        case "isInserted", "inserted": return isInserted
        case "isUpdated", "updated": return isUpdated
        case "isDeleted", "deleted": return isDeleted
        case "isFault", "fault": return isFault
        case "hasChanges": return hasChanges
        default: return value(forUndefinedKey: key)
        }
    }

    /// Answers a key that is not a property. Traps, as Apple raises `NSUnknownKeyException` —
    /// except while a fetch evaluates its predicate in memory (``UndefinedKeys``), where the key
    /// reads as nil, as it does on any other value a predicate evaluates.
    func kvcValueForUndefinedKey(_ key: String) -> Any? {
        if UndefinedKeys.readAsNil { return nil }
        preconditionFailure(
            "value(forKey:): the entity \(entity.name ?? "") is not key value coding-compliant for the key \"\(key)\"")
    }

    /// Sets the property named `key`, recording the change and keeping the inverse relationship
    func kvcSetValue(_ value: Any?, forKey key: String) {
        checkContextQueue("setValue(_:forKey: \"\(key)\")")
        guard let slot = layout.slot(named: key) else {
            setValue(value, forUndefinedKey: key)
            return
        }
        setValue(value, slot: slot, key: key)
    }

    /// Sets the property at `slot` (named `key`): what ``kvcSetValue(_:forKey:)`` does once the
    /// slot is known.
    func setValue(_ value: Any?, slot: Int, key: String) {
        realize()
        switch layout.kinds[slot] {
        case .attribute:
            willMutate(slot)
            values[slot] = DynamicValue.unwrap(value)
        case .toOne:
            let object = DynamicValue.unwrap(value)
            guard object == nil || object is NSManagedObject else {
                preconditionFailure("setValue(_:forKey:): \(key) is a to-one relationship; the value must be an object")
            }
            setToOne(slot: slot, object as? NSManagedObject)
        case .toMany:
            setToMany(slot: slot, Self.objects(in: value, key: key))
        case .fetched:
            preconditionFailure("setValue(_:forKey:): \(key) is a fetched property and cannot be set")
        }
    }

    /// Sets a key that is not a property. Traps, as Apple raises `NSUnknownKeyException`.
    func kvcSetValueForUndefinedKey(_ key: String) {
        preconditionFailure(
            "setValue(_:forKey:): the entity \(entity.name ?? "") is not key value coding-compliant for the key \"\(key)\""
        )
    }

    /// Sets the value at the end of a key path, such as `department.name`, or an element of a
    /// composite attribute by its namespaced key path, such as `magnitude.richter`.
    public func setValue(_ value: Any?, forKeyPath keyPath: String) {
        guard let dot = keyPath.firstIndex(of: ".") else {
            setValue(value, forKey: keyPath)
            return
        }
        let head = String(keyPath[..<dot])
        let rest = String(keyPath[keyPath.index(after: dot)...])
        if entity.attributesByName[head] is NSCompositeAttributeDescription {
            let path = rest.split(separator: ".").map(String.init)
            setValue(
                NSCompositeAttributeDescription.replacing(value, at: path, in: self.value(forKey: head)), forKey: head)
            return
        }
        (self.value(forKey: head) as? NSManagedObject)?.setValue(value, forKeyPath: rest)
    }

    /// Sets several properties by name.
    public func setValuesForKeys(_ keyedValues: [String: Any]) {
        for (key, value) in keyedValues { setValue(value is NSNull ? nil : value, forKey: key) }
    }

    /// The values of several properties, with `NSNull` for those without a value.
    public func dictionaryWithValues(forKeys keys: [String]) -> [String: Any] {
        var result: [String: Any] = [:]
        for key in keys { result[key] = value(forKey: key) ?? NSNull() }
        return result
    }

    // MARK: Primitive accessors

    /// The stored value of `key`, for custom accessors: the same value as ``value(forKey:)``.
    func kvcPrimitiveValue(forKey key: String) -> Any? {
        checkContextQueue("primitiveValue(forKey: \"\(key)\")")
        guard let slot = layout.slot(named: key) else { return value(forUndefinedKey: key) }
        realize()
        return publicValue(slot: slot)
    }

    /// Sets the stored value of `key` for custom accessors: the change is recorded, but inverse
    func kvcSetPrimitiveValue(_ value: Any?, forKey key: String) {
        checkContextQueue("setPrimitiveValue(_:forKey: \"\(key)\")")
        guard let slot = layout.slot(named: key) else {
            setValue(value, forUndefinedKey: key)
            return
        }
        realize()
        if isInsertedFlag || changeState.isUpdated, context?.isCallingWillSave == true {
            // Set in `willSave()` on an object the save writes: Apple's primitive accessors tell
            // no one, so the value is saved with the object and no second objects-did-change is
            // posted (NSManagedObject `willSave()`: use primitive accessors there).
            noteChangeUntold(of: slot)
        } else {
            willMutate(slot)
        }
        switch layout.kinds[slot] {
        case .attribute, .fetched, .toOne:
            values[slot] = DynamicValue.unwrap(value)
        case .toMany(let ordered):
            let objects = Self.objects(in: value, key: key)
            values[slot] = ordered ? objects as Any : Set(objects) as Any
        }
    }

    // MARK: Changes

    /// The persistent properties changed since the object was last fetched or saved, with their
    /// new values (`NSNull` for no value).
    ///
    /// > Note: A property counts as changed once it is set, even back to its committed value.
    public func changedValues() -> [String: Any] {
        var result: [String: Any] = [:]
        for slot in changedSlots where layout.isPersistent(slot) {
            result[layout.properties[slot].name] = publicValue(slot: slot) ?? NSNull()
        }
        return result
    }

    /// The persistent properties changed since the last `ObjectsDidChange` notification, with
    /// their *old* values (`NSNull` for no value).
    public func changedValuesForCurrentEvent() -> [String: Any] {
        var result: [String: Any] = [:]
        for (slot, old) in eventOldValues where layout.isPersistent(slot) {
            result[layout.properties[slot].name] = publicForm(of: old, slot: slot) ?? NSNull()
        }
        return result
    }

    /// The values last fetched or saved for `keys` (every property when `nil`), with `NSNull` for
    /// no value. An object never saved has no committed values.
    public func committedValues(forKeys keys: [String]?) -> [String: Any] {
        guard let committed else { return [:] }
        var result: [String: Any] = [:]
        let names = keys ?? layout.properties.filter { !$0.isTransient }.map(\.name)
        for name in names {
            guard let slot = layout.slotByName[name], layout.isPersistent(slot) else { continue }
            let raw = committed.values[slot]
            if UnresolvedRelationship.isMarker(raw) { continue }
            result[name] = publicForm(of: raw, slot: slot) ?? NSNull()
        }
        return result
    }

    // MARK: Internals

    /// Traps when called off the context's queue while concurrency debugging is on
    /// (`COREDATA_CONCURRENCY_DEBUG=1`). The context is loaded only then: reaching it through its
    /// weak link on every value read and written cost more than the rest of a read (BENCHMARKS-JOURNAL.md,
    /// "typed accessors").
    @inline(__always)
    func checkContextQueue(_ api: @autoclosure () -> String) {
        if ConcurrencyDebug.isEnabled { context?.checkQueue(api()) }
    }

    /// Records that `slot` is about to change: its old value for the current event, the change
    /// bit, and the object's place in the context's change sets.
    func willMutate(_ slot: Int) {
        recordChange(of: slot)
        // Already among this event's changes and the context's pending changes: the context has
        // nothing to record (what `objectDidChange` would find), so it is not loaded — the second
        // and later changes of an object in one event cost no weak load.
        if isInEventChanged, changeState.isUpdated || isInsertedFlag || isDeletedFlag || isDiscardedInsert { return }
        context?.objectDidChange(self)
    }

    /// The value of `slot` as the public API shows it.
    func publicValue(slot: Int) -> Any? {
        switch layout.kinds[slot] {
        case .attribute:
            // A number is boxed from its cell, without a trip through `Any`.
            if layout.numberSlots[slot], let number = values.number(at: slot) { return number }
            return layout.publicAttributeValue(values[slot], slot: slot)
        case .toOne:
            return toOneObject(slot: slot)
        case .toMany(let ordered):
            // An unordered to-many is stored as a Set: hand it out without copying.
            return ordered ? NSOrderedSet(array: toManyMembers(slot: slot)) : toManySet(slot: slot) as Any
        case .fetched:
            return fetchedObjects(slot: slot)
        }
    }

    /// A raw slot value (object, ID, collection of either) in its public form.
    func publicForm(of raw: Any?, slot: Int) -> Any? {
        switch layout.kinds[slot] {
        case .attribute:
            return layout.publicAttributeValue(raw, slot: slot)
        case .fetched:
            return raw
        case .toOne:
            if let id = raw as? NSManagedObjectID { return context?.object(with: id) }
            return raw as? NSManagedObject
        case .toMany(let ordered):
            let members = resolve(raw)
            return ordered ? NSOrderedSet(array: members) : Set(members) as Any
        }
    }

    private func resolve(_ raw: Any?) -> [NSManagedObject] {
        switch raw {
        case let set as Set<NSManagedObject>: return Array(set)
        case let array as [NSManagedObject]: return array
        case let ids as [NSManagedObjectID]: return ids.compactMap { context?.object(with: $0) }
        default: return []
        }
    }

    /// The objects of a value given for a to-many relationship.
    static func objects(in value: Any?, key: String) -> [NSManagedObject] {
        guard let value = DynamicValue.unwrap(value) else { return [] }
        if let set = value as? Set<NSManagedObject> { return Array(set) }
        if let array = value as? [NSManagedObject] { return array }
        guard let elements = DynamicValue.elements(value) else {
            preconditionFailure("setValue(_:forKey:): \(key) is a to-many relationship; the value must be a collection")
        }
        return elements.map { element in
            guard let object = element as? NSManagedObject else {
                preconditionFailure("setValue(_:forKey:): \(key) holds managed objects; got \(type(of: element))")
            }
            return object
        }
    }
}

/// Whether a key a managed object does not have reads as nil instead of trapping: while a fetch
/// evaluates its predicate in memory. A fetch checks its key paths before it runs
/// (`FetchRequestCheck`), but a path that continues past an index or a function (`friends[LAST].nosuch`)
/// names keys only evaluation meets; those come from users as often as the rest.
enum UndefinedKeys {
    @TaskLocal static var readAsNil = false

    /// Runs `body` with unknown keys reading as nil.
    static func readingAsNil<T>(_ body: () throws -> T) rethrows -> T {
        try $readAsNil.withValue(true, operation: body)
    }
}
