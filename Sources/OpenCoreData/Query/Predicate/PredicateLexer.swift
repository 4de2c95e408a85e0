/// A token of the predicate format language.
struct PredicateToken {
    enum Kind: Equatable {
        /// A key name; `escaped` when written with `#`, which makes a reserved word a key.
        case identifier(String, escaped: Bool)
        /// A reserved word, upper-cased.
        case keyword(String)
        case string(String)
        case integer(Int64)
        case double(Double)
        /// `$name`
        case variable(String)
        /// `@count`, `@sum`, …
        case atKey(String)
        /// A function name with its colons, such as `add:to:` (always followed by `(`).
        case functionName(String)
        /// A format specifier: its conversion character (`@`, `K`, `d`, `f`, `s`…).
        case format(Character)
        /// Punctuation and operators: `(`, `)`, `==`, `&&`, `**`…
        case symbol(String)
        case end
    }

    let kind: Kind
    /// Offset in Unicode scalars from the start of the format.
    let offset: Int
}

/// Splits a format string into tokens, following Apple's "Predicate Format String Syntax":
/// reserved words in any case, single- or double-quoted strings with backslash escapes,
/// decimal, hexadecimal (`0x`), octal (`0o`) and binary (`0b`) numbers with exponents.
struct PredicateLexer {
    /// Apple's reserved words (Predicate Programming Guide, "Predicate Format String Syntax").
    static let reservedWords: Set<String> = [
        "AND", "OR", "IN", "NOT", "ALL", "ANY", "SOME", "NONE", "LIKE", "CASEINSENSITIVE", "CI", "MATCHES",
        "CONTAINS", "BEGINSWITH", "ENDSWITH", "BETWEEN", "NULL", "NIL", "SELF", "TRUE", "YES", "FALSE", "NO",
        "FIRST", "LAST", "SIZE", "ANYKEY", "SUBQUERY", "FETCH", "CAST", "TRUEPREDICATE", "FALSEPREDICATE",
        "UTI-CONFORMS-TO", "UTI-EQUALS",
    ]

    static func isReserved(_ word: String) -> Bool {
        reservedWords.contains(word.uppercased())
    }

    static func isIdentifier(_ word: String) -> Bool {
        guard let first = word.unicodeScalars.first, isIdentifierStart(first) else { return false }
        return word.unicodeScalars.allSatisfy(isIdentifierPart)
    }

    private let format: String
    private let scalars: [Unicode.Scalar]
    private var position = 0

    init(_ format: String) {
        self.format = format
        scalars = Array(format.unicodeScalars)
    }

    static func tokenize(_ format: String) throws -> [PredicateToken] {
        var lexer = PredicateLexer(format)
        var tokens: [PredicateToken] = []
        tokens.reserveCapacity(16)
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private func error(_ message: String, at offset: Int) -> NSPredicateFormatError {
        NSPredicateFormatError(code: .invalidToken, format: format, offset: offset, message: message)
    }

    private func peek(_ ahead: Int = 0) -> Unicode.Scalar? {
        position + ahead < scalars.count ? scalars[position + ahead] : nil
    }

    private static func isIdentifierStart(_ c: Unicode.Scalar) -> Bool {
        c == "_" || (c.isASCII ? (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") : c.properties.isAlphabetic)
    }

    private static func isIdentifierPart(_ c: Unicode.Scalar) -> Bool {
        isIdentifierStart(c) || (c >= "0" && c <= "9")
    }

    private static func isDigit(_ c: Unicode.Scalar) -> Bool { c >= "0" && c <= "9" }

    private mutating func scanIdentifier() -> String {
        var text = String.UnicodeScalarView()
        while let c = peek(), Self.isIdentifierPart(c) {
            text.append(c)
            position += 1
        }
        return String(text)
    }

    mutating func next() throws -> PredicateToken {
        while let c = peek(), c.properties.isWhitespace { position += 1 }
        let start = position
        guard let c = peek() else { return PredicateToken(kind: .end, offset: start) }
        func token(_ kind: PredicateToken.Kind) -> PredicateToken { PredicateToken(kind: kind, offset: start) }

        if Self.isIdentifierStart(c) {
            let word = scanIdentifier()
            let upper = word.uppercased()
            if upper == "UTI", peek() == "-" {
                for compound in ["UTI-CONFORMS-TO", "UTI-EQUALS"] {
                    let rest = Array(compound.unicodeScalars.dropFirst(3))
                    if position + rest.count <= scalars.count,
                        zip(scalars[position..<position + rest.count], rest).allSatisfy({
                            String($0).uppercased() == String($1)
                        })
                    {
                        position += rest.count
                        return token(.keyword(compound))
                    }
                }
            }
            if peek() == ":", let name = scanFunctionName(first: word) {
                return token(.functionName(name))
            }
            if Self.reservedWords.contains(upper) { return token(.keyword(upper)) }
            return token(.identifier(word, escaped: false))
        }
        if Self.isDigit(c) { return token(try scanNumber()) }
        switch c {
        case "\"", "'":
            return token(.string(try scanString(quote: c)))
        case "#":
            position += 1
            guard let first = peek(), Self.isIdentifierStart(first) else {
                throw error("expected a key name after '#'", at: start)
            }
            return token(.identifier(scanIdentifier(), escaped: true))
        case "$":
            position += 1
            guard let first = peek(), Self.isIdentifierStart(first) else {
                throw error("expected a variable name after '$'", at: start)
            }
            return token(.variable(scanIdentifier()))
        case "@":
            position += 1
            guard let first = peek(), Self.isIdentifierStart(first) else {
                throw error("expected an operator name after '@'", at: start)
            }
            return token(.atKey("@" + scanIdentifier()))
        case "%":
            return token(try scanFormatSpecifier())
        default:
            break
        }
        for symbol in Self.symbols where matches(symbol) {
            position += symbol.unicodeScalars.count
            return token(.symbol(Self.canonicalSymbol[symbol] ?? symbol))
        }
        throw error("unexpected character '\(c)'", at: start)
    }

    /// Longest first, so `**` wins over `*` and `<=` over `<`.
    private static let symbols = [
        "==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||", "**", "=", "<", ">", "!", "+", "-", "*", "/", "(", ")",
        "{", "}", "[", "]", ",", ".",
    ]

    private static let canonicalSymbol = ["=": "==", "<>": "!=", "=<": "<=", "=>": ">="]

    private func matches(_ symbol: String) -> Bool {
        var offset = 0
        for s in symbol.unicodeScalars {
            guard peek(offset) == s else { return false }
            offset += 1
        }
        return true
    }

    /// `name:part:(` is a function name; anything else with a colon is not part of the language.
    private mutating func scanFunctionName(first: String) -> String? {
        let saved = position
        var name = first
        while peek() == ":" {
            position += 1
            name += ":"
            if let c = peek(), Self.isIdentifierStart(c) {
                let part = scanIdentifier()
                guard peek() == ":" else { break }
                name += part
            }
        }
        var look = position
        while look < scalars.count, scalars[look].properties.isWhitespace { look += 1 }
        if name.hasSuffix(":"), look < scalars.count, scalars[look] == "(" {
            return name
        }
        position = saved
        return nil
    }

    private mutating func scanNumber() throws -> PredicateToken.Kind {
        let start = position
        if peek() == "0", let marker = peek(1), let radix = ["x": 16, "X": 16, "o": 8, "O": 8, "b": 2, "B": 2][marker] {
            position += 2
            var digits = ""
            while let c = peek(), c.properties.isASCIIHexDigit || c == "_" {
                if c != "_" { digits.unicodeScalars.append(c) }
                position += 1
            }
            guard !digits.isEmpty, let value = UInt64(digits, radix: radix) else {
                throw error("malformed number", at: start)
            }
            if value <= UInt64(Int64.max) { return .integer(Int64(value)) }
            return .double(Double(value))
        }
        var text = ""
        var isInteger = true
        while let c = peek(), Self.isDigit(c) {
            text.unicodeScalars.append(c)
            position += 1
        }
        if peek() == ".", let d = peek(1), Self.isDigit(d) {
            isInteger = false
            text += "."
            position += 1
            while let c = peek(), Self.isDigit(c) {
                text.unicodeScalars.append(c)
                position += 1
            }
        }
        if let e = peek(), e == "e" || e == "E" {
            var ahead = 1
            if let sign = peek(1), sign == "+" || sign == "-" { ahead = 2 }
            if let d = peek(ahead), Self.isDigit(d) {
                isInteger = false
                text += "e"
                if ahead == 2, let sign = peek(1) { text.unicodeScalars.append(sign) }
                position += ahead
                while let c = peek(), Self.isDigit(c) {
                    text.unicodeScalars.append(c)
                    position += 1
                }
            }
        }
        if let c = peek(), Self.isIdentifierStart(c) {
            throw error("malformed number", at: start)
        }
        if isInteger, let value = Int64(text) { return .integer(value) }
        guard let value = Double(text) else { throw error("malformed number", at: start) }
        return .double(value)
    }

    private mutating func scanString(quote: Unicode.Scalar) throws -> String {
        let start = position
        position += 1
        var text = String.UnicodeScalarView()
        while true {
            guard let c = peek() else { throw error("unterminated string", at: start) }
            position += 1
            if c == quote { return String(text) }
            if c == "%", peek() == "%" {
                position += 1
                text.append("%")
                continue
            }
            guard c == "\\" else {
                text.append(c)
                continue
            }
            guard let escaped = peek() else { throw error("unterminated string", at: start) }
            position += 1
            switch escaped {
            case "n": text.append("\n")
            case "t": text.append("\t")
            case "r": text.append("\r")
            case "0": text.append("\0")
            case "a": text.append("\u{07}")
            case "b": text.append("\u{08}")
            case "f": text.append("\u{0C}")
            case "v": text.append("\u{0B}")
            case "u", "x":
                let count = escaped == "u" ? 4 : 2
                var hex = ""
                for _ in 0..<count {
                    guard let h = peek(), h.properties.isASCIIHexDigit else {
                        throw error("malformed \\\(escaped) escape", at: position)
                    }
                    hex.unicodeScalars.append(h)
                    position += 1
                }
                guard let value = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(value) else {
                    throw error("malformed \\\(escaped) escape", at: position)
                }
                text.append(scalar)
            default: text.append(escaped)
            }
        }
    }

    private mutating func scanFormatSpecifier() throws -> PredicateToken.Kind {
        let start = position
        position += 1
        while let c = peek(), "hlqLzjt".unicodeScalars.contains(c) { position += 1 }
        guard let conversion = peek() else { throw error("incomplete format specifier", at: start) }
        position += 1
        guard "@KdiouxXcCfFeEgGsS".unicodeScalars.contains(conversion) else {
            throw error("unsupported format specifier '%\(conversion)'", at: start)
        }
        return .format(Character(conversion))
    }
}
