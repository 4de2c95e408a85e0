/// An attribute whose value Core Data computes from other values with an expression.
open class NSDerivedAttributeDescription: NSAttributeDescription, @unchecked Sendable {
    /// The expression that computes the value, such as `books.@count` or `now()`.
    open var derivationExpression: NSExpression?
}
