/// Apple's XML store format (STORE-FORMAT.md, "XML stores"): a `<database>` with a
/// `<databaseInfo>` (format version, store UUID, the last object number handed out, metadata as
/// an XML property list) and one `<object type="ENTITY" id="zN">` per object, holding
/// `<attribute name="…" type="…">value</attribute>` and
/// `<relationship name="…" type="min/max" destination="ENTITY" idrefs="zA zB"></relationship>`.
/// Entity names are written in upper case and property names in lower case, as Apple writes them,
/// and read back without regard to case.
enum XMLStoreFormat: AtomicStoreFormat {
    /// The `<version>` Apple's XML stores record.
    static let formatVersion = "134481920"

    static func decode(
        _ data: Data, model: NSManagedObjectModel, checkingMetadata check: ([String: Any]) throws -> Void
    ) throws -> StoreImage {
        let root = try document(data)
        var image = try header(root)
        try check(image.metadata)
        var entities: [String: (entity: NSEntityDescription, slots: [String: Int])] = [:]
        for entity in model.entities {
            var slots: [String: Int] = [:]
            for (slot, name) in entity.layout.names.enumerated() where entity.layout.isPersistent(slot) {
                slots[name.lowercased()] = slots[name.lowercased()] ?? slot
            }
            entities[(entity.name ?? "").uppercased()] = (entity, slots)
        }
        image.objects.reserveCapacity(root.children.count)
        for element in root.children where element.name == "object" {
            guard let typeName = element.attribute("type"), let entry = entities[typeName.uppercased()] else {
                throw StoreFileProblem(
                    "holds an object of the type \(element.attribute("type") ?? "(none)"), which the model does not have"
                )
            }
            guard let idText = element.attribute("id"), let reference = Self.reference(idText) else {
                throw StoreFileProblem("holds an object whose id \(element.attribute("id") ?? "(none)") is not zN")
            }
            let layout = entry.entity.layout
            var values = SlotValues(shape: layout.slotShape)
            for slot in layout.relationshipSlots { values[slot] = [Int64]() }
            for child in element.children {
                guard let name = child.attribute("name"), let slot = entry.slots[name.lowercased()] else { continue }
                switch (child.name, layout.kinds[slot]) {
                case ("attribute", .attribute):
                    guard let attribute = layout.properties[slot] as? NSAttributeDescription else { continue }
                    values[slot] = try value(child.text, attribute: attribute)?.value(for: attribute)
                case ("relationship", .toOne), ("relationship", .toMany):
                    let ids = (child.attribute("idrefs") ?? "").split(whereSeparator: {
                        $0 == " " || $0 == "\n" || $0 == "\t"
                    })
                    values[slot] = try ids.map { text in
                        guard let reference = Self.reference(text) else {
                            throw StoreFileProblem("relates object \(idText) to \(text), which is not an object id")
                        }
                        return reference
                    }
                default:
                    throw StoreFileProblem("writes \(name) of object \(idText) as an \(child.name), which it is not")
                }
            }
            image.objects.append(StoreImage.Object(entity: entry.entity, reference: reference, values: values))
        }
        return image
    }

    static func metadata(of data: Data) throws -> [String: Any] {
        try header(document(data)).metadata
    }

    static func replacingMetadata(_ metadata: [String: Any], in data: Data) throws -> Data {
        // Check the whole file first, then replace the databaseInfo element's bytes.
        let info = try header(document(data))
        let bytes = [UInt8](data)
        guard let start = bytes.firstRange(of: Array("<databaseInfo>".utf8))?.lowerBound,
            let end = bytes.firstRange(of: Array("</databaseInfo>".utf8))?.upperBound, start < end
        else { throw StoreFileProblem("has no databaseInfo element") }
        var out = [UInt8](bytes[..<start])
        var text = ""
        databaseInfo(into: &text, metadata: metadata, lastReference: info.lastReference)
        out += Array(text.drop(while: { $0 == " " }).utf8.dropLast())
        out += bytes[end...]
        return Data(out)
    }

    private static func document(_ data: Data) throws -> PlainXML.Element {
        let root: PlainXML.Element
        do {
            root = try PlainXML.parse(data, allowsDoctype: true)
        } catch let problem as PlainXML.Problem {
            throw StoreFileProblem("is not well-formed XML (line \(problem.line)): it \(problem.message)")
        }
        guard root.name == "database" else { throw StoreFileProblem("has no <database> root element") }
        return root
    }

    /// The image's metadata and last reference, from `<databaseInfo>`; no objects yet.
    private static func header(_ root: PlainXML.Element) throws -> StoreImage {
        guard let info = root.child("databaseInfo") else { throw StoreFileProblem("has no databaseInfo element") }
        var metadata: [String: Any] = [:]
        if let plist = info.child("metadata")?.child("plist"), let dictionary = plist.children.first {
            guard let read = try PropertyListXML.value(dictionary) as? [String: Any] else {
                throw StoreFileProblem("has metadata that is not a dictionary")
            }
            metadata = read
        }
        guard let uuid = info.child("UUID")?.text.trimmingCharacters(in: .whitespacesAndNewlines), !uuid.isEmpty else {
            throw StoreFileProblem("has no store UUID")
        }
        metadata[NSStoreUUIDKey] = uuid
        metadata[NSStoreTypeKey] = NSXMLStoreType
        let last = info.child("nextObjectID").flatMap { Int64($0.text.trimmingCharacters(in: .whitespacesAndNewlines)) }
        return StoreImage(metadata: metadata, lastReference: last ?? 100, objects: [])
    }

    /// The number of an object id, `zN` (any leading letters are Apple's prefix).
    private static func reference(_ text: some StringProtocol) -> Int64? {
        let digits = text.drop(while: { $0.isLetter })
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int64(digits)
    }

    /// The type names of the `type` attribute, by attribute type.
    private static func typeName(_ type: NSAttributeType) -> String {
        switch type {
        case .integer16AttributeType: "int16"
        case .integer32AttributeType: "int32"
        case .integer64AttributeType: "int64"
        case .decimalAttributeType: "decimal"
        case .doubleAttributeType: "double"
        case .floatAttributeType: "float"
        case .stringAttributeType: "string"
        case .booleanAttributeType: "bool"
        case .dateAttributeType: "date"
        case .binaryDataAttributeType: "binary"
        case .transformableAttributeType: "transformable"
        case .UUIDAttributeType: "uuid"
        case .URIAttributeType: "uri"
        case .objectIDAttributeType: "objectid"
        default: "binary"
        }
    }

    /// An attribute's value from its element's text, read by the model's type.
    private static func value(_ text: String, attribute: NSAttributeDescription) throws -> StoredValue? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let stored: StoredValue?
        switch attribute.attributeType {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            stored = Int64(trimmed).map(StoredValue.integer)
        case .booleanAttributeType:
            stored =
                ["1", "YES", "true"].contains(trimmed)
                ? .bool(true) : ["0", "NO", "false"].contains(trimmed) ? .bool(false) : nil
        case .doubleAttributeType, .floatAttributeType:
            stored = Double(trimmed).map(StoredValue.double)
        case .decimalAttributeType:
            stored = Decimal(string: trimmed, locale: Locale(identifier: "en_US_POSIX")).map(StoredValue.decimal)
        case .stringAttributeType:
            return .string(text)
        case .dateAttributeType:
            stored = Double(trimmed).map(StoredValue.date)
        case .UUIDAttributeType:
            stored = UUID(uuidString: trimmed).map(StoredValue.uuid)
        case .URIAttributeType, .objectIDAttributeType:
            return .uri(trimmed)
        default:
            stored = Data(base64Encoded: trimmed, options: .ignoreUnknownCharacters).map(StoredValue.data)
        }
        guard let stored else {
            throw StoreFileProblem(
                "holds \"\(trimmed.prefix(40))\" for the \(attribute.name) attribute, which is not a \(typeName(attribute.attributeType))"
            )
        }
        return stored
    }

    static func encode(_ image: StoreImage) throws -> Data {
        var text = """
            <?xml version="1.0" standalone="yes"?>
            <!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">

            <database>

            """
        text.reserveCapacity(image.objects.count * 300)
        databaseInfo(into: &text, metadata: image.metadata, lastReference: image.lastReference)
        for object in image.objects {
            let layout = object.entity.layout
            text +=
                "    <object type=\"\(escaped((object.entity.name ?? "").uppercased()))\" id=\"z\(object.reference)\">\n"
            for slot in 0..<layout.count where layout.isPersistent(slot) {
                let name = escaped(layout.names[slot].lowercased())
                switch layout.kinds[slot] {
                case .attribute:
                    guard let attribute = layout.properties[slot] as? NSAttributeDescription,
                        let stored = StoredValue(object.values[slot] ?? nil, attribute: attribute)
                    else { continue }
                    text += "        <attribute name=\"\(name)\" type=\"\(typeName(attribute.attributeType))\">"
                    text += Self.text(stored)
                    text += "</attribute>\n"
                case .toOne, .toMany:
                    guard let relationship = layout.properties[slot] as? NSRelationshipDescription else { continue }
                    let counts =
                        relationship.isToMany ? "\(relationship.minCount)/\(relationship.maxCount)" : "1/1"
                    let destination = escaped((relationship.destinationEntity?.name ?? "").uppercased())
                    text += "        <relationship name=\"\(name)\" type=\"\(counts)\" destination=\"\(destination)\""
                    let references = object.values[slot] as? [Int64] ?? []
                    if !references.isEmpty {
                        text += " idrefs=\"" + references.map { "z\($0)" }.joined(separator: " ") + "\""
                    }
                    text += "></relationship>\n"
                case .fetched:
                    continue
                }
            }
            text += "    </object>\n"
        }
        text += "</database>\n"
        return Data(text.utf8)
    }

    private static func databaseInfo(into text: inout String, metadata: [String: Any], lastReference: Int64) {
        var plist = metadata
        let uuid = plist.removeValue(forKey: NSStoreUUIDKey) as? String ?? UUID().uuidString
        plist.removeValue(forKey: NSStoreTypeKey)
        text += "    <databaseInfo>\n"
        text += "        <version>\(formatVersion)</version>\n"
        text += "        <UUID>\(escaped(uuid))</UUID>\n"
        text += "        <nextObjectID>\(lastReference)</nextObjectID>\n"
        text += "        <metadata>\n            <plist version=\"1.0\">\n"
        PropertyListXML.write(plist, into: &text, indent: 4)
        text += "            </plist>\n        </metadata>\n"
        text += "    </databaseInfo>\n"
    }

    private static func text(_ value: StoredValue) -> String {
        switch value {
        case .integer(let value): String(value)
        case .bool(let value): value ? "1" : "0"
        case .double(let value), .date(let value): String(value)
        case .decimal(let value): value.description
        case .string(let value): escaped(value)
        case .data(let value): value.base64EncodedString()
        case .uuid(let value): value.uuidString
        case .uri(let value): escaped(value)
        }
    }

    /// `text` with the characters XML reserves as references; a control character XML cannot
    /// carry, and a carriage return (which a reader would turn into a line feed), as a numeric
    /// reference.
    static func escaped(_ text: String) -> String {
        guard
            text.utf8.contains(where: {
                $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 || ($0 < 0x20 && $0 != 0x0A && $0 != 0x09)
            })
        else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default:
                if scalar.value < 0x20, scalar != "\n", scalar != "\t" {
                    out += "&#\(scalar.value);"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}

/// XML property lists inside an XML store's `<metadata>`: read from a ``PlainXML`` tree and
/// written as Apple writes them.
enum PropertyListXML {
    /// The value of a plist element (`dict`, `array`, `string`, `integer`, `real`, `true`,
    /// `false`, `date`, `data`).
    ///
    /// - Throws: ``StoreFileProblem`` for an element that is not one of these or a malformed value.
    static func value(_ element: PlainXML.Element) throws -> Any {
        let text = element.text.trimmingCharacters(in: .whitespacesAndNewlines)
        switch element.name {
        case "dict":
            var dictionary: [String: Any] = [:]
            var key: String?
            for child in element.children {
                if child.name == "key" {
                    key = child.text
                } else if let pending = key {
                    dictionary[pending] = try value(child)
                    key = nil
                } else {
                    throw StoreFileProblem("has a metadata dictionary value without a key")
                }
            }
            return dictionary
        case "array": return try element.children.map(value)
        case "string": return element.text
        case "integer":
            guard let integer = Int(text) else { throw StoreFileProblem("has metadata integer \"\(text.prefix(40))\"") }
            return integer
        case "real":
            guard let real = Double(text) else { throw StoreFileProblem("has metadata real \"\(text.prefix(40))\"") }
            return real
        case "true": return true
        case "false": return false
        case "date":
            guard let date = ISO8601DateFormatter().date(from: text) else {
                throw StoreFileProblem("has metadata date \"\(text.prefix(40))\"")
            }
            return date
        case "data":
            guard let data = Data(base64Encoded: text, options: .ignoreUnknownCharacters) else {
                throw StoreFileProblem("has metadata data that is not base 64")
            }
            return data
        default:
            throw StoreFileProblem("has a metadata element <\(element.name)>, which a property list does not have")
        }
    }

    /// Writes `value` as plist XML, each line indented by `indent` levels of four spaces.
    static func write(_ value: Any, into text: inout String, indent: Int) {
        let pad = String(repeating: "    ", count: indent)
        switch value {
        case let string as String:
            text += "\(pad)<string>\(XMLStoreFormat.escaped(string))</string>\n"
        case let bool as Bool where !DynamicValue.isObject(value):
            text += "\(pad)<\(bool ? "true" : "false")/>\n"
        case let date as Date:
            text += "\(pad)<date>\(ISO8601DateFormatter().string(from: date))</date>\n"
        case let data as Data:
            text += "\(pad)<data>\(data.base64EncodedString())</data>\n"
        case let dictionary as [String: Any]:
            text += "\(pad)<dict>\n"
            for (key, element) in dictionary.sorted(by: { $0.key < $1.key }) {
                text += "\(pad)    <key>\(XMLStoreFormat.escaped(key))</key>\n"
                write(element, into: &text, indent: indent + 1)
            }
            text += "\(pad)</dict>\n"
        case let array as [Any]:
            text += "\(pad)<array>\n"
            for element in array { write(element, into: &text, indent: indent + 1) }
            text += "\(pad)</array>\n"
        default:
            if let number = DynamicValue.number(value) {
                if let exact = number.exactInt, !(value is Double), !(value is Float) {
                    text += "\(pad)<integer>\(exact)</integer>\n"
                } else {
                    text += "\(pad)<real>\(number.doubleValue)</real>\n"
                }
            } else {
                text += "\(pad)<string>\(XMLStoreFormat.escaped(String(describing: value)))</string>\n"
            }
        }
    }
}
