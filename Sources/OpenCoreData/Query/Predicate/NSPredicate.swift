/// A logical condition on an object, used to filter fetches and collections.
///
/// ```swift
/// let predicate = NSPredicate(format: "age >= %d AND name BEGINSWITH[cd] %@", 18, "a")
/// predicate.evaluate(with: ["age": 30, "name": "Ärne"])  // true
/// ```
///
/// `NSPredicate(format:)` returns the right subclass (`NSComparisonPredicate`,
/// `NSCompoundPredicate`), as Apple's does, so `as? NSComparisonPredicate` works on the result.
///
/// Related documentation: Predicate Programming Guide.
open class NSPredicate: NSObject, @unchecked Sendable {
    /// Creates an empty predicate. Use a subclass or `init(format:)`; the base predicate always
    /// evaluates to `false`.
    override public init() {
        super.init()
    }

    /// Evaluates the predicate against `object`.
    open func evaluate(with object: Any?) -> Bool {
        evaluate(object, PredicateEvaluation(variables: [:], context: nil))
    }

    /// Evaluates the predicate against `object` after binding `$VARIABLE`s from `bindings`.
    open func evaluate(with object: Any?, substitutionVariables bindings: [String: Any]?) -> Bool {
        evaluate(object, PredicateEvaluation(variables: bindings ?? [:], context: nil))
    }

    /// Returns a copy in which every `$VARIABLE` named in `variables` is replaced by a constant.
    /// Variables not named stay in place.
    open func withSubstitutionVariables(_ variables: [String: Any]) -> Self {
        guard let copy = substituting(variables) as? Self else {
            preconditionFailure("withSubstitutionVariables: a \(type(of: self)) must substitute to its own class")
        }
        return copy
    }

    /// The predicate in Apple's canonical format string syntax. Parsing it gives an equal predicate.
    open var predicateFormat: String { PredicateFormatter.format(self) }

    /// Enables evaluation of a predicate decoded with secure coding. Predicates made here are
    /// always evaluable; kept for source compatibility.
    open func allowEvaluation() {}

    override open var description: String { predicateFormat }

    override open func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSPredicate else { return false }
        return PredicateEquality.equal(self, other)
    }

    override open var hash: Int { PredicateEquality.hash(self) }

    // MARK: Internal hooks, overridden by each kind of predicate

    func evaluate(_ object: Any?, _ evaluation: PredicateEvaluation) -> Bool { false }

    func substituting(_ variables: [String: Any]) -> NSPredicate { self }
}

/// Lets `NSPredicate`'s format and value initializers return a subclass instance, as Apple's
/// class-cluster initializers do. Not meant for direct use.
public protocol _NSPredicateFactory {}

extension NSPredicate: _NSPredicateFactory {}

extension _NSPredicateFactory where Self: NSPredicate {
    /// Parses a predicate from Apple's format string syntax, substituting `%@`, `%K`, `%d`, `%f`…
    /// from the arguments. Traps on a malformed format, as Apple raises; use
    /// ``init(validatingFormat:argumentArray:)`` for input you do not control.
    ///
    /// ```swift
    /// NSPredicate(format: "%K == %@", "name", "Ada")
    /// ```
    public init(format predicateFormat: String, _ args: Any...) {
        self.init(format: predicateFormat, argumentArray: args)
    }

    /// Parses a predicate, substituting format specifiers from `arguments`. Traps on a malformed
    /// format, as Apple raises.
    public init(format predicateFormat: String, argumentArray arguments: [Any]?) {
        do {
            try self.init(validatingFormat: predicateFormat, argumentArray: arguments)
        } catch {
            preconditionFailure("NSPredicate(format:): \(error)")
        }
    }

    /// Parses a predicate and throws ``NSPredicateFormatError`` instead of trapping when the
    /// format is malformed, nests too deeply or does not match its arguments — for predicates
    /// that come from users.
    ///
    /// - Throws: ``NSPredicateFormatError``, which bridges to `NSError` in `NSCocoaErrorDomain`
    ///   with code 2048 (`NSFormattingError`).
    ///
    /// > Note: Differs from Apple Core Data: an addition; Apple has only the raising initializer.
    public init(validatingFormat predicateFormat: String, argumentArray arguments: [Any]?) throws {
        let parsed = try PredicateParser.parsePredicate(predicateFormat, arguments: arguments ?? [])
        guard let result = parsed as? Self else {
            throw NSPredicateFormatError(
                code: .unexpectedKind, format: predicateFormat, offset: 0,
                message: "the format describes a \(type(of: parsed)), not a \(Self.self)")
        }
        self = result
    }

    /// Parses a predicate, substituting from `arguments`; throws instead of trapping. The same as
    /// ``init(validatingFormat:argumentArray:)``, under the label `API.md` lists.
    public init(validatingFormat predicateFormat: String, arguments: [Any]) throws {
        try self.init(validatingFormat: predicateFormat, argumentArray: arguments)
    }

    /// Parses a predicate, taking the arguments as variadic values; throws instead of trapping.
    public init(validatingFormat predicateFormat: String, _ args: Any...) throws {
        try self.init(validatingFormat: predicateFormat, argumentArray: args)
    }

    /// Creates a predicate that always evaluates to `value` (`TRUEPREDICATE` or `FALSEPREDICATE`).
    public init(value: Bool) {
        guard let result = ConstantPredicate(value: value) as? Self else {
            preconditionFailure("NSPredicate(value:) can only be created as NSPredicate")
        }
        self = result
    }

    /// Creates a predicate that calls `block` with the evaluated object and the bindings.
    ///
    /// Block predicates cannot be turned into SQL; the SQLite store rejects them, as Apple's does.
    public init(block: @escaping @Sendable (Any?, [String: Any]?) -> Bool) {
        guard let result = BlockPredicate(block: block) as? Self else {
            preconditionFailure("NSPredicate(block:) can only be created as NSPredicate")
        }
        self = result
    }
}

/// `TRUEPREDICATE` and `FALSEPREDICATE`.
package final class ConstantPredicate: NSPredicate, @unchecked Sendable {
    package let value: Bool

    init(value: Bool) {
        self.value = value
        super.init()
    }

    override func evaluate(_ object: Any?, _ evaluation: PredicateEvaluation) -> Bool { value }
}

/// A predicate whose test is a Swift closure.
final class BlockPredicate: NSPredicate, @unchecked Sendable {
    let block: @Sendable (Any?, [String: Any]?) -> Bool

    init(block: @escaping @Sendable (Any?, [String: Any]?) -> Bool) {
        self.block = block
        super.init()
    }

    override func evaluate(_ object: Any?, _ evaluation: PredicateEvaluation) -> Bool {
        block(object, evaluation.variables)
    }
}
