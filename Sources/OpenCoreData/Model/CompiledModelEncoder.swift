/// Encodes a managed object model as the `NSKeyedArchiver` archive Apple writes to compiled
/// `.mom` files and to a SQLite store's `Z_MODELCACHE`, with the classes and keys seen in the
/// fixtures' caches (STORE-FORMAT.md, "Bookkeeping tables"): entities in an `NSKnownKeysDictionary1`,
/// each entity listing every property — inherited ones as its own copies, as Apple's do.
///
/// Validation predicates, fetch-request templates, fetched-property requests and partial-index
/// predicates are archived predicates, not written yet (DEVIATIONS.md); the decoder reads them as
/// absent too.
package struct CompiledModelEncoder {
    private var objects: [PropertyListValue] = [.string("$null")]
    private var classes: [String: Int] = [:]
    private var strings: [String: Int] = [:]
    private var entityIndex: [ObjectIdentifier: Int] = [:]
    /// The archived copy of a property in an entity: (entity, property name) → object index.
    private var propertyIndex: [String: Int] = [:]

    /// `NSPropertyDescription`'s `_P` flags as the fixtures show them: bits always set, optional,
    /// no version-hash modifier, ordered. The other bits' meanings are unknown.
    private static let baseFlags = 0x71
    private static let optionalFlag = 0x02
    private static let noHashModifierFlag = 0x80
    private static let orderedFlag = 0x400

    /// The binary property list of `model`'s archive.
    package static func archive(_ model: NSManagedObjectModel) -> Data {
        var encoder = CompiledModelEncoder()
        let root = encoder.encode(model)
        return encoder.archiveData(root: root)
    }

    /// The binary property list of the archive whose root object is `root`.
    func archiveData(root: PropertyListValue) -> Data {
        let top: PropertyListValue = .dictionary([
            ("$version", .integer(100_000)), ("$archiver", .string("NSKeyedArchiver")),
            ("$top", .dictionary([("root", root)])), ("$objects", .array(objects)),
        ])
        return BinaryPropertyListWriter.data(top)
    }

    /// `value` as Apple's `NSKeyedArchiver` archives it, written deterministically (dictionary keys
    /// sorted, objects in encounter order), or `nil` when the value is not made only of strings,
    /// numbers, Booleans, dates, UUIDs, URLs, decimals, data, arrays and string-keyed dictionaries.
    /// Foundation's archiver on Linux orders keys differently from one call to the next, so the
    /// same transformable value would be stored as different bytes each save.
    package static func plainArchive(_ value: Any) -> Data? {
        guard let plain = plainValue(value, depth: 0) else { return nil }
        var encoder = CompiledModelEncoder()
        let root = encoder.value(plain)
        return encoder.archiveData(root: root)
    }

    /// `value` with Foundation objects turned into the Swift values ``value(_:)`` archives (an
    /// `NSNumber` by its own type: `c` is a Boolean), or `nil` for anything else.
    private static func plainValue(_ value: Any, depth: Int) -> Any? {
        guard depth < 64, let value = DynamicValue.unwrap(value) else { return nil }
        if DynamicValue.isObject(value), let number = value as? NSNumber, !(value is NSDecimalNumber) {
            switch String(cString: number.objCType) {
            case "c", "B": return number.boolValue
            case "f", "d": return number.doubleValue
            default: return number.int64Value
            }
        }
        switch value {
        case is String, is Bool, is Date, is UUID, is URL, is Decimal, is Data: return value
        case let array as [Any]:
            var items: [Any] = []
            for item in array {
                guard let plain = plainValue(item, depth: depth + 1) else { return nil }
                items.append(plain)
            }
            return items
        case let dictionary as [String: Any]:
            var pairs: [String: Any] = [:]
            for (key, item) in dictionary {
                guard let plain = plainValue(item, depth: depth + 1) else { return nil }
                pairs[key] = plain
            }
            return pairs
        default:
            guard let number = DynamicValue.number(value) else { return nil }
            switch number {
            case .int(let int): return int
            case .double(let double): return double
            case .uint, .decimal: return nil
            }
        }
    }

    // MARK: Archive building blocks

    mutating func reserve() -> Int {
        objects.append(.bool(false))
        return objects.count - 1
    }

    /// Appends `item` to `$objects`; its reference.
    mutating func append(_ item: PropertyListValue) -> PropertyListValue {
        objects.append(item)
        return .uid(objects.count - 1)
    }

    mutating func string(_ text: String?) -> PropertyListValue {
        guard let text else { return .uid(0) }
        if let index = strings[text] { return .uid(index) }
        strings[text] = objects.count
        return append(.string(text))
    }

    mutating func classReference(_ chain: [String]) -> PropertyListValue {
        if let index = classes[chain[0]] { return .uid(index) }
        classes[chain[0]] = objects.count
        return append(
            .dictionary([
                ("$classname", .string(chain[0])), ("$classes", .array(chain.map { PropertyListValue.string($0) })),
            ]))
    }

    @discardableResult
    mutating func object(
        _ chain: [String], _ fields: [(String, PropertyListValue)], at reserved: Int? = nil
    ) -> PropertyListValue {
        let index = reserved ?? reserve()
        objects[index] = .dictionary(fields + [("$class", classReference(chain))])
        return .uid(index)
    }

    static let arrayChain = ["NSArray", "NSObject"]
    static let mutableArrayChain = ["NSMutableArray", "NSArray", "NSObject"]
    static let dictionaryChain = ["NSDictionary", "NSObject"]
    static let mutableDictionaryChain = ["NSMutableDictionary", "NSDictionary", "NSObject"]

    mutating func array(_ items: [PropertyListValue], _ chain: [String] = arrayChain) -> PropertyListValue {
        object(chain, [("NS.objects", .array(items))])
    }

    mutating func dictionary(
        _ pairs: [(String, PropertyListValue)], _ chain: [String] = dictionaryChain
    ) -> PropertyListValue {
        let keys = pairs.map { string($0.0) }
        return object(chain, [("NS.keys", .array(keys)), ("NS.objects", .array(pairs.map(\.1)))])
    }

    /// A plain value (default values, user info): numbers and Booleans inline, strings shared,
    /// dates, UUIDs, URLs and collections as Foundation archives them.
    mutating func value(_ value: Any?) -> PropertyListValue {
        guard let value = DynamicValue.unwrap(value), !(value is NSNull) else { return .uid(0) }
        let stored: PropertyListValue
        switch value {
        case let string as String: return self.string(string)
        case let flag as Bool: stored = .bool(flag)
        case let date as Date:
            return object(["NSDate", "NSObject"], [("NS.time", .real(date.timeIntervalSinceReferenceDate))])
        case let uuid as UUID:
            return object(
                ["NSUUID", "NSObject"], [("NS.uuidbytes", .data(withUnsafeBytes(of: uuid.uuid) { Data($0) }))])
        case let url as URL:
            return object(["NSURL", "NSObject"], [("NS.base", .uid(0)), ("NS.relative", string(url.absoluteString))])
        case let decimal as Decimal:
            return object(
                ["NSDecimalNumber", "NSNumber", "NSValue", "NSObject"], [("NS.decimal", string("\(decimal)"))])
        case let data as Data: stored = .data(data)
        case let array as [Any]: return self.array(array.map { self.value($0) })
        case let dictionary as [String: Any]:
            return self.dictionary(dictionary.sorted { $0.key < $1.key }.map { ($0.key, self.value($0.value)) })
        case let dictionary as [AnyHashable: Any]:
            let pairs = dictionary.compactMap { key, item in (key.base as? String).map { ($0, item) } }
            return self.dictionary(pairs.sorted { $0.0 < $1.0 }.map { ($0.0, self.value($0.1)) })
        default:
            switch DynamicValue.number(value) {
            case .int(let int)?: stored = .integer(Int(int))
            case .uint(let uint)?: stored = .integer(Int(truncatingIfNeeded: uint))
            case let number?: stored = .real(number.doubleValue)
            case nil:
                return string(String(describing: value))
            }
        }
        return append(stored)
    }

    // MARK: The model

    private mutating func encode(_ model: NSManagedObjectModel) -> PropertyListValue {
        let root = reserve()
        let entities = model.entities.sorted { ($0.name ?? "") < ($1.name ?? "") }
        for entity in entities { entityIndex[ObjectIdentifier(entity)] = reserve() }
        for entity in entities {
            for property in entity.propertiesByName.values {
                propertyIndex[key(entity, property.name)] = reserve()
            }
        }
        for entity in entities { encode(entity, model: root) }
        let names = entities.map { string($0.name ?? "") }
        let keys = array(names)
        let mapping = object(
            ["NSKnownKeysMappingStrategy1", "NSKnownKeysMappingStrategy", "NSObject"],
            [("length", .integer(entities.count)), ("keys", keys), ("version", .integer(1))])
        let values = array(entities.map { .uid(entityIndex[ObjectIdentifier($0)]!) })
        let entitiesDictionary = object(
            ["NSKnownKeysDictionary1", "NSKnownKeysDictionary", "NSMutableDictionary", "NSDictionary", "NSObject"],
            [
                ("values", values), ("searchMapping", mapping),
                ("emptyToken", string("__empty_slot_token_4c24_98dc_ac1e_b773__")), ("version", .integer(1)),
            ])
        let identifiers = object(
            ["NSSet", "NSObject"],
            [
                (
                    "NS.objects",
                    .array(model.versionIdentifiers.map { String(describing: $0.base) }.sorted().map { string($0) })
                )
            ])
        var fields: [(String, PropertyListValue)] = [
            ("NSEntities", entitiesDictionary), ("NSFetchRequestTemplates", .uid(0)),
            ("NSVersionIdentifiers", identifiers),
        ]
        let configurations = model.configurations.filter { $0 != "PF_DEFAULT_CONFIGURATION_NAME" }
        if !configurations.isEmpty {
            let pairs = configurations.map { name -> (String, PropertyListValue) in
                let members = (model.entities(forConfigurationName: name) ?? []).compactMap {
                    entityIndex[ObjectIdentifier($0)].map(PropertyListValue.uid)
                }
                return (name, array(members))
            }
            fields.append(("NSConfigurations", dictionary(pairs)))
        }
        return object(["NSManagedObjectModel", "NSObject"], fields, at: root)
    }

    /// A default value archived as its attribute type says: integers and Booleans as plist
    /// integers and Booleans (an `NSNumber` 0 is not `false` for an integer attribute).
    private mutating func defaultValue(_ attribute: NSAttributeDescription) -> PropertyListValue {
        guard let number = DynamicValue.unwrap(attribute.defaultValue).flatMap(DynamicValue.number) else {
            return value(attribute.defaultValue)
        }
        let stored: PropertyListValue
        switch attribute.attributeType {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            if case .int(let int) = number {
                stored = .integer(Int(int))
            } else {
                stored = .integer(Int(exactly: number.doubleValue.rounded(.towardZero)) ?? 0)
            }
        case .booleanAttributeType: stored = .bool(number.doubleValue != 0)
        case .doubleAttributeType, .floatAttributeType: stored = .real(number.doubleValue)
        default: return value(attribute.defaultValue)
        }
        return append(stored)
    }

    private func key(_ entity: NSEntityDescription, _ name: String) -> String {
        "\(entityIndex[ObjectIdentifier(entity)] ?? 0).\(name)"
    }

    private mutating func encode(_ entity: NSEntityDescription, model: Int) {
        let index = entityIndex[ObjectIdentifier(entity)]!
        let properties = entity.propertiesByName.values.sorted { $0.name < $1.name }
        for property in properties { encode(property, in: entity) }
        let propertyPairs = properties.map { ($0.name, PropertyListValue.uid(propertyIndex[key(entity, $0.name)]!)) }
        let subentities = entity.subentities.sorted { ($0.name ?? "") < ($1.name ?? "") }.compactMap { child in
            entityIndex[ObjectIdentifier(child)].map { (child.name ?? "", PropertyListValue.uid($0)) }
        }
        let className = entity.managedObjectClassName == "NSManagedObject" ? nil : entity.managedObjectClassName
        var fields: [(String, PropertyListValue)] = [
            ("NSProperties", dictionary(propertyPairs, Self.mutableDictionaryChain)),
            ("NSUserInfo", userInfo(entity.userInfo)),
            ("NSManagedObjectModel", .uid(model)),
            ("NSClassNameForEntity", string(className)),
            ("NSVersionHashModifier", string(entity.versionHashModifier)),
            ("NSFetchIndexDescriptions", indexes(entity, at: index)),
            ("NSCompoundIndexes", array([], Self.mutableArrayChain)),
            ("NSEntityName", string(entity.name ?? "")),
            ("NSSubentities", dictionary(subentities, Self.mutableDictionaryChain)),
            (
                "NSSuperentity",
                entity.superentity.flatMap { entityIndex[ObjectIdentifier($0)] }.map { PropertyListValue.uid($0) }
                    ?? .uid(0)
            ),
            ("NSRenamingIdentifier", string(entity.renamingIdentifier ?? entity.name)),
        ]
        if entity.isAbstract { fields.append(("NSIsAbstract", .bool(true))) }
        let constraints = entity.uniquenessConstraints.map { tuple in
            array(tuple.compactMap { ($0 as? String) ?? ($0 as? NSPropertyDescription)?.name }.map { string($0) })
        }
        if !constraints.isEmpty { fields.append(("NSUniqueTuples", array(constraints))) }
        object(["NSEntityDescription", "NSObject"], fields, at: index)
    }

    mutating func userInfo(_ info: [AnyHashable: Any]?) -> PropertyListValue {
        let pairs = (info ?? [:]).compactMap { key, item in (key.base as? String).map { ($0, item) } }
        return dictionary(pairs.sorted { $0.0 < $1.0 }.map { ($0.0, value($0.1)) })
    }

    private mutating func indexes(_ entity: NSEntityDescription, at entityObject: Int) -> PropertyListValue {
        var items: [PropertyListValue] = []
        for index in entity.indexes {
            let indexObject = reserve()
            let elements = index.elements.map { element in
                object(
                    ["NSFetchIndexElementDescription", "NSObject"],
                    [
                        ("NSPropertyName", string(element.propertyName ?? element.property?.name)),
                        ("NSFetchIndexElementType", .integer(Int(element.collationType.rawValue))),
                        ("NSFetchIndexDescription", .uid(indexObject)), ("NSAscending", .bool(element.isAscending)),
                    ])
            }
            items.append(
                object(
                    ["NSFetchIndexDescription", "NSObject"],
                    [
                        ("NSIndexName", string(index.name)), ("NSPartialIndexPredicate", .uid(0)),
                        ("NSIndexElements", array(elements)), ("NSEntity", .uid(entityObject)),
                    ], at: indexObject))
        }
        return array(items, Self.mutableArrayChain)
    }

    private mutating func encode(_ property: NSPropertyDescription, in entity: NSEntityDescription) {
        encode(property, in: entity, at: propertyIndex[key(entity, property.name)]!)
    }

    /// Archives `property` of `entity` at the reserved object `index`; a composite attribute's
    /// elements are archived after it, each its own attribute object.
    private mutating func encode(_ property: NSPropertyDescription, in entity: NSEntityDescription, at index: Int) {
        var flags = Self.baseFlags
        if property.isOptional { flags |= Self.optionalFlag }
        if property.versionHashModifier == nil { flags |= Self.noHashModifierFlag }
        var fields: [(String, PropertyListValue)] = [
            ("NSEntity", .uid(entityIndex[ObjectIdentifier(entity)]!)),
            ("NSPropertyName", string(property.name)),
            ("NSRenamingIdentifier", string(property.renamingIdentifier ?? property.name)),
        ]
        if property.isOptional { fields.append(("NSIsOptional", .bool(true))) }
        if property.isTransient { fields.append(("NSIsTransient", .bool(true))) }
        if property.isIndexed { fields.append(("NSIsIndexed", .bool(true))) }
        if let modifier = property.versionHashModifier { fields.append(("NSVersionHashModifier", string(modifier))) }
        if let info = property.userInfo, !info.isEmpty { fields.append(("NSUserInfo", userInfo(info))) }
        let chain: [String]
        switch property {
        case let relationship as NSRelationshipDescription:
            if relationship.isOrdered {
                flags |= Self.orderedFlag
                fields.append(("NSIsOrdered", .bool(true)))
            }
            let destination = relationship.destinationEntity
            let destinationIndex = destination.flatMap { entityIndex[ObjectIdentifier($0)] }
            let inverse = relationship.inverseRelationship
            let inverseIndex = destination.flatMap { entity in inverse.flatMap { propertyIndex[key(entity, $0.name)] } }
            fields += [
                ("NSDestinationEntity", destinationIndex.map(PropertyListValue.uid) ?? .uid(0)),
                ("_NSDestinationEntityName", string(destination?.name ?? relationship.destinationEntityName)),
                ("NSInverseRelationship", inverseIndex.map(PropertyListValue.uid) ?? .uid(0)),
                ("_NSInverseRelationshipName", string(inverse?.name ?? relationship.inverseRelationshipName)),
                ("NSDeleteRule", .integer(Int(relationship.deleteRule.rawValue))),
                ("NSMinCount", .integer(relationship.minCount)), ("NSMaxCount", .integer(relationship.maxCount)),
            ]
            chain = ["NSRelationshipDescription", "NSPropertyDescription", "NSObject"]
        case let attribute as NSAttributeDescription:
            var attributeFlags = 0
            if attribute.preservesValueInHistoryOnDeletion {
                attributeFlags |= CompiledModelDecoder.preservesValueInHistoryFlag
            }
            if attribute.allowsExternalBinaryDataStorage {
                attributeFlags |= CompiledModelDecoder.externalBinaryStorageFlag
            }
            fields += [
                ("NSAttributeType", .integer(Int(attribute.attributeType.rawValue))),
                ("NSAttributeValueClassName", string(attribute.attributeValueClassName)),
                ("NSDefaultValue", defaultValue(attribute)),
                ("NSValueTransformerName", string(attribute.valueTransformerName)),
                ("NSFlagsKey", .integer(attributeFlags)),
            ]
            if let derived = attribute as? NSDerivedAttributeDescription {
                // Archived as Xcode compiles it (`pages.@count` as the function `count:(pages)`), so
                // a model read back from a store hashes as the one written.
                let compiled = derived.derivationExpression.flatMap { expression in
                    try? NSExpression(
                        node: PredicateParser.parseExpression(VersionHash.derivationFormat(expression), arguments: [])
                            .node)
                }
                fields += [
                    ("NSIsReadOnly", .bool(true)),
                    ("NSDerivationExpression", compiled.flatMap { self.expression($0, style: .derivation) } ?? .uid(0)),
                    ("NSFilteringPredicate", .uid(0)),
                ]
            }
            if let composite = attribute as? NSCompositeAttributeDescription {
                let elements = composite.elements.map { element -> PropertyListValue in
                    let elementIndex = reserve()
                    encode(element, in: entity, at: elementIndex)
                    return .uid(elementIndex)
                }
                fields.append(("NSCompositeElements", array(elements)))
            }
            switch attribute {
            case is NSDerivedAttributeDescription:
                chain = [
                    "NSDerivedAttributeDescription", "NSAttributeDescription", "NSPropertyDescription", "NSObject",
                ]
            case is NSCompositeAttributeDescription:
                chain = [
                    "NSCompositeAttributeDescription", "NSAttributeDescription", "NSPropertyDescription", "NSObject",
                ]
            default:
                chain = ["NSAttributeDescription", "NSPropertyDescription", "NSObject"]
            }
        default:
            chain = ["NSFetchedPropertyDescription", "NSPropertyDescription", "NSObject"]
        }
        fields.insert(("_P", .integer(flags)), at: 0)
        object(chain, fields, at: index)
    }
}
