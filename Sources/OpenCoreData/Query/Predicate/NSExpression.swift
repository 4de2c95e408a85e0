/// An expression in a predicate: a constant, a key path, a variable, a function, a subquery…
///
/// Apple's expression class with its initializers and properties. Build one in code or parse one:
///
/// ```swift
/// let total = NSExpression(format: "department.employees.@sum.salary")
/// let value = total.expressionValue(with: manager, context: nil)
/// ```
///
/// Related documentation: Predicate Programming Guide, "Predicate Format String Syntax".
open class NSExpression: NSObject, @unchecked Sendable {
    /// The kinds of expression, with Apple's raw values.
    public enum ExpressionType: UInt, Sendable {
        /// An expression that always returns the same value.
        case constantValue = 0
        /// The object being evaluated (`SELF`).
        case evaluatedObject = 1
        /// A `$VARIABLE` resolved from the substitution bindings.
        case variable = 2
        /// A key path applied to the evaluated object or to an operand.
        case keyPath = 3
        /// A function call, including arithmetic and `FUNCTION(…)`.
        case function = 4
        /// `left UNION right`.
        case unionSet = 5
        /// `left INTERSECT right`.
        case intersectSet = 6
        /// `left MINUS right`.
        case minusSet = 7
        /// `SUBQUERY(collection, $x, predicate)`.
        case subquery = 13
        /// A collection of expressions, `{a, b, c}`.
        case aggregate = 14
        /// Any key of the evaluated object (`ANYKEY`, used by Spotlight).
        case anyKey = 15
        /// A block-based expression.
        case block = 19
        /// `TERNARY(predicate, trueExpression, falseExpression)`.
        case conditional = 20
    }

    /// The signature of a block expression: evaluated object, evaluated arguments, context.
    public typealias Block = (Any?, [Any], NSMutableDictionary?) -> Any

    package indirect enum Node {
        case constant(Any?)
        case evaluatedObject
        case variable(String)
        /// `operand == nil` means the evaluated object, written without `SELF.`.
        case keyPath(operand: NSExpression?, path: KeyPathComponents)
        /// `operand == nil` for the built-in functions; the receiver of `FUNCTION(receiver, …)`.
        case function(name: String, operand: NSExpression?, arguments: [NSExpression])
        case aggregate([NSExpression])
        case union(NSExpression, NSExpression)
        case intersect(NSExpression, NSExpression)
        case minus(NSExpression, NSExpression)
        case subquery(collection: NSExpression, variable: String, predicate: NSPredicate)
        case conditional(NSPredicate, NSExpression, NSExpression)
        case block(Block, [NSExpression]?)
        case anyKey
        /// `FIRST`, `LAST` or `SIZE` inside an index subscript.
        case indexSymbol(String)
    }

    package let node: Node
    /// The value of an aggregate whose elements are all constants, computed once so that
    /// `x IN {'a', 'b'}` does not rebuild the array for every evaluated object.
    package let constantAggregate: [Any]?

    init(node: Node) {
        self.node = node
        if case .aggregate(let elements) = node {
            var values: [Any] = []
            values.reserveCapacity(elements.count)
            for element in elements {
                guard case .constant(let value) = element.node else { break }
                values.append(value ?? NSNull())
            }
            constantAggregate = values.count == elements.count ? values : nil
        } else {
            constantAggregate = nil
        }
        super.init()
    }

    /// Creates an expression of the given type; Apple's abstract initializer. Only the types that
    /// need no operands can be made this way.
    public convenience init(expressionType type: ExpressionType) {
        switch type {
        case .evaluatedObject: self.init(node: .evaluatedObject)
        case .anyKey: self.init(node: .anyKey)
        case .constantValue: self.init(node: .constant(nil))
        default:
            preconditionFailure("NSExpression(expressionType: \(type)) needs operands; use its specific initializer")
        }
    }

    /// Creates an expression that always evaluates to `value`.
    public convenience init(forConstantValue value: Any?) {
        self.init(node: .constant(DynamicValue.unwrap(value)))
    }

    /// `value` itself when it is an expression, else a constant expression of it: what a
    /// `%@` argument or a substitution variable becomes. Only an object is asked whether it is an
    /// expression: casting a Swift array to a class bridged the whole array to an `NSArray`
    /// first, and threw it away (`id IN %@` with many IDs).
    static func given(_ value: Any?) -> NSExpression {
        if let value, DynamicValue.isObject(value), let expression = value as? NSExpression { return expression }
        return NSExpression(forConstantValue: value)
    }

    /// Creates an expression for the object being evaluated (`SELF`).
    public class func expressionForEvaluatedObject() -> NSExpression {
        NSExpression(node: .evaluatedObject)
    }

    /// Creates an expression matching any key (`ANYKEY`).
    public class func expressionForAnyKey() -> NSExpression {
        NSExpression(node: .anyKey)
    }

    /// Creates an expression that reads `$variable` from the substitution bindings.
    public convenience init(forVariable string: String) {
        self.init(node: .variable(string))
    }

    /// Creates an expression that applies a dot-separated key path to the evaluated object.
    public convenience init(forKeyPath keyPath: String) {
        self.init(node: .keyPath(operand: nil, path: KeyPathComponents(keyPath)))
    }

    /// Creates an expression that calls one of Apple's predefined functions, such as `sum:`,
    /// `add:to:` or `now`, with the given argument expressions.
    public convenience init(forFunction name: String, arguments parameters: [Any]) {
        self.init(node: .function(name: name, operand: nil, arguments: NSExpression.expressions(parameters)))
    }

    /// Creates `FUNCTION(target, selectorName, arguments…)`, a call on the target's value.
    ///
    /// > Note: Differs from Apple Core Data: there is no Objective-C dispatch on Linux; the
    /// > target's value is called through ``PredicateFunctionReceiver``.
    public convenience init(forFunction target: NSExpression, selectorName name: String, arguments parameters: [Any]?) {
        self.init(
            node: .function(name: name, operand: target, arguments: NSExpression.expressions(parameters ?? [])))
    }

    /// Creates an aggregate expression, `{a, b, c}`, from an array of expressions.
    public convenience init(forAggregate subexpressions: [Any]) {
        self.init(node: .aggregate(NSExpression.expressions(subexpressions)))
    }

    /// Creates `left UNION right`.
    public convenience init(forUnionSet left: NSExpression, with right: NSExpression) {
        self.init(node: .union(left, right))
    }

    /// Creates `left INTERSECT right`.
    public convenience init(forIntersectSet left: NSExpression, with right: NSExpression) {
        self.init(node: .intersect(left, right))
    }

    /// Creates `left MINUS right`.
    public convenience init(forMinusSet left: NSExpression, with right: NSExpression) {
        self.init(node: .minus(left, right))
    }

    /// Creates `SUBQUERY(expression, $variable, predicate)`: the elements of the collection for
    /// which the predicate holds, with each element bound to `$variable`.
    public convenience init(
        forSubquery expression: NSExpression, usingIteratorVariable variable: String, predicate: NSPredicate
    ) {
        self.init(node: .subquery(collection: expression, variable: variable, predicate: predicate))
    }

    /// Creates `TERNARY(predicate, trueExpression, falseExpression)`.
    public convenience init(
        forConditional predicate: NSPredicate, trueExpression: NSExpression, falseExpression: NSExpression
    ) {
        self.init(node: .conditional(predicate, trueExpression, falseExpression))
    }

    /// Creates an expression that calls `block` with the evaluated object and the values of
    /// `arguments`.
    public convenience init(block: @escaping Block, arguments: [NSExpression]?) {
        self.init(node: .block(block, arguments))
    }

    /// Parses an expression from a format string (the expression part of Apple's predicate
    /// syntax). Traps on a malformed format, as Apple raises.
    public convenience init(format expressionFormat: String, _ args: Any...) {
        self.init(format: expressionFormat, argumentArray: args)
    }

    /// Parses an expression, substituting `%@`, `%K`, `%d`… from `arguments`.
    public convenience init(format expressionFormat: String, argumentArray arguments: [Any]) {
        do {
            let parsed = try PredicateParser.parseExpression(expressionFormat, arguments: arguments)
            self.init(node: parsed.node)
        } catch {
            preconditionFailure("NSExpression(format:): \(error)")
        }
    }

    private static func expressions(_ values: [Any]) -> [NSExpression] {
        values.map(given)
    }

    // MARK: Properties

    /// The kind of this expression.
    open var expressionType: ExpressionType {
        switch node {
        case .constant, .indexSymbol: .constantValue
        case .evaluatedObject: .evaluatedObject
        case .variable: .variable
        case .keyPath: .keyPath
        case .function: .function
        case .aggregate: .aggregate
        case .union: .unionSet
        case .intersect: .intersectSet
        case .minus: .minusSet
        case .subquery: .subquery
        case .conditional: .conditional
        case .block: .block
        case .anyKey: .anyKey
        }
    }

    /// The constant of a constant-value expression.
    open var constantValue: Any? {
        switch node {
        case .constant(let value): return value
        case .indexSymbol(let symbol): return symbol
        default:
            preconditionFailure("constantValue is only defined for constant-value expressions, not \(expressionType)")
        }
    }

    /// The key path of a key-path expression.
    open var keyPath: String {
        guard case .keyPath(_, let path) = node else {
            preconditionFailure("keyPath is only defined for key-path expressions, not \(expressionType)")
        }
        return path.string
    }

    /// The function name (selector) of a function expression.
    open var function: String {
        guard case .function(let name, _, _) = node else {
            preconditionFailure("function is only defined for function expressions, not \(expressionType)")
        }
        return name
    }

    /// The variable name of a variable expression, or the iterator variable of a subquery.
    open var variable: String {
        switch node {
        case .variable(let name): return name
        case .subquery(_, let name, _): return name
        default: preconditionFailure("variable is only defined for variable and subquery expressions")
        }
    }

    /// The operand of a key-path or `FUNCTION` expression.
    open var operand: NSExpression {
        switch node {
        case .keyPath(let operand, _): return operand ?? .expressionForEvaluatedObject()
        case .function(_, let operand, _): return operand ?? NSExpression(forConstantValue: "_NSPredicateUtilities")
        default: preconditionFailure("operand is only defined for key-path and function expressions")
        }
    }

    /// The argument expressions of a function or block expression.
    open var arguments: [NSExpression]? {
        switch node {
        case .function(_, _, let arguments): return arguments
        case .block(_, let arguments): return arguments
        default: preconditionFailure("arguments is only defined for function and block expressions")
        }
    }

    /// The collection of an aggregate or subquery expression.
    open var collection: Any {
        switch node {
        case .aggregate(let elements): return elements
        case .subquery(let collection, _, _): return collection
        default: preconditionFailure("collection is only defined for aggregate and subquery expressions")
        }
    }

    /// The predicate of a subquery or conditional expression.
    open var predicate: NSPredicate {
        switch node {
        case .subquery(_, _, let predicate): return predicate
        case .conditional(let predicate, _, _): return predicate
        default: preconditionFailure("predicate is only defined for subquery and conditional expressions")
        }
    }

    /// The left side of a set expression.
    open var left: NSExpression {
        switch node {
        case .union(let left, _), .intersect(let left, _), .minus(let left, _): return left
        default: preconditionFailure("left is only defined for set expressions")
        }
    }

    /// The right side of a set expression.
    open var right: NSExpression {
        switch node {
        case .union(_, let right), .intersect(_, let right), .minus(_, let right): return right
        default: preconditionFailure("right is only defined for set expressions")
        }
    }

    /// The expression a conditional expression yields when its predicate holds.
    open var `true`: NSExpression {
        guard case .conditional(_, let value, _) = node else {
            preconditionFailure("true is only defined for conditional expressions")
        }
        return value
    }

    /// The expression a conditional expression yields when its predicate fails.
    open var `false`: NSExpression {
        guard case .conditional(_, _, let value) = node else {
            preconditionFailure("false is only defined for conditional expressions")
        }
        return value
    }

    /// The block of a block expression.
    open var expressionBlock: Block {
        guard case .block(let block, _) = node else {
            preconditionFailure("expressionBlock is only defined for block expressions")
        }
        return block
    }

    /// Evaluates the expression against `object`; `context` carries variable bindings (and is
    /// where `SUBQUERY` binds its iterator variable).
    open func expressionValue(with object: Any?, context: NSMutableDictionary?) -> Any? {
        var variables: [String: Any] = [:]
        if let context {
            for case (let key as String, let value) in context { variables[key] = value }
        }
        let evaluation = PredicateEvaluation(variables: variables, context: context)
        // Apple's expressions answer numbers as NSNumber, so `as? Int`, `as? Double` and
        // `as? NSNumber` all work on `4 + 5` as they do there.
        let value = evaluate(object, evaluation)
        guard case .function = node else { return value }
        return PredicateFunctions.asNSNumber(value)
    }

    /// Enables evaluation of an expression decoded with secure coding. Expressions made here are
    /// always evaluable; kept for source compatibility.
    open func allowEvaluation() {}

    // MARK: NSObject

    override open var description: String { PredicateFormatter.format(self) }

    override open func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSExpression else { return false }
        return PredicateEquality.equal(self, other)
    }

    override open var hash: Int { PredicateEquality.hash(self) }
}

/// A value that `FUNCTION(receiver, 'name', …)` can call on Linux, where there is no
/// Objective-C message dispatch.
///
/// > Note: Differs from Apple Core Data: Apple sends the selector to the receiver; here the
/// > receiver's value must adopt this protocol.
public protocol PredicateFunctionReceiver {
    /// Performs the function named `selectorName` (for example `"distanceTo:"`) with the
    /// evaluated arguments; returns `nil` for a name it does not know.
    func predicateFunction(_ selectorName: String, arguments: [Any?]) -> Any?
}
