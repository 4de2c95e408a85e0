/// Apple's value semantics for untyped values (`Any?`), shared by key-value coding, predicate
/// evaluation and sort descriptors.
///
/// Foundation compares `NSNumber`s by numeric value whatever their storage type, treats `NSNull`
/// like `nil` in predicates, and compares dates by time. Swift values arrive here boxed as `Any`,
/// possibly wrapped in `Optional`, so every entry point unwraps first.
package enum DynamicValue {
    /// A number reduced to the widest representation that holds it exactly.
    package enum Number {
        case int(Int64)
        case uint(UInt64)
        case double(Double)
        case decimal(Decimal)

        package var doubleValue: Double {
            switch self {
            case .int(let value): Double(value)
            case .uint(let value): Double(value)
            case .double(let value): value
            case .decimal(let value): NSDecimalNumber(decimal: value).doubleValue
            }
        }

        var decimalValue: Decimal {
            switch self {
            case .int(let value): Decimal(value)
            case .uint(let value): Decimal(value)
            // Decimal(Double) traps on infinity and NaN.
            case .double(let value): value.isFinite ? Decimal(value) : Decimal.nan
            case .decimal(let value): value
            }
        }

        /// The value as an `Int64` when it is integral and in range.
        package var exactInt: Int64? {
            switch self {
            case .int(let value): return value
            case .uint(let value): return value <= UInt64(Int64.max) ? Int64(value) : nil
            case .double(let value):
                guard value.rounded(.towardZero) == value, abs(value) < 9.2e18 else { return nil }
                return Int64(value)
            case .decimal(let value):
                let double = NSDecimalNumber(decimal: value).doubleValue
                guard double.rounded(.towardZero) == double, abs(double) < 9.2e18 else { return nil }
                return Int64(double)
            }
        }

        /// The boxed Swift value a computation hands back to callers.
        var boxed: Any {
            switch self {
            case .int(let value): Int(exactly: value) ?? Double(value)
            case .uint(let value): Int(exactly: value) ?? Double(value)
            case .double(let value): value
            case .decimal(let value): value
            }
        }

        static func compare(_ lhs: Number, _ rhs: Number) -> ComparisonResult? {
            switch (lhs, rhs) {
            case (.int(let a), .int(let b)): return order(a, b)
            case (.uint(let a), .uint(let b)): return order(a, b)
            case (.int(let a), .uint(let b)): return a < 0 ? .orderedAscending : order(UInt64(a), b)
            case (.uint(let a), .int(let b)): return b < 0 ? .orderedDescending : order(a, UInt64(b))
            case (.double, _), (_, .double):
                let a = lhs.doubleValue
                let b = rhs.doubleValue
                if a.isNaN || b.isNaN { return nil }
                return order(a, b)
            default:
                return order(lhs.decimalValue, rhs.decimalValue)
            }
        }
    }

    /// Whether `value` is a class instance. Every cast to a Foundation class (`as? NSString`,
    /// `is NSNull`…) is gated by this: on a Swift value such a cast makes the runtime bridge the
    /// whole value (a dictionary becomes an `NSDictionary`) just to test its class.
    ///
    /// Without Objective-C interoperability (Linux) a class's metadata has kind 0
    /// (`MetadataKind::Class`) and every other kind is a value's, so the kind is read as
    /// ``isOptional(_:)`` reads it: the runtime's metatype cast it replaces took a conformance
    /// cache lookup on every value.
    @inline(__always)
    package static func isObject(_ value: Any) -> Bool {
        #if canImport(ObjectiveC)
            type(of: value) is AnyObject.Type
        #else
            unsafeBitCast(type(of: value), to: UnsafeRawPointer.self).load(as: UInt.self) == 0
        #endif
    }

    /// The address of the instance `value` holds; call only when ``isObject(_:)`` says it holds
    /// one. An `Any` holding a class instance keeps the reference as the first word of its
    /// inline buffer, so the reference is read without bridging the value to an object.
    @inline(__always)
    static func objectAddress(_ value: Any) -> UnsafeRawPointer {
        withUnsafeBytes(of: value) { $0.load(as: UnsafeRawPointer.self) }
    }

    /// Whether `value` is an `Optional` boxed in an `Any`. Reads the metadata kind (ABI:
    /// `MetadataKind::Optional` is 0x202 on every platform) because a conformance lookup on every
    /// value, as `as? any OptionalBox` does, dominated predicate evaluation in profiles.
    @inline(__always)
    static func isOptional(_ value: Any) -> Bool {
        unsafeBitCast(type(of: value), to: UnsafeRawPointer.self).load(as: UInt.self) == 0x202
    }

    /// Removes any levels of `Optional` and turns `NSNull` into `nil`.
    @inline(__always)
    package static func unwrap(_ value: Any?) -> Any? {
        guard let value else { return nil }
        if isObject(value) { return value is NSNull ? nil : value }
        if isOptional(value), let optional = value as? any OptionalBox { return unwrap(optional.wrappedAny) }
        return value
    }

    package static func number(_ value: Any) -> Number? {
        // An NSNumber casts to Int whenever its value is integral (100.0 too): read objects by
        // their own type encoding first, so a double stays a double.
        if isObject(value) {
            if let x = value as? NSDecimalNumber { return .decimal(x.decimalValue) }
            if let x = value as? NSNumber { return number(nsNumber: x) }
            return nil
        }
        switch value {
        case let x as Int: return .int(Int64(x))
        case let x as Double: return .double(x)
        case let x as Bool: return .int(x ? 1 : 0)
        case let x as Int64: return .int(x)
        case let x as Int32: return .int(Int64(x))
        case let x as Int16: return .int(Int64(x))
        case let x as Int8: return .int(Int64(x))
        case let x as UInt: return .uint(UInt64(x))
        case let x as UInt64: return .uint(x)
        case let x as UInt32: return .int(Int64(x))
        case let x as UInt16: return .int(Int64(x))
        case let x as UInt8: return .int(Int64(x))
        case let x as Float: return .double(Double(x))
        case let x as Decimal: return .decimal(x)
        case let x as CGFloat: return .double(Double(x))
        default: return nil
        }
    }

    private static func number(nsNumber x: NSNumber) -> Number {
        // The type encoding's first character, read without building a String.
        switch UInt8(bitPattern: x.objCType.pointee) {
        case UInt8(ascii: "f"), UInt8(ascii: "d"): return .double(x.doubleValue)
        case UInt8(ascii: "Q"), UInt8(ascii: "L"): return .uint(x.uint64Value)
        default: return .int(x.int64Value)
        }
    }

    @inline(__always)
    static func string(_ value: Any) -> String? {
        if let string = value as? String { return string }
        if let substring = value as? Substring { return String(substring) }
        if let character = value as? Character { return String(character) }
        if isObject(value), let nsString = value as? NSString { return nsString as String }
        return nil
    }

    static func date(_ value: Any) -> Date? {
        if let date = value as? Date { return date }
        if isObject(value), let date = value as? NSDate { return date as Date }
        return nil
    }

    /// The elements of an array, set or ordered set; `nil` for anything else (strings and
    /// dictionaries are not element collections here).
    package static func elements(_ value: Any) -> [Any]? {
        if let array = value as? any ArrayBox { return array.anyElements }
        if let set = value as? any SetBox { return set.anyElements }
        guard isObject(value) else { return nil }
        if let ordered = value as? NSOrderedSet { return ordered.array }
        if let array = value as? NSArray { return array.map { $0 } }
        if let set = value as? NSSet { return set.allObjects }
        return nil
    }

    /// The value stored under `key` when `value` is a dictionary.
    static func dictionaryLookup(_ value: Any, key: String) -> (isDictionary: Bool, value: Any?) {
        if let dictionary = value as? [String: Any] { return (true, dictionary[key]) }
        if let dictionary = value as? any DictionaryBox { return (true, dictionary.anyValue(forKey: key)) }
        if isObject(value), let dictionary = value as? NSDictionary { return (true, dictionary.object(forKey: key)) }
        return (false, nil)
    }

    static func dictionaryValues(_ value: Any) -> [Any]? {
        if let dictionary = value as? any DictionaryBox { return dictionary.anyValues }
        if isObject(value), let dictionary = value as? NSDictionary { return dictionary.allValues }
        return nil
    }

    /// Equality as `isEqual:` sees it: numbers by value, strings canonically, dates by time,
    /// arrays element by element, everything else by `Hashable` or identity.
    static func equal(_ lhs: Any?, _ rhs: Any?) -> Bool {
        let lhs = unwrap(lhs)
        let rhs = unwrap(rhs)
        guard let lhs, let rhs else { return lhs == nil && rhs == nil }
        if let a = lhs as? String, let b = rhs as? String { return a == b }
        if let a = number(lhs) {
            guard let b = number(rhs) else { return false }
            return Number.compare(a, b) == .orderedSame
        }
        if let a = string(lhs) {
            guard let b = string(rhs) else { return false }
            return a == b
        }
        if let a = date(lhs) {
            guard let b = date(rhs) else { return false }
            return a == b
        }
        if let a = elements(lhs), let b = elements(rhs) {
            return a.count == b.count && zip(a, b).allSatisfy { equal($0, $1) }
        }
        if let a = lhs as? any IdentityKeyed, let b = rhs as? any IdentityKeyed {
            return a.identityKey == b.identityKey
        }
        if let a = lhs as? AnyHashable, let b = rhs as? AnyHashable { return a == b }
        if type(of: lhs) is AnyClass, type(of: rhs) is AnyClass {
            return (lhs as AnyObject) === (rhs as AnyObject)
        }
        return false
    }

    /// Ordering as `compare:` sees it; `nil` when the two values have no common order.
    static func compare(_ lhs: Any?, _ rhs: Any?) -> ComparisonResult? {
        guard let lhs = unwrap(lhs), let rhs = unwrap(rhs) else { return nil }
        if let a = lhs as? String, let b = rhs as? String { return order(a, b) }
        if let a = number(lhs) {
            guard let b = number(rhs) else { return nil }
            return Number.compare(a, b)
        }
        if let a = string(lhs) {
            guard let b = string(rhs) else { return nil }
            return order(a, b)
        }
        if let a = date(lhs) {
            guard let b = date(rhs) else { return nil }
            return order(a, b)
        }
        if let a = lhs as? UUID, let b = rhs as? UUID { return order(a.uuidString, b.uuidString) }
        if let a = lhs as? Data, let b = rhs as? Data {
            return a.lexicographicallyPrecedes(b) ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
        }
        if let a = lhs as? any PredicateOrdered { return a.predicateOrder(to: rhs) }
        return nil
    }

    @inline(__always)
    static func order<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult {
        a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
    }
}

/// A value of this module's own that predicates may order (`token > %@` on history transactions):
/// its order against `other`, `nil` when the two have none.
protocol PredicateOrdered {
    func predicateOrder(to other: Any) -> ComparisonResult?
}

/// A value that predicates compare by a key rather than by identity: a managed object by its
/// object ID, so an object equals its ID and its counterpart in another context.
protocol IdentityKeyed {
    var identityKey: AnyHashable { get }
}

/// Lets an `Optional` hidden inside an `Any` be seen through.
protocol OptionalBox {
    var wrappedAny: Any? { get }
}

extension Optional: OptionalBox {
    var wrappedAny: Any? { self.map { $0 as Any } }
}

/// Lets an array of any element type be walked as `[Any]` without a bridging cast.
protocol ArrayBox {
    var anyElements: [Any] { get }
}

extension Array: ArrayBox {
    var anyElements: [Any] { map { $0 as Any } }
}

extension ContiguousArray: ArrayBox {
    var anyElements: [Any] { map { $0 as Any } }
}

/// Lets a set of any element type be walked as `[Any]`.
protocol SetBox {
    var anyElements: [Any] { get }
}

extension Set: SetBox {
    var anyElements: [Any] { map { $0 as Any } }
}

/// Lets a dictionary with any key and value types be read by string key.
protocol DictionaryBox {
    func anyValue(forKey key: String) -> Any?
    var anyValues: [Any] { get }
    var count: Int { get }
}

extension Dictionary: DictionaryBox {
    func anyValue(forKey key: String) -> Any? {
        if let key = key as? Key { return self[key].map { $0 as Any } }
        if let key = AnyHashable(key) as? Key { return self[key].map { $0 as Any } }
        return nil
    }

    var anyValues: [Any] { values.map { $0 as Any } }
}
