import OpenCoreData

/// A `#Predicate` or `SortDescriptor` of a model class, translated into the predicate language
/// the stores answer (`NSPredicate`, `NSSortDescriptor`), so the SQLite store runs it as SQL.
///
/// Only what has the same answer in both is translated: comparisons of numbers, dates and
/// Booleans, equality of any stored value (strings compared exactly, as Swift's `==` does),
/// `nil` tests of optionals, `&&`, `||`, `!`, and the arithmetic `+`, `-`, `*` of numbers. A
/// predicate with anything else — string ordering, `contains`, a method call — returns `nil`, and
/// the fetch evaluates the whole predicate in memory instead: slower, never a different answer.
enum PredicateTranslation {
    /// The stores' predicate for `predicate`, or `nil` when part of it has no equivalent.
    static func predicate<T: PersistentModel>(_ predicate: Predicate<T>) -> OpenCoreData.NSPredicate? {
        let names = KeyNames(properties: ModelProperties.of(T.self))
        return (predicate.expression as? any PredicateNode)?.predicate(names)
    }

    /// The stores' sort descriptors for `sortBy`, or `nil` when one of them sorts by something
    /// other than a stored number, date or Boolean (strings sort by Foundation's comparators,
    /// which the stores do not share).
    static func sortDescriptors<T: PersistentModel>(_ sortBy: [SortDescriptor<T>]) -> [OpenCoreData.NSSortDescriptor]? {
        let properties = ModelProperties.of(T.self)
        var descriptors: [OpenCoreData.NSSortDescriptor] = []
        for sort in sortBy {
            guard let keyPath = sort.keyPath, let name = properties.name(for: keyPath),
                KeyNames.isOrderedAlike(Swift.type(of: keyPath).valueType)
            else { return nil }
            descriptors.append(OpenCoreData.NSSortDescriptor(key: name, ascending: sort.order == .forward))
        }
        return descriptors
    }
}

/// The attribute names of a model class's key paths.
struct KeyNames {
    let properties: ModelProperties

    func name(_ keyPath: AnyKeyPath) -> String? { properties.name(for: keyPath) }

    /// Whether values of `type` order the same in Swift and in the stores: numbers, dates and
    /// Booleans (and their optionals, `nil` first in both).
    static func isOrderedAlike(_ type: Any.Type) -> Bool {
        let type = (type as? any OptionalValue.Type)?.wrappedType ?? type
        switch type {
        case is Int.Type, is Int64.Type, is Int32.Type, is Int16.Type, is Int8.Type, is UInt8.Type, is UInt16.Type,
            is UInt32.Type, is Double.Type, is Float.Type, is Date.Type, is Bool.Type:
            return true
        default:
            return false
        }
    }
}

/// A node of a Foundation predicate tree that has an equivalent in the stores' predicate language.
protocol PredicateNode {
    /// The node as a value; `nil` when it has no equivalent.
    func expression(_ names: KeyNames) -> OpenCoreData.NSExpression?
    /// The node as a condition; `nil` when it has no equivalent.
    func predicate(_ names: KeyNames) -> OpenCoreData.NSPredicate?
    /// The Swift type of the node's value, for the comparisons that need values ordered alike.
    var valueType: Any.Type { get }
}

extension PredicateNode {
    func expression(_ names: KeyNames) -> OpenCoreData.NSExpression? { nil }
    func predicate(_ names: KeyNames) -> OpenCoreData.NSPredicate? { nil }
}

/// The variable of a predicate: the model being tested.
protocol PredicateVariable {}
extension PredicateExpressions.Variable: PredicateVariable {}

extension PredicateExpressions.KeyPath: PredicateNode {
    var valueType: Any.Type { Output.self }

    func expression(_ names: KeyNames) -> OpenCoreData.NSExpression? {
        guard root is any PredicateVariable, let name = names.name(keyPath) else { return nil }
        return OpenCoreData.NSExpression(forKeyPath: name)
    }

    /// A Boolean property used as a condition (`$0.isBooked`).
    func predicate(_ names: KeyNames) -> OpenCoreData.NSPredicate? {
        guard Output.self == Bool.self, let key = expression(names) else { return nil }
        return OpenCoreData.NSComparisonPredicate(
            leftExpression: key, rightExpression: OpenCoreData.NSExpression(forConstantValue: true), modifier: .direct,
            type: .equalTo)
    }
}

extension PredicateExpressions.Value: PredicateNode {
    var valueType: Any.Type { Output.self }

    func expression(_ names: KeyNames) -> OpenCoreData.NSExpression? {
        OpenCoreData.NSExpression(forConstantValue: DynamicValue.unwrap(value))
    }

    func predicate(_ names: KeyNames) -> OpenCoreData.NSPredicate? {
        (value as? Bool).map { OpenCoreData.NSPredicate(value: $0) }
    }
}

extension PredicateExpressions.NilLiteral: PredicateNode {
    var valueType: Any.Type { Output.self }

    func expression(_ names: KeyNames) -> OpenCoreData.NSExpression? {
        OpenCoreData.NSExpression(forConstantValue: nil)
    }
}

/// Both sides as expressions, when each has an equivalent.
private func sides(_ lhs: Any, _ rhs: Any, _ names: KeyNames) -> (
    OpenCoreData.NSExpression, OpenCoreData.NSExpression, Any.Type
)? {
    guard let left = lhs as? any PredicateNode, let right = rhs as? any PredicateNode,
        let lhsExpression = left.expression(names), let rhsExpression = right.expression(names)
    else { return nil }
    return (lhsExpression, rhsExpression, left.valueType)
}

private func compare(
    _ lhs: OpenCoreData.NSExpression, _ type: OpenCoreData.NSComparisonPredicate.Operator,
    _ rhs: OpenCoreData.NSExpression
) -> OpenCoreData.NSPredicate {
    OpenCoreData.NSComparisonPredicate(leftExpression: lhs, rightExpression: rhs, modifier: .direct, type: type)
}

extension PredicateExpressions.Equal: PredicateNode {
    var valueType: Any.Type { Bool.self }

    func predicate(_ names: KeyNames) -> OpenCoreData.NSPredicate? {
        sides(lhs, rhs, names).map { compare($0.0, .equalTo, $0.1) }
    }
}

extension PredicateExpressions.NotEqual: PredicateNode {
    var valueType: Any.Type { Bool.self }

    func predicate(_ names: KeyNames) -> OpenCoreData.NSPredicate? {
        sides(lhs, rhs, names).map { compare($0.0, .notEqualTo, $0.1) }
    }
}

extension PredicateExpressions.Comparison: PredicateNode {
    var valueType: Any.Type { Bool.self }

    func predicate(_ names: KeyNames) -> OpenCoreData.NSPredicate? {
        guard let parts = sides(lhs, rhs, names), KeyNames.isOrderedAlike(parts.2) else { return nil }
        let operatorType: OpenCoreData.NSComparisonPredicate.Operator =
            switch op {
            case .lessThan: .lessThan
            case .lessThanOrEqual: .lessThanOrEqualTo
            case .greaterThan: .greaterThan
            case .greaterThanOrEqual: .greaterThanOrEqualTo
            }
        return compare(parts.0, operatorType, parts.1)
    }
}

/// Both sides as conditions, joined as `type` says, when each has an equivalent.
private func compound(
    _ lhs: Any, _ rhs: Any, _ type: OpenCoreData.NSCompoundPredicate.LogicalType, _ names: KeyNames
) -> OpenCoreData.NSPredicate? {
    guard let left = (lhs as? any PredicateNode)?.predicate(names),
        let right = (rhs as? any PredicateNode)?.predicate(names)
    else { return nil }
    return OpenCoreData.NSCompoundPredicate(type: type, subpredicates: [left, right])
}

extension PredicateExpressions.Conjunction: PredicateNode {
    var valueType: Any.Type { Bool.self }

    func predicate(_ names: KeyNames) -> OpenCoreData.NSPredicate? { compound(lhs, rhs, .and, names) }
}

extension PredicateExpressions.Disjunction: PredicateNode {
    var valueType: Any.Type { Bool.self }

    func predicate(_ names: KeyNames) -> OpenCoreData.NSPredicate? { compound(lhs, rhs, .or, names) }
}

extension PredicateExpressions.Negation: PredicateNode {
    var valueType: Any.Type { Bool.self }

    func predicate(_ names: KeyNames) -> OpenCoreData.NSPredicate? {
        (wrapped as? any PredicateNode)?.predicate(names).map {
            OpenCoreData.NSCompoundPredicate(notPredicateWithSubpredicate: $0)
        }
    }
}

extension PredicateExpressions.Arithmetic: PredicateNode {
    var valueType: Any.Type { LHS.Output.self }

    func expression(_ names: KeyNames) -> OpenCoreData.NSExpression? {
        guard let parts = sides(lhs, rhs, names), KeyNames.isOrderedAlike(parts.2), parts.2 != Bool.self else {
            return nil
        }
        let function =
            switch op {
            case .add: "add:to:"
            case .subtract: "from:subtract:"
            case .multiply: "multiply:by:"
            }
        return OpenCoreData.NSExpression(forFunction: function, arguments: [parts.0, parts.1])
    }
}
