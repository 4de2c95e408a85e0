/// The string side of a comparison, prepared once per predicate: folding options, a `LIKE`
/// pattern and a compiled `MATCHES` expression when the right side is a constant.
///
/// `[c]` folds case (with width, so full-width letters match), `[d]` folds diacritics, and
/// `[n]` supersedes both and compares as-is (NSComparisonPredicate.Options, Apple
/// documentation for `normalized`).
struct StringOperation: @unchecked Sendable {
    let operatorType: NSComparisonPredicate.Operator
    let foldOptions: String.CompareOptions
    let caseInsensitive: Bool
    /// The constant right-hand string, already folded.
    private let preparedRight: String?
    private let likePattern: [Character]?
    private let regex: NSRegularExpression?
    /// `x IN {'a', 'b'}` against constant strings: the folded strings, looked up by hash.
    private let constantStrings: Set<String>?
    /// The right-hand string as ASCII bytes when only case is folded, for allocation-free
    /// `BEGINSWITH[c]` / `ENDSWITH[c]` on ASCII input.
    private let asciiRight: [UInt8]?

    init(operator: NSComparisonPredicate.Operator, options: NSComparisonPredicate.Options, right: NSExpression) {
        operatorType = `operator`
        var fold: String.CompareOptions = []
        if !options.contains(.normalized) {
            if options.contains(.caseInsensitive) { fold.formUnion([.caseInsensitive, .widthInsensitive]) }
            if options.contains(.diacriticInsensitive) { fold.insert(.diacriticInsensitive) }
        }
        foldOptions = fold
        caseInsensitive = fold.contains(.caseInsensitive)
        var prepared: String?
        if case .constant(let value) = right.node, let value, let string = DynamicValue.string(value) {
            prepared = string
        }
        preparedRight = prepared.map { Self.fold($0, fold) }
        likePattern = `operator` == .like ? preparedRight.map(Array.init) : nil
        var strings: Set<String>?
        if `operator` == .in, let values = right.constantAggregate {
            let folded = values.compactMap { DynamicValue.string($0).map { Self.fold($0, fold) } }
            strings = folded.count == values.count ? Set(folded) : nil
        }
        constantStrings = strings
        let caseOnly = fold.subtracting([.caseInsensitive, .widthInsensitive]).isEmpty
        if caseOnly, let right = preparedRight, right.utf8.allSatisfy({ $0 < 0x80 }) {
            asciiRight = Array(right.utf8)
        } else {
            asciiRight = nil
        }
        if `operator` == .matches, let pattern = prepared {
            regex = RegexCache.shared.regex(pattern, caseInsensitive: fold.contains(.caseInsensitive))
        } else {
            regex = nil
        }
    }

    static func fold(_ string: String, _ options: String.CompareOptions) -> String {
        if options.isEmpty { return string }
        if options.subtracting([.caseInsensitive, .widthInsensitive]).isEmpty, string.utf8.allSatisfy({ $0 < 0x80 }) {
            return string.lowercased()
        }
        return string.folding(options: options, locale: nil)
    }

    /// Compiles a `MATCHES` pattern so it must match the whole string, as ICU's `matches` does.
    static func compile(_ pattern: String, caseInsensitive: Bool) throws -> NSRegularExpression {
        try NSRegularExpression(pattern: "^(?:" + pattern + ")$", options: caseInsensitive ? [.caseInsensitive] : [])
    }

    private func right(_ rhs: Any?) -> String? {
        if let preparedRight { return preparedRight }
        return DynamicValue.unwrap(rhs).flatMap(DynamicValue.string).map { Self.fold($0, foldOptions) }
    }

    func equal(_ lhs: Any?, _ rhs: Any?) -> Bool {
        if !foldOptions.isEmpty, let l = DynamicValue.unwrap(lhs).flatMap(DynamicValue.string),
            let r = right(rhs)
        {
            return Self.fold(l, foldOptions) == r
        }
        return DynamicValue.equal(lhs, rhs)
    }

    func order(_ lhs: Any?, _ rhs: Any?) -> ComparisonResult? {
        if !foldOptions.isEmpty, let l = DynamicValue.unwrap(lhs).flatMap(DynamicValue.string),
            let r = right(rhs)
        {
            return DynamicValue.order(Self.fold(l, foldOptions), r)
        }
        return DynamicValue.compare(lhs, rhs)
    }

    /// `BEGINSWITH`, `ENDSWITH`, `LIKE` and `MATCHES`: false unless both sides are strings.
    func matchStrings(_ lhs: Any?, _ rhs: Any?) -> Bool {
        guard let rawLeft = DynamicValue.unwrap(lhs).flatMap(DynamicValue.string) else { return false }
        if operatorType == .matches {
            let expression: NSRegularExpression?
            if let regex {
                expression = regex
            } else if let pattern = DynamicValue.unwrap(rhs).flatMap(DynamicValue.string) {
                expression = RegexCache.shared.regex(pattern, caseInsensitive: caseInsensitive)
            } else {
                expression = nil
            }
            guard let expression else { return false }
            let subject = Self.fold(rawLeft, foldOptions.subtracting([.caseInsensitive, .widthInsensitive]))
            let range = NSRange(subject.startIndex..<subject.endIndex, in: subject)
            return expression.firstMatch(in: subject, options: [], range: range) != nil
        }
        if let asciiRight, !asciiRight.isEmpty, operatorType == .beginsWith || operatorType == .endsWith,
            let result = Self.asciiAffix(
                rawLeft, asciiRight, prefix: operatorType == .beginsWith,
                caseInsensitive: caseInsensitive)
        {
            return result
        }
        // NSString's anchored search never finds the empty string, so neither do the affix tests.
        guard let r = right(rhs), !(r.isEmpty && operatorType != .like) else { return false }
        let l = Self.fold(rawLeft, foldOptions)
        switch operatorType {
        case .beginsWith: return l.hasPrefix(r)
        case .endsWith: return l.hasSuffix(r)
        default: return Self.like(Array(l), likePattern ?? Array(r))
        }
    }

    /// Compares an ASCII affix byte by byte, folding ASCII case; `nil` when `text` is not ASCII
    /// (the general folding path then decides).
    private static func asciiAffix(_ text: String, _ affix: [UInt8], prefix: Bool, caseInsensitive: Bool) -> Bool? {
        var text = text
        return text.withUTF8 { bytes -> Bool? in
            guard bytes.count >= affix.count else { return bytes.allSatisfy { $0 < 0x80 } ? false : nil }
            let start = prefix ? 0 : bytes.count - affix.count
            for (offset, expected) in affix.enumerated() {
                var byte = bytes[start + offset]
                if byte >= 0x80 { return nil }
                if caseInsensitive, byte >= 0x41, byte <= 0x5A { byte |= 0x20 }
                if byte != expected { return false }
            }
            // A combining mark right after the prefix would change the last character.
            if prefix, affix.count < bytes.count, bytes[affix.count] >= 0x80 { return nil }
            return true
        }
    }

    /// `IN` and `CONTAINS`: membership in a collection (dictionaries by value), or substring.
    func contains(container: Any?, element: Any?) -> Bool {
        if let constantStrings, let value = DynamicValue.unwrap(element) {
            guard let string = DynamicValue.string(value) else {
                return false
            }
            return constantStrings.contains(Self.fold(string, foldOptions))
        }
        guard let container = DynamicValue.unwrap(container) else { return false }
        if let string = DynamicValue.string(container) {
            // NSString's rangeOfString: never finds the empty string, so neither does CONTAINS.
            guard let needle = DynamicValue.unwrap(element).flatMap(DynamicValue.string), !needle.isEmpty else {
                return false
            }
            return Self.fold(string, foldOptions).contains(Self.fold(needle, foldOptions))
        }
        guard let elements = DynamicValue.elements(container) ?? DynamicValue.dictionaryValues(container) else {
            return false
        }
        return elements.contains { equal($0, element) }
    }

    /// Wildcard matching: `*` any run, `?` one character, a backslash escapes the next character.
    static func like(_ text: [Character], _ pattern: [Character]) -> Bool {
        var t = 0
        var p = 0
        var starPattern = -1
        var starText = 0
        while t < text.count {
            if p < pattern.count {
                let c = pattern[p]
                if c == "*" {
                    starPattern = p
                    starText = t
                    p += 1
                    continue
                }
                if c == "\\", p + 1 < pattern.count {
                    if pattern[p + 1] == text[t] {
                        p += 2
                        t += 1
                        continue
                    }
                } else if c == "?" || c == text[t] {
                    p += 1
                    t += 1
                    continue
                }
            }
            guard starPattern >= 0 else { return false }
            p = starPattern + 1
            starText += 1
            t = starText
        }
        while p < pattern.count, pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }
}

/// Every compiled `MATCHES` pattern, shared across threads, so each distinct pattern is compiled
/// once per process.
///
/// Besides saving the compile, this bounds a swift-corelibs-foundation leak: `NSRegularExpression`
/// leaks two bytes per UTF-16 unit of any pattern longer than about 256 units (measured with
/// Foundation in Swift 6.3.1). Patterns that do not compile are remembered too.
final class RegexCache: @unchecked Sendable {
    static let shared = RegexCache()
    private static let capacity = 1024
    private let lock = NSLock()
    private var cache: [String: NSRegularExpression?] = [:]

    func regex(_ pattern: String, caseInsensitive: Bool) -> NSRegularExpression? {
        let key = (caseInsensitive ? "i:" : "s:") + pattern
        lock.lock()
        defer { lock.unlock() }
        if let cached = cache[key] { return cached }
        let compiled = try? StringOperation.compile(pattern, caseInsensitive: caseInsensitive)
        if cache.count >= Self.capacity { cache.remove(at: cache.startIndex) }
        cache[key] = .some(compiled)
        return compiled
    }
}
