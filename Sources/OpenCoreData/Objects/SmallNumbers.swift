import Foundation

/// Shared `NSNumber`s for small integers and the two Booleans, so reading one through key-value
/// coding makes no new object: what Apple's runtime gives for free, where a small `NSNumber` is a
/// tagged pointer rather than an allocation (issue 21: boxing `age` for each of 100,000 objects
/// read in a loop was an allocation, a CoreFoundation number and a free each).
///
/// Each type keeps its own table, so a shared number has the type encoding (`objCType`) a new
/// one of that type would have. A table is made on first use of its type; values outside
/// ``range`` get a new number. `NSNumber` is immutable, so sharing one between threads and
/// objects is safe; as with tagged pointers, equal small numbers may be the same object.
enum SmallNumbers {
    /// The integers with a shared number: signed bytes and what counts, ages, ranks and
    /// enumeration raw values mostly hold.
    static let range = -128...1023

    private static let ints = range.map { NSNumber(value: $0) }
    private static let int64s = range.map { NSNumber(value: Int64($0)) }
    private static let int32s = range.map { NSNumber(value: Int32($0)) }
    private static let int16s = range.map { NSNumber(value: Int16($0)) }
    private static let booleans = [NSNumber(value: false), NSNumber(value: true)]

    /// The table index of `value`, when it is in ``range``.
    @inline(__always)
    private static func index<Value: BinaryInteger>(_ value: Value) -> Int? {
        guard value >= range.lowerBound, value <= range.upperBound else { return nil }
        return Int(value) - range.lowerBound
    }

    static func number(_ value: Int) -> NSNumber {
        guard let index = index(value) else { return NSNumber(value: value) }
        return ints[index]
    }

    static func number(_ value: Int64) -> NSNumber {
        guard let index = index(value) else { return NSNumber(value: value) }
        return int64s[index]
    }

    static func number(_ value: Int32) -> NSNumber {
        guard let index = index(value) else { return NSNumber(value: value) }
        return int32s[index]
    }

    static func number(_ value: Int16) -> NSNumber {
        guard let index = index(value) else { return NSNumber(value: value) }
        return int16s[index]
    }

    static func number(_ value: Bool) -> NSNumber { booleans[value ? 1 : 0] }
}
