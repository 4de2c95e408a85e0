/// Finds the `@NSManaged` declarations of a target's Swift sources and the types the sources
/// declare, without compiling them: a tokenizer that skips comments and string literals, and a
/// reader that follows `class`/`extension` bodies by their braces.
///
/// It reads what Xcode writes and what people write by hand: `@NSManaged` properties and methods
/// in a class body or in an extension of it, with access modifiers and other attributes in any
/// order. What it cannot read precisely is reported with its file and line.
struct SourceScanner {
    /// One token of Swift source.
    struct Token: Equatable {
        enum Kind: Equatable {
            case identifier
            /// `@name`, the name without `@`.
            case attribute
            case punctuation
            /// A string or number literal (its text is not kept).
            case literal
        }
        let kind: Kind
        let text: String
        let line: Int
    }

    /// Splits `source` into tokens.
    static func tokens(_ source: String) -> [Token] {
        let bytes = Array(source.utf8)
        var tokens: [Token] = []
        var index = 0
        var line = 1
        func at(_ offset: Int) -> UInt8 { index + offset < bytes.count ? bytes[index + offset] : 0 }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\n") {
                line += 1
                index += 1
            } else if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r") {
                index += 1
            } else if byte == UInt8(ascii: "/"), at(1) == UInt8(ascii: "/") {
                while index < bytes.count, bytes[index] != UInt8(ascii: "\n") { index += 1 }
            } else if byte == UInt8(ascii: "/"), at(1) == UInt8(ascii: "*") {
                // Block comments nest in Swift.
                var depth = 0
                repeat {
                    if at(0) == UInt8(ascii: "/"), at(1) == UInt8(ascii: "*") {
                        depth += 1
                        index += 2
                    } else if at(0) == UInt8(ascii: "*"), at(1) == UInt8(ascii: "/") {
                        depth -= 1
                        index += 2
                    } else {
                        if at(0) == UInt8(ascii: "\n") { line += 1 }
                        index += 1
                    }
                } while depth > 0 && index < bytes.count
            } else if byte == UInt8(ascii: "\"") || (byte == UInt8(ascii: "#") && isStringStart(bytes, index)) {
                let start = line
                skipString(bytes, &index, &line)
                tokens.append(Token(kind: .literal, text: "\"", line: start))
            } else if isIdentifierStart(byte) || byte == UInt8(ascii: "`") {
                let quoted = byte == UInt8(ascii: "`")
                if quoted { index += 1 }
                let start = index
                while index < bytes.count, isIdentifierPart(bytes[index]) { index += 1 }
                let name = String(decoding: bytes[start..<index], as: UTF8.self)
                if quoted, at(0) == UInt8(ascii: "`") { index += 1 }
                tokens.append(Token(kind: .identifier, text: name, line: line))
            } else if byte == UInt8(ascii: "@"), isIdentifierStart(at(1)) {
                index += 1
                let start = index
                while index < bytes.count, isIdentifierPart(bytes[index]) { index += 1 }
                tokens.append(
                    Token(kind: .attribute, text: String(decoding: bytes[start..<index], as: UTF8.self), line: line))
            } else if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                while index < bytes.count, isIdentifierPart(bytes[index]) || bytes[index] == UInt8(ascii: ".") {
                    index += 1
                }
                tokens.append(Token(kind: .literal, text: "0", line: line))
            } else {
                if byte == UInt8(ascii: "-"), at(1) == UInt8(ascii: ">") {
                    tokens.append(Token(kind: .punctuation, text: "->", line: line))
                    index += 2
                    continue
                }
                tokens.append(Token(kind: .punctuation, text: String(UnicodeScalar(byte)), line: line))
                index += 1
            }
        }
        return tokens
    }

    private static func isIdentifierStart(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || byte == UInt8(ascii: "_") || byte >= 0x80
    }

    private static func isIdentifierPart(_ byte: UInt8) -> Bool {
        isIdentifierStart(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
    }

    /// Whether `#` at `index` starts a raw string (`#"`, `##"`, …).
    private static func isStringStart(_ bytes: [UInt8], _ index: Int) -> Bool {
        var position = index
        while position < bytes.count, bytes[position] == UInt8(ascii: "#") { position += 1 }
        return position < bytes.count && bytes[position] == UInt8(ascii: "\"")
    }

    /// Skips a string literal: raw (`#"…"#`), multi-line (`"""…"""`) or plain, with escapes and
    /// interpolations (whose parentheses may hold strings of their own).
    private static func skipString(_ bytes: [UInt8], _ index: inout Int, _ line: inout Int) {
        var hashes = 0
        while bytes[index] == UInt8(ascii: "#") {
            hashes += 1
            index += 1
        }
        let multiline =
            index + 2 < bytes.count && bytes[index + 1] == UInt8(ascii: "\"") && bytes[index + 2] == UInt8(ascii: "\"")
        index += multiline ? 3 : 1
        let quotes = multiline ? 3 : 1
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\n") {
                line += 1
                if !multiline { return }  // an unterminated string ends at the line
            }
            if byte == UInt8(ascii: "\\") {
                var position = index + 1
                var marks = 0
                while marks < hashes, position < bytes.count, bytes[position] == UInt8(ascii: "#") {
                    marks += 1
                    position += 1
                }
                if marks == hashes, position < bytes.count {
                    if bytes[position] == UInt8(ascii: "(") {
                        index = position + 1
                        skipInterpolation(bytes, &index, &line)
                        continue
                    }
                    index = position + 1
                    continue
                }
            }
            if byte == UInt8(ascii: "\"") {
                var position = index
                var count = 0
                while count < quotes, position < bytes.count, bytes[position] == UInt8(ascii: "\"") {
                    count += 1
                    position += 1
                }
                var marks = 0
                while marks < hashes, position < bytes.count, bytes[position] == UInt8(ascii: "#") {
                    marks += 1
                    position += 1
                }
                if count == quotes, marks == hashes {
                    index = position
                    return
                }
            }
            index += 1
        }
    }

    /// Skips the inside of `\( … )` up to its closing parenthesis.
    private static func skipInterpolation(_ bytes: [UInt8], _ index: inout Int, _ line: inout Int) {
        var depth = 1
        while index < bytes.count, depth > 0 {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") || (byte == UInt8(ascii: "#") && isStringStart(bytes, index)) {
                skipString(bytes, &index, &line)
                continue
            }
            if byte == UInt8(ascii: "(") { depth += 1 }
            if byte == UInt8(ascii: ")") { depth -= 1 }
            if byte == UInt8(ascii: "\n") { line += 1 }
            index += 1
        }
    }
}
