/// A strict well-formedness check of a model file's XML, run before Foundation sees it.
///
/// On Linux, Foundation's XML classes sit on libxml2 in recovery mode: `XMLDocument` turns broken
/// XML into a partial document (a model with fewer entities, silently), and `XMLParser` crashes
/// on some of it (an attribute without `=`). Model files are plain XML — elements, quoted
/// attributes, text, comments, processing instructions, CDATA — so this reads exactly that and
/// refuses the rest, DOCTYPE included (no entity expansion can be smuggled in), and nesting past
/// ``maximumDepth``.
struct XMLWellFormedness {
    /// Deeper than Xcode ever writes (a model file nests a handful of levels), and below libxml2's
    /// own limit of 256, past which `XMLDocument` silently drops the rest of the document.
    static let maximumDepth = 64

    /// Why a document is not accepted, with the line it was found on.
    struct Problem: Error {
        let message: String
        let line: Int
    }

    private let bytes: [UInt8]
    private var index = 0
    private var open: [ArraySlice<UInt8>] = []

    /// - Throws: ``Problem`` for anything that is not well-formed XML of that plain kind.
    static func check(_ data: Data) throws {
        var checker = XMLWellFormedness(bytes: Array(data))
        try checker.document()
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private var line: Int { bytes[..<min(index, bytes.count)].reduce(1) { $1 == 0x0A ? $0 + 1 : $0 } }

    private func problem(_ message: String) -> Problem { Problem(message: message, line: line) }

    private func starts(with text: String) -> Bool {
        bytes[index...].starts(with: text.utf8)
    }

    private mutating func skip(past text: String, what: String) throws {
        let pattern = Array(text.utf8)
        while index < bytes.count {
            if bytes[index...].starts(with: pattern) {
                index += pattern.count
                return
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

    private mutating func name() throws -> ArraySlice<UInt8> {
        let start = index
        guard index < bytes.count, Self.isNameStart(bytes[index]) else { throw problem("expects a name") }
        while index < bytes.count, Self.isName(bytes[index]) { index += 1 }
        return bytes[start..<index]
    }

    /// `&lt;`, `&gt;`, `&amp;`, `&quot;`, `&apos;`, `&#N;` or `&#xH;` at `index`.
    private mutating func reference() throws {
        index += 1
        let start = index
        while index < bytes.count, bytes[index] != 0x3B, index - start < 12 { index += 1 }
        guard index < bytes.count, bytes[index] == 0x3B else { throw problem("has an '&' that starts no reference") }
        let body = String(decoding: bytes[start..<index], as: UTF8.self)
        index += 1
        if ["lt", "gt", "amp", "quot", "apos"].contains(body) { return }
        let scalar: UInt32?
        if body.hasPrefix("#x") {
            scalar = UInt32(body.dropFirst(2), radix: 16)
        } else if body.hasPrefix("#") {
            scalar = UInt32(body.dropFirst(), radix: 10)
        } else {
            throw problem("refers to the undeclared entity '\(body)'")
        }
        guard let scalar, scalar != 0, Unicode.Scalar(scalar) != nil else {
            throw problem("has a character reference to no character")
        }
    }

    private mutating func document() throws {
        guard String(validating: bytes, as: UTF8.self) != nil else { throw problem("is not UTF-8") }
        // XML 1.0 allows no control characters but tab, line feed and carriage return.
        if let control = bytes.firstIndex(where: { $0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }) {
            index = control
            throw problem("holds the control character \(bytes[control]), which XML does not allow")
        }
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        var sawRoot = false
        while true {
            skipSpace()
            guard index < bytes.count else { break }
            if starts(with: "<?") {
                let start = index
                try skip(past: "?>", what: "a processing instruction")
                try checkDeclaration(bytes[start..<index])
            } else if starts(with: "<!--") {
                try skip(past: "-->", what: "a comment")
            } else if starts(with: "<!") {
                throw problem("has a DOCTYPE or other declaration, which a model file never has")
            } else if starts(with: "<"), !sawRoot {
                try element()
                sawRoot = true
            } else {
                throw problem(sawRoot ? "has content after its root element" : "has text before its root element")
            }
        }
        guard sawRoot else { throw problem("has no root element") }
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
    private mutating func element() throws {
        repeat {
            if starts(with: "</") {
                index += 2
                let closing = try name()
                skipSpace()
                guard index < bytes.count, bytes[index] == 0x3E else {
                    throw problem("has an end tag that does not end")
                }
                index += 1
                guard let opening = open.popLast(), opening.elementsEqual(closing) else {
                    throw problem("closes </\(String(decoding: closing, as: UTF8.self))>, which is not open")
                }
            } else if starts(with: "<!--") {
                try skip(past: "-->", what: "a comment")
            } else if starts(with: "<![CDATA[") {
                try skip(past: "]]>", what: "a CDATA section")
            } else if starts(with: "<?") {
                try skip(past: "?>", what: "a processing instruction")
            } else if starts(with: "<!") {
                throw problem("has a declaration inside an element")
            } else if starts(with: "<") {
                try startTag()
            } else if bytes[index] == 0x26 {
                try reference()
            } else {
                index += 1
            }
            guard index < bytes.count || open.isEmpty else { throw problem("ends inside <\(openName)>") }
        } while !open.isEmpty
    }

    private var openName: String { open.last.map { String(decoding: $0, as: UTF8.self) } ?? "" }

    private mutating func startTag() throws {
        index += 1
        let tag = try name()
        var attributes: Set<ArraySlice<UInt8>> = []
        while true {
            let hadSpace = index < bytes.count && Self.isSpace(bytes[index])
            skipSpace()
            guard index < bytes.count else { throw problem("ends inside a start tag") }
            if bytes[index] == 0x3E {
                index += 1
                open.append(tag)
                guard open.count <= Self.maximumDepth else {
                    throw problem("nests elements deeper than \(Self.maximumDepth) levels")
                }
                return
            }
            if starts(with: "/>") {
                index += 2
                return
            }
            guard hadSpace else { throw problem("needs a space before an attribute") }
            let attribute = try name()
            guard attributes.insert(attribute).inserted else {
                throw problem("repeats the attribute \(String(decoding: attribute, as: UTF8.self))")
            }
            skipSpace()
            guard index < bytes.count, bytes[index] == 0x3D else {
                throw problem("has an attribute without '=' in <\(String(decoding: tag, as: UTF8.self))>")
            }
            index += 1
            skipSpace()
            guard index < bytes.count, bytes[index] == 0x22 || bytes[index] == 0x27 else {
                throw problem("has an attribute value without quotes")
            }
            let quote = bytes[index]
            index += 1
            while true {
                guard index < bytes.count else { throw problem("has an attribute value that does not end") }
                let byte = bytes[index]
                if byte == quote { break }
                if byte == 0x3C { throw problem("has a '<' inside an attribute value") }
                if byte == 0x26 { try reference() } else { index += 1 }
            }
            index += 1
        }
    }
}
