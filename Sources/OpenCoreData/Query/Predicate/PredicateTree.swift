/// Walks of a predicate's tree that use their own stack, not recursion, so that they can measure a
/// tree too deep for the recursive walks (evaluation, printing, SQL) to be trusted with.
enum PredicateTree {
    private enum Node {
        case predicate(NSPredicate)
        case expression(NSExpression)
    }

    /// The number of levels of the deepest path from `predicate` to a leaf.
    static func depth(of predicate: NSPredicate) -> Int { depth(from: .predicate(predicate)) }

    /// The number of levels of the deepest path from `expression` to a leaf.
    static func depth(of expression: NSExpression) -> Int { depth(from: .expression(expression)) }

    private static func depth(from root: Node) -> Int {
        var deepest = 0
        var stack: [(Node, Int)] = [(root, 1)]
        while let (node, level) = stack.popLast() {
            deepest = max(deepest, level)
            for child in children(of: node) { stack.append((child, level + 1)) }
        }
        return deepest
    }

    private static func children(of node: Node) -> [Node] {
        switch node {
        case .predicate(let predicate):
            if let comparison = predicate as? NSComparisonPredicate {
                return [.expression(comparison.leftExpression), .expression(comparison.rightExpression)]
            }
            if let compound = predicate as? NSCompoundPredicate { return compound.predicates.map { .predicate($0) } }
            return []
        case .expression(let expression):
            switch expression.node {
            case .keyPath(let operand, _): return operand.map { [.expression($0)] } ?? []
            case .function(_, let operand, let arguments):
                return (operand.map { [.expression($0)] } ?? []) + arguments.map { .expression($0) }
            case .aggregate(let elements): return elements.map { .expression($0) }
            case .union(let a, let b), .intersect(let a, let b), .minus(let a, let b):
                return [.expression(a), .expression(b)]
            case .subquery(let collection, _, let predicate): return [.expression(collection), .predicate(predicate)]
            case .conditional(let predicate, let a, let b):
                return [.predicate(predicate), .expression(a), .expression(b)]
            case .block(_, let arguments): return (arguments ?? []).map { .expression($0) }
            case .constant, .evaluatedObject, .variable, .anyKey, .indexSymbol: return []
            }
        }
    }
}
