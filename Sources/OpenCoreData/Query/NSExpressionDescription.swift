/// A column of a dictionary fetch computed by an expression, such as `@sum.salary`.
///
/// ```swift
/// let total = NSExpressionDescription()
/// total.name = "total"
/// total.expression = NSExpression(forFunction: "sum:", arguments: [NSExpression(forKeyPath: "salary")])
/// total.expressionResultType = .doubleAttributeType
/// request.propertiesToFetch = [total]
/// ```
open class NSExpressionDescription: NSPropertyDescription, @unchecked Sendable {
    /// The expression whose value fills the column.
    open var expression: NSExpression?
    /// The type of the expression's value.
    open var expressionResultType: NSAttributeType = .undefinedAttributeType

    /// Creates an empty expression description.
    override public init() {
        super.init()
    }
}
