/// A predicate that combines others with `AND`, `OR` or `NOT`.
///
/// An `AND` of no subpredicates is true and an `OR` of none is false, as Apple documents for
/// `init(type:subpredicates:)`.
open class NSCompoundPredicate: NSPredicate, @unchecked Sendable {
    /// How the subpredicates combine, with Apple's raw values.
    public enum LogicalType: UInt, Sendable {
        /// Negates its single subpredicate.
        case not = 0
        /// True when every subpredicate is true.
        case and = 1
        /// True when any subpredicate is true.
        case or = 2
    }

    /// How the subpredicates combine.
    public let compoundPredicateType: LogicalType
    package let predicates: [NSPredicate]

    /// The subpredicates, as Apple types them (`[Any]`); each element is an `NSPredicate`.
    open var subpredicates: [Any] { predicates }

    /// Creates a compound predicate. A `.not` predicate takes exactly one subpredicate.
    public init(type: LogicalType, subpredicates: [NSPredicate]) {
        precondition(
            type != .not || subpredicates.count == 1,
            "NSCompoundPredicate of type .not needs exactly one subpredicate, got \(subpredicates.count)")
        compoundPredicateType = type
        predicates = subpredicates
        super.init()
    }

    /// Creates the `AND` of the subpredicates.
    public convenience init(andPredicateWithSubpredicates subpredicates: [NSPredicate]) {
        self.init(type: .and, subpredicates: subpredicates)
    }

    /// Creates the `OR` of the subpredicates.
    public convenience init(orPredicateWithSubpredicates subpredicates: [NSPredicate]) {
        self.init(type: .or, subpredicates: subpredicates)
    }

    /// Creates the negation of a predicate.
    public convenience init(notPredicateWithSubpredicate predicate: NSPredicate) {
        self.init(type: .not, subpredicates: [predicate])
    }

    override func evaluate(_ object: Any?, _ evaluation: PredicateEvaluation) -> Bool {
        switch compoundPredicateType {
        case .and:
            for predicate in predicates where !predicate.evaluate(object, evaluation) { return false }
            return true
        case .or:
            for predicate in predicates where predicate.evaluate(object, evaluation) { return true }
            return false
        case .not:
            return !predicates[0].evaluate(object, evaluation)
        }
    }

    override func substituting(_ variables: [String: Any]) -> NSPredicate {
        NSCompoundPredicate(type: compoundPredicateType, subpredicates: predicates.map { $0.substituting(variables) })
    }
}
