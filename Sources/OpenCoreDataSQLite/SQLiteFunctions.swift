internal import CSQLite
import OpenCoreData
import OpenCoreDataSQL

/// SQL functions the store registers on each connection, so predicates SQL cannot spell
/// natively still run inside the query with the very rules of in-memory evaluation.
///
/// `NSCoreDataStringMatch(operator, options, lhs, rhs)` applies a comparison predicate's string
/// operator (`BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE`, `MATCHES`, `==`, `!=`, `<`…) with its
/// `[cdn]` options; it answers 0 or 1, never NULL. The comparison is built once per statement
/// for a constant right side (SQLite's auxiliary data).
///
/// Collations, one per string sort selector (``collation(for:)``), order text in `ORDER BY` with
/// the very comparison an in-memory sort uses (`NSSortDescriptor.compareValues`), so a fetch
/// sorted by a string attribute sorts — and windows, `LIMIT 100` — in SQL.
enum SQLiteFunctions {
    /// The sort selectors strings can sort by in SQL, each with its collation's name.
    static let collations: [(selector: String, name: String)] = [
        ("compare:", "NSCoreDataCompare"), ("caseInsensitiveCompare:", "NSCoreDataCaseInsensitiveCompare"),
        ("localizedCompare:", "NSCoreDataLocalizedCompare"),
        ("localizedCaseInsensitiveCompare:", "NSCoreDataLocalizedCaseInsensitiveCompare"),
        ("localizedStandardCompare:", "NSCoreDataLocalizedStandardCompare"),
    ]

    /// The collation that sorts strings as `selector` does in memory.
    static func collation(for selector: String) -> String? {
        collations.first { $0.selector == selector }?.name
    }

    static func register(on connection: SQLiteConnection) throws {
        for (index, collation) in collations.enumerated() {
            // `compare:`, the default selector and the most common sort, has a callback of its
            // own: SQLite calls it for every pair a sort compares, so it goes straight to the
            // byte comparison without finding its selector first.
            let callback: CollationCallback =
                collation.selector == "compare:"
                ? { _, count1, bytes1, count2, bytes2 in
                    SQLiteFunctions.compareOrder(
                        UnsafeRawBufferPointer(start: bytes1, count: Int(count1)),
                        UnsafeRawBufferPointer(start: bytes2, count: Int(count2)))
                }
                : { argument, count1, bytes1, count2, bytes2 in
                    let index = Int(bitPattern: argument) - 1
                    let a = UnsafeRawBufferPointer(start: bytes1, count: Int(count1))
                    let b = UnsafeRawBufferPointer(start: bytes2, count: Int(count2))
                    return SQLiteFunctions.compare(a, b, selector: SQLiteFunctions.collations[index].selector)
                }
            let code = sqlite3_create_collation_v2(
                connection.handle, collation.name, SQLITE_UTF8, UnsafeMutableRawPointer(bitPattern: index + 1),
                callback, nil)
            guard code == SQLITE_OK else {
                throw SQLiteConnection.error(code: code, db: connection.handle, "Cannot register SQL collations")
            }
        }
        let code = sqlite3_create_function_v2(
            connection.handle, "NSCoreDataStringMatch", 4, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
            { context, count, arguments in
                guard count == 4, let arguments else { return }
                let operatorCode = UInt(sqlite3_value_int64(arguments[0]))
                let options = UInt(sqlite3_value_int64(arguments[1]))
                let lhs = SQLiteFunctions.string(arguments[2])
                let rhs = SQLiteFunctions.string(arguments[3])
                let predicate: NSComparisonPredicate
                if let cached = sqlite3_get_auxdata(context, 3) {
                    predicate = Unmanaged<NSComparisonPredicate>.fromOpaque(cached).takeUnretainedValue()
                } else {
                    predicate = NSComparisonPredicate(
                        leftExpression: NSExpression(forKeyPath: "self"),
                        rightExpression: NSExpression(forConstantValue: rhs),
                        modifier: .direct, type: NSComparisonPredicate.Operator(rawValue: operatorCode) ?? .equalTo,
                        options: NSComparisonPredicate.Options(rawValue: options))
                    sqlite3_set_auxdata(
                        context, 3, Unmanaged.passRetained(predicate).toOpaque(),
                        { pointer in
                            if let pointer { Unmanaged<NSComparisonPredicate>.fromOpaque(pointer).release() }
                        })
                }
                sqlite3_result_int(context, predicate.compare(lhs, rhs) ? 1 : 0)
            }, nil, nil, nil)
        guard code == SQLITE_OK else {
            throw SQLiteConnection.error(code: code, db: connection.handle, "Cannot register SQL functions")
        }
        // Apple's derived-attribute triggers (`Z_DA_…`, FORMAT.md) update the derived column in
        // SQL, then call these to tell Core Data which object's value changed. The column is
        // already right; the coordinator reads it back when the object is next read, so they answer
        // NULL. Without them, writing to a table with such triggers fails ("no such function").
        for name in [
            "NSCoreDataDATriggerUpdatedAffectedObjectValue", "NSCoreDataDATriggerInsertUpdatedAffectedObjectValue",
        ] {
            let code = sqlite3_create_function_v2(
                connection.handle, name, -1, SQLITE_UTF8, nil, { context, _, _ in sqlite3_result_null(context) }, nil,
                nil, nil)
            guard code == SQLITE_OK else {
                throw SQLiteConnection.error(code: code, db: connection.handle, "Cannot register SQL functions")
            }
        }
    }

    /// A collation's callback: SQLite's argument, then each string's length and UTF-8 bytes.
    typealias CollationCallback =
        @convention(c) (
            UnsafeMutableRawPointer?, Int32, UnsafeRawPointer?, Int32, UnsafeRawPointer?
        ) -> Int32

    /// Orders two UTF-8 strings as `compare:` orders them in memory: -1, 0 or 1.
    static func compareOrder(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int32 {
        // Decided at an ASCII difference: byte order, without reading the rest of either string.
        if let order = differenceOrder(a, b) { return order }
        // ASCII is byte order (Swift's String ordering on ASCII), without decoding.
        if let order = asciiOrder(a, b) { return order }
        return compare(a, b, selector: "compare:")
    }

    /// Orders two UTF-8 strings as `selector` orders them in memory: -1, 0 or 1 (decoded; the
    /// `compare:` collation tries ``asciiOrder(_:_:)`` first).
    static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, selector: String) -> Int32 {
        let result = NSSortDescriptor.compareValues(
            String(decoding: a, as: UTF8.self), String(decoding: b, as: UTF8.self), selector: selector)
        switch result {
        case .orderedAscending: return -1
        case .orderedSame: return 0
        case .orderedDescending: return 1
        }
    }

    /// The order of `a` and `b` when their first differing bytes decide it as `compare:` does, else
    /// `nil`. A sort compares most pairs only up to their first difference, so this reads no further
    /// (checking both whole strings for ASCII first would read every byte of both).
    ///
    /// Why the bytes decide: `compare:` orders the strings' Unicode scalars after canonical
    /// normalization (``NSSortDescriptor`` in memory, Swift's `String` order). The bytes before the
    /// difference are the same in both, and so is their normalized form, provided nothing after
    /// them combines with them. An ASCII character never combines with what precedes it and is
    /// never reordered across; it combines with what follows only when a non-ASCII mark follows
    /// (`e` and U+0301 make `é`, which sorts after `f`). So the bytes decide when the two differing
    /// bytes are ASCII and each is followed by an ASCII byte or the string's end — or, where one
    /// string is the other's beginning, when the longer one goes on with an ASCII byte. Anything
    /// else (a byte of 128 or more at or just after the difference) is `nil`.
    @inline(__always)
    static func differenceOrder(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int32? {
        let common = min(a.count, b.count)
        var index = 0
        // Eight bytes at a time, each word read as little-endian so that its lowest byte is the
        // first in memory: the lowest set bit of the exclusive-or is in the first differing byte.
        while index + 8 <= common {
            let left = a.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            let right = b.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            let difference = UInt64(littleEndian: left) ^ UInt64(littleEndian: right)
            if difference != 0 {
                index += difference.trailingZeroBitCount / 8
                return byteOrder(a, b, at: index)
            }
            index += 8
        }
        while index < common {
            if a[index] != b[index] { return byteOrder(a, b, at: index) }
            index += 1
        }
        if a.count == b.count { return 0 }
        // One is the other's beginning: the shorter first, unless what follows could combine.
        return a.count < b.count ? (b[common] < 0x80 ? -1 : nil) : (a[common] < 0x80 ? 1 : nil)
    }

    /// ``differenceOrder(_:_:)`` at the first differing byte, `index`.
    @inline(__always)
    private static func byteOrder(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, at index: Int) -> Int32? {
        let left = a[index]
        let right = b[index]
        guard left < 0x80, right < 0x80 else { return nil }
        let next = index + 1
        guard next == a.count || a[next] < 0x80, next == b.count || b[next] < 0x80 else { return nil }
        return left < right ? -1 : 1
    }

    /// The byte order of `a` and `b` when both are ASCII — `compare:`'s order for them — else
    /// `nil` (a byte of 128 or more anywhere: the in-memory comparison decides, since a later
    /// combining mark can change the order of an earlier byte). A sort calls this for every pair it
    /// compares, so it checks eight bytes at a time and compares with `memcmp`.
    @inline(__always)
    static func asciiOrder(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int32? {
        guard isASCII(a), isASCII(b) else { return nil }
        let common = min(a.count, b.count)
        if common > 0, let left = a.baseAddress, let right = b.baseAddress {
            let order = memcmp(left, right, common)
            if order != 0 { return order < 0 ? -1 : 1 }
        }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    @inline(__always)
    private static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        while index + 8 <= bytes.count {
            if bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
            index += 8
        }
        while index < bytes.count {
            if bytes[index] >= 0x80 { return false }
            index += 1
        }
        return true
    }

    private static func string(_ value: OpaquePointer?) -> String? {
        guard sqlite3_value_type(value) != SQLITE_NULL, let text = sqlite3_value_text(value) else { return nil }
        let count = Int(sqlite3_value_bytes(value))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }
}
