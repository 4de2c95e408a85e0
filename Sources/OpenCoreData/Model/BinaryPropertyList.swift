/// A property-list value with the keyed archiver's `UID` references, which Foundation's
/// `PropertyListSerialization` cannot write on Linux.
indirect enum PropertyListValue {
    case bool(Bool)
    case integer(Int)
    case real(Double)
    case string(String)
    case data(Data)
    /// An index into a keyed archive's `$objects`.
    case uid(Int)
    case array([PropertyListValue])
    /// Keys in the order given (binary property lists keep it).
    case dictionary([(String, PropertyListValue)])
}

/// Writes Apple's binary property list format (`bplist00`): a header, the objects, a table of
/// their offsets and a 32-byte trailer, every integer big-endian. Strings are written once.
struct BinaryPropertyListWriter {
    private var objects: [[UInt8]] = []
    private var stringIndex: [String: Int] = [:]
    private var referenceSize = 1

    /// The binary property list of `root`.
    static func data(_ root: PropertyListValue) -> Data {
        var writer = BinaryPropertyListWriter()
        let count = writer.count(root)
        writer.referenceSize = count < 256 ? 1 : count < 65_536 ? 2 : 4
        let top = writer.add(root)
        return writer.finish(top: top)
    }

    /// How many objects `value` flattens to (an upper bound: strings are shared later).
    private func count(_ value: PropertyListValue) -> Int {
        switch value {
        case .array(let items): return 1 + items.reduce(0) { $0 + count($1) }
        case .dictionary(let pairs): return 1 + pairs.reduce(0) { $0 + 1 + count($1.1) }
        default: return 1
        }
    }

    private mutating func add(_ value: PropertyListValue) -> Int {
        if case .string(let string) = value, let index = stringIndex[string] { return index }
        let index = objects.count
        objects.append([])
        var bytes: [UInt8] = []
        switch value {
        case .bool(let flag):
            bytes = [flag ? 0x09 : 0x08]
        case .integer(let int):
            bytes = Self.integer(int)
        case .real(let double):
            bytes = [0x23] + Self.bigEndian(double.bitPattern, size: 8)
        case .string(let string):
            stringIndex[string] = index
            if string.utf8.allSatisfy({ $0 < 0x80 }) {
                bytes = Self.marker(0x50, count: string.utf8.count) + Array(string.utf8)
            } else {
                let units = Array(string.utf16)
                bytes = Self.marker(0x60, count: units.count)
                for unit in units { bytes += [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
            }
        case .data(let data):
            bytes = Self.marker(0x40, count: data.count) + Array(data)
        case .uid(let uid):
            let size = uid < 256 ? 1 : uid < 65_536 ? 2 : 4
            bytes = [0x80 | UInt8(size - 1)] + Self.bigEndian(UInt64(uid), size: size)
        case .array(let items):
            let references = items.map { add($0) }
            bytes = Self.marker(0xA0, count: items.count)
            for reference in references { bytes += Self.bigEndian(UInt64(reference), size: referenceSize) }
        case .dictionary(let pairs):
            let keys = pairs.map { add(.string($0.0)) }
            let values = pairs.map { add($0.1) }
            bytes = Self.marker(0xD0, count: pairs.count)
            for reference in keys + values { bytes += Self.bigEndian(UInt64(reference), size: referenceSize) }
        }
        objects[index] = bytes
        return index
    }

    private func finish(top: Int) -> Data {
        var output: [UInt8] = Array("bplist00".utf8)
        var offsets: [Int] = []
        offsets.reserveCapacity(objects.count)
        for object in objects {
            offsets.append(output.count)
            output += object
        }
        let tableOffset = output.count
        let offsetSize = tableOffset < 256 ? 1 : tableOffset < 65_536 ? 2 : tableOffset < 1 << 32 ? 4 : 8
        for offset in offsets { output += Self.bigEndian(UInt64(offset), size: offsetSize) }
        output += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
        output += Self.bigEndian(UInt64(objects.count), size: 8)
        output += Self.bigEndian(UInt64(top), size: 8)
        output += Self.bigEndian(UInt64(tableOffset), size: 8)
        return Data(output)
    }

    /// A type marker with its count in the low nibble, or `0xF` followed by an integer object.
    private static func marker(_ type: UInt8, count: Int) -> [UInt8] {
        count < 15 ? [type | UInt8(count)] : [type | 0x0F] + integer(count)
    }

    /// An integer object: 1, 2, 4 or 8 bytes; negative numbers always take 8.
    private static func integer(_ value: Int) -> [UInt8] {
        if value < 0 { return [0x13] + bigEndian(UInt64(bitPattern: Int64(value)), size: 8) }
        if value < 256 { return [0x10, UInt8(value)] }
        if value < 65_536 { return [0x11] + bigEndian(UInt64(value), size: 2) }
        if value < 1 << 32 { return [0x12] + bigEndian(UInt64(value), size: 4) }
        return [0x13] + bigEndian(UInt64(value), size: 8)
    }

    private static func bigEndian(_ value: UInt64, size: Int) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64(size - 1 - $0))) }
    }
}
