/// A predicate that compares the values of two expressions.
///
/// ```swift
/// let p = NSComparisonPredicate(
///     leftExpression: NSExpression(forKeyPath: "name"),
///     rightExpression: NSExpression(forConstantValue: "a"),
///     modifier: .direct, type: .beginsWith, options: [.caseInsensitive])
/// p.predicateFormat  // name BEGINSWITH[c] "a"
/// ```
open class NSComparisonPredicate: NSPredicate, @unchecked Sendable {
    /// The comparison operators, with Apple's raw values.
    public enum Operator: UInt, Sendable {
        /// `<`
        case lessThan = 0
        /// `<=`
        case lessThanOrEqualTo = 1
        /// `>`
        case greaterThan = 2
        /// `>=`
        case greaterThanOrEqualTo = 3
        /// `==`
        case equalTo = 4
        /// `!=`
        case notEqualTo = 5
        /// `MATCHES`: the whole left string matches the right ICU regular expression.
        case matches = 6
        /// `LIKE`: `*` matches any run of characters, `?` any one character.
        case like = 7
        /// `BEGINSWITH`
        case beginsWith = 8
        /// `ENDSWITH`
        case endsWith = 9
        /// `IN`: the left value is an element of the right collection, or a substring of it.
        case `in` = 10
        /// A comparison by a custom selector.
        case customSelector = 11
        /// `CONTAINS`: the left collection has the right value, or the left string contains it.
        case contains = 99
        /// `BETWEEN`: the left value lies within the right `{lower, upper}`, bounds included.
        case between = 100
    }

    /// How the left expression is applied when it is a collection, with Apple's raw values.
    public enum Modifier: UInt, Sendable {
        /// Compare the left value itself.
        case direct = 0
        /// `ALL`: every element must satisfy the comparison.
        case all = 1
        /// `ANY` / `SOME`: at least one element must satisfy it.
        case any = 2
    }

    /// String comparison options, written `[c]`, `[d]`, `[n]`, `[l]` after an operator.
    public struct Options: OptionSet, Sendable, Hashable {
        /// The raw bits, as Apple's.
        public let rawValue: UInt

        /// Creates options from raw bits.
        public init(rawValue: UInt) {
            self.rawValue = rawValue
        }

        /// `[c]`: compare case-insensitively (Unicode case folding).
        public static let caseInsensitive = Options(rawValue: 1)
        /// `[d]`: ignore diacritics.
        public static let diacriticInsensitive = Options(rawValue: 2)
        /// `[n]`: the strings are already normalized; compare them as they are. Supersedes
        /// `[c]` and `[d]`.
        public static let normalized = Options(rawValue: 4)
        /// `[l]`: locale-sensitive comparison.
        public static let localeSensitive = Options(rawValue: 8)
    }

    /// The operator.
    public let predicateOperatorType: Operator
    /// The modifier (`ANY`, `ALL` or direct).
    public let comparisonPredicateModifier: Modifier
    /// The left expression.
    public let leftExpression: NSExpression
    /// The right expression.
    public let rightExpression: NSExpression
    /// The string comparison options.
    public let options: Options
    /// The selector of a custom-selector comparison.
    public let customSelector: Selector?

    let matcher: StringOperation

    /// Creates a comparison predicate.
    public init(
        leftExpression lhs: NSExpression, rightExpression rhs: NSExpression, modifier: Modifier,
        type: Operator, options: Options = []
    ) {
        precondition(type != .customSelector, "use init(leftExpression:rightExpression:customSelector:)")
        leftExpression = lhs
        rightExpression = rhs
        comparisonPredicateModifier = modifier
        predicateOperatorType = type
        self.options = options
        customSelector = nil
        matcher = StringOperation(operator: type, options: options, right: rhs)
        super.init()
    }

    /// Creates a predicate that compares with a custom selector.
    ///
    /// > Note: Differs from Apple Core Data: Linux has no Objective-C dispatch, so such a
    /// > predicate can be built and printed but evaluating it traps.
    public init(leftExpression lhs: NSExpression, rightExpression rhs: NSExpression, customSelector selector: Selector)
    {
        leftExpression = lhs
        rightExpression = rhs
        comparisonPredicateModifier = .direct
        predicateOperatorType = .customSelector
        options = []
        customSelector = selector
        matcher = StringOperation(operator: .customSelector, options: [], right: rhs)
        super.init()
    }

    override func evaluate(_ object: Any?, _ evaluation: PredicateEvaluation) -> Bool {
        let lhs = leftExpression.evaluate(object, evaluation)
        let rhs = rightExpression.evaluate(object, evaluation)
        switch comparisonPredicateModifier {
        case .direct:
            return compare(lhs, rhs)
        case .any:
            guard let elements = Self.elements(lhs) else { return false }
            return elements.contains { compare($0, rhs) }
        case .all:
            guard let elements = Self.elements(lhs) else { return true }
            return elements.allSatisfy { compare($0, rhs) }
        }
    }

    private static func elements(_ value: Any?) -> [Any]? {
        guard let value = DynamicValue.unwrap(value) else { return nil }
        return DynamicValue.elements(value) ?? DynamicValue.dictionaryValues(value) ?? [value]
    }

    /// One comparison of two plain values, with Apple's rules for each operator.
    package func compare(_ lhs: Any?, _ rhs: Any?) -> Bool {
        switch predicateOperatorType {
        case .equalTo: return matcher.equal(lhs, rhs)
        case .notEqualTo: return !matcher.equal(lhs, rhs)
        case .lessThan: return matcher.order(lhs, rhs) == .orderedAscending
        case .lessThanOrEqualTo: return matcher.order(lhs, rhs).map { $0 != .orderedDescending } ?? false
        case .greaterThan: return matcher.order(lhs, rhs) == .orderedDescending
        case .greaterThanOrEqualTo: return matcher.order(lhs, rhs).map { $0 != .orderedAscending } ?? false
        case .beginsWith, .endsWith, .like, .matches: return matcher.matchStrings(lhs, rhs)
        case .in: return matcher.contains(container: rhs, element: lhs)
        case .contains: return matcher.contains(container: lhs, element: rhs)
        case .between:
            guard let bounds = DynamicValue.unwrap(rhs).flatMap(DynamicValue.elements), bounds.count == 2 else {
                return false
            }
            guard let low = matcher.order(lhs, bounds[0]), let high = matcher.order(lhs, bounds[1]) else {
                return false
            }
            return low != .orderedAscending && high != .orderedDescending
        case .customSelector:
            preconditionFailure(
                "NSComparisonPredicate: custom selector \(customSelector?.description ?? "") cannot be evaluated on Linux"
            )
        }
    }

    override func substituting(_ variables: [String: Any]) -> NSPredicate {
        let lhs = leftExpression.substituting(variables)
        let rhs = rightExpression.substituting(variables)
        if let customSelector {
            return NSComparisonPredicate(leftExpression: lhs, rightExpression: rhs, customSelector: customSelector)
        }
        return NSComparisonPredicate(
            leftExpression: lhs, rightExpression: rhs, modifier: comparisonPredicateModifier,
            type: predicateOperatorType, options: options)
    }
}
