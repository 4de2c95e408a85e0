/// The key-path walk behind `value(forKeyPath:)` and predicate key-path expressions.
///
/// Rules follow Apple's key-value coding: a key applied to an array or set is applied to every
/// element (arrays keep `NSNull` for missing values, sets drop them); a dictionary answers its
/// entry; the key `self` answers the receiver; an `@operator` consumes the rest of the path
/// (Key-Value Coding Programming Guide, "Accessing Collection Properties" and
/// "Using Collection Operators").
enum KeyValueCodingAccess {
    static func value(of object: Any?, keyPath: KeyPathComponents) -> Any? {
        value(of: object, components: keyPath.components[...])
    }

    static func value(of object: Any?, components: ArraySlice<String>) -> Any? {
        var current = object
        var index = components.startIndex
        while index < components.endIndex {
            let key = components[index]
            if key.unicodeScalars.first == "@" {
                return applyOperator(key, to: current, rest: components[(index + 1)...])
            }
            current = value(of: current, forKey: key)
            index += 1
        }
        return current
    }

    /// One step of a key path.
    static func value(of object: Any?, forKey key: String) -> Any? {
        guard let object = DynamicValue.unwrap(object) else { return nil }
        // The concrete dictionary cast first: it is far cheaper than a protocol conformance lookup.
        if let dictionary = object as? [String: Any] { return dictionary[key] }
        if let kvc = object as? any KeyValueCoding { return kvc.value(forKey: key) }
        let lookup = DynamicValue.dictionaryLookup(object, key: key)
        if lookup.isDictionary { return lookup.value }
        if key == "self" { return object }
        if let elements = DynamicValue.elements(object) {
            if object is any SetBox || (DynamicValue.isObject(object) && object is NSSet) {
                return elements.compactMap { DynamicValue.unwrap(value(of: $0, forKey: key)) }
            }
            return elements.map { value(of: $0, forKey: key) ?? NSNull() }
        }
        if let string = DynamicValue.string(object), key == "length" { return string.utf16.count }
        return reflectedValue(of: object, forKey: key)
    }

    /// Reads a stored property by reflection, for plain Swift values that do not adopt
    /// `KeyValueCoding`.
    private static func reflectedValue(of object: Any, forKey key: String) -> Any? {
        var mirror: Mirror? = Mirror(reflecting: object)
        while let current = mirror {
            for child in current.children where child.label == key || child.label == "_" + key {
                return child.value
            }
            mirror = current.superclassMirror
        }
        return nil
    }

    /// The collection operators (Key-Value Coding Programming Guide, "Using Collection Operators").
    private static let operators: Set<String> = [
        "@count", "@sum", "@avg", "@min", "@max", "@unionOfObjects", "@distinctUnionOfObjects", "@unionOfArrays",
        "@unionOfSets", "@distinctUnionOfArrays", "@distinctUnionOfSets",
    ]

    private static func applyOperator(_ name: String, to object: Any?, rest: ArraySlice<String>) -> Any? {
        guard let object = DynamicValue.unwrap(object) else { return nil }
        if name == "@count" {
            if let elements = DynamicValue.elements(object) { return elements.count }
            if let dictionary = object as? any DictionaryBox { return dictionary.count }
            if DynamicValue.isObject(object), let dictionary = object as? NSDictionary { return dictionary.count }
            return nil
        }
        // An operator key-value coding does not have answers nil before the rest of the path is
        // applied to anything.
        guard operators.contains(name), let elements = DynamicValue.elements(object) else { return nil }
        let values: [Any] = rest.isEmpty ? elements : elements.map { value(of: $0, components: rest) ?? NSNull() }
        switch name {
        case "@sum": return sum(values)
        case "@avg":
            let present = values.compactMap { DynamicValue.unwrap($0) }
            guard !present.isEmpty, let total = sum(present) else { return 0 }
            switch DynamicValue.number(total) {
            case .double(let value)?: return value / Double(present.count)
            case let number?: return DynamicValue.Number.decimal(number.decimalValue / Decimal(present.count)).boxed
            case nil: return nil
            }
        case "@min": return extreme(values, keep: .orderedAscending)
        case "@max": return extreme(values, keep: .orderedDescending)
        case "@unionOfObjects": return values.compactMap { DynamicValue.unwrap($0) }
        case "@distinctUnionOfObjects": return distinct(values.compactMap { DynamicValue.unwrap($0) })
        case "@unionOfArrays", "@unionOfSets":
            return values.flatMap { DynamicValue.elements($0) ?? [] }.compactMap { DynamicValue.unwrap($0) }
        case "@distinctUnionOfArrays", "@distinctUnionOfSets":
            return distinct(values.flatMap { DynamicValue.elements($0) ?? [] }.compactMap { DynamicValue.unwrap($0) })
        default:
            return nil
        }
    }

    /// `@sum` adds as `NSDecimalNumber` does; `nil` and `NSNull` elements are skipped.
    static func sum(_ values: [Any]) -> Any? {
        var integral: Int64 = 0
        var decimal = Decimal(0)
        var usesDecimal = false
        var double = 0.0
        var usesDouble = false
        for value in values {
            guard let value = DynamicValue.unwrap(value), let number = DynamicValue.number(value) else { continue }
            switch number {
            case .int(let x):
                let (result, overflow) = integral.addingReportingOverflow(x)
                if overflow { usesDecimal = true; decimal += Decimal(x) } else { integral = result }
            case .uint(let x): usesDecimal = true; decimal += Decimal(x)
            case .double(let x): usesDouble = true; double += x
            case .decimal(let x): usesDecimal = true; decimal += x
            }
        }
        if usesDouble { return double + Double(integral) + NSDecimalNumber(decimal: decimal).doubleValue }
        if usesDecimal { return DynamicValue.Number.decimal(decimal + Decimal(integral)).boxed }
        return Int(integral)
    }

    private static func extreme(_ values: [Any], keep: ComparisonResult) -> Any? {
        var best: Any?
        for value in values {
            guard let value = DynamicValue.unwrap(value) else { continue }
            if let current = best {
                if DynamicValue.compare(value, current) == keep { best = value }
            } else {
                best = value
            }
        }
        return best
    }

    /// The values without repeats, first occurrence kept, equality as `DynamicValue.equal`.
    ///
    /// Values are keyed for hashing by what equality compares (numbers by value, `nil` and `NSNull`
    /// as one), never by an object's own `hash`: Foundation objects on Linux such as `NSNull` can
    /// be equal while hashing differently, which makes `Set` trap.
    static func distinct(_ values: [Any]) -> [Any] {
        var result: [Any] = []
        var seen = Set<AnyHashable>()
        var objects: [Any] = []
        var sawNull = false
        for value in values {
            guard let value = DynamicValue.unwrap(value) else {
                if !sawNull {
                    sawNull = true
                    result.append(NSNull())
                }
                continue
            }
            let key: AnyHashable?
            if let number = DynamicValue.number(value) {
                key = number.exactInt.map { AnyHashable($0) } ?? AnyHashable(number.doubleValue)
            } else if let string = DynamicValue.string(value) {
                key = AnyHashable(string)
            } else if let date = DynamicValue.date(value) {
                key = AnyHashable(date)
            } else if !DynamicValue.isObject(value), let hashable = value as? AnyHashable {
                key = hashable
            } else {
                key = nil
            }
            if let key {
                if seen.insert(key).inserted { result.append(value) }
            } else if !objects.contains(where: { DynamicValue.equal($0, value) }) {
                objects.append(value)
                result.append(value)
            }
        }
        return result
    }

}
