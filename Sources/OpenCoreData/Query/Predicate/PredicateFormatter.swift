/// Prints predicates and expressions in Apple's canonical format-string form.
///
/// The output parses back to an equal predicate: strings are double-quoted with escapes, dates
/// print as `CAST(interval, "NSDate")`, key-path components that are reserved words are escaped
/// with `#`, and nested compound predicates and infix arithmetic are parenthesized.
enum PredicateFormatter {
    static func format(_ predicate: NSPredicate) -> String {
        switch predicate {
        case let comparison as NSComparisonPredicate:
            return format(comparison)
        case let compound as NSCompoundPredicate:
            return format(compound)
        case let constant as ConstantPredicate:
            return constant.value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case is BlockPredicate:
            return "BLOCKPREDICATE(\(ObjectIdentifier(predicate).hashValue))"
        default:
            return "FALSEPREDICATE"
        }
    }

    private static func format(_ predicate: NSComparisonPredicate) -> String {
        if predicate.predicateOperatorType == .customSelector {
            return
                "\(format(predicate.leftExpression)) \(predicate.customSelector?.name ?? "") \(format(predicate.rightExpression))"
        }
        var text = ""
        switch predicate.comparisonPredicateModifier {
        case .any: text = "ANY "
        case .all: text = "ALL "
        case .direct: break
        }
        text += format(predicate.leftExpression)
        text += " " + operatorText(predicate.predicateOperatorType)
        let options = predicate.options
        if !options.isEmpty {
            text += "["
            if options.contains(.caseInsensitive) { text += "c" }
            if options.contains(.diacriticInsensitive) { text += "d" }
            if options.contains(.normalized) { text += "n" }
            if options.contains(.localeSensitive) { text += "l" }
            text += "]"
        }
        return text + " " + format(predicate.rightExpression)
    }

    static func operatorText(_ type: NSComparisonPredicate.Operator) -> String {
        switch type {
        case .lessThan: "<"
        case .lessThanOrEqualTo: "<="
        case .greaterThan: ">"
        case .greaterThanOrEqualTo: ">="
        case .equalTo: "=="
        case .notEqualTo: "!="
        case .matches: "MATCHES"
        case .like: "LIKE"
        case .beginsWith: "BEGINSWITH"
        case .endsWith: "ENDSWITH"
        case .in: "IN"
        case .customSelector: "FUNCTION"
        case .contains: "CONTAINS"
        case .between: "BETWEEN"
        }
    }

    private static func format(_ predicate: NSCompoundPredicate) -> String {
        let parts = predicate.predicates.map { sub -> String in
            let text = format(sub)
            // NOT binds tightest, so only AND and OR need parentheses to survive re-parsing.
            let needsParentheses = (sub as? NSCompoundPredicate).map { $0.compoundPredicateType != .not } ?? false
            return needsParentheses ? "(" + text + ")" : text
        }
        switch predicate.compoundPredicateType {
        case .not: return "NOT " + parts[0]
        case .and: return parts.isEmpty ? "TRUEPREDICATE" : parts.joined(separator: " AND ")
        case .or: return parts.isEmpty ? "FALSEPREDICATE" : parts.joined(separator: " OR ")
        }
    }

    static let infixOperators: [String: String] = [
        "add:to:": "+", "from:subtract:": "-", "multiply:by:": "*", "divide:by:": "/", "raise:toPower:": "**",
    ]

    static func format(_ expression: NSExpression) -> String {
        switch expression.node {
        case .constant(let value):
            return constant(value)
        case .evaluatedObject:
            return "SELF"
        case .variable(let name):
            return "$" + name
        case .keyPath(let operand, let path):
            let keys = path.components.map(escapeKey).joined(separator: ".")
            guard let operand else { return keys }
            return operandText(operand) + "." + keys
        case .function(let name, let operand, let arguments):
            if let operand {
                let rest = arguments.map { ", " + format($0) }.joined()
                return "FUNCTION(\(format(operand)), \(quote(name))\(rest))"
            }
            if let symbol = infixOperators[name], arguments.count == 2 {
                return operandText(arguments[0]) + " " + symbol + " " + operandText(arguments[1])
            }
            if name == "castObject:toType:", arguments.count == 2 {
                return "CAST(\(format(arguments[0])), \(format(arguments[1])))"
            }
            if name == "objectFrom:withIndex:", arguments.count == 2 {
                return operandText(arguments[0]) + "[" + format(arguments[1]) + "]"
            }
            return name + "(" + arguments.map(format).joined(separator: ", ") + ")"
        case .aggregate(let elements):
            return "{" + elements.map(format).joined(separator: ", ") + "}"
        case .union(let l, let r):
            return operandText(l) + " UNION " + operandText(r)
        case .intersect(let l, let r):
            return operandText(l) + " INTERSECT " + operandText(r)
        case .minus(let l, let r):
            return operandText(l) + " MINUS " + operandText(r)
        case .subquery(let collection, let variable, let predicate):
            return "SUBQUERY(\(format(collection)), $\(variable), \(format(predicate)))"
        case .conditional(let predicate, let t, let f):
            return "TERNARY(\(format(predicate)), \(format(t)), \(format(f)))"
        case .block(_, let arguments):
            return "BLOCK(" + (arguments ?? []).map(format).joined(separator: ", ") + ")"
        case .anyKey:
            return "ANYKEY"
        case .indexSymbol(let symbol):
            return symbol
        }
    }

    /// An expression used as an operand of an infix operator or a key path: parenthesized when
    /// it is itself infix, so precedence survives a round trip.
    private static func operandText(_ expression: NSExpression) -> String {
        switch expression.node {
        case .function(let name, nil, let arguments) where infixOperators[name] != nil && arguments.count == 2:
            return "(" + format(expression) + ")"
        case .union, .intersect, .minus:
            return "(" + format(expression) + ")"
        case .constant(let value)
        where DynamicValue.unwrap(value).flatMap(DynamicValue.number).map { $0.doubleValue < 0 } ?? false:
            return "(" + format(expression) + ")"
        default:
            return format(expression)
        }
    }

    /// Prints a key so the lexer reads it back as the same key, scalar by scalar as the lexer
    /// reads (a combining mark after `@` forms one `Character` with it, but not one scalar).
    private static func escapeKey(_ key: String) -> String {
        if key.unicodeScalars.first == "@" { return key }
        return PredicateLexer.isIdentifier(key) && !PredicateLexer.isReserved(key) ? key : "#" + key
    }

    static func quote(_ string: String) -> String {
        var text = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case "\0": text += "\\0"
            // `%%` in a quoted string parses to `%`, so a `%` prints doubled.
            case "%": text += "%%"
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text + "\""
    }

    static func numberText(_ number: DynamicValue.Number) -> String {
        switch number {
        case .int(let value): return String(value)
        case .uint(let value): return String(value)
        case .decimal(let value): return "\(value)"
        case .double(let value):
            // Out-of-range literals parse to infinity, so print infinity as one.
            if value.isNaN { return "nan" }
            if value.isInfinite { return value < 0 ? "-1e999" : "1e999" }
            if value.rounded() == value, abs(value) < 1e15 { return String(Int64(value)) }
            return "\(value)"
        }
    }

    static func constant(_ value: Any?) -> String {
        guard let value = DynamicValue.unwrap(value) else { return "nil" }
        if let string = value as? String { return quote(string) }
        if let number = DynamicValue.number(value) { return numberText(number) }
        if let string = DynamicValue.string(value) { return quote(string) }
        if let date = DynamicValue.date(value) {
            let interval = date.timeIntervalSinceReferenceDate
            let text = interval.isFinite ? String(format: "%.6f", interval) : numberText(.double(interval))
            return "CAST(\(text), \"NSDate\")"
        }
        if let elements = DynamicValue.elements(value) {
            return "{" + elements.map(constant).joined(separator: ", ") + "}"
        }
        if let expression = value as? NSExpression { return format(expression) }
        return quote(String(describing: value))
    }
}
