/// Expressions as Foundation's `NSKeyedArchiver` archives them, in the two shapes Apple's files
/// hold: a derived attribute's derivation in a compiled model (key paths as `valueForKey:` of type
/// 3, functions on `_NSPredicateUtilities`), and a mapping model's expressions in a `.cdm` (key
/// paths as `valueForKeyPath:`, `FUNCTION` on a receiver such as `$manager`, `FETCH`, aggregates),
/// as Xcode's compilers write them (STORE-FORMAT.md, "Mapping-model files").
extension CompiledModelEncoder {
    /// Which of Apple's files the expression is archived for.
    enum ExpressionStyle {
        /// `NSDerivationExpression` of a compiled model.
        case derivation
        /// `NSValueExpression` and `NSSourceExpression` of a compiled mapping model.
        case mapping
    }

    private static let expressionChainTail = ["NSExpression", "NSObject"]

    /// `expression` archived in `style`; `nil` when it holds a kind that style's files never
    /// hold (a subquery, a block, a set operation, a constant no archive can carry).
    mutating func expression(_ expression: NSExpression, style: ExpressionStyle, depth: Int = 0) -> PropertyListValue? {
        guard depth < KeyedArchive.maximumExpressionDepth else { return nil }
        let tail = Self.expressionChainTail
        func inner(_ expression: NSExpression) -> PropertyListValue? {
            self.expression(expression, style: style, depth: depth + 1)
        }
        func evaluatedObject() -> PropertyListValue {
            object(["NSSelfExpression"] + tail, [("NSExpressionType", .integer(1))])
        }
        func arguments(_ items: [NSExpression]) -> [PropertyListValue]? {
            var archived: [PropertyListValue] = []
            for item in items {
                guard let value = inner(item) else { return nil }
                archived.append(value)
            }
            return archived
        }
        switch expression.node {
        case .evaluatedObject:
            return evaluatedObject()
        case .variable(let name):
            return object(
                ["NSVariableExpression"] + tail, [("NSExpressionType", .integer(2)), ("NSVariable", string(name))])
        case .constant(let value):
            guard let archived = constant(value, style: style) else { return nil }
            return object(
                ["NSConstantValueExpression"] + tail,
                [("NSExpressionType", .integer(0)), ("NSConstantValue", archived)])
        case .keyPath(let operand, let path):
            guard let base = operand.map({ inner($0) }) ?? evaluatedObject() else { return nil }
            let specifier = object(
                ["NSKeyPathSpecifierExpression"] + tail,
                [("NSExpressionType", .integer(10)), ("NSKeyPath", string(path.string))])
            // Xcode's model compiler writes a derivation's key path as `valueForKey:` of type 3; its
            // mapping compiler a mapping's as `valueForKeyPath:` of type 4.
            let (type, selector) = style == .derivation ? (3, "valueForKey:") : (4, "valueForKeyPath:")
            return object(
                ["NSKeyPathExpression", "NSFunctionExpression"] + tail,
                [
                    ("NSExpressionType", .integer(type)), ("NSSelectorName", string(selector)), ("NSOperand", base),
                    ("NSArguments", array([specifier], Self.mutableArrayChain)),
                ])
        case .function("FETCH", nil, let items) where style == .mapping && items.count == 3:
            guard let request = inner(items[0]), let context = inner(items[1]),
                case .constant(let flag) = items[2].node
            else { return nil }
            return object(
                ["NSFetchRequestExpression"] + tail,
                [
                    ("NSExpressionType", .integer(50)), ("NSFRExpression", request), ("NSMOCExpression", context),
                    ("NSCountOnlyFlag", .bool((flag as? Bool) ?? ((flag as? NSNumber)?.boolValue ?? false))),
                ])
        case .function(let name, let operand, let items):
            guard let archived = arguments(items) else { return nil }
            let receiver: PropertyListValue
            if let operand {
                guard style == .mapping, let value = inner(operand) else { return nil }
                receiver = value
            } else {
                receiver = object(
                    ["NSConstantValueExpression"] + tail,
                    [("NSExpressionType", .integer(0)), ("NSConstantValueClassName", string("_NSPredicateUtilities"))])
            }
            let selector = operand != nil || items.isEmpty || name.hasSuffix(":") ? name : name + ":"
            return object(
                ["NSFunctionExpression"] + tail,
                [
                    ("NSExpressionType", .integer(4)), ("NSSelectorName", string(selector)), ("NSOperand", receiver),
                    ("NSArguments", array(archived)),
                ])
        case .aggregate(let members) where style == .mapping:
            guard let archived = arguments(members) else { return nil }
            return object(
                ["NSAggregateExpression"] + tail,
                [("NSExpressionType", .integer(14)), ("NSCollection", array(archived))])
        default:
            return nil
        }
    }

    /// A constant's archived value: a derivation holds only strings and numbers; a mapping any
    /// plain value (``value(_:)``).
    private mutating func constant(_ value: Any?, style: ExpressionStyle) -> PropertyListValue? {
        guard style == .derivation else { return self.value(value) }
        switch value {
        case let text as String: return string(text)
        case let number as Int: return .integer(number)
        case let number as Double: return .real(number)
        case nil: return .uid(0)
        default: return nil
        }
    }
}
