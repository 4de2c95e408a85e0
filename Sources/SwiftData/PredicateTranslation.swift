import OpenCoreData

/// A `#Predicate` or `SortDescriptor` of a model class, translated into the predicate language
/// the stores answer (`NSPredicate`, `NSSortDescriptor`), so the SQLite store runs it as SQL — as
/// Apple's SwiftData hands its predicates to Core Data.
///
/// Translated: comparisons of numbers, dates, Booleans and strings; equality of any stored value
/// and of related models; `nil` tests of optionals; `&&`, `||`, `!`; the arithmetic `+`, `-`,
/// `*` of numbers; key paths across to-one relationships (`$0.author?.name`, through
/// `flatMap`/optional chaining) and a to-many's `count`; a string's `contains(_:)` and
/// `starts(with:)`; `contains(where:)` and `allSatisfy` over a to-many with one comparison inside;
/// `[values].contains($0.property)`; ranges (`(1...5).contains($0.n)`). A predicate with anything
/// else returns `nil`, and the fetch evaluates the whole predicate in memory instead: slower, with
/// Foundation's answers.
enum PredicateTranslation {
    /// The stores' predicate for `predicate`, or `nil` when part of it has no equivalent.
    static func predicate<T: PersistentModel>(_ predicate: Predicate<T>) -> OpenCoreData.NSPredicate? {
        let scope = TranslationScope(paths: [predicate.variable.key: ""])
        return (predicate.expression as? any PredicateNode)?.predicate(scope)
    }

    /// The stores' sort descriptors for `sortBy`, or `nil` when one of them sorts by something
    /// they do not order alike: numbers, dates and Booleans sort by value, strings compared
    /// lexically (Foundation's `.lexical`, and on Linux a `SortDescriptor` of a string without a
    /// comparator) by `compare:`; a localized comparator is left to memory.
    static func sortDescriptors<T: PersistentModel>(_ sortBy: [SortDescriptor<T>]) -> [OpenCoreData.NSSortDescriptor]? {
        let properties = ModelProperties.of(T.self)
        var descriptors: [OpenCoreData.NSSortDescriptor] = []
        for sort in sortBy {
            guard let keyPath = sort.keyPath, let name = properties.name(for: keyPath) else { return nil }
            let valueType = Swift.type(of: keyPath).valueType
            let ascending = sort.order == .forward
            if TranslationScope.isOrderedAlike(valueType) {
                descriptors.append(OpenCoreData.NSSortDescriptor(key: name, ascending: ascending))
            } else if TranslationScope.isString(valueType), Self.isLexical(sort.stringComparator) {
                descriptors.append(
                    OpenCoreData.NSSortDescriptor(key: name, ascending: ascending, selector: Selector("compare:")))
            } else {
                return nil
            }
        }
        return descriptors
    }

    /// Whether `comparator` compares strings as `compare:` does: no comparator (a string's `<`)
    /// or Foundation's `.lexical`, in either order.
    private static func isLexical(_ comparator: String.StandardComparator?) -> Bool {
        guard var comparator else { return true }
        comparator.order = .forward
        return comparator == .lexical
    }
}

/// What the variables of a predicate stand for while it is translated: the key path from the
/// fetched model to each (empty for the model itself; a relationship's for the variable of a
/// `flatMap`, `contains(where:)` or `allSatisfy` over it).
struct TranslationScope {
    let paths: [PredicateExpressions.VariableID: String]

    /// The scope with `variable` standing for the values at `path`.
    func binding(_ variable: PredicateExpressions.VariableID, to path: String) -> TranslationScope {
        var paths = self.paths
        paths[variable] = path
        return TranslationScope(paths: paths)
    }

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

    /// Whether `type` is `String` or `String?`.
    static func isString(_ type: Any.Type) -> Bool {
        ((type as? any OptionalValue.Type)?.wrappedType ?? type) == String.self
    }
}

/// A node of a Foundation predicate tree that has an equivalent in the stores' predicate language.
protocol PredicateNode {
    /// The node as a value; `nil` when it has no equivalent.
    func expression(_ scope: TranslationScope) -> OpenCoreData.NSExpression?
    /// The node as a condition; `nil` when it has no equivalent.
    func predicate(_ scope: TranslationScope) -> OpenCoreData.NSPredicate?
    /// The Swift type of the node's value, for the comparisons that need values ordered alike.
    var valueType: Any.Type { get }
}

extension PredicateNode {
    func expression(_ scope: TranslationScope) -> OpenCoreData.NSExpression? { nil }
    func predicate(_ scope: TranslationScope) -> OpenCoreData.NSPredicate? { nil }
}

/// A node that names values by a key path from the fetched model: a variable, a key path, an
/// optional chain.
protocol PathNode {
    /// The key path (empty for the fetched model itself); `nil` when the node is not one.
    func path(_ scope: TranslationScope) -> String?
}

extension PredicateExpressions.Variable: PathNode {
    func path(_ scope: TranslationScope) -> String? { scope.paths[key] }
}

extension PredicateExpressions.KeyPath: PathNode, PredicateNode {
    var valueType: Any.Type { Output.self }

    /// The root's path and one more key: a persisted property of a model, or `count` of a
    /// to-many (`@count`).
    func path(_ scope: TranslationScope) -> String? {
        guard let base = (root as? any PathNode)?.path(scope) else { return nil }
        let key: String
        if let model = Root.Output.self as? any PersistentModel.Type,
            let name = ModelProperties.of(model).name(for: keyPath)
        {
            key = name
        } else if let collection = Root.Output.self as? any ToManyValue.Type, keyPath == collection.countKeyPath {
            key = "@count"
        } else if let name = CompositeEncoding.elementName(of: keyPath, in: Root.Output.self), !base.isEmpty {
            // A property of a struct stored as a composite: the element's namespaced key path.
            key = name
        } else {
            return nil
        }
        return base.isEmpty ? key : base + "." + key
    }

    func expression(_ scope: TranslationScope) -> OpenCoreData.NSExpression? {
        guard let path = path(scope), !path.isEmpty else { return nil }
        return OpenCoreData.NSExpression(forKeyPath: path)
    }

    /// A Boolean property used as a condition (`$0.isBooked`).
    func predicate(_ scope: TranslationScope) -> OpenCoreData.NSPredicate? {
        guard Output.self == Bool.self, let key = expression(scope) else { return nil }
        return OpenCoreData.NSComparisonPredicate(
            leftExpression: key, rightExpression: OpenCoreData.NSExpression(forConstantValue: true), modifier: .direct,
            type: .equalTo)
    }
}

extension PredicateExpressions.OptionalFlatMap: PathNode, PredicateNode {
    var valueType: Any.Type { Output.self }

    /// An optional chain through a to-one (`$0.author?.name`): the wrapped path, then the
    /// transform's with its variable standing for the wrapped value. A missing to-one reads as
    /// `nil` at the end of a key path in the stores, as the chain does in Swift.
    func path(_ scope: TranslationScope) -> String? {
        guard let base = (wrapped as? any PathNode)?.path(scope), !base.isEmpty else { return nil }
        return (transform as? any PathNode)?.path(scope.binding(variable.key, to: base))
    }

    func expression(_ scope: TranslationScope) -> OpenCoreData.NSExpression? {
        guard let path = path(scope), !path.isEmpty else { return nil }
        return OpenCoreData.NSExpression(forKeyPath: path)
    }
}

extension PredicateExpressions.Value: PredicateNode {
    var valueType: Any.Type { Output.self }

    /// The value as a constant; a model as its Core Data object (a model in no context has none
    /// in the store, so the comparison is left to memory).
    func expression(_ scope: TranslationScope) -> OpenCoreData.NSExpression? {
        let value = DynamicValue.unwrap(value)
        if let model = value as? any PersistentModel {
            guard let object = model.attachedObject else { return nil }
            return OpenCoreData.NSExpression(forConstantValue: object)
        }
        return OpenCoreData.NSExpression(forConstantValue: StoredValue.storable(value))
    }

    func predicate(_ scope: TranslationScope) -> OpenCoreData.NSPredicate? {
        (value as? Bool).map { OpenCoreData.NSPredicate(value: $0) }
    }
}

extension PredicateExpressions.NilLiteral: PredicateNode {
    var valueType: Any.Type { Output.self }

    func expression(_ scope: TranslationScope) -> OpenCoreData.NSExpression? {
        OpenCoreData.NSExpression(forConstantValue: nil)
    }
}

/// Both sides as expressions, when each has an equivalent.
private func sides(_ lhs: Any, _ rhs: Any, _ scope: TranslationScope) -> (
    OpenCoreData.NSExpression, OpenCoreData.NSExpression, Any.Type
)? {
    guard let left = lhs as? any PredicateNode, let right = rhs as? any PredicateNode,
        let lhsExpression = left.expression(scope), let rhsExpression = right.expression(scope)
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

    func predicate(_ scope: TranslationScope) -> OpenCoreData.NSPredicate? {
        sides(lhs, rhs, scope).map { compare($0.0, .equalTo, $0.1) }
    }
}

extension PredicateExpressions.NotEqual: PredicateNode {
    var valueType: Any.Type { Bool.self }

    func predicate(_ scope: TranslationScope) -> OpenCoreData.NSPredicate? {
        sides(lhs, rhs, scope).map { compare($0.0, .notEqualTo, $0.1) }
    }
}

extension PredicateExpressions.Comparison: PredicateNode {
    var valueType: Any.Type { Bool.self }

    func predicate(_ scope: TranslationScope) -> OpenCoreData.NSPredicate? {
        guard let parts = sides(lhs, rhs, scope),
            TranslationScope.isOrderedAlike(parts.2) || TranslationScope.isString(parts.2)
        else { return nil }
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
    _ lhs: Any, _ rhs: Any, _ type: OpenCoreData.NSCompoundPredicate.LogicalType, _ scope: TranslationScope
) -> OpenCoreData.NSPredicate? {
    guard let left = (lhs as? any PredicateNode)?.predicate(scope),
        let right = (rhs as? any PredicateNode)?.predicate(scope)
    else { return nil }
    return OpenCoreData.NSCompoundPredicate(type: type, subpredicates: [left, right])
}

extension PredicateExpressions.Conjunction: PredicateNode {
    var valueType: Any.Type { Bool.self }

    func predicate(_ scope: TranslationScope) -> OpenCoreData.NSPredicate? { compound(lhs, rhs, .and, scope) }
}

extension PredicateExpressions.Disjunction: PredicateNode {
    var valueType: Any.Type { Bool.self }

    func predicate(_ scope: TranslationScope) -> OpenCoreData.NSPredicate? { compound(lhs, rhs, .or, scope) }
}

extension PredicateExpressions.Negation: PredicateNode {
    var valueType: Any.Type { Bool.self }

    func predicate(_ scope: TranslationScope) -> OpenCoreData.NSPredicate? {
        (wrapped as? any PredicateNode)?.predicate(scope).map {
            OpenCoreData.NSCompoundPredicate(notPredicateWithSubpredicate: $0)
        }
    }
}

extension PredicateExpressions.Arithmetic: PredicateNode {
    var valueType: Any.Type { LHS.Output.self }

    func expression(_ scope: TranslationScope) -> OpenCoreData.NSExpression? {
        guard let parts = sides(lhs, rhs, scope), TranslationScope.isOrderedAlike(parts.2), parts.2 != Bool.self else {
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

/// A string operator of the stores between a string key path and a string (exact: no case or
/// diacritic folding, as Swift's own `contains` and `starts(with:)`).
private func stringMatch(
    _ base: Any, _ other: Any, _ type: OpenCoreData.NSComparisonPredicate.Operator, _ scope: TranslationScope
) -> OpenCoreData.NSPredicate? {
    guard let parts = sides(base, other, scope), TranslationScope.isString(parts.2) else { return nil }
    return compare(parts.0, type, parts.1)
}

extension PredicateExpressions.CollectionContainsCollection: PredicateNode {
    var valueType: Any.Type { Bool.self }

    /// `$0.name.contains("x")`.
    func predicate(_ scope: TranslationScope) -> OpenCoreData.NSPredicate? {
        stringMatch(base, other, .contains, scope)
    }
}

extension PredicateExpressions.SequenceStartsWith: PredicateNode {
    var valueType: Any.Type { Bool.self }

    /// `$0.name.starts(with: "x")`.
    func predicate(_ scope: TranslationScope) -> OpenCoreData.NSPredicate? {
        stringMatch(base, prefix, .beginsWith, scope)
    }
}

extension PredicateExpressions.SequenceContains: PredicateNode {
    var valueType: Any.Type { Bool.self }

    /// `["a", "b"].contains($0.name)`: the property `IN` the constant values.
    func predicate(_ scope: TranslationScope) -> OpenCoreData.NSPredicate? {
        guard let values = sequence as? any ConstantNode, let element = (element as? any PredicateNode),
            let key = element.expression(scope), key.expressionType == .keyPath
        else { return nil }
        return compare(key, .in, OpenCoreData.NSExpression(forConstantValue: values.constant.map(DynamicValue.unwrap)))
    }
}

/// A constant sequence of values.
protocol ConstantNode {
    var constant: [Any] { get }
}

extension PredicateExpressions.Value: ConstantNode where Output: Sequence {
    var constant: [Any] { value.map { $0 as Any } }
}

/// `contains(where:)` or `allSatisfy` over a to-many with one comparison of the element with a
/// constant inside: the comparison with the `ANY` or `ALL` modifier.
private func quantified(
    _ sequence: Any, _ variable: PredicateExpressions.VariableID, _ test: Any,
    _ modifier: OpenCoreData.NSComparisonPredicate.Modifier, _ scope: TranslationScope
) -> OpenCoreData.NSPredicate? {
    guard let collection = sequence as? any PathNode, let path = collection.path(scope), !path.isEmpty,
        (sequence as? any PredicateNode)?.valueType is any ToManyValue.Type,
        let comparison = (test as? any PredicateNode)?.predicate(scope.binding(variable, to: path))
            as? OpenCoreData.NSComparisonPredicate,
        comparison.comparisonPredicateModifier == .direct,
        comparison.leftExpression.expressionType == .keyPath, comparison.leftExpression.keyPath.hasPrefix(path + "."),
        comparison.rightExpression.expressionType == .constantValue
    else { return nil }
    return OpenCoreData.NSComparisonPredicate(
        leftExpression: comparison.leftExpression, rightExpression: comparison.rightExpression, modifier: modifier,
        type: comparison.predicateOperatorType, options: comparison.options)
}

extension PredicateExpressions.SequenceContainsWhere: PredicateNode {
    var valueType: Any.Type { Bool.self }

    /// `$0.books.contains { $0.pages > 300 }`: `ANY books.pages > 300`.
    func predicate(_ scope: TranslationScope) -> OpenCoreData.NSPredicate? {
        quantified(sequence, variable.key, test, .any, scope)
    }
}

extension PredicateExpressions.SequenceAllSatisfy: PredicateNode {
    var valueType: Any.Type { Bool.self }

    /// `$0.books.allSatisfy { $0.pages > 300 }`: `ALL books.pages > 300` (true of no books, as
    /// `allSatisfy` is).
    func predicate(_ scope: TranslationScope) -> OpenCoreData.NSPredicate? {
        quantified(sequence, variable.key, test, .all, scope)
    }
}

/// The bounds of a range expression, and whether the upper one is in the range.
protocol RangeNode {
    var bounds: (lower: Any, upper: Any, closed: Bool) { get }
}

extension PredicateExpressions.ClosedRange: RangeNode {
    var bounds: (lower: Any, upper: Any, closed: Bool) { (lower, upper, true) }
}

extension PredicateExpressions.Range: RangeNode {
    var bounds: (lower: Any, upper: Any, closed: Bool) { (lower, upper, false) }
}

extension PredicateExpressions.RangeExpressionContains: PredicateNode {
    var valueType: Any.Type { Bool.self }

    /// `(1...5).contains($0.n)`: `n >= 1 AND n <= 5` (`< 5` for `1..<5`), for values ordered alike.
    func predicate(_ scope: TranslationScope) -> OpenCoreData.NSPredicate? {
        guard let bounds = (range as? any RangeNode)?.bounds, let low = sides(element, bounds.lower, scope),
            let high = sides(element, bounds.upper, scope),
            TranslationScope.isOrderedAlike(low.2) || TranslationScope.isString(low.2)
        else { return nil }
        return OpenCoreData.NSCompoundPredicate(
            type: .and,
            subpredicates: [
                compare(low.0, .greaterThanOrEqualTo, low.1),
                compare(high.0, bounds.closed ? .lessThanOrEqualTo : .lessThan, high.1),
            ])
    }
}
