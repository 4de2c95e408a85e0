/// Reads property lists from files that can come from anywhere — a store's metadata and model
/// cache, compiled models, `VersionInfo.plist`. Binary property lists are read here rather than by
/// `PropertyListSerialization`, which on Linux crashes on some malformed binary lists (a set used
/// as a dictionary key) and walks shared references without bound. XML ones go to Foundation.
///
/// Values come back as Foundation gives them: `String`, `Int`, `Double`, `Bool`, `Date`, `Data`,
/// `[Any]` (arrays and sets), `[String: Any]`, and `NSKeyedArchiver` UIDs as `["CF$UID": n]`.
package enum PropertyListReader {
    /// A property list that cannot be read, with the reason.
    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    /// - Parameter allowingSets: Whether a binary list may hold sets (read as arrays). Property
    ///   lists never should — Foundation's writers do not make them — and Foundation's reader on
    ///   Linux crashes converting one, so a list bound for Foundation is read without.
    /// - Throws: ``Problem`` when `data` is not a property list or exceeds a limit.
    package static func propertyList(from data: Data, allowingSets: Bool = true) throws -> Any {
        // Anything Foundation would read as binary (it looks only at "bplist"): ours or an error.
        if data.starts(with: Array("bplist".utf8)) {
            var reader = try BinaryPropertyListReader(Array(data), allowingSets: allowingSets)
            return try reader.root()
        }
        do {
            return try PropertyListSerialization.propertyList(from: data, format: nil)
        } catch {
            throw Problem(description: "not a property list")
        }
    }
}

/// Apple's `bplist00` format: objects, an offset table and a 32-byte trailer. Every offset, count
/// and reference is checked against the data; nesting is capped at ``maximumDepth`` and the
/// number of values produced — counting a shared object each time it is reached — at
/// ``maximumValues``, so neither a reference cycle nor an exponential fan-out can exhaust the
/// stack or the clock.
struct BinaryPropertyListReader {
    static let maximumDepth = 512
    static let maximumValues = 1_000_000

    private let bytes: [UInt8]
    private let allowsSets: Bool
    private let referenceSize: Int
    private let offsets: [Int]
    private let top: Int
    private var budget = maximumValues

    init(_ bytes: [UInt8], allowingSets: Bool = true) throws {
        self.bytes = bytes
        allowsSets = allowingSets
        guard bytes.starts(with: Array("bplist00".utf8)) else { throw Self.problem("is not of version 00") }
        let n = bytes.count
        guard n >= 8 + 32 else { throw Self.problem("is too short") }
        let offsetSize = Int(bytes[n - 26])
        referenceSize = Int(bytes[n - 25])
        let count = Self.unsigned(bytes[(n - 24)..<(n - 16)])
        let topIndex = Self.unsigned(bytes[(n - 16)..<(n - 8)])
        let tableStart = Self.unsigned(bytes[(n - 8)..<n])
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize), count > 0, count <= UInt64(n),
            topIndex < count, tableStart >= 8, tableStart <= UInt64(n - 32),
            count * UInt64(offsetSize) <= UInt64(n - 32) - tableStart
        else { throw Self.problem("has a damaged trailer") }
        var offsets: [Int] = []
        offsets.reserveCapacity(Int(count))
        for index in 0..<Int(count) {
            let start = Int(tableStart) + index * offsetSize
            let offset = Self.unsigned(bytes[start..<(start + offsetSize)])
            guard offset >= 8, offset < tableStart else { throw Self.problem("has an object outside the data") }
            offsets.append(Int(offset))
        }
        self.offsets = offsets
        top = Int(topIndex)
    }

    mutating func root() throws -> Any { try object(top, depth: 0) }

    private static func problem(_ text: String) -> PropertyListReader.Problem {
        PropertyListReader.Problem(description: "binary property list \(text)")
    }

    private static func unsigned(_ slice: ArraySlice<UInt8>) -> UInt64 {
        slice.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// `count` bytes at `offset`, which must lie inside the data.
    private func read(_ offset: Int, _ count: Int) throws -> ArraySlice<UInt8> {
        guard count >= 0, offset >= 0, offset <= bytes.count, count <= bytes.count - offset else {
            throw Self.problem("has an object running past its end")
        }
        return bytes[offset..<(offset + count)]
    }

    /// The byte at `offset`, which must lie inside the data.
    private func byte(at offset: Int) throws -> UInt8 {
        guard offset >= 0, offset < bytes.count else { throw Self.problem("has an object running past its end") }
        return bytes[offset]
    }

    /// The element count of the object whose marker is at `offset`, and where its contents start.
    private func length(at offset: Int, marker: UInt8) throws -> (count: Int, start: Int) {
        let low = Int(marker & 0x0F)
        guard low == 0x0F else { return (low, offset + 1) }
        let sizeMarker = try byte(at: offset + 1)
        guard sizeMarker & 0xF0 == 0x10, sizeMarker & 0x0F <= 3 else { throw Self.problem("has a bad length") }
        let size = 1 << Int(sizeMarker & 0x0F)
        let value = Self.unsigned(try read(offset + 2, size))
        guard value <= UInt64(bytes.count) else { throw Self.problem("has a length past its end") }
        return (Int(value), offset + 2 + size)
    }

    private func references(at start: Int, count: Int) throws -> [Int] {
        guard count <= bytes.count / referenceSize else { throw Self.problem("has too many references") }
        let slice = try read(start, count * referenceSize)
        return try (0..<count).map { index in
            let from = slice.startIndex + index * referenceSize
            let reference = Self.unsigned(slice[from..<(from + referenceSize)])
            guard reference < UInt64(offsets.count) else { throw Self.problem("refers to a missing object") }
            return Int(reference)
        }
    }

    private mutating func object(_ index: Int, depth: Int) throws -> Any {
        guard depth < Self.maximumDepth else { throw Self.problem("nests deeper than \(Self.maximumDepth) levels") }
        budget -= 1
        guard budget >= 0 else {
            throw Self.problem("holds more than \(Self.maximumValues) values (through shared references)")
        }
        let offset = offsets[index]
        let marker = try byte(at: offset)
        switch marker >> 4 {
        case 0x0:
            switch marker {
            case 0x08: return false
            case 0x09: return true
            case 0x00: return NSNull()
            default: throw Self.problem("has an unknown marker \(marker)")
            }
        case 0x1:
            let size = 1 << Int(marker & 0x0F)
            switch size {
            case 1, 2, 4: return Int(Self.unsigned(try read(offset + 1, size)))
            case 8: return Int(Int64(bitPattern: Self.unsigned(try read(offset + 1, 8))))
            case 16:
                let value = try read(offset + 1, 16)
                guard Self.unsigned(value.prefix(8)) == 0 else { throw Self.problem("has an integer past 64 bits") }
                let low = Self.unsigned(value.suffix(8))
                guard low <= UInt64(Int.max) else { throw Self.problem("has an integer past 64 bits") }
                return Int(low)
            default: throw Self.problem("has an integer of \(size) bytes")
            }
        case 0x2:
            switch marker & 0x0F {
            case 2: return Double(Float(bitPattern: UInt32(Self.unsigned(try read(offset + 1, 4)))))
            case 3: return Double(bitPattern: Self.unsigned(try read(offset + 1, 8)))
            default: throw Self.problem("has a real of an unknown size")
            }
        case 0x3:
            guard marker == 0x33 else { throw Self.problem("has a damaged date") }
            return Date(timeIntervalSinceReferenceDate: Double(bitPattern: Self.unsigned(try read(offset + 1, 8))))
        case 0x4:
            let (count, start) = try length(at: offset, marker: marker)
            return Data(try read(start, count))
        case 0x5:
            // ASCII, as Apple's reader takes it: a byte past 127 makes the list unreadable there too.
            let (count, start) = try length(at: offset, marker: marker)
            let ascii = try read(start, count)
            guard ascii.allSatisfy({ $0 < 0x80 }) else { throw Self.problem("has an ASCII string that is not ASCII") }
            return String(decoding: ascii, as: UTF8.self)
        case 0x6:
            let (count, start) = try length(at: offset, marker: marker)
            guard count <= bytes.count / 2 else { throw Self.problem("has a string past its end") }
            let raw = try read(start, count * 2)
            let units = stride(from: raw.startIndex, to: raw.endIndex, by: 2).map {
                UInt16(raw[$0]) << 8 | UInt16(raw[$0 + 1])
            }
            return String(decoding: units, as: UTF16.self)
        case 0x8:
            let size = Int(marker & 0x0F) + 1
            guard size <= 8, let uid = Int(exactly: Self.unsigned(try read(offset + 1, size))) else {
                throw Self.problem("has a UID out of range")
            }
            return ["CF$UID": uid] as [String: Any]
        case 0xA, 0xC:
            guard marker >> 4 == 0xA || allowsSets else { throw Self.problem("holds a set") }
            let (count, start) = try length(at: offset, marker: marker)
            var elements: [Any] = []
            for reference in try references(at: start, count: count) {
                elements.append(try object(reference, depth: depth + 1))
            }
            return elements
        case 0xD:
            let (count, start) = try length(at: offset, marker: marker)
            let keys = try references(at: start, count: count)
            let values = try references(at: start + count * referenceSize, count: count)
            var dictionary: [String: Any] = [:]
            for (key, value) in zip(keys, values) {
                guard let name = try object(key, depth: depth + 1) as? String else {
                    throw Self.problem("has a dictionary key that is not a string")
                }
                dictionary[name] = try object(value, depth: depth + 1)
            }
            return dictionary
        default:
            throw Self.problem("has an unknown marker \(marker)")
        }
    }
}
