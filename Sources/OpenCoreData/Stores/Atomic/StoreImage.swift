/// The contents of an atomic store's file as its format reads and writes them: metadata, the
/// last reference handed out, and every object with its values.
struct StoreImage {
    /// One object: its entity, its reference (the number in its ID) and its values by slot of
    /// the entity's layout — attribute values as objects hold them, relationships as the
    /// destinations' references (`[Int64]`, at most one for a to-one).
    struct Object {
        let entity: NSEntityDescription
        let reference: Int64
        var values: SlotValues
    }

    /// Includes `NSStoreUUIDKey` and `NSStoreTypeKey`.
    var metadata: [String: Any]
    var lastReference: Int64
    var objects: [Object]

    /// Checks what a format cannot check alone: every reference is used once, and every
    /// relationship names objects that exist and are of its destination entity.
    ///
    /// - Throws: ``StoreFileProblem`` for a repeated reference, a missing destination or one
    ///   of the wrong entity.
    func validate() throws {
        var entities: [Int64: NSEntityDescription] = [:]
        entities.reserveCapacity(objects.count)
        for object in objects {
            guard entities.updateValue(object.entity, forKey: object.reference) == nil else {
                throw StoreFileProblem("holds two objects with the reference \(object.reference)")
            }
        }
        for object in objects {
            let layout = object.entity.layout
            for slot in layout.relationshipSlots {
                guard let references = object.values[slot] as? [Int64],
                    let relationship = layout.properties[slot] as? NSRelationshipDescription
                else { continue }
                if !relationship.isToMany, references.count > 1 {
                    throw StoreFileProblem("gives the to-one relationship \(relationship.name) several destinations")
                }
                for reference in references {
                    guard let entity = entities[reference] else {
                        throw StoreFileProblem(
                            "relates object \(object.reference) through \(relationship.name) to object \(reference), "
                                + "which it does not hold")
                    }
                    if let destination = relationship.destinationEntity, !entity.isKindOf(entity: destination) {
                        throw StoreFileProblem(
                            "relates object \(object.reference) through \(relationship.name) to a \(entity.name ?? "?"), "
                                + "not a \(destination.name ?? "?")")
                    }
                }
            }
        }
    }
}

/// Why a store file cannot be read, for the error the store throws.
struct StoreFileProblem: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// An attribute value as the atomic formats write it: one case per kind of Core Data value.
enum StoredValue: Equatable {
    case integer(Int64)
    case bool(Bool)
    case double(Double)
    case decimal(Decimal)
    case string(String)
    /// Seconds since 2001-01-01, as Apple stores dates.
    case date(Double)
    case data(Data)
    case uuid(UUID)
    /// A URI attribute's, or an object-ID attribute's, URI.
    case uri(String)

    /// The stored form of an attribute value; `nil` for no value (or one the type cannot hold).
    init?(_ value: Any?, attribute: NSAttributeDescription) {
        guard let value = DynamicValue.unwrap(value) else { return nil }
        switch attribute.attributeType {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            guard let number = DynamicValue.number(value) else { return nil }
            if let exact = number.exactInt {
                self = .integer(exact)
            } else {
                let double = number.doubleValue
                guard !double.isNaN else { return nil }
                self = .integer(double >= 9.2e18 ? .max : double <= -9.2e18 ? .min : Int64(double.rounded(.towardZero)))
            }
        case .booleanAttributeType:
            if let bool = value as? Bool, !DynamicValue.isObject(value) {
                self = .bool(bool)
            } else if let number = DynamicValue.number(value) {
                self = .bool(number.doubleValue != 0)
            } else {
                return nil
            }
        case .doubleAttributeType, .floatAttributeType:
            guard let number = DynamicValue.number(value) else { return nil }
            self = .double(number.doubleValue)
        case .decimalAttributeType:
            guard let number = DynamicValue.number(value) else { return nil }
            self = .decimal(number.decimalValue)
        case .stringAttributeType:
            self = .string(value as? String ?? String(describing: value))
        case .dateAttributeType:
            guard let date = value as? Date else { return nil }
            self = .date(date.timeIntervalSinceReferenceDate)
        case .binaryDataAttributeType:
            guard let data = value as? Data ?? (value as? [UInt8]).map({ Data($0) }) else { return nil }
            self = .data(data)
        case .UUIDAttributeType:
            guard let uuid = value as? UUID else { return nil }
            self = .uuid(uuid)
        case .URIAttributeType:
            guard let text = (value as? URL)?.absoluteString ?? (value as? String) else { return nil }
            self = .uri(text)
        case .objectIDAttributeType:
            guard let id = value as? NSManagedObjectID else { return nil }
            self = .uri(id.uriRepresentation().absoluteString)
        case .transformableAttributeType:
            guard let data = Transformable.encode(value, attribute: attribute) else { return nil }
            self = .data(data)
        default:
            guard let data = value as? Data else { return nil }
            self = .data(data)
        }
    }

    /// The attribute value, as the SQLite store reads the same value back (integers as `Int`).
    ///
    /// - Throws: ``StoreFileProblem`` when the stored kind is not one the attribute's type holds.
    func value(for attribute: NSAttributeDescription) throws -> Any? {
        switch (attribute.attributeType, self) {
        case (.integer16AttributeType, .integer(let value)), (.integer32AttributeType, .integer(let value)),
            (.integer64AttributeType, .integer(let value)):
            return Int(value)
        case (.booleanAttributeType, .bool(let value)): return value
        case (.booleanAttributeType, .integer(let value)): return value != 0
        case (.doubleAttributeType, .double(let value)): return value
        case (.doubleAttributeType, .integer(let value)): return Double(value)
        case (.floatAttributeType, .double(let value)): return Float(value)
        case (.floatAttributeType, .integer(let value)): return Float(value)
        case (.decimalAttributeType, .decimal(let value)): return value
        case (.decimalAttributeType, .integer(let value)): return Decimal(value)
        case (.decimalAttributeType, .double(let value)): return value.isFinite ? Decimal(value) : Decimal.nan
        case (.stringAttributeType, .string(let value)): return value
        case (.dateAttributeType, .date(let value)): return Date(timeIntervalSinceReferenceDate: value)
        case (.binaryDataAttributeType, .data(let value)): return value
        case (.UUIDAttributeType, .uuid(let value)): return value
        case (.URIAttributeType, .uri(let value)), (.objectIDAttributeType, .uri(let value)):
            return URL(string: value)
        case (.transformableAttributeType, .data(let value)): return Transformable.decode(value, attribute: attribute)
        case (.undefinedAttributeType, .data(let value)): return value
        default:
            throw StoreFileProblem(
                "holds a \(kindName) for the \(attribute.name) attribute of \(attribute.entity?.name ?? "?"), "
                    + "whose type is \(attribute.attributeType)")
        }
    }

    private var kindName: String {
        switch self {
        case .integer: "integer"
        case .bool: "Boolean"
        case .double: "floating-point number"
        case .decimal: "decimal number"
        case .string: "string"
        case .date: "date"
        case .data: "data"
        case .uuid: "UUID"
        case .uri: "URI"
        }
    }
}

/// A file format of an atomic store: how a ``StoreImage`` becomes bytes and back.
protocol AtomicStoreFormat {
    /// The image of `data`, its objects resolved against `model`'s entities.
    ///
    /// - Throws: ``StoreFileProblem`` for anything damaged, unknown or out of bounds.
    /// `check` sees the metadata before any object is read (and may throw to stop there).
    static func decode(
        _ data: Data, model: NSManagedObjectModel, checkingMetadata check: ([String: Any]) throws -> Void
    ) throws -> StoreImage
    /// The bytes of `image`.
    static func encode(_ image: StoreImage) throws -> Data
    /// The metadata of `data`, read without a model.
    static func metadata(of data: Data) throws -> [String: Any]
    /// `data` with its metadata replaced by `metadata`, objects untouched.
    static func replacingMetadata(_ metadata: [String: Any], in data: Data) throws -> Data
}

extension AtomicStoreFormat {
    /// The image of `data`, its metadata taken as it is.
    static func decode(_ data: Data, model: NSManagedObjectModel) throws -> StoreImage {
        try decode(data, model: model, checkingMetadata: { _ in })
    }
}
