/// A recursive-descent parser for Apple's predicate format string syntax.
///
/// Precedence, loosest first: `OR`, `AND`, `NOT`, comparison; in expressions `UNION`/
/// `INTERSECT`/`MINUS`, `+ -`, `* /`, `**` (right-associative), unary `-`, then postfix
/// `.key` and `[index]`. `NONE` parses as `NOT ANY`, as Apple's parser does.
///
/// No input can exhaust the stack: recursion (parentheses, functions, unary operators) is capped at
/// ``maximumDepth``; chains of binary operators (`a AND b AND …`, `1 + 2 + …`, `a[0][0]…`) build
/// left-nested trees without recursion, so they are capped by count (``maximumOperators``) while
/// parsing and the finished tree by depth (``maximumTreeDepth``), which every later walk —
/// evaluation, printing, SQL, SQLite's own expression limit of 1,000 — can afford.
struct PredicateParser {
    /// The deepest nesting of parentheses, operators and functions a format may use.
    static let maximumDepth = 100
    /// The most binary operators and index steps one format may hold.
    static let maximumOperators = 10_000
    /// The deepest tree a format may parse to, each operator of a chain counting one level.
    static let maximumTreeDepth = 1_000

    let format: String
    let tokens: [PredicateToken]
    var position = 0
    let arguments: [Any]
    var argumentIndex = 0
    var depth = 0
    var operators = 0
    /// What parsing a predicate that starts with `(` gave at each token position. Without it the
    /// predicate-or-expression retry at every nested parenthesis would take exponential time.
    var parenthesizedResults: [Int: ParenthesizedResult] = [:]

    enum ParenthesizedResult {
        case parsed(NSPredicate, end: Int, argumentIndex: Int, operators: Int)
        case failed(NSPredicateFormatError)
    }

    init(format: String, arguments: [Any]) throws {
        self.format = format
        self.arguments = arguments
        tokens = try PredicateLexer.tokenize(format)
    }

    static func parsePredicate(_ format: String, arguments: [Any]) throws -> NSPredicate {
        var parser = try PredicateParser(format: format, arguments: arguments)
        let predicate = try parser.parseOr()
        try parser.expectEnd()
        try parser.checkTreeDepth(PredicateTree.depth(of: predicate))
        return predicate
    }

    static func parseExpression(_ format: String, arguments: [Any]) throws -> NSExpression {
        var parser = try PredicateParser(format: format, arguments: arguments)
        let expression = try parser.parseExpression()
        try parser.expectEnd()
        try parser.checkTreeDepth(PredicateTree.depth(of: expression))
        return expression
    }

    func checkTreeDepth(_ treeDepth: Int) throws {
        guard treeDepth <= Self.maximumTreeDepth else {
            throw NSPredicateFormatError(
                code: .nestingTooDeep, format: format, offset: 0,
                message:
                    "the format nests \(treeDepth) levels deep (each operator of a chain such as a AND b AND … is a level); the limit is \(Self.maximumTreeDepth)"
            )
        }
    }

    /// Counts one more binary operator or index step of a chain (or `count` more, for a part of
    /// the format read before and remembered).
    mutating func countOperator(_ count: Int = 1) throws {
        operators += count
        guard operators <= Self.maximumOperators else {
            throw error("more than \(Self.maximumOperators) operators in one format", code: .tooLong)
        }
    }

    // MARK: Helpers

    var current: PredicateToken { tokens[position] }

    mutating func advance() { if position < tokens.count - 1 { position += 1 } }

    func error(
        _ message: String, code: NSPredicateFormatError.Code = .syntax, at token: PredicateToken? = nil
    ) -> NSPredicateFormatError {
        NSPredicateFormatError(code: code, format: format, offset: (token ?? current).offset, message: message)
    }

    func describe(_ token: PredicateToken) -> String {
        switch token.kind {
        case .identifier(let name, _): "'\(name)'"
        case .keyword(let word): "'\(word)'"
        case .string(let text): "string \(PredicateFormatter.quote(text))"
        case .integer(let value): "number \(value)"
        case .double(let value): "number \(value)"
        case .variable(let name): "'$\(name)'"
        case .atKey(let key): "'\(key)'"
        case .functionName(let name): "'\(name)'"
        case .format(let conversion): "'%\(conversion)'"
        case .symbol(let symbol): "'\(symbol)'"
        case .end: "the end of the format"
        }
    }

    func isSymbol(_ symbol: String) -> Bool { current.kind == .symbol(symbol) }

    func isKeyword(_ word: String) -> Bool { current.kind == .keyword(word) }

    mutating func expectSymbol(_ symbol: String, _ context: String) throws {
        guard isSymbol(symbol) else { throw error("expected '\(symbol)' \(context), found \(describe(current))") }
        advance()
    }

    func expectEnd() throws {
        guard current.kind == .end else {
            throw error("expected the end of the format, found \(describe(current))")
        }
    }

    mutating func nested<T>(_ body: (inout PredicateParser) throws -> T) throws -> T {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maximumDepth else {
            throw error("nesting deeper than \(Self.maximumDepth) levels", code: .nestingTooDeep)
        }
        return try body(&self)
    }

    // MARK: Predicates

    mutating func parseOr() throws -> NSPredicate {
        try nested { parser in
            var predicate = try parser.parseAnd()
            while parser.isKeyword("OR") || parser.isSymbol("||") {
                try parser.countOperator()
                parser.advance()
                let right = try parser.parseAnd()
                predicate = NSCompoundPredicate(type: .or, subpredicates: [predicate, right])
            }
            return predicate
        }
    }

    mutating func parseAnd() throws -> NSPredicate {
        var predicate = try parseNot()
        while isKeyword("AND") || isSymbol("&&") {
            try countOperator()
            advance()
            let right = try parseNot()
            predicate = NSCompoundPredicate(type: .and, subpredicates: [predicate, right])
        }
        return predicate
    }

    mutating func parseNot() throws -> NSPredicate {
        if isKeyword("NOT") || isSymbol("!") {
            advance()
            return try nested { parser in
                NSCompoundPredicate(type: .not, subpredicates: [try parser.parseNot()])
            }
        }
        return try parsePrimaryPredicate()
    }

    mutating func parsePrimaryPredicate() throws -> NSPredicate {
        if isKeyword("TRUEPREDICATE") {
            advance()
            return NSPredicate(value: true)
        }
        if isKeyword("FALSEPREDICATE") {
            advance()
            return NSPredicate(value: false)
        }
        if isSymbol("(") {
            let start = position
            switch parenthesizedResults[start] {
            case .parsed(let predicate, let end, let argumentIndex, let operatorsRead):
                position = end
                self.argumentIndex = argumentIndex
                try countOperator(operatorsRead)
                return predicate
            case .failed(let failure):
                throw failure
            case nil:
                break
            }
            let operatorsBefore = operators
            do {
                let predicate = try parseParenthesizedPredicate()
                parenthesizedResults[start] = .parsed(
                    predicate, end: position, argumentIndex: argumentIndex, operators: operators - operatorsBefore)
                return predicate
            } catch let failure as NSPredicateFormatError {
                if failure.code != .nestingTooDeep { parenthesizedResults[start] = .failed(failure) }
                throw failure
            }
        }
        return try parseComparison()
    }

    /// A parenthesis opens either a predicate or an expression, as in `(a + b) > 3`: try the
    /// predicate first, and on failure re-read it as the start of a comparison. The operators the
    /// failed reading counted are taken back, so the cap counts the operators of the format and
    /// not the work of re-reading it (a chain nested 88 parentheses deep is re-read at each).
    mutating func parseParenthesizedPredicate() throws -> NSPredicate {
        let savedPosition = position
        let savedArgument = argumentIndex
        let savedOperators = operators
        let predicateError: NSPredicateFormatError
        do {
            advance()
            let predicate = try parseOr()
            try expectSymbol(")", "to close the parenthesized predicate")
            return predicate
        } catch let failure as NSPredicateFormatError {
            if failure.code == .nestingTooDeep || failure.code == .argument { throw failure }
            predicateError = failure
        }
        position = savedPosition
        argumentIndex = savedArgument
        operators = savedOperators
        do {
            return try parseComparison()
        } catch let failure as NSPredicateFormatError {
            // Too deep as a comparison is the answer, whatever the predicate reading found: a
            // syntax error from that reading would blame a format that is only nested too deep.
            if failure.code == .nestingTooDeep { throw failure }
            throw failure.offset >= predicateError.offset ? failure : predicateError
        }
    }

    mutating func parseComparison() throws -> NSPredicate {
        var modifier = NSComparisonPredicate.Modifier.direct
        var negate = false
        switch current.kind {
        case .keyword("ANY"), .keyword("SOME"): modifier = .any
        case .keyword("ALL"): modifier = .all
        case .keyword("NONE"):
            modifier = .any
            negate = true
        default: break
        }
        if modifier != .direct { advance() }

        let left = try parseExpression()
        let operatorToken = current
        let type: NSComparisonPredicate.Operator
        switch current.kind {
        case .symbol("=="): type = .equalTo
        case .symbol("!="): type = .notEqualTo
        case .symbol("<"): type = .lessThan
        case .symbol("<="): type = .lessThanOrEqualTo
        case .symbol(">"): type = .greaterThan
        case .symbol(">="): type = .greaterThanOrEqualTo
        case .keyword("LIKE"): type = .like
        case .keyword("MATCHES"): type = .matches
        case .keyword("CONTAINS"): type = .contains
        case .keyword("BEGINSWITH"): type = .beginsWith
        case .keyword("ENDSWITH"): type = .endsWith
        case .keyword("IN"): type = .in
        case .keyword("BETWEEN"): type = .between
        case .keyword("UTI-CONFORMS-TO"), .keyword("UTI-EQUALS"):
            throw error("UTI comparisons are not supported on Linux")
        default:
            throw error("expected a comparison operator (==, !=, <, >, LIKE, IN, …), found \(describe(current))")
        }
        advance()
        let options = try parseOptions()
        let right = try parseExpression()
        if type == .matches, case .constant(let value) = right.node,
            let pattern = DynamicValue.unwrap(value).flatMap(DynamicValue.string)
        {
            let caseInsensitive = options.contains(.caseInsensitive) && !options.contains(.normalized)
            if RegexCache.shared.regex(pattern, caseInsensitive: caseInsensitive) == nil {
                throw self.error(
                    "invalid regular expression \(PredicateFormatter.quote(pattern))",
                    code: .invalidRegularExpression, at: operatorToken)
            }
        }
        let comparison = NSComparisonPredicate(
            leftExpression: left, rightExpression: right, modifier: modifier, type: type, options: options)
        return negate ? NSCompoundPredicate(type: .not, subpredicates: [comparison]) : comparison
    }

    /// `[c]`, `[d]`, `[n]`, `[l]` in any combination, right after an operator.
    mutating func parseOptions() throws -> NSComparisonPredicate.Options {
        guard isSymbol("[") else { return [] }
        advance()
        var options: NSComparisonPredicate.Options = []
        guard case .identifier(let letters, false) = current.kind else {
            throw error("expected comparison options such as [cd], found \(describe(current))")
        }
        for letter in letters.lowercased() {
            switch letter {
            case "c": options.insert(.caseInsensitive)
            case "d": options.insert(.diacriticInsensitive)
            case "n": options.insert(.normalized)
            case "l": options.insert(.localeSensitive)
            default: throw error("unknown comparison option '\(letter)'; expected c, d, n or l")
            }
        }
        advance()
        try expectSymbol("]", "to close the comparison options")
        return options
    }

    // MARK: Expressions

    mutating func parseExpression() throws -> NSExpression {
        try nested { parser in
            var expression = try parser.parseAdditive()
            while case .identifier(let word, false) = parser.current.kind {
                if ["UNION", "INTERSECT", "MINUS"].contains(word.uppercased()) { try parser.countOperator() }
                switch word.uppercased() {
                case "UNION":
                    parser.advance()
                    expression = NSExpression(forUnionSet: expression, with: try parser.parseAdditive())
                case "INTERSECT":
                    parser.advance()
                    expression = NSExpression(forIntersectSet: expression, with: try parser.parseAdditive())
                case "MINUS":
                    parser.advance()
                    expression = NSExpression(forMinusSet: expression, with: try parser.parseAdditive())
                default:
                    return expression
                }
            }
            return expression
        }
    }

    static func function(_ name: String, _ arguments: [NSExpression]) -> NSExpression {
        NSExpression(node: .function(name: name, operand: nil, arguments: arguments))
    }

    mutating func parseAdditive() throws -> NSExpression {
        var expression = try parseMultiplicative()
        while isSymbol("+") || isSymbol("-") {
            let name = isSymbol("+") ? "add:to:" : "from:subtract:"
            try countOperator()
            advance()
            expression = Self.function(name, [expression, try parseMultiplicative()])
        }
        return expression
    }

    mutating func parseMultiplicative() throws -> NSExpression {
        var expression = try parsePower()
        while isSymbol("*") || isSymbol("/") {
            let name = isSymbol("*") ? "multiply:by:" : "divide:by:"
            try countOperator()
            advance()
            expression = Self.function(name, [expression, try parsePower()])
        }
        return expression
    }

    mutating func parsePower() throws -> NSExpression {
        let base = try parseUnary()
        guard isSymbol("**") else { return base }
        advance()
        return try nested { parser in Self.function("raise:toPower:", [base, try parser.parsePower()]) }
    }

    mutating func parseUnary() throws -> NSExpression {
        guard isSymbol("-") else { return try parsePostfix() }
        advance()
        switch current.kind {
        case .integer(let value):
            advance()
            return try parsePostfix(NSExpression(forConstantValue: value == .min ? Double(value) : Int(-value)))
        case .double(let value):
            advance()
            return try parsePostfix(NSExpression(forConstantValue: -value))
        default:
            return try nested { parser in
                Self.function("from:subtract:", [NSExpression(forConstantValue: 0), try parser.parseUnary()])
            }
        }
    }

    mutating func parsePostfix(_ start: NSExpression? = nil) throws -> NSExpression {
        var expression = try start ?? parsePrimary()
        // Keys of a run of `.key` steps, appended at once: one at a time would copy the path at
        // each step, quadratic in a long key path.
        var keys: [String] = []
        while true {
            if isSymbol(".") {
                advance()
                let key: String
                switch current.kind {
                case .identifier(let name, _): key = name
                case .atKey(let name): key = name
                case .format("K"):
                    // `$FETCH_SOURCE.%K`: the argument names the key (a dotted path appends each part).
                    let token = current
                    guard case .keyPath(nil, let path) = try substitute("K", token).node else {
                        throw error("expected a key path for '%K'", at: token)
                    }
                    advance()
                    keys += path.components
                    continue
                case .keyword(let word) where !["FIRST", "LAST", "SIZE"].contains(word):
                    throw error("'\(word)' is a reserved word; write #\(word.lowercased()) to use it as a key")
                default: throw error("expected a key after '.', found \(describe(current))")
                }
                advance()
                keys.append(key)
            } else if isSymbol("[") {
                expression = Self.appendingKeys(keys, to: expression)
                keys = []
                try countOperator()
                advance()
                let index: NSExpression
                switch current.kind {
                case .keyword(let word) where ["FIRST", "LAST", "SIZE"].contains(word):
                    advance()
                    index = NSExpression(node: .indexSymbol(word))
                default:
                    index = try parseExpression()
                }
                try expectSymbol("]", "to close the index")
                expression = Self.function("objectFrom:withIndex:", [expression, index])
            } else {
                return Self.appendingKeys(keys, to: expression)
            }
        }
    }

    /// `a.b.c` extends a key path; `SELF.a` is the key path `a`; any other operand keeps itself.
    static func appendingKeys(_ keys: [String], to expression: NSExpression) -> NSExpression {
        if keys.isEmpty { return expression }
        switch expression.node {
        case .keyPath(let operand, let path):
            return NSExpression(
                node: .keyPath(operand: operand, path: KeyPathComponents(components: path.components + keys)))
        case .evaluatedObject:
            return NSExpression(node: .keyPath(operand: nil, path: KeyPathComponents(components: keys)))
        default:
            return NSExpression(node: .keyPath(operand: expression, path: KeyPathComponents(components: keys)))
        }
    }

    mutating func parsePrimary() throws -> NSExpression {
        let token = current
        switch token.kind {
        case .string(let text):
            advance()
            return NSExpression(forConstantValue: text)
        case .integer(let value):
            advance()
            return NSExpression(forConstantValue: Int(value))
        case .double(let value):
            advance()
            return NSExpression(forConstantValue: value)
        case .variable(let name):
            advance()
            return NSExpression(forVariable: name)
        case .atKey(let key):
            advance()
            return NSExpression(node: .keyPath(operand: nil, path: KeyPathComponents(components: [key])))
        case .format(let conversion):
            advance()
            return try substitute(conversion, token)
        case .functionName(let name):
            advance()
            return try parseFunctionCall(name, token)
        case .identifier(let name, let escaped):
            advance()
            if !escaped, isSymbol("(") {
                switch name.uppercased() {
                case "FUNCTION": return try parseFunctionKeyword()
                case "TERNARY": return try parseTernary()
                default:
                    if PredicateFunctions.arity[name] != nil { return try parseFunctionCall(name, token) }
                    throw error("unknown function '\(name)'", at: token)
                }
            }
            return NSExpression(node: .keyPath(operand: nil, path: KeyPathComponents(components: [name])))
        case .keyword(let word):
            advance()
            switch word {
            case "SELF": return .expressionForEvaluatedObject()
            case "TRUE", "YES": return NSExpression(forConstantValue: true)
            case "FALSE", "NO": return NSExpression(forConstantValue: false)
            case "NIL", "NULL": return NSExpression(forConstantValue: nil)
            case "ANYKEY": return .expressionForAnyKey()
            case "SUBQUERY": return try parseSubquery()
            case "CAST": return try parseCast()
            case "FETCH": return try parseFetch()
            default:
                throw error(
                    "'\(word)' is a reserved word and cannot start an expression; write #\(word.lowercased()) to use it as a key",
                    at: token)
            }
        case .symbol("("):
            advance()
            let expression = try parseExpression()
            try expectSymbol(")", "to close the parenthesized expression")
            return expression
        case .symbol("{"):
            advance()
            let elements = try parseList(closing: "}")
            return NSExpression(forAggregate: elements)
        default:
            throw error("expected an expression, found \(describe(token))", at: token)
        }
    }

    mutating func parseList(closing: String) throws -> [NSExpression] {
        var elements: [NSExpression] = []
        if isSymbol(closing) {
            advance()
            return elements
        }
        while true {
            elements.append(try parseExpression())
            if isSymbol(",") {
                advance()
                continue
            }
            try expectSymbol(closing, "to close the list")
            return elements
        }
    }

}
