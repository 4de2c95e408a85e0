/// Why a predicate or expression format string could not be parsed.
///
/// Thrown by ``NSPredicate/init(validatingFormat:argumentArray:)``. Its `description` shows the
/// format with a caret under the offending position. As an `NSError` it is in
/// `NSCocoaErrorDomain` with code 2048 (`NSFormattingError`), and its userInfo carries
/// `NSDebugDescriptionErrorKey`, `"NSPredicateFormat"` and `"NSPredicateFormatOffset"`.
public struct NSPredicateFormatError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, as a value that can grow new cases without breaking callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: String, Hashable, Sendable {
            case syntax = "syntax error"
            case invalidToken = "invalid token"
            case argument = "argument error"
            case nestingTooDeep = "nesting too deep"
            case tooLong = "too long"
            case invalidRegularExpression = "invalid regular expression"
            case unexpectedKind = "unexpected kind"
        }

        private let kind: Kind

        /// The format does not follow the grammar.
        public static let syntax = Code(kind: .syntax)
        /// A character sequence is not a token of the language (an unterminated string, a bad number…).
        public static let invalidToken = Code(kind: .invalidToken)
        /// A format specifier has no argument, or an argument of the wrong type.
        public static let argument = Code(kind: .argument)
        /// Parentheses, operators or functions nest deeper than 100 levels, or the predicate's tree
        /// deeper than 1,000 (each operator of a chain such as `a AND b AND …` counting one level).
        public static let nestingTooDeep = Code(kind: .nestingTooDeep)
        /// The format holds more than 10,000 binary operators and index steps.
        public static let tooLong = Code(kind: .tooLong)
        /// A constant `MATCHES` pattern is not a valid ICU regular expression.
        public static let invalidRegularExpression = Code(kind: .invalidRegularExpression)
        /// The format parsed, but not to the predicate class that was asked for.
        public static let unexpectedKind = Code(kind: .unexpectedKind)

        /// A short name of the code.
        public var description: String { kind.rawValue }
    }

    /// What went wrong.
    public let code: Code
    /// The format string as given.
    public let format: String
    /// The offset, in Unicode scalars from the start of `format`, where the problem was found.
    public let offset: Int
    /// A sentence saying what was found and what was expected.
    public let message: String

    /// Creates an error.
    public init(code: Code, format: String, offset: Int, message: String) {
        self.code = code
        self.format = format
        self.offset = offset
        self.message = message
    }

    /// The message, the format, and a caret under the offending position.
    public var description: String {
        let line = format.replacingOccurrences(of: "\n", with: " ")
        let caret = String(repeating: " ", count: max(0, min(offset, line.count))) + "^"
        return "Unable to parse the format string (\(code)): \(message) at offset \(offset)\n  \(line)\n  \(caret)"
    }
}

extension NSPredicateFormatError: CustomNSError {
    /// `NSCocoaErrorDomain`.
    public static var errorDomain: String { NSCocoaErrorDomain }
    /// 2048, `NSFormattingError`.
    public var errorCode: Int { CocoaError.Code.formatting.rawValue }
    /// `NSDebugDescriptionErrorKey` with the description, plus the format and the offset.
    public var errorUserInfo: [String: Any] {
        [
            NSDebugDescriptionErrorKey: description, "NSPredicateFormat": format,
            "NSPredicateFormatOffset": offset,
        ]
    }
}
