import OpenCoreData

/// How a property's Swift value becomes what Core Data holds, beyond the types Core Data stores
/// as they are.
///
/// * An enum with a raw value is stored as the raw value.
/// * A `Codable` struct is a composite attribute (`NSCompositeAttributeDescription`), as SwiftData
///   stores it: a dictionary of its properties in memory, a column per property in the store, so
///   its members can be queried.
/// * An array, set or dictionary of `Codable` values is stored as one binary property list, as
///   SwiftData stores collections of values; so is any other `Codable` value a composite cannot
///   hold (an enum with associated values, a struct holding a list).
enum ValueCoding: Sendable {
    case plain
    case enumeration
    case composite
    case collection

    /// How values of `type` (an optional's wrapped type) are stored.
    static func of(_ type: Any.Type) -> ValueCoding {
        if ModelBuilder.attributeType(of: type) != nil {
            return type is any RawRepresentable.Type ? .enumeration : .plain
        }
        if type is any CodableCollection.Type { return .collection }
        if type is any Codable.Type {
            return CompositeEncoding.shape(of: type) != nil ? .composite : .collection
        }
        return .plain
    }

    /// `value` (a property's Swift value, unwrapped) as Core Data holds it.
    ///
    /// - Throws: the encoding error of a value whose `Encodable` conformance does not encode what
    ///   its `Decodable` one reads (the shape the store was made for).
    func storable(_ value: Any?) throws -> Any? {
        guard let value else { return nil }
        switch self {
        case .plain: return value
        case .enumeration: return StoredValue.storable(value)
        case .composite:
            guard let encodable = value as? any Encodable else { return nil }
            return try CompositeEncoding.value(of: encodable)
        case .collection:
            guard let encodable = value as? any Encodable else { return nil }
            return try CollectionEncoding.data(of: encodable)
        }
    }

    /// `stored` (what Core Data holds) as `Value`, or `nil` when it is not one.
    func value<Value>(_ stored: Any, as type: Value.Type) -> Value? {
        switch self {
        case .plain, .enumeration:
            return StoredValue.converted(stored, to: Value.self)
        case .composite, .collection:
            if let typed = stored as? Value { return typed }
            let target = (Value.self as? any OptionalValue.Type)?.wrappedType ?? Value.self
            guard let decodable = target as? any Decodable.Type else { return nil }
            let decoded: Any? =
                self == .composite
                ? try? CompositeEncoding.decode(decodable, from: stored)
                : try? CollectionEncoding.decode(decodable, from: stored)
            return decoded.flatMap { $0 as? Value }
        }
    }
}

/// A collection of values that SwiftData stores as a binary property list.
protocol CodableCollection {}
extension Array: CodableCollection where Element: Codable {}
extension Set: CodableCollection where Element: Codable {}
extension Dictionary: CodableCollection where Key: Codable, Value: Codable {}

/// Collections of values as one binary property list (`Data`).
enum CollectionEncoding {
    static func data(of value: any Encodable) throws -> Data {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        return try encoder.encode(value)
    }

    static func decode<T: Decodable>(_ type: T.Type, from stored: Any) throws -> T {
        guard let data = stored as? Data else {
            throw DecodingError.typeMismatch(
                Data.self, .init(codingPath: [], debugDescription: "A collection is stored as a property list's data."))
        }
        return try PropertyListDecoder().decode(type, from: data)
    }
}

// MARK: Composite attributes

/// `Codable` structs as composite attributes: their shape (a composite's elements), their values
/// as the dictionaries Core Data holds, and back.
///
/// The shape is found by decoding the type once with a decoder that records what the type's
/// `init(from:)` asks for — each property's coding key and type — and answers with placeholder
/// values, so the struct's own `Codable` conformance says what it holds.
enum CompositeEncoding {
    /// The composite attribute named `name` that holds values of `type`.
    ///
    /// - Throws: ``Problem`` naming what cannot be an element (a collection, an enum that is not
    ///   `CaseIterable`, a type with no keyed coding).
    static func description(of type: any Decodable.Type, named name: String) throws -> NSCompositeAttributeDescription {
        let recorder = ShapeRecorder(path: name)
        _ = try type.init(from: ShapeDecoder(recorder: recorder))
        let composite = NSCompositeAttributeDescription()
        composite.name = name
        composite.elements = recorder.elements
        return composite
    }

    /// The dictionary Core Data holds for `value`.
    ///
    /// - Throws: `EncodingError` when the value does not encode as keyed values.
    static func value(of value: any Encodable) throws -> [String: Any] {
        let storage = EncodedValue()
        try value.encode(to: ValueEncoder(storage: storage, codingPath: []))
        guard let dictionary = storage.resolved as? [String: Any] else {
            throw EncodingError.invalidValue(
                value, .init(codingPath: [], debugDescription: "A composite encodes as keyed values."))
        }
        return dictionary
    }

    /// The value of `type` made of `stored`, a composite's dictionary.
    ///
    /// - Throws: `DecodingError` when `stored` does not hold one.
    static func decode<T: Decodable>(_ type: T.Type, from stored: Any) throws -> T {
        try ValueDecoder.decode(type, from: stored, codingPath: [])
    }

    /// The element of the composite that stores `type` which `keyPath` reads, or `nil` when
    /// `keyPath` is not one of the type's stored properties the composite holds (a computed
    /// property, a property renamed by its coding keys): such a key path is evaluated in memory.
    static func elementName(of keyPath: AnyKeyPath, in type: Any.Type) -> String? {
        guard let names = shape(of: type)?.names else { return nil }
        // A key path names its last component (`\Address.city`) in its description.
        let description = keyPath.debugDescription
        guard let dot = description.lastIndex(of: ".") else { return nil }
        let name = String(description[description.index(after: dot)...])
        return names.contains(name) ? name : nil
    }

    /// What a type's composite holds, or why it cannot be one.
    struct Shape {
        let names: Set<String>
    }

    private static let shapesLock = NSLock()
    nonisolated(unsafe) private static var shapesByType: [ObjectIdentifier: Shape?] = [:]

    /// The shape of the composite that stores `type`, found once per type; `nil` when a
    /// composite cannot hold its values (a type that is not `Codable`, an enum with associated
    /// values, a struct holding a list).
    static func shape(of type: Any.Type) -> Shape? {
        shapesLock.lock()
        defer { shapesLock.unlock() }
        if let known = shapesByType[ObjectIdentifier(type)] { return known }
        var shape: Shape?
        if type is any Codable.Type, let decodable = type as? any Decodable.Type {
            // A struct without stored members has nothing for a composite's columns to hold.
            shape = (try? description(of: decodable, named: "")).flatMap { composite in
                composite.elements.isEmpty ? nil : Shape(names: Set(composite.elements.map(\.name)))
            }
        }
        shapesByType[ObjectIdentifier(type)] = shape
        return shape
    }

    /// Why a type cannot be stored as a composite.
    struct Problem: Error {
        let message: String
    }
}

/// What a struct's `init(from:)` asked for, as a composite's elements.
private final class ShapeRecorder {
    let path: String
    var elements: [NSAttributeDescription] = []

    init(path: String) { self.path = path }

    func add(_ name: String, type: Any.Type, optional: Bool) throws {
        if let attributeType = ModelBuilder.attributeType(of: type) {
            let element = NSAttributeDescription()
            element.name = name
            element.attributeType = attributeType
            element.isOptional = optional
            elements.append(element)
            return
        }
        throw CompositeEncoding.Problem(
            message: "\(path).\(name) has the type \(type), which a composite attribute cannot hold.")
    }
}

private struct ShapeDecoder: Decoder {
    let recorder: ShapeRecorder
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(ShapeContainer<Key>(recorder: recorder, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw CompositeEncoding.Problem(message: "\(recorder.path) does not encode as keyed values.")
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw CompositeEncoding.Problem(message: "\(recorder.path) does not encode as keyed values.")
    }
}

private struct ShapeContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let recorder: ShapeRecorder
    var codingPath: [any CodingKey]
    var allKeys: [Key] { [] }

    func contains(_ key: Key) -> Bool { true }

    func decodeNil(forKey key: Key) throws -> Bool { false }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try leaf(false, key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try leaf("", key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try leaf(0, key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try leaf(0, key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try leaf(0, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try leaf(0, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try leaf(0, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try leaf(0, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try leaf(0, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try leaf(0, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try leaf(0, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try leaf(0, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try leaf(0, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try leaf(0, key) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        guard let value = try element(type, key, optional: false) else {
            throw CompositeEncoding.Problem(
                message:
                    "\(recorder.path).\(key.stringValue) has the type \(type), which a composite attribute cannot hold."
            )
        }
        return value
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try optional(type, key) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try optional(type, key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try optional(type, key) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try optional(type, key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try optional(type, key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try optional(type, key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try optional(type, key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try optional(type, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try optional(type, key) }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { try optional(type, key) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        throw CompositeEncoding.Problem(message: "\(recorder.path) nests containers by hand, which cannot be stored.")
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw CompositeEncoding.Problem(message: "\(recorder.path) nests containers by hand, which cannot be stored.")
    }

    func superDecoder() throws -> any Decoder {
        throw CompositeEncoding.Problem(message: "\(recorder.path) decodes a superclass, which cannot be stored.")
    }

    func superDecoder(forKey key: Key) throws -> any Decoder { try superDecoder() }

    private func leaf<T>(_ placeholder: T, _ key: Key) throws -> T {
        try recorder.add(key.stringValue, type: T.self, optional: false)
        return placeholder
    }

    private func optional<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T? {
        _ = try element(type, key, optional: true)
        return nil
    }

    /// Records the element `key` of `type` and answers a placeholder of it, or `nil` when the
    /// type has none to give.
    private func element<T: Decodable>(_ type: T.Type, _ key: Key, optional: Bool) throws -> T? {
        let name = key.stringValue
        if ModelBuilder.attributeType(of: type) != nil {
            try recorder.add(name, type: type, optional: optional)
            return Placeholder.value(of: type)
        }
        if type is any CodableCollection.Type {
            throw CompositeEncoding.Problem(
                message: "\(recorder.path).\(name) is a collection, which a composite attribute cannot hold.")
        }
        // A nested struct: a composite of its own.
        let nested = ShapeRecorder(path: recorder.path + "." + name)
        let value = try type.init(from: ShapeDecoder(recorder: nested, codingPath: codingPath + [key]))
        let composite = NSCompositeAttributeDescription()
        composite.name = name
        composite.isOptional = optional
        composite.elements = nested.elements
        recorder.elements.append(composite)
        return value
    }
}

/// Placeholder values that stand for a leaf while a struct's shape is recorded.
private enum Placeholder {
    static func value<T>(of type: T.Type) -> T? {
        let placeholder: Any? =
            switch type {
            case is Bool.Type: false
            case is String.Type: ""
            case is Date.Type: Date(timeIntervalSinceReferenceDate: 0)
            case is Data.Type: Data()
            case is UUID.Type: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
            case is URL.Type: URL(string: "about:blank")
            case is Decimal.Type: Decimal(0)
            case let cases as any CaseIterable.Type: cases.firstCase
            default: NSNumber(value: 0).converted(to: type)
            }
        return placeholder as? T
    }
}

extension CaseIterable {
    fileprivate static var firstCase: Any? { allCases.first }
}

// MARK: Encoding values

/// What one value encoded to: a single value or keyed values.
private final class EncodedValue {
    var single: Any?
    var keyed: [String: EncodedValue]?

    /// The value as Core Data holds it: a dictionary for keyed values (a nested value without
    /// any leaf left out), the single value otherwise.
    var resolved: Any? {
        guard let keyed else { return single }
        var dictionary: [String: Any] = [:]
        for (key, value) in keyed { dictionary[key] = value.resolved }
        return dictionary
    }
}

private struct ValueEncoder: Encoder {
    let storage: EncodedValue
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if storage.keyed == nil { storage.keyed = [:] }
        return KeyedEncodingContainer(KeyedValueEncoder<Key>(storage: storage, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        RefusingUnkeyedEncoder(codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueEncoder(storage: storage, codingPath: codingPath)
    }

    /// `value` as Core Data holds it: a type it stores as it is, or what the value encodes to.
    static func encoded(_ value: some Encodable, codingPath: [any CodingKey]) throws -> Any? {
        if ModelBuilder.attributeType(of: type(of: value)) != nil, !(value is any RawRepresentable) { return value }
        let storage = EncodedValue()
        try value.encode(to: ValueEncoder(storage: storage, codingPath: codingPath))
        return storage.resolved
    }
}

private struct KeyedValueEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let storage: EncodedValue
    var codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws {}

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let element = EncodedValue()
        element.single = try ValueEncoder.encoded(value, codingPath: codingPath + [key])
        storage.keyed?[key.stringValue] = element
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        let element = EncodedValue()
        element.keyed = [:]
        storage.keyed?[key.stringValue] = element
        return KeyedEncodingContainer(KeyedValueEncoder<NestedKey>(storage: element, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        RefusingUnkeyedEncoder(codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder { ValueEncoder(storage: storage, codingPath: codingPath) }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        let element = EncodedValue()
        storage.keyed?[key.stringValue] = element
        return ValueEncoder(storage: element, codingPath: codingPath + [key])
    }
}

private struct SingleValueEncoder: SingleValueEncodingContainer {
    let storage: EncodedValue
    var codingPath: [any CodingKey]

    mutating func encodeNil() throws { storage.single = nil }

    mutating func encode<T: Encodable>(_ value: T) throws {
        storage.single = try ValueEncoder.encoded(value, codingPath: codingPath)
    }
}

/// A composite's element cannot be a list: encoding one fails rather than store part of a value.
private struct RefusingUnkeyedEncoder: UnkeyedEncodingContainer {
    var codingPath: [any CodingKey]
    var count: Int { 0 }

    private func refuse(_ value: Any) -> EncodingError {
        EncodingError.invalidValue(
            value, .init(codingPath: codingPath, debugDescription: "A composite attribute cannot hold a list."))
    }

    mutating func encodeNil() throws { throw refuse(NSNull()) }
    mutating func encode<T: Encodable>(_ value: T) throws { throw refuse(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        KeyedEncodingContainer(KeyedValueEncoder<NestedKey>(storage: EncodedValue(), codingPath: codingPath))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
    mutating func superEncoder() -> any Encoder { ValueEncoder(storage: EncodedValue(), codingPath: codingPath) }
}

// MARK: Decoding values

private struct ValueDecoder: Decoder {
    let value: Any
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// `stored` as `type`: a value Core Data holds as it is (numbers converted to the declared
    /// width), or what `type` decodes from it.
    static func decode<T: Decodable>(_ type: T.Type, from stored: Any, codingPath: [any CodingKey]) throws -> T {
        if let typed = stored as? T { return typed }
        if ModelBuilder.attributeType(of: type) != nil, !(type is any RawRepresentable.Type),
            let converted = StoredValue.converted(stored, to: type)
        {
            return converted
        }
        return try T(from: ValueDecoder(value: stored, codingPath: codingPath))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard let dictionary = value as? [String: Any] else {
            throw DecodingError.typeMismatch(
                [String: Any].self, .init(codingPath: codingPath, debugDescription: "A composite holds a dictionary."))
        }
        return KeyedDecodingContainer(KeyedValueDecoder<Key>(dictionary: dictionary, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch(
            [Any].self, .init(codingPath: codingPath, debugDescription: "A composite attribute holds no list."))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueDecoder(value: value, codingPath: codingPath)
    }
}

private struct KeyedValueDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let dictionary: [String: Any]
    var codingPath: [any CodingKey]
    var allKeys: [Key] { dictionary.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { dictionary[key.stringValue] != nil }

    func decodeNil(forKey key: Key) throws -> Bool {
        guard let value = dictionary[key.stringValue] else { return true }
        return value is NSNull
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        guard let stored = dictionary[key.stringValue] else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: codingPath, debugDescription: "The store holds no value for it."))
        }
        return try ValueDecoder.decode(type, from: stored, codingPath: codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try ValueDecoder(value: dictionary[key.stringValue] ?? [String: Any](), codingPath: codingPath + [key])
            .container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try ValueDecoder(value: dictionary, codingPath: codingPath + [key]).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { ValueDecoder(value: dictionary, codingPath: codingPath) }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        ValueDecoder(value: dictionary[key.stringValue] ?? [String: Any](), codingPath: codingPath + [key])
    }
}

private struct SingleValueDecoder: SingleValueDecodingContainer {
    let value: Any
    var codingPath: [any CodingKey]

    func decodeNil() -> Bool { value is NSNull }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try ValueDecoder.decode(type, from: value, codingPath: codingPath)
    }
}
