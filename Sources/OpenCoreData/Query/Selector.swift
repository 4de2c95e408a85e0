/// The name of a method, as `NSSortDescriptor(key:ascending:selector:)` and custom predicate
/// operators take it.
///
/// > Note: Differs from Apple Core Data: Linux has no Objective-C selectors, so a selector is a
/// > value named by string: `Selector("localizedStandardCompare:")` where Apple writes
/// > `#selector(NSString.localizedStandardCompare(_:))`.
public struct Selector: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The selector's name, such as `"caseInsensitiveCompare:"`.
    public let name: String

    /// Creates a selector from its name.
    public init(_ name: String) {
        self.name = name
    }

    /// Creates a selector from a string literal.
    public init(stringLiteral name: String) {
        self.name = name
    }

    /// The selector's name.
    public var description: String { name }
}
