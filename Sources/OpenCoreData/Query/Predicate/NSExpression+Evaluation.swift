/// The state of one evaluation: the `$VARIABLE` bindings (which `SUBQUERY` extends while it
/// iterates) and the caller's context dictionary, handed to block expressions.
final class PredicateEvaluation {
    var variables: [String: Any]
    let context: NSMutableDictionary?

    init(variables: [String: Any], context: NSMutableDictionary?) {
        self.variables = variables
        self.context = context
    }
}

extension NSExpression {
    func evaluate(_ object: Any?, _ evaluation: PredicateEvaluation) -> Any? {
        switch node {
        case .constant(let value):
            return value
        case .evaluatedObject:
            return object
        case .variable(let name):
            return evaluation.variables[name]
        case .keyPath(let operand, let path):
            let base = operand.map { $0.evaluate(object, evaluation) } ?? object
            if path.components.count == 1, path.components[0].unicodeScalars.first != "@" {
                return KeyValueCodingAccess.value(of: base, forKey: path.components[0])
            }
            return KeyValueCodingAccess.value(of: base, keyPath: path)
        case .function(let name, let operand, let arguments):
            let values = arguments.map { $0.evaluate(object, evaluation) }
            if let operand {
                let receiver = DynamicValue.unwrap(operand.evaluate(object, evaluation))
                if let target = receiver as? any PredicateFunctionReceiver {
                    return target.predicateFunction(name, arguments: values)
                }
                // Every object answers key-value coding's two messages (mapping models call them).
                if values.count == 1, let key = values[0] as? String {
                    if name == "valueForKey:" { return KeyValueCodingAccess.value(of: receiver, forKey: key) }
                    if name == "valueForKeyPath:" {
                        return KeyValueCodingAccess.value(of: receiver, keyPath: KeyPathComponents(key))
                    }
                }
                return nil
            }
            if name == "FETCH", values.count == 3 { return Self.fetch(values) }
            return PredicateFunctions.call(name, values)
        case .aggregate(let elements):
            if let constantAggregate { return constantAggregate }
            return elements.map { $0.evaluate(object, evaluation) ?? NSNull() }
        case .union(let left, let right):
            return setOperation(left, right, object, evaluation) { lhs, rhs in
                KeyValueCodingAccess.distinct(lhs + rhs)
            }
        case .intersect(let left, let right):
            return setOperation(left, right, object, evaluation) { lhs, rhs in
                KeyValueCodingAccess.distinct(lhs.filter { l in rhs.contains { DynamicValue.equal(l, $0) } })
            }
        case .minus(let left, let right):
            return setOperation(left, right, object, evaluation) { lhs, rhs in
                KeyValueCodingAccess.distinct(lhs.filter { l in !rhs.contains { DynamicValue.equal(l, $0) } })
            }
        case .subquery(let collection, let variable, let predicate):
            guard let value = DynamicValue.unwrap(collection.evaluate(object, evaluation)),
                let elements = DynamicValue.elements(value)
            else { return [Any]() }
            let saved = evaluation.variables[variable]
            defer { evaluation.variables[variable] = saved }
            return elements.filter { element in
                evaluation.variables[variable] = element
                return predicate.evaluate(element, evaluation)
            }
        case .conditional(let predicate, let whenTrue, let whenFalse):
            return predicate.evaluate(object, evaluation)
                ? whenTrue.evaluate(object, evaluation) : whenFalse.evaluate(object, evaluation)
        case .block(let block, let arguments):
            let values = (arguments ?? []).map { $0.evaluate(object, evaluation) ?? NSNull() }
            return block(object, values, evaluation.context)
        case .anyKey:
            return nil
        case .indexSymbol(let symbol):
            return PredicateFunctions.IndexSymbol(rawValue: symbol)
        }
    }

    private func setOperation(
        _ left: NSExpression, _ right: NSExpression, _ object: Any?, _ evaluation: PredicateEvaluation,
        _ combine: ([Any], [Any]) -> [Any]
    ) -> Any? {
        let lhs = DynamicValue.unwrap(left.evaluate(object, evaluation)).flatMap(DynamicValue.elements) ?? []
        let rhs = DynamicValue.unwrap(right.evaluate(object, evaluation)).flatMap(DynamicValue.elements) ?? []
        return combine(lhs, rhs)
    }

    /// A copy with the named variables replaced by constants. A subquery's own iterator variable
    /// is bound by the subquery and is never substituted inside it.
    func substituting(_ variables: [String: Any]) -> NSExpression {
        switch node {
        case .constant, .evaluatedObject, .anyKey, .indexSymbol:
            return self
        case .variable(let name):
            guard let value = variables[name] else { return self }
            return .given(value)
        case .keyPath(let operand, let path):
            return NSExpression(node: .keyPath(operand: operand?.substituting(variables), path: path))
        case .function(let name, let operand, let arguments):
            return NSExpression(
                node: .function(
                    name: name, operand: operand?.substituting(variables),
                    arguments: arguments.map { $0.substituting(variables) }))
        case .aggregate(let elements):
            return NSExpression(node: .aggregate(elements.map { $0.substituting(variables) }))
        case .union(let l, let r):
            return NSExpression(node: .union(l.substituting(variables), r.substituting(variables)))
        case .intersect(let l, let r):
            return NSExpression(node: .intersect(l.substituting(variables), r.substituting(variables)))
        case .minus(let l, let r):
            return NSExpression(node: .minus(l.substituting(variables), r.substituting(variables)))
        case .subquery(let collection, let variable, let predicate):
            var inner = variables
            inner[variable] = nil
            return NSExpression(
                node: .subquery(
                    collection: collection.substituting(variables), variable: variable,
                    predicate: predicate.substituting(inner)))
        case .conditional(let predicate, let t, let f):
            return NSExpression(
                node: .conditional(
                    predicate.substituting(variables), t.substituting(variables), f.substituting(variables)))
        case .block(let block, let arguments):
            return NSExpression(node: .block(block, arguments?.map { $0.substituting(variables) }))
        }
    }
}

extension NSExpression {
    /// `FETCH(request, context, countOnly)`: the objects `request` fetches in `context`, or their
    /// count; `nil` when the request or the context is not one, or the fetch fails.
    fileprivate static func fetch(_ values: [Any?]) -> Any? {
        guard let request = DynamicValue.unwrap(values[0]) as? NSFetchRequest<NSFetchRequestResult>,
            let context = DynamicValue.unwrap(values[1]) as? NSManagedObjectContext
        else { return nil }
        let flag = DynamicValue.unwrap(values[2])
        let countOnly = (flag as? Bool) ?? (flag.flatMap(DynamicValue.number).map { $0.doubleValue != 0 } ?? false)
        if countOnly { return (try? context.count(for: request)).map { NSNumber(value: $0) } }
        return try? context.fetch(request)
    }
}
