import Foundation

/// Unarchiving transformable values without trusting Foundation's `NSKeyedUnarchiver`.
///
/// A transformable value comes from a store file, which can be damaged or hostile, and Linux's
/// unarchiver crashes on many malformed archives: flipping a few bytes of an archived dictionary
/// crashed it in about one case in seven (a `nil` key reaching `NSDictionary`'s initializer, a
/// set in the property list, a class description naming `NSObject`). So an archive made only of
/// Foundation's property-list classes — what Apple's default transformer allows, and what nearly
/// every transformable attribute holds — is decoded here, by this type's own checked reader, and
/// never reaches Foundation's. An archive of an app's own classes (allowed by a subclass of
/// `NSSecureUnarchiveFromDataTransformer`) still needs Foundation's unarchiver to call their
/// `init(coder:)`; it is checked first — shape, references, classes, and every Foundation object
/// in it decoded here — and only then handed over (one holding a decimal number is refused: Linux's
/// unarchiver cannot read one, and crashes on the nil it makes of it inside a collection).
extension KeyedArchive {
    /// The Foundation classes decoded here, by the names archives give them.
    static let plainClassNames: Set<String> = [
        "NSString", "NSMutableString", "NSArray", "NSMutableArray", "NSSet", "NSMutableSet", "NSDictionary",
        "NSMutableDictionary", "NSDate", "NSData", "NSMutableData", "NSUUID", "NSURL", "NSNull", "NSNumber",
        "NSDecimalNumber",
    ]

    /// The deepest nesting of objects an archive may have: Foundation's unarchiver recurses once a
    /// level, and so does the decoder here.
    static let maximumNesting = 200

    /// Decodes the keyed archive `data` as `NSKeyedUnarchiver.unarchivedObject(ofClasses:from:)`
    /// would, allowing only `allowedClasses` and their subclasses; `nil` when the archive is
    /// malformed, holds a class that is not allowed, or its objects do not have the shape their
    /// classes write.
    ///
    /// Foundation's classes come back as Swift values: `String`, numbers as the property list
    /// holds them, `Date`, `Data`, `UUID`, `URL`, `Decimal`, `NSNull`, `[Any]` for arrays, `NSSet`
    /// for sets and `[AnyHashable: Any]` for dictionaries (each casts to the Foundation class).
    static func unarchive(_ data: Data, allowedClasses: [AnyClass]) -> Any? {
        guard let archive = checkedForUnarchiver(data, allowedClasses: allowedClasses) else { return nil }
        var decoder = PlainDecoder(archive: archive)
        let names = archive.classNames
        if names.isSubset(of: plainClassNames) { return try? decoder.decode(archive.root) }
        // An app's own classes: every Foundation object in the archive must decode here first.
        decoder.acceptsOtherClasses = true
        for index in archive.objects.indices.dropFirst() {
            guard (try? decoder.decode(index)) != nil else { return nil }
        }
        return try? NSKeyedUnarchiver.unarchivedObject(ofClasses: allowedClasses, from: data)
    }

    /// The `$classname` of every class description an object of the archive names as its `$class`
    /// (descriptions nothing names play no part).
    var classNames: Set<String> {
        Set(
            objects.compactMap { object in
                guard let fields = object as? [String: Any], fields["$classname"] == nil else { return nil }
                return className(fields)
            })
    }
}

/// Decodes the objects of a checked archive (``KeyedArchive/checkedForUnarchiver(_:allowedClasses:)``:
/// references in range, no cycles, nesting bounded) that are of Foundation's property-list
/// classes, each checked against the shape its class writes. Objects are decoded once and shared,
/// as the unarchiver shares them.
private struct PlainDecoder {
    struct Malformed: Error {}

    let archive: KeyedArchive
    /// Whether an object of another class is let through (as a placeholder) rather than refused.
    var acceptsOtherClasses = false
    private var decoded: [Int: Any] = [:]

    init(archive: KeyedArchive) {
        self.archive = archive
    }

    /// The object at `index` of `$objects`.
    mutating func decode(_ index: Int) throws -> Any {
        if let done = decoded[index] { return done }
        let value = try decodeFresh(index)
        decoded[index] = value
        return value
    }

    /// The object a UID reference names; `$null` and anything else is malformed (collections and
    /// the keys read here never hold nil).
    private mutating func object(_ reference: Any?) throws -> Any {
        guard let index = KeyedArchive.uid(reference), index > 0, index < archive.objects.count,
            (archive.objects[index] as? [String: Any])?["$classname"] == nil
        else {
            // Out of range, `$null`, or a class description where a value belongs.
            throw Malformed()
        }
        return try decode(index)
    }

    private mutating func decodeFresh(_ index: Int) throws -> Any {
        let value = archive.objects[index]
        if value is String || value is Data || value is Bool || DynamicValue.number(value) != nil {
            return value
        }
        guard let fields = value as? [String: Any] else { throw Malformed() }
        if fields["$classname"] != nil {
            // A class description, not a value; one that also names a class of its own is neither
            // (flipped bytes turned a dictionary's `NS.objects` into `$classname`, and Foundation's
            // unarchiver read past the end of its objects: the fuzzer found it).
            guard fields["$class"] == nil else { throw Malformed() }
            return NSNull()
        }
        guard let name = archive.className(fields) else { throw Malformed() }
        switch name {
        case "NSString", "NSMutableString":
            if let string = fields["NS.string"] as? String { return string }
            if let bytes = fields["NS.bytes"] as? Data, let string = String(data: bytes, encoding: .utf8) {
                return string
            }
            throw Malformed()
        case "NSArray", "NSMutableArray":
            return try elements(fields["NS.objects"])
        case "NSSet", "NSMutableSet":
            return NSSet(array: try elements(fields["NS.objects"]))
        case "NSDictionary", "NSMutableDictionary":
            guard let keys = fields["NS.keys"] as? [Any], let values = fields["NS.objects"] as? [Any],
                keys.count == values.count
            else { throw Malformed() }
            var result: [AnyHashable: Any] = [:]
            for (key, value) in zip(keys, values) {
                guard let hashable = try object(key) as? AnyHashable else { throw Malformed() }
                result[hashable] = try object(value)
            }
            return result
        case "NSDate":
            guard let time = fields["NS.time"].flatMap(DynamicValue.number)?.doubleValue, time.isFinite else {
                throw Malformed()
            }
            return Date(timeIntervalSinceReferenceDate: time)
        case "NSData", "NSMutableData":
            guard let data = (fields["NS.data"] ?? fields["NS.bytes"]) as? Data else { throw Malformed() }
            return data
        case "NSUUID":
            guard let bytes = fields["NS.uuidbytes"] as? Data, bytes.count == 16 else { throw Malformed() }
            guard let uuid = KeyedArchive.uuid(bytes) else { throw Malformed() }
            return uuid
        case "NSURL":
            guard let relative = try object(fields["NS.relative"]) as? String else { throw Malformed() }
            var base: URL?
            if let index = KeyedArchive.uid(fields["NS.base"]), index != 0 {
                guard let url = try object(fields["NS.base"]) as? URL else { throw Malformed() }
                base = url
            }
            guard let url = URL(string: relative, relativeTo: base) else { throw Malformed() }
            return url
        case "NSNull":
            return NSNull()
        case "NSDecimalNumber", "NSNumber":
            // Foundation's unarchiver on Linux reads neither form (its initializer fails, and a
            // dictionary holding the nil it gives crashes), so it is never handed one.
            guard !acceptsOtherClasses else { throw Malformed() }
            return try decimal(fields)
        default:
            guard acceptsOtherClasses else { throw Malformed() }
            return NSNull()
        }
    }

    /// The elements of an array or set: references, none `$null`.
    private mutating func elements(_ references: Any?) throws -> [Any] {
        guard let references = references as? [Any] else { throw Malformed() }
        return try references.map { try object($0) }
    }

    /// A decimal number: this library's form (`NS.decimal`, its text, inline or referenced) or Apple's (exponent,
    /// length in 16-bit words, sign, and the mantissa's 16 bytes, little-endian).
    private func decimal(_ fields: [String: Any]) throws -> Decimal {
        if let field = fields["NS.decimal"] {
            guard let text = field as? String ?? archive.string(field) else { throw Malformed() }
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw Malformed()
            }
            return decimal
        }
        guard let exponent = fields["NS.exponent"].flatMap(DynamicValue.number)?.int64Value,
            let length = fields["NS.length"].flatMap(DynamicValue.number)?.int64Value,
            let mantissa = fields["NS.mantissa"] as? Data, mantissa.count == 16,
            (-128...127).contains(exponent), (0...8).contains(length)
        else { throw Malformed() }
        let negative = fields["NS.negative"] as? Bool ?? false
        let bytes = [UInt8](mantissa)
        var significand = Decimal(0)
        for n in (0..<Int(length)).reversed() {
            significand = significand * 65536 + Decimal(Int(bytes[2 * n]) | Int(bytes[2 * n + 1]) << 8)
        }
        return Decimal(sign: negative ? .minus : .plus, exponent: Int(exponent), significand: significand)
    }
}

extension DynamicValue.Number {
    /// The number as an `Int64`, when it is a whole number that fits.
    fileprivate var int64Value: Int64? {
        switch self {
        case .int(let int): Int64(exactly: int)
        case .uint(let uint): Int64(exactly: uint)
        case .double(let double): Int64(exactly: double)
        case .decimal: nil
        }
    }
}
