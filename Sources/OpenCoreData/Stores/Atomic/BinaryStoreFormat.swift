/// The binary store's file, a format of this project's design (Apple's binary store format is
/// not public; DEVIATIONS.md): compact, read in one pass, and checked as it is read — every
/// count and length against the bytes left, every value's kind against the model's type.
///
/// Layout (STORE-FORMAT.md, "Binary stores"), integers as LEB128 varints (signed ones
/// zig-zagged), strings as a length and UTF-8 bytes:
///
/// ```
/// "OCDBIN01"                      magic and format version
/// metadata length, binary plist   the store's metadata, UUID and type included
/// last reference                  the last object number handed out
/// entity count, then per entity:  name, property count, property names
/// object count, then per object:  entity index, reference, one value per property of the entity
/// "OCDBEND1"                      end marker: a truncated file is refused
/// ```
///
/// A value is a tag byte and its payload: 0 none; 1 integer; 2 false; 3 true; 4 double (8 bytes);
/// 5 decimal (its text); 6 string; 7 date (seconds since 2001, 8 bytes); 8 data; 9 UUID
/// (16 bytes); 10 URI (text); 11 references (a count and that many).
enum BinaryStoreFormat: AtomicStoreFormat {
    static let magic = Array("OCDBIN01".utf8)
    static let endMarker = Array("OCDBEND1".utf8)

    static func encode(_ image: StoreImage) throws -> Data {
        var writer = ByteWriter()
        writer.bytes += magic
        let metadata = try PropertyListSerialization.data(fromPropertyList: image.metadata, format: .binary, options: 0)
        writer.unsigned(UInt64(metadata.count))
        writer.bytes += metadata
        writer.signed(image.lastReference)
        var entityIndex: [ObjectIdentifier: Int] = [:]
        var entities: [NSEntityDescription] = []
        for object in image.objects where entityIndex[ObjectIdentifier(object.entity)] == nil {
            entityIndex[ObjectIdentifier(object.entity)] = entities.count
            entities.append(object.entity)
        }
        writer.unsigned(UInt64(entities.count))
        for entity in entities {
            let layout = entity.layout
            writer.string(entity.name ?? "")
            let slots = (0..<layout.count).filter(layout.isPersistent)
            writer.unsigned(UInt64(slots.count))
            for slot in slots { writer.string(layout.names[slot]) }
        }
        writer.unsigned(UInt64(image.objects.count))
        for object in image.objects {
            let layout = object.entity.layout
            writer.unsigned(UInt64(entityIndex[ObjectIdentifier(object.entity)] ?? 0))
            writer.signed(object.reference)
            for slot in 0..<layout.count where layout.isPersistent(slot) {
                if layout.kinds[slot] == .attribute {
                    let attribute = layout.properties[slot] as? NSAttributeDescription
                    writer.value(attribute.flatMap { StoredValue(object.values[slot] ?? nil, attribute: $0) })
                } else {
                    let references = object.values[slot] as? [Int64] ?? []
                    writer.bytes.append(11)
                    writer.unsigned(UInt64(references.count))
                    for reference in references { writer.signed(reference) }
                }
            }
        }
        writer.bytes += endMarker
        return Data(writer.bytes)
    }

    static func metadata(of data: Data) throws -> [String: Any] {
        var reader = ByteReader(bytes: [UInt8](data))
        return try header(&reader).metadata
    }

    static func replacingMetadata(_ metadata: [String: Any], in data: Data) throws -> Data {
        var reader = ByteReader(bytes: [UInt8](data))
        _ = try header(&reader)
        let rest = reader.bytes[reader.index...]
        var writer = ByteWriter()
        writer.bytes += magic
        let plist = try PropertyListSerialization.data(fromPropertyList: metadata, format: .binary, options: 0)
        writer.unsigned(UInt64(plist.count))
        writer.bytes += plist
        writer.bytes += rest
        return Data(writer.bytes)
    }

    /// The magic and the metadata; the reader is left at the last reference.
    private static func header(_ reader: inout ByteReader) throws -> (metadata: [String: Any], Void) {
        guard reader.bytes.starts(with: magic) else {
            throw StoreFileProblem("is not a binary store (no OCDBIN01 header)")
        }
        reader.index = magic.count
        let length = try reader.count()
        let plist = try reader.take(length)
        guard let metadata = try? PropertyListReader.propertyList(from: Data(plist)) as? [String: Any] else {
            throw StoreFileProblem("has unreadable metadata")
        }
        return (metadata, ())
    }

    static func decode(
        _ data: Data, model: NSManagedObjectModel, checkingMetadata check: ([String: Any]) throws -> Void
    ) throws -> StoreImage {
        var reader = ByteReader(bytes: [UInt8](data))
        guard reader.bytes.count >= magic.count + endMarker.count,
            reader.bytes.suffix(endMarker.count).elementsEqual(endMarker)
        else { throw StoreFileProblem("is truncated or not a binary store (no end marker)") }
        // The header reads as `metadata(of:)` reads it; the objects stop at the end marker.
        var metadata = try header(&reader).metadata
        reader.end = reader.bytes.count - endMarker.count
        guard reader.index <= reader.end else { throw StoreFileProblem("ends early") }
        metadata[NSStoreTypeKey] = NSBinaryStoreType
        try check(metadata)
        let lastReference = try reader.signed()
        let entityCount = try reader.count()
        var entities: [(entity: NSEntityDescription, slots: [Int?])] = []
        for _ in 0..<entityCount {
            let name = try reader.string()
            guard let entity = model.entitiesByName[name] else {
                throw StoreFileProblem("holds objects of the entity \(name), which the model does not have")
            }
            let layout = entity.layout
            let propertyCount = try reader.count()
            var slots: [Int?] = []
            for _ in 0..<propertyCount {
                let property = try reader.string()
                slots.append(layout.slotByName[property].flatMap { layout.isPersistent($0) ? $0 : nil })
            }
            entities.append((entity, slots))
        }
        let objectCount = try reader.count()
        var objects: [StoreImage.Object] = []
        objects.reserveCapacity(objectCount)
        for _ in 0..<objectCount {
            let index = try reader.unsigned()
            guard index < entities.count else { throw StoreFileProblem("names entity \(index) of \(entities.count)") }
            let (entity, slots) = entities[Int(index)]
            let layout = entity.layout
            let reference = try reader.signed()
            var values = SlotValues(shape: layout.slotShape)
            for slot in layout.relationshipSlots { values[slot] = [Int64]() }
            for slot in slots {
                let value = try reader.value()
                guard let slot else { continue }
                switch (layout.kinds[slot], value) {
                case (.attribute, .some(.stored(let stored))):
                    guard let attribute = layout.properties[slot] as? NSAttributeDescription else { continue }
                    values[slot] = try stored.value(for: attribute)
                case (.attribute, nil), (.toOne, nil), (.toMany, nil):
                    continue
                case (.toOne, .some(.references(let references))), (.toMany, .some(.references(let references))):
                    values[slot] = references
                default:
                    throw StoreFileProblem(
                        "holds a value of the wrong kind for \(layout.names[slot]) of \(entity.name ?? "?")")
                }
            }
            objects.append(StoreImage.Object(entity: entity, reference: reference, values: values))
        }
        guard reader.index == reader.end else { throw StoreFileProblem("has bytes after its last object") }
        return StoreImage(metadata: metadata, lastReference: lastReference, objects: objects)
    }
}

/// Bytes being written: varints, strings and tagged values.
private struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func unsigned(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    mutating func signed(_ value: Int64) {
        unsigned(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    mutating func string(_ text: String) {
        unsigned(UInt64(text.utf8.count))
        bytes += text.utf8
    }

    mutating func double(_ value: Double) {
        withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes += $0 }
    }

    mutating func value(_ value: StoredValue?) {
        switch value {
        case nil: bytes.append(0)
        case .integer(let value)?:
            bytes.append(1)
            signed(value)
        case .bool(let value)?: bytes.append(value ? 3 : 2)
        case .double(let value)?:
            bytes.append(4)
            double(value)
        case .decimal(let value)?:
            bytes.append(5)
            string(value.description)
        case .string(let value)?:
            bytes.append(6)
            string(value)
        case .date(let value)?:
            bytes.append(7)
            double(value)
        case .data(let value)?:
            bytes.append(8)
            unsigned(UInt64(value.count))
            bytes += value
        case .uuid(let value)?:
            bytes.append(9)
            withUnsafeBytes(of: value.uuid) { bytes += $0 }
        case .uri(let value)?:
            bytes.append(10)
            string(value)
        }
    }
}

/// A value as read: an attribute's or a relationship's references.
private enum ReadValue {
    case stored(StoredValue)
    case references([Int64])
}

/// Bytes being read, every read checked against ``end``.
private struct ByteReader {
    let bytes: [UInt8]
    var index = 0
    lazy var end = bytes.count

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func byte() throws -> UInt8 {
        guard index < end else { throw StoreFileProblem("ends early") }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func take(_ count: Int) throws -> ArraySlice<UInt8> {
        guard count >= 0, count <= end - index else { throw StoreFileProblem("ends early") }
        defer { index += count }
        return bytes[index..<index + count]
    }

    mutating func unsigned() throws -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try self.byte()
            guard shift < 64 else { throw StoreFileProblem("has a number that does not end") }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }

    mutating func signed() throws -> Int64 {
        let raw = try unsigned()
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    /// A count or length, which cannot exceed the bytes left (each element takes at least one).
    mutating func count() throws -> Int {
        let value = try unsigned()
        guard value <= UInt64(end - index) else {
            throw StoreFileProblem("counts \(value) items where fewer bytes are left")
        }
        return Int(value)
    }

    mutating func string() throws -> String {
        let bytes = try take(count())
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw StoreFileProblem("has text that is not UTF-8")
        }
        return text
    }

    mutating func double() throws -> Double {
        let bytes = try take(8)
        var bits: UInt64 = 0
        for (shift, byte) in bytes.enumerated() { bits |= UInt64(byte) << (8 * UInt64(shift)) }
        return Double(bitPattern: bits)
    }

    mutating func value() throws -> ReadValue? {
        switch try byte() {
        case 0: return nil
        case 1: return .stored(.integer(try signed()))
        case 2: return .stored(.bool(false))
        case 3: return .stored(.bool(true))
        case 4: return .stored(.double(try double()))
        case 5:
            let text = try string()
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw StoreFileProblem("has the decimal \"\(text.prefix(40))\", which is not a number")
            }
            return .stored(.decimal(decimal))
        case 6: return .stored(.string(try string()))
        case 7: return .stored(.date(try double()))
        case 8: return .stored(.data(Data(try take(count()))))
        case 9:
            let b = Array(try take(16))
            return .stored(
                .uuid(
                    UUID(
                        uuid: (
                            b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                            b[14], b[15]
                        ))))
        case 10: return .stored(.uri(try string()))
        case 11:
            let count = try self.count()
            var references: [Int64] = []
            references.reserveCapacity(count)
            for _ in 0..<count { references.append(try signed()) }
            return .references(references)
        case let tag:
            throw StoreFileProblem("has a value of unknown kind \(tag)")
        }
    }
}
