/// A strict parser for plain XML — elements, quoted attributes, text, comments, processing
/// instructions, CDATA — that builds a small tree. Model files and XML stores come from anywhere;
/// this reads exactly that kind of XML and refuses the rest.
///
/// On Linux, Foundation's XML classes sit on libxml2 in recovery mode: `XMLDocument` turns broken
/// XML into a partial document (a model with fewer entities, silently), and `XMLParser` crashes
/// on some of it (an attribute without `=`). This parser refuses any document type declaration
/// with an internal subset, so no entity can be declared and no expansion smuggled in; a plain
/// `<!DOCTYPE name SYSTEM "…">` line (Apple's XML stores have one) is skipped when the caller
/// allows it, never fetched. Nesting stops at ``maximumDepth``. A tree costs memory in proportion
/// to the document, never more.
struct PlainXML {
    /// Deeper than Xcode or Core Data ever writes (a model file or an XML store nests a handful
    /// of levels), and below libxml2's own limit of 256, past which `XMLDocument` silently drops
    /// the rest of the document.
    static let maximumDepth = 64

    /// Why a document is not accepted, with the line it was found on.
    struct Problem: Error {
        let message: String
        let line: Int
    }

    /// One element: its name, attributes in document order, child elements and the text
    /// directly inside it (references resolved, CDATA included).
    final class Element {
        let name: String
        let attributes: [(name: String, value: String)]
        var children: [Element] = []
        var text = ""

        init(name: String, attributes: [(name: String, value: String)]) {
            self.name = name
            self.attributes = attributes
        }

        /// The value of the attribute `name`, if present.
        func attribute(_ name: String) -> String? {
            attributes.first { $0.name == name }?.value
        }

        /// The first child element named `name`.
        func child(_ name: String) -> Element? { children.first { $0.name == name } }
    }

    /// The root element of `data`.
    ///
    /// - Parameter allowsDoctype: whether a document type declaration without an internal
    ///   subset is skipped; otherwise any declaration is refused.
    /// - Throws: ``Problem`` for anything that is not well-formed XML of the plain kind.
    static func parse(_ data: Data, allowsDoctype: Bool = false) throws -> Element {
        var parser = PlainXML(bytes: Array(data), allowsDoctype: allowsDoctype)
        return try parser.document()
    }

    private let bytes: [UInt8]
    private let allowsDoctype: Bool
    private var index = 0
    private var open: [Element] = []

    private init(bytes: [UInt8], allowsDoctype: Bool) {
        self.bytes = bytes
        self.allowsDoctype = allowsDoctype
    }

    private var line: Int { bytes[..<min(index, bytes.count)].reduce(1) { $1 == 0x0A ? $0 + 1 : $0 } }

    private func problem(_ message: String) -> Problem { Problem(message: message, line: line) }

    private func starts(with text: String) -> Bool {
        bytes[index...].starts(with: text.utf8)
    }

    /// Moves past the next `text`, returning where it starts.
    @discardableResult
    private mutating func skip(past text: String, what: String) throws -> Int {
        let pattern = Array(text.utf8)
        while index < bytes.count {
            if bytes[index] == pattern[0], bytes[index...].starts(with: pattern) {
                let start = index
                index += pattern.count
                return start
            }
            index += 1
        }
        throw problem("has \(what) that does not end")
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    private static func isNameStart(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F || byte == 0x3A || byte >= 0x80
    }

    private static func isName(_ byte: UInt8) -> Bool {
        isNameStart(byte) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2D || byte == 0x2E
    }

    private mutating func skipSpace() {
        while index < bytes.count, Self.isSpace(bytes[index]) { index += 1 }
    }

    private mutating func name() throws -> String {
        let start = index
        guard index < bytes.count, Self.isNameStart(bytes[index]) else { throw problem("expects a name") }
        while index < bytes.count, Self.isName(bytes[index]) { index += 1 }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// `&lt;`, `&gt;`, `&amp;`, `&quot;`, `&apos;`, `&#N;` or `&#xH;` at `index`, appended to `text`.
    private mutating func reference(into text: inout String) throws {
        index += 1
        let start = index
        while index < bytes.count, bytes[index] != 0x3B, index - start < 12 { index += 1 }
        guard index < bytes.count, bytes[index] == 0x3B else { throw problem("has an '&' that starts no reference") }
        let body = String(decoding: bytes[start..<index], as: UTF8.self)
        index += 1
        switch body {
        case "lt": text.append("<")
        case "gt": text.append(">")
        case "amp": text.append("&")
        case "quot": text.append("\"")
        case "apos": text.append("'")
        default:
            let scalar: UInt32?
            if body.hasPrefix("#x") {
                scalar = UInt32(body.dropFirst(2), radix: 16)
            } else if body.hasPrefix("#") {
                scalar = UInt32(body.dropFirst(), radix: 10)
            } else {
                throw problem("refers to the undeclared entity '\(body)'")
            }
            guard let scalar, scalar != 0, let character = Unicode.Scalar(scalar) else {
                throw problem("has a character reference to no character")
            }
            text.unicodeScalars.append(character)
        }
    }

    private mutating func document() throws -> Element {
        guard String(validating: bytes, as: UTF8.self) != nil else { throw problem("is not UTF-8") }
        // XML 1.0 allows no control characters but tab, line feed and carriage return.
        if let control = bytes.firstIndex(where: { $0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }) {
            index = control
            throw problem("holds the control character \(bytes[control]), which XML does not allow")
        }
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        var root: Element?
        var sawDoctype = false
        while true {
            skipSpace()
            guard index < bytes.count else { break }
            if starts(with: "<?") {
                let start = index
                try skip(past: "?>", what: "a processing instruction")
                try checkDeclaration(bytes[start..<index])
            } else if starts(with: "<!--") {
                try skip(past: "-->", what: "a comment")
            } else if starts(with: "<!DOCTYPE"), allowsDoctype, !sawDoctype, root == nil {
                try doctype()
                sawDoctype = true
            } else if starts(with: "<!") {
                throw problem(
                    allowsDoctype
                        ? "has a declaration this reader does not accept"
                        : "has a DOCTYPE or other declaration, which a model file never has")
            } else if starts(with: "<"), root == nil {
                root = try element()
            } else {
                throw problem(root != nil ? "has content after its root element" : "has text before its root element")
            }
        }
        guard let root else { throw problem("has no root element") }
        return root
    }

    /// `<!DOCTYPE name SYSTEM "…">` or `PUBLIC "…" "…"`: skipped, never fetched. An internal
    /// subset (`[ … ]`), where entities are declared, is refused.
    private mutating func doctype() throws {
        let start = index
        let end = try skip(past: ">", what: "a document type declaration")
        if bytes[start..<end].contains(0x5B) {
            throw problem("declares entities in its document type, which this reader refuses")
        }
    }

    /// The XML declaration may name only version 1.0 and the UTF-8 encoding the bytes were
    /// checked to be in (libxml2 fails on an unknown encoding, and Foundation then crashes).
    private func checkDeclaration(_ text: ArraySlice<UInt8>) throws {
        let declaration = String(decoding: text, as: UTF8.self)
        guard declaration.hasPrefix("<?xml"), declaration.count > 5,
            declaration.unicodeScalars.dropFirst(5).first.map({ Self.isSpace(UInt8(truncatingIfNeeded: $0.value)) })
                ?? false
        else { return }
        for (key, allowed) in [("version", ["1.0"]), ("encoding", ["utf-8", "utf8"])] {
            guard let range = declaration.range(of: key + "=") else { continue }
            let rest = declaration[range.upperBound...]
            guard let quote = rest.first, quote == "\"" || quote == "'",
                let end = rest.dropFirst().firstIndex(of: quote)
            else { throw problem("has a malformed XML declaration") }
            let value = rest[rest.index(after: rest.startIndex)..<end].lowercased()
            guard allowed.contains(value) else { throw problem("declares the \(key) \"\(value)\", not UTF-8 XML 1.0") }
        }
    }

    /// An element and everything inside it, without recursion.
    private mutating func element() throws -> Element {
        var root: Element?
        repeat {
            if starts(with: "</") {
                index += 2
                let closing = try name()
                skipSpace()
                guard index < bytes.count, bytes[index] == 0x3E else {
                    throw problem("has an end tag that does not end")
                }
                index += 1
                guard let opening = open.popLast(), opening.name == closing else {
                    throw problem("closes </\(closing)>, which is not open")
                }
            } else if starts(with: "<!--") {
                try skip(past: "-->", what: "a comment")
            } else if starts(with: "<![CDATA[") {
                index += 9
                let start = index
                let end = try skip(past: "]]>", what: "a CDATA section")
                open.last?.text.append(String(decoding: bytes[start..<end], as: UTF8.self))
            } else if starts(with: "<?") {
                try skip(past: "?>", what: "a processing instruction")
            } else if starts(with: "<!") {
                throw problem("has a declaration inside an element")
            } else if starts(with: "<") {
                let parent = open.last
                let element = try startTag()
                if let parent { parent.children.append(element) } else { root = element }
            } else {
                try characters()
            }
            guard index < bytes.count || open.isEmpty else { throw problem("ends inside <\(openName)>") }
        } while !open.isEmpty
        guard let root else { throw problem("has no root element") }
        return root
    }

    /// Text up to the next tag, references resolved, appended to the open element's text.
    private mutating func characters() throws {
        var text = ""
        var start = index
        while index < bytes.count, bytes[index] != 0x3C {
            if bytes[index] == 0x26 {
                text.append(String(decoding: bytes[start..<index], as: UTF8.self))
                try reference(into: &text)
                start = index
            } else {
                index += 1
            }
        }
        text.append(String(decoding: bytes[start..<index], as: UTF8.self))
        open.last?.text.append(text)
    }

    private var openName: String { open.last?.name ?? "" }

    /// A start tag: the element, open unless the tag closes itself.
    private mutating func startTag() throws -> Element {
        index += 1
        let tag = try name()
        var attributes: [(name: String, value: String)] = []
        while true {
            let hadSpace = index < bytes.count && Self.isSpace(bytes[index])
            skipSpace()
            guard index < bytes.count else { throw problem("ends inside a start tag") }
            if bytes[index] == 0x3E {
                index += 1
                let element = Element(name: tag, attributes: attributes)
                open.append(element)
                guard open.count <= Self.maximumDepth else {
                    throw problem("nests elements deeper than \(Self.maximumDepth) levels")
                }
                return element
            }
            if starts(with: "/>") {
                index += 2
                return Element(name: tag, attributes: attributes)
            }
            guard hadSpace else { throw problem("needs a space before an attribute") }
            let attribute = try name()
            guard !attributes.contains(where: { $0.name == attribute }) else {
                throw problem("repeats the attribute \(attribute)")
            }
            skipSpace()
            guard index < bytes.count, bytes[index] == 0x3D else {
                throw problem("has an attribute without '=' in <\(tag)>")
            }
            index += 1
            skipSpace()
            guard index < bytes.count, bytes[index] == 0x22 || bytes[index] == 0x27 else {
                throw problem("has an attribute value without quotes")
            }
            let quote = bytes[index]
            index += 1
            var value = ""
            var start = index
            while true {
                guard index < bytes.count else { throw problem("has an attribute value that does not end") }
                let byte = bytes[index]
                if byte == quote { break }
                if byte == 0x3C { throw problem("has a '<' inside an attribute value") }
                if byte == 0x26 {
                    value.append(String(decoding: bytes[start..<index], as: UTF8.self))
                    try reference(into: &value)
                    start = index
                } else {
                    index += 1
                }
            }
            value.append(String(decoding: bytes[start..<index], as: UTF8.self))
            index += 1
            attributes.append((attribute, value))
        }
    }
}

/// The well-formedness check of a model file's XML, run before Foundation sees it: the
/// document must be plain XML as ``PlainXML`` reads it, with no DOCTYPE.
enum XMLWellFormedness {
    /// - Throws: ``PlainXML/Problem`` for anything that is not well-formed XML of the plain kind.
    static func check(_ data: Data) throws {
        _ = try PlainXML.parse(data)
    }
}
