/// `NSExpression`s as `NSKeyedArchiver` writes them, read from compiled mapping models (`.cdm`)
/// and from Xcode's mapping files (`valueexpressiondata`): constant, `SELF`, variable, key-path,
/// function and `FETCH` expressions, and aggregates — the kinds a mapping model holds
/// (STORE-FORMAT.md, "Mapping-model files"). Anything else is a thrown ``ModelProblem``.
extension KeyedArchive {
    /// Deeper than any mapping model's expression; past it, a hostile archive is refused.
    static let maximumExpressionDepth = 32

    /// The root object of the archive as an expression.
    ///
    /// - Throws: ``ModelProblem`` for an object that is not an expression of a known kind.
    func rootExpression() throws -> NSExpression {
        guard let expression = try expression(["CF$UID": root]) else {
            throw ModelProblem(message: "holds no expression")
        }
        return expression
    }

    /// The expression archived at `reference`; `nil` for `$null`.
    ///
    /// - Throws: ``ModelProblem`` for an object that is not an expression of a known kind.
    func expression(_ reference: Any?, depth: Int = 0) throws -> NSExpression? {
        guard let object = dictionary(reference) else { return nil }
        guard depth < Self.maximumExpressionDepth else {
            throw ModelProblem(message: "nests expressions deeper than \(Self.maximumExpressionDepth) levels")
        }
        let kind = className(object) ?? "(no class)"
        func required(_ key: String) throws -> NSExpression {
            guard let inner = try expression(object[key], depth: depth + 1) else {
                throw ModelProblem(message: "has an \(kind) without its \(key)")
            }
            return inner
        }
        switch kind {
        case "NSConstantValueExpression":
            return NSExpression(forConstantValue: try value(object["NSConstantValue"]))
        case "NSSelfExpression":
            return NSExpression.expressionForEvaluatedObject()
        case "NSVariableExpression":
            guard let name = string(object["NSVariable"]) else {
                throw ModelProblem(message: "has a variable without a name")
            }
            return NSExpression(forVariable: name)
        case "NSKeyPathSpecifierExpression":
            guard let path = string(object["NSKeyPath"]) else {
                throw ModelProblem(message: "has a key path without a path")
            }
            return NSExpression(node: .keyPath(operand: nil, path: KeyPathComponents(path)))
        case "NSKeyPathExpression", "NSFunctionExpression":
            guard let selector = string(object["NSSelectorName"]) else {
                throw ModelProblem(message: "has a function without a selector")
            }
            let operand = try expression(object["NSOperand"], depth: depth + 1)
            var arguments: [NSExpression] = []
            for element in elements(object["NSArguments"]) {
                guard let argument = try expression(element, depth: depth + 1) else { continue }
                arguments.append(argument)
            }
            // `valueForKeyPath:` of a key-path specifier is how a key path is archived.
            if selector == "valueForKeyPath:", arguments.count == 1, case .keyPath(nil, let path) = arguments[0].node {
                if let operand, case .evaluatedObject = operand.node {
                    return NSExpression(node: .keyPath(operand: nil, path: path))
                }
                return NSExpression(node: .keyPath(operand: operand, path: path))
            }
            if let operand, case .constant(let target) = operand.node, target as? String == "_NSPredicateUtilities" {
                return NSExpression(node: .function(name: selector, operand: nil, arguments: arguments))
            }
            return NSExpression(node: .function(name: selector, operand: operand, arguments: arguments))
        case "NSFetchRequestExpression":
            let request = try required("NSFRExpression")
            let context = try required("NSMOCExpression")
            let countOnly = object["NSCountOnlyFlag"] as? Bool ?? false
            return NSExpression(
                node: .function(
                    name: "FETCH", operand: nil,
                    arguments: [request, context, NSExpression(forConstantValue: countOnly)]))
        case "NSAggregateExpression":
            var members: [NSExpression] = []
            for element in elements(object["NSCollection"]) {
                if let member = try expression(element, depth: depth + 1) { members.append(member) }
            }
            return NSExpression(forAggregate: members)
        default:
            throw ModelProblem(message: "holds an \(kind), which is not an expression this reader knows")
        }
    }
}
