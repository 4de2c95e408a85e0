import Foundation

/// Shared `NSNumber`s for small integers and the two Booleans, so reading one through key-value
/// coding makes no new object: what Apple's runtime gives for free, where a small `NSNumber` is a
/// tagged pointer rather than an allocation (boxing `age` for each of 100,000 objects
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

    /// `value`'s number from `table` when it is in ``range``, else a new one from `make`.
    @inline(__always)
    private static func shared<Value: BinaryInteger>(
        _ value: Value, _ table: [NSNumber], _ make: (Value) -> NSNumber
    ) -> NSNumber {
        guard value >= range.lowerBound, value <= range.upperBound else { return make(value) }
        return table[Int(value) - range.lowerBound]
    }

    static func number(_ value: Int) -> NSNumber { shared(value, ints, NSNumber.init(value:)) }
    static func number(_ value: Int64) -> NSNumber { shared(value, int64s, NSNumber.init(value:)) }
    static func number(_ value: Int32) -> NSNumber { shared(value, int32s, NSNumber.init(value:)) }
    static func number(_ value: Int16) -> NSNumber { shared(value, int16s, NSNumber.init(value:)) }

    static func number(_ value: Bool) -> NSNumber { booleans[value ? 1 : 0] }
}
