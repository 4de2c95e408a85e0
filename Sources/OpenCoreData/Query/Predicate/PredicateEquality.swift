/// Structural equality and hashing for predicates and expressions, as Apple's `isEqual:` and
/// `hash` behave: two predicates are equal when they have the same structure, operators,
/// options and equal constants (numbers by value, so `YES` equals `1`).
enum PredicateEquality {
    static func equal(_ lhs: NSPredicate, _ rhs: NSPredicate) -> Bool {
        if lhs === rhs { return true }
        switch (lhs, rhs) {
        case (let a as NSComparisonPredicate, let b as NSComparisonPredicate):
            return a.predicateOperatorType == b.predicateOperatorType
                && a.comparisonPredicateModifier == b.comparisonPredicateModifier
                && a.options == b.options && a.customSelector == b.customSelector
                && equal(a.leftExpression, b.leftExpression) && equal(a.rightExpression, b.rightExpression)
        case (let a as NSCompoundPredicate, let b as NSCompoundPredicate):
            return a.compoundPredicateType == b.compoundPredicateType && a.predicates.count == b.predicates.count
                && zip(a.predicates, b.predicates).allSatisfy { equal($0, $1) }
        case (let a as ConstantPredicate, let b as ConstantPredicate):
            return a.value == b.value
        default:
            return false
        }
    }

    static func equal(_ lhs: NSExpression, _ rhs: NSExpression) -> Bool {
        if lhs === rhs { return true }
        switch (lhs.node, rhs.node) {
        case (.constant(let a), .constant(let b)):
            return constantsEqual(a, b)
        case (.constant(let a), .aggregate(let b)), (.aggregate(let b), .constant(let a)):
            // `%@` with an array prints as `{…}`, which parses back as an aggregate of constants.
            guard let elements = DynamicValue.unwrap(a).flatMap(DynamicValue.elements), elements.count == b.count
            else { return false }
            return zip(elements, b).allSatisfy { element, expression in
                if case .constant(let value) = expression.node { return constantsEqual(element, value) }
                return false
            }
        case (.evaluatedObject, .evaluatedObject), (.anyKey, .anyKey):
            return true
        case (.variable(let a), .variable(let b)):
            return a == b
        case (.indexSymbol(let a), .indexSymbol(let b)):
            return a == b
        case (.keyPath(let oa, let pa), .keyPath(let ob, let pb)):
            return pa == pb && optionalEqual(oa, ob)
        case (.function(let na, let oa, let aa), .function(let nb, let ob, let ab)):
            return na == nb && optionalEqual(oa, ob) && aa.count == ab.count && zip(aa, ab).allSatisfy { equal($0, $1) }
        case (.aggregate(let a), .aggregate(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { equal($0, $1) }
        case (.union(let la, let ra), .union(let lb, let rb)),
            (.intersect(let la, let ra), .intersect(let lb, let rb)),
            (.minus(let la, let ra), .minus(let lb, let rb)):
            return equal(la, lb) && equal(ra, rb)
        case (.subquery(let ca, let va, let pa), .subquery(let cb, let vb, let pb)):
            return va == vb && equal(ca, cb) && equal(pa, pb)
        case (.conditional(let pa, let ta, let fa), .conditional(let pb, let tb, let fb)):
            return equal(pa, pb) && equal(ta, tb) && equal(fa, fb)
        default:
            return false
        }
    }

    private static func optionalEqual(_ a: NSExpression?, _ b: NSExpression?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (let a?, let b?): return equal(a, b)
        default: return false
        }
    }

    private static func constantsEqual(_ a: Any?, _ b: Any?) -> Bool {
        let a = DynamicValue.unwrap(a)
        let b = DynamicValue.unwrap(b)
        if let da = a.flatMap(DynamicValue.date), let db = b.flatMap(DynamicValue.date) {
            // Printed dates keep microseconds.
            return da == db || abs(da.timeIntervalSinceReferenceDate - db.timeIntervalSinceReferenceDate) < 1e-6
        }
        return DynamicValue.equal(a, b)
    }

    static func hash(_ predicate: NSPredicate) -> Int {
        var hasher = Hasher()
        switch predicate {
        case let comparison as NSComparisonPredicate:
            hasher.combine(comparison.predicateOperatorType)
            hasher.combine(comparison.comparisonPredicateModifier)
            hasher.combine(hash(comparison.leftExpression))
        case let compound as NSCompoundPredicate:
            hasher.combine(compound.compoundPredicateType)
            for sub in compound.predicates { hasher.combine(hash(sub)) }
        case let constant as ConstantPredicate:
            hasher.combine(constant.value)
        default:
            hasher.combine(ObjectIdentifier(predicate))
        }
        return hasher.finalize()
    }

    /// Hashes structure and names only; constants are left out so values equal across types
    /// (`1` and `1.0`) hash alike.
    static func hash(_ expression: NSExpression) -> Int {
        var hasher = Hasher()
        hasher.combine(expression.expressionType)
        switch expression.node {
        case .variable(let name): hasher.combine(name)
        case .keyPath(_, let path): hasher.combine(path)
        case .function(let name, _, let arguments):
            hasher.combine(name)
            for argument in arguments { hasher.combine(hash(argument)) }
        default: break
        }
        return hasher.finalize()
    }
}
