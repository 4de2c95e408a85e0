/// Builds the dictionaries of a `.dictionaryResultType` fetch from matching objects, in memory:
/// `propertiesToFetch`, expression descriptions (aggregate functions over each group),
/// `propertiesToGroupBy`, `havingPredicate` and `returnsDistinctResults`.
///
/// Related documentation: NSFetchRequest reference, `propertiesToFetch`, `propertiesToGroupBy`,
/// `havingPredicate`, `returnsDistinctResults`; NSExpressionDescription reference.
package enum DictionaryResults {
    /// Whether a result row passes the `havingPredicate`. The predicate may name a column by key
    /// (`count > 1`) or, as Apple allows, as a variable (`$count > 1`): the row's columns are its
    /// substitution variables.
    package static func passesHaving(_ having: NSPredicate, _ row: [String: Any]) -> Bool {
        having.evaluate(with: row, substitutionVariables: row)
    }

    private static let aggregateFunctions: Set<String> = [
        "sum:", "count:", "min:", "max:", "average:", "median:", "mode:", "stddev:",
    ]

    /// One column of the result.
    private struct Column {
        let name: String
        let keyPath: String?
        let expression: NSExpression?
        let isAggregate: Bool
        let isRelationship: Bool
    }

    static func build(
        from objects: [any KeyValueCoding], request: NSFetchRequest<NSFetchRequestResult>, entity: NSEntityDescription
    ) -> [NSDictionary] {
        let columns = self.columns(request.propertiesToFetch, entity: entity)
        let groupKeys = self.columns(request.propertiesToGroupBy ?? [], entity: entity)
        let grouped = !groupKeys.isEmpty || columns.contains(where: \.isAggregate)
        var rows: [[String: Any]]
        if grouped {
            var order: [[AnyHashable]] = []
            var groups: [[AnyHashable]: [any KeyValueCoding]] = [:]
            for object in objects {
                let key = groupKeys.map { hashable(value(of: $0, in: object)) }
                if groups[key] == nil { order.append(key) }
                groups[key, default: []].append(object)
            }
            if groupKeys.isEmpty, order.isEmpty { order = [[]] }
            rows = order.map { key in row(columns, members: groups[key] ?? []) }
            if let having = request.havingPredicate {
                rows = rows.filter { passesHaving(having, $0) }
            }
        } else {
            rows = objects.map { row(columns, members: [$0]) }
        }
        if request.returnsDistinctResults {
            var seen: [[String: Any]] = []
            rows = rows.filter { candidate in
                if seen.contains(where: { sameRow($0, candidate) }) { return false }
                seen.append(candidate)
                return true
            }
        }
        return rows.map { NSDictionary(dictionary: $0) }
    }

    private static func columns(_ properties: [Any]?, entity: NSEntityDescription) -> [Column] {
        guard let properties else {
            return entity.properties.compactMap { property in
                guard let attribute = property as? NSAttributeDescription, !attribute.isTransient else { return nil }
                return Column(
                    name: attribute.name, keyPath: attribute.name, expression: nil, isAggregate: false,
                    isRelationship: false)
            }
        }
        return properties.map { property in
            switch property {
            case let description as NSExpressionDescription:
                let expression = description.expression
                let isAggregate =
                    expression?.expressionType == .function
                    && aggregateFunctions.contains(expression?.function ?? "")
                return Column(
                    name: description.name, keyPath: nil, expression: expression, isAggregate: isAggregate,
                    isRelationship: false)
            case let description as NSPropertyDescription:
                return Column(
                    name: description.name, keyPath: description.name, expression: nil, isAggregate: false,
                    isRelationship: description is NSRelationshipDescription)
            default:
                let name = "\(property)"
                let isRelationship = entity.relationshipsByName[name] != nil
                return Column(
                    name: name, keyPath: name, expression: nil, isAggregate: false, isRelationship: isRelationship)
            }
        }
    }

    private static func row(_ columns: [Column], members: [any KeyValueCoding]) -> [String: Any] {
        var row: [String: Any] = [:]
        for column in columns {
            let value: Any?
            if column.isAggregate, let expression = column.expression {
                let argument = expression.arguments?.first
                let values = members.compactMap {
                    DynamicValue.unwrap(argument?.expressionValue(with: $0, context: nil))
                }
                let function = NSExpression(
                    forFunction: expression.function, arguments: [NSExpression(forConstantValue: values)])
                value = function.expressionValue(with: nil, context: nil)
            } else if let first = members.first {
                value = self.value(of: column, in: first)
            } else {
                value = nil
            }
            // Apple leaves a key out of the dictionary when its value is nil.
            if let value = DynamicValue.unwrap(value) { row[column.name] = value }
        }
        return row
    }

    private static func value(of column: Column, in object: any KeyValueCoding) -> Any? {
        let value: Any?
        if let expression = column.expression {
            value = expression.expressionValue(with: object, context: nil)
        } else if let keyPath = column.keyPath {
            value = object.value(forKeyPath: keyPath)
        } else {
            return nil
        }
        // Relationships come back as object IDs in dictionary results.
        if let object = value as? IdentityKeyed, !(value is NSManagedObjectID) {
            return object.identityKey.base
        }
        return value
    }

    private static func hashable(_ value: Any?) -> AnyHashable {
        // Not NSNull: on Linux every NSNull() is a distinct object, so nil keys would never group.
        guard let value = DynamicValue.unwrap(value) else { return AnyHashable(NilKey()) }
        if let number = DynamicValue.number(value) { return AnyHashable(number.doubleValue) }
        return (value as? AnyHashable) ?? AnyHashable("\(value)")
    }

    /// The group key of a nil value.
    private struct NilKey: Hashable {}

    private static func sameRow(_ a: [String: Any], _ b: [String: Any]) -> Bool {
        a.count == b.count && a.allSatisfy { key, value in DynamicValue.equal(value, b[key]) }
    }
}
