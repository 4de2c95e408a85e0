import OpenCoreData

/// Where a model's values live. `@Model` reads and writes every persisted property through it.
///
/// Related documentation: SwiftData, `BackingData`.
public protocol BackingData<Model>: AnyObject {
    /// The model class whose values this holds.
    associatedtype Model: PersistentModel
    /// The identifier of the model: temporary until the model is saved.
    var persistentModelID: PersistentIdentifier { get }
    /// The value of the property at `key`.
    func getValue<Value>(forKey key: KeyPath<Model, Value>) -> Value
    /// Sets the value of the property at `key`.
    func setValue<Value>(forKey key: KeyPath<Model, Value>, to newValue: Value)
}

/// Backing data that is a Core Data object of a context: a model's once it joined one.
protocol ContextBacked: AnyObject {
    /// The Core Data object holding the values; `nil` before the model joined a context.
    var attached: NSManagedObject? { get }
    var context: ModelContext? { get }
}

/// The backing data of every model: its values kept by itself until the model joins a context
/// (``ModelContext/insert(_:)``), then those of the Core Data object made for it there.
public final class DefaultBackingData<Model: PersistentModel>: BackingData, ContextBacked, @unchecked Sendable {
    /// The values set before the model joined a context, one a property (a key path instance) in
    /// the order they were first set, each under the key path its accessor named and as it was
    /// last given (an attribute's value, a related model or models); the last entry for a key
    /// path is its value. A list, resolved to properties only when read or when the model joins a
    /// context: Swift sets each optional property of every model to nil while it initializes the
    /// model, in the backing data the model starts with — for a fetched model, one that is
    /// replaced before anybody reads it — and finding each key path's property and unwrapping
    /// each value there was work thrown away.
    ///
    /// Keys and values in two arrays: an array of pairs copied a whole pair (the key retained, the
    /// value copied) for each key a search looked at.
    private var detachedKeys: [AnyKeyPath] = []
    private var detachedValues: [Any] = []
    /// The identifier of the model while it is in no context; made when first asked for, as a
    /// fetched model never needs one (a new UUID costs a read of the system's random source).
    private lazy var temporaryID = PersistentIdentifier.temporary(entityName: Schema.entityName(of: Model.self))
    private(set) var attached: NSManagedObject?
    /// The model class's properties, found once for the backing data, not at each access, and
    /// not before one is needed (a fetched model's first backing data needs none).
    private lazy var properties = ModelProperties.of(Model.self)
    /// The context the model joined. Held strongly: the context holds its models only weakly, and
    /// a model's relationships are read through it.
    private(set) var context: ModelContext?

    /// Backing data of a model in no context.
    public init() {}

    /// Backing data over `object`, an object of `context`, with `properties`, the model class's
    /// (found once by a fetch for all its models).
    init(object: NSManagedObject, context: ModelContext, properties: ModelProperties) {
        attached = object
        self.context = context
        self.properties = properties
    }

    /// The object's identifier once the model joined a context; a temporary one before.
    public var persistentModelID: PersistentIdentifier {
        attached.map { PersistentIdentifier($0.objectID) } ?? temporaryID
    }

    /// The value of the property at `key`: the Core Data object's once the model joined a
    /// context (a relationship's as the models of the objects it holds), else the one kept here.
    public func getValue<Value>(forKey key: KeyPath<Model, Value>) -> Value {
        let property = properties.property(for: key)
        guard let attached, let context else {
            let value = detachedKeys.lastIndex { $0 == key }.flatMap { DynamicValue.unwrap(detachedValues[$0]) }
            return StoredValue.cast(value, to: Value.self, property: property.name)
        }
        // A number, date or string whose cell holds the declared type itself is answered as it is,
        // without the `NSNumber` Core Data hands a number out as, which the cast below would take
        // back through Foundation's bridging. Anything else — no value, another width, an enum's
        // raw value — is read as Core Data hands it out.
        if case .attribute = property.kind, case .plain = property.coding,
            let stored = attached._managedScalar(property.managed).value, let typed = stored as? Value
        {
            return typed
        }
        let value: Any? =
            switch property.kind {
            case .attribute:
                attached._managedValue(property.managed).flatMap { stored in
                    // A struct or a collection is held encoded; an enum and a number are converted by the cast.
                    switch property.coding {
                    case .plain, .enumeration: stored
                    case .composite, .collection: property.coding.value(stored, as: Value.self)
                    }
                }
            case .toOne:
                (attached._managedObject(property.managed) as? NSManagedObject).flatMap { context.model(of: $0) }
            case .toMany(let collection, _):
                collection.make(
                    (attached._managedValue(property.managed).flatMap(DynamicValue.elements) ?? []).compactMap {
                        ($0 as? NSManagedObject).flatMap { context.model(of: $0) }
                    })
            }
        return StoredValue.cast(value, to: Value.self, property: property.name)
    }

    /// Sets the value of the property at `key`: in the Core Data object once the model joined a
    /// context (recorded for saving and undo there; a related model not yet in the context joins
    /// it), else here.
    public func setValue<Value>(forKey key: KeyPath<Model, Value>, to newValue: Value) {
        guard let attached, let context else {
            // One entry a key path instance, so a model edited many times before it joins keeps a
            // short list: the macro's accessors pass the same instance each time, found by
            // identity (comparing distinct key paths by value compares their components). An
            // equal key path of another instance gets an entry of its own, after the first: the
            // last entry for a property is its value (read last, attached in order).
            if let index = detachedKeys.lastIndex(where: { $0 === key }) {
                detachedValues[index] = newValue
            } else {
                detachedKeys.append(key)
                detachedValues.append(newValue)
            }
            return
        }
        store(DynamicValue.unwrap(newValue), properties.property(for: key), in: attached, of: context)
        context.noteChange()
    }

    /// Moves the values kept so far into `object`, which then holds them; the models they relate
    /// to join `context` too.
    func attach(to object: NSManagedObject, in context: ModelContext) {
        attached = object
        self.context = context
        let kept = zip(detachedKeys, detachedValues)
        (detachedKeys, detachedValues) = ([], [])
        for (key, value) in kept {
            store(DynamicValue.unwrap(value), properties.property(for: key), in: object, of: context)
        }
    }

    /// Stores `value` (unwrapped) of `property` in `object`: a related model as its object in
    /// `context`.
    private func store(
        _ value: Any?, _ property: ModelProperties.Property, in object: NSManagedObject, of context: ModelContext
    ) {
        switch property.kind {
        case .attribute:
            do {
                object._setManagedValue(try property.coding.storable(value), property.managed)
            } catch {
                // Storing nothing would lose the value without a word; the type's own Codable
                // conformance contradicts itself, which is the program's to fix.
                preconditionFailure("the value of \(property.name) cannot be stored: \(error)")
            }
        case .toOne:
            let related = (value as? any PersistentModel).map { context.managedObject(for: $0) }
            object._setManagedValue(related, property.managed)
        case .toMany:
            let related = ((value as? any ToManyValue)?.models ?? []).map { context.managedObject(for: $0) }
            object._setManagedValue(related, property.managed)
        }
    }
}

/// The persisted properties of a model class by key path, found once per class.
final class ModelProperties: @unchecked Sendable {
    struct Property {
        let name: String
        let managed: _ManagedProperty
        let kind: PropertyKind
        /// How the property's values are stored (an enum as its raw value, a struct as a
        /// composite…): found once, as the dynamic casts that find it are conformance lookups.
        let coding: ValueCoding
    }

    private let byKeyPath: [AnyKeyPath: Property]
    /// The same by the key path instance: the runtime makes one instance of each key path
    /// literal, so the accessors' key paths are the schema's, found by address; hashing a key path
    /// by value walks its components.
    private let byInstance: [ObjectIdentifier: Property]
    private let keyPathsByName: [String: AnyKeyPath]

    private init(_ metadata: [Schema.PropertyMetadata]) {
        var byKeyPath: [AnyKeyPath: Property] = [:]
        var byInstance: [ObjectIdentifier: Property] = [:]
        var keyPathsByName: [String: AnyKeyPath] = [:]
        for property in metadata {
            keyPathsByName[property.name] = property.keypath
            let kind = PropertyKind(Swift.type(of: property.keypath).valueType)
            let coding: ValueCoding
            if case .attribute(let type, _) = kind {
                coding = ValueCoding.of(type)
            } else {
                coding = .plain
            }
            let described = Property(
                name: property.name, managed: _ManagedProperty(property.name), kind: kind, coding: coding)
            byKeyPath[property.keypath] = described
            byInstance[ObjectIdentifier(property.keypath)] = described
        }
        self.byKeyPath = byKeyPath
        self.byInstance = byInstance
        self.keyPathsByName = keyPathsByName
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var byClass: [ObjectIdentifier: ModelProperties] = [:]

    static func of<Model: PersistentModel>(_ type: Model.Type) -> ModelProperties {
        lock.lock()
        defer { lock.unlock() }
        if let known = byClass[ObjectIdentifier(type)] { return known }
        let properties = ModelProperties(type.schemaMetadata)
        byClass[ObjectIdentifier(type)] = properties
        return properties
    }

    /// The name of the persisted property at `key`; `nil` for a key path `@Model` did not list.
    func name(for key: AnyKeyPath) -> String? { byKeyPath[key]?.name }

    /// The key path of the persisted property named `name`.
    func keyPath(named name: String) -> AnyKeyPath? { keyPathsByName[name] }

    /// The property at `key`. A key path `@Model` did not list is a programming error: only the
    /// macro's accessors ask.
    func property(for key: AnyKeyPath) -> Property {
        if let property = byInstance[ObjectIdentifier(key)] { return property }
        guard let property = byKeyPath[key] else { preconditionFailure("\(key) is not a persisted property") }
        return property
    }
}

/// Values between a model's Swift types and Core Data's.
enum StoredValue {
    /// `value` as the property's Swift type: numbers converted to the declared width, no value
    /// as `nil` of an optional type. A non-optional property without a value traps naming it, as
    /// Apple's accessors do.
    static func cast<Value>(_ value: Any?, to type: Value.Type, property: String) -> Value {
        if let value, let converted = converted(value, to: Value.self) { return converted }
        if let optional = Value.self as? any OptionalValue.Type, let none = optional.noValue as? Value { return none }
        preconditionFailure("the property \(property) has no value of type \(Value.self)")
    }
}

extension StoredValue {
    /// `value`, as Core Data holds it, as `Value`: numbers converted to the declared width, a raw
    /// value to its enum; `nil` when it is none of these.
    static func converted<Value>(_ value: Any, to type: Value.Type) -> Value? {
        if let typed = value as? Value { return typed }
        if let number = value as? NSNumber, let converted = number.converted(to: Value.self) { return converted }
        let target = (Value.self as? any OptionalValue.Type)?.wrappedType ?? Value.self
        if let raw = target as? any RawRepresentable.Type, let made = raw.fromStored(value) as? Value { return made }
        return nil
    }

    /// `value` as Core Data stores it: an enum as its raw value.
    static func storable(_ value: Any?) -> Any? {
        guard let value, let enumeration = value as? any RawRepresentable else { return value }
        return enumeration.rawValue
    }
}

extension RawRepresentable {
    /// The type of the raw value, which the store holds.
    static var rawValueType: Any.Type { RawValue.self }

    /// The value of the stored raw value `value`; `nil` when it is not one of the type's.
    static func fromStored(_ value: Any) -> Self? {
        if let raw = value as? RawValue { return Self(rawValue: raw) }
        if let number = value as? NSNumber, let raw = number.converted(to: RawValue.self) { return Self(rawValue: raw) }
        return nil
    }
}

/// An `Optional`, seen without its wrapped type.
protocol OptionalValue {
    static var noValue: Any { get }
    static var wrappedType: Any.Type { get }
}

extension Optional: OptionalValue {
    static var noValue: Any { Optional<Wrapped>.none as Any }
    static var wrappedType: Any.Type { Wrapped.self }
}

extension NSNumber {
    /// The number as `type`, when `type` is a number type (or an optional of one).
    func converted<Value>(to type: Value.Type) -> Value? {
        let target = (Value.self as? any OptionalValue.Type)?.wrappedType ?? Value.self
        let converted: Any? =
            switch target {
            case is Int.Type: intValue
            case is Int64.Type: int64Value
            case is Int32.Type: int32Value
            case is Int16.Type: int16Value
            case is Int8.Type: int8Value
            case is UInt8.Type: uint8Value
            case is UInt16.Type: uint16Value
            case is UInt32.Type: uint32Value
            case is UInt64.Type: uint64Value
            case is UInt.Type: uintValue
            case is Double.Type: doubleValue
            case is Float.Type: floatValue
            case is Bool.Type: boolValue
            default: nil
            }
        return converted.flatMap { $0 as? Value ?? Optional($0) as? Value }
    }
}
