import OpenCoreData

extension SQLQuery {
    /// A `.dictionaryResultType` fetch as one SQL statement: `propertiesToFetch` as the select
    /// list (attributes, to-one relationships as object IDs, key paths across to-ones, `@count`
    /// and `@sum` over to-manys), `sum:`/`count:`/`min:`/`max:`/`average:` expression
    /// descriptions as SQL aggregates, `propertiesToGroupBy` as `GROUP BY`,
    /// `returnsDistinctResults` as a grouping by every column, and the sort and window.
    ///
    /// Groups and distinct rows come in the order of their first row, as the in-memory path
    /// (``DictionaryResults``) gives them. The `havingPredicate` and sort descriptors that name
    /// result columns but do not translate (string order follows Foundation's `compare:`, not
    /// the database's bytes) run on the rows SQL returns. Anything else — other functions, strings in
    /// `min:`/`max:`, decimals, externally stored data, to-many values, columns outside the
    /// grouping — leaves the plan `nil`, and the fetch runs in memory.
    ///
    /// Related documentation: NSFetchRequest reference (`propertiesToFetch`,
    /// `propertiesToGroupBy`, `havingPredicate`, `returnsDistinctResults`); NSExpressionDescription.
    package struct DictionaryPlan {
        /// How a result column is read from the statement.
        package enum Reader {
            /// One column holding an attribute of this type.
            case value(NSAttributeType, NSAttributeDescription?)
            /// A primary key, followed by its entity number when `hasEntityColumn`.
            case object(hasEntityColumn: Bool, destination: NSEntityDescription)
        }

        /// One key of the result dictionaries.
        package struct Column {
            package let name: String
            package let reader: Reader
        }

        package private(set) var columns: [Column] = []
        /// The statement, complete once the plan is made.
        package private(set) var statement = Statement(sql: "", parameters: [])
        /// Descriptors applied to the result rows (by column name) after the statement.
        package private(set) var sortInMemory: [NSSortDescriptor] = []
        /// Whether the `havingPredicate` filters the rows (the request is grouped).
        package private(set) var filtersByHaving = false
        package private(set) var windowInSQL = true

        private var select: [SQLExpression] = []
        /// Each grouping key: one column, or a key and an entity number.
        private var groupBy: [[SQLExpression]] = []

        private static let numericTypes: Set<NSAttributeType> = [
            .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .doubleAttributeType,
            .floatAttributeType, .booleanAttributeType,
        ]
        private static let integerTypes: Set<NSAttributeType> = [
            .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .booleanAttributeType,
        ]

        init?(
            builder: inout Builder, request: NSFetchRequest<NSFetchRequestResult>, sortTerms: [SQLSelect.Order]?,
            base: SQLSelect
        ) {
            let entity = builder.root.entity
            let properties: [Any] =
                request.propertiesToFetch
                ?? entity.properties.filter { ($0 as? NSAttributeDescription).map { !$0.isTransient } ?? false }
            var plainColumns: [[SQLExpression]] = []
            var plainNames: [String] = []
            var hasAggregate = false
            for property in properties {
                switch property {
                case let description as NSExpressionDescription:
                    guard let expression = description.expression else { return nil }
                    if expression.expressionType == .function {
                        guard let (aggregate, type) = Self.aggregate(expression, builder: &builder) else { return nil }
                        select.append(aggregate)
                        columns.append(Column(name: description.name, reader: .value(type, nil)))
                        hasAggregate = true
                    } else {
                        guard let components = Builder.path(expression),
                            let sql = add(description.name, components, builder: &builder)
                        else { return nil }
                        plainColumns.append(sql)
                        plainNames.append(description.name)
                    }
                case let description as NSPropertyDescription:
                    guard let sql = add(description.name, [description.name], builder: &builder) else { return nil }
                    plainColumns.append(sql)
                    plainNames.append(description.name)
                case let keyPath as String:
                    guard let sql = add(keyPath, KeyPathComponents(keyPath).components, builder: &builder) else {
                        return nil
                    }
                    plainColumns.append(sql)
                    plainNames.append(keyPath)
                default:
                    return nil
                }
            }
            for property in request.propertiesToGroupBy ?? [] {
                let components: [String]?
                switch property {
                case let description as NSExpressionDescription:
                    components = description.expression.flatMap(Builder.path)
                case let description as NSPropertyDescription: components = [description.name]
                case let keyPath as String: components = KeyPathComponents(keyPath).components
                default: components = nil
                }
                guard let components, let key = Self.plainSQL(components, builder: &builder) else { return nil }
                groupBy.append(key)
            }
            // As in memory, a grouped request has group keys or aggregates; only it is filtered by `having`.
            let grouped = !groupBy.isEmpty || hasAggregate
            filtersByHaving = grouped && request.havingPredicate != nil
            if grouped {
                // SQL would pick an arbitrary row's value for a column outside the grouping.
                guard plainColumns.allSatisfy(groupBy.contains) else { return nil }
                if request.returnsDistinctResults, !groupBy.isEmpty, !plainColumns.isEmpty { return nil }
            } else if request.returnsDistinctResults {
                groupBy = plainColumns
            }
            let rowsAreGroups = grouped || request.returnsDistinctResults
            let key: SQLExpression = .column("t0", "Z_PK")
            // A group's smallest key is a key: no group is empty.
            let tieBreaker = SQLSelect.Order.key(rowsAreGroups ? .aggregate(.minimum, key) : key)
            let descriptors = request.sortDescriptors ?? []
            var orderBy: [SQLSelect.Order]
            // Groups sort in SQL by grouping keys ordered by the database (numbers, dates); string
            // keys sort in memory.
            if let sortTerms,
                !rowsAreGroups || sortTerms.allSatisfy({ $0.selector == nil && groupBy.contains([$0.expression]) })
            {
                orderBy = sortTerms + [tieBreaker]
            } else {
                // Rows sort by their plain columns; a key the entity lacks is the in-memory path's error.
                let names = Set(plainNames)
                guard descriptors.allSatisfy({ $0.key.map(names.contains) ?? false }) else { return nil }
                sortInMemory = descriptors
                orderBy = [tieBreaker]
            }
            windowInSQL = sortInMemory.isEmpty && !filtersByHaving
            var rows = base
            rows.joins = builder.joins
            rows.columns = select
            rows.groupBy = groupBy.flatMap { $0 }
            rows.orderBy = orderBy
            if windowInSQL {
                rows.limit = request.fetchLimit > 0 ? request.fetchLimit : nil
                rows.offset = request.fetchOffset
            }
            statement = Statement(rows, dialect: builder.dialect)
        }

        /// Adds a plain (not aggregated) column; returns its SQL, as a grouping would name it.
        private mutating func add(_ name: String, _ components: [String], builder: inout Builder) -> [SQLExpression]? {
            guard let parts = Self.plainSQL(components, builder: &builder) else { return nil }
            switch builder.term(components) {
            case .attribute(_, let type)?:
                columns.append(Column(name: name, reader: .value(type, Self.attribute(components, in: builder.root))))
            case .scalar(_, let type)?:
                columns.append(Column(name: name, reader: .value(type ?? .doubleAttributeType, nil)))
            case .object(_, let entityColumn, let destination)?:
                columns.append(
                    Column(name: name, reader: .object(hasEntityColumn: entityColumn != nil, destination: destination)))
            default:
                return nil
            }
            select += parts
            return parts
        }

        /// The SQL of a key path's value: one column, or a key and an entity number.
        private static func plainSQL(_ components: [String], builder: inout Builder) -> [SQLExpression]? {
            switch builder.term(components) {
            case .attribute(let column, let type)?:
                // Decimals are stored as text, and external data needs its file read.
                guard type != .decimalAttributeType,
                    attribute(components, in: builder.root)?.allowsExternalBinaryDataStorage != true
                else { return nil }
                return [column]
            case .scalar(let subquery, _)?:
                return [subquery]
            case .object(let column, let entityColumn, _)?:
                return [column] + (entityColumn.map { [$0] } ?? [])
            default:
                return nil
            }
        }

        /// `sum:`, `count:`, `min:`, `max:` or `average:` of one key path, and how to read it.
        private static func aggregate(
            _ expression: NSExpression, builder: inout Builder
        ) -> (SQLExpression, NSAttributeType)? {
            guard let arguments = expression.arguments, arguments.count == 1,
                let components = Builder.path(arguments[0]), let term = builder.term(components)
            else { return nil }
            let operand: SQLExpression
            let type: NSAttributeType?
            switch term {
            case .attribute(let column, let attributeType):
                guard attribute(components, in: builder.root)?.allowsExternalBinaryDataStorage != true else {
                    return nil
                }
                operand = column
                type = attributeType
            case .scalar(let subquery, let scalarType):
                operand = subquery
                type = scalarType ?? .doubleAttributeType
            case .object(let column, _, _):
                operand = column
                type = nil
            case .toMany:
                return nil
            }
            switch expression.function {
            case "count:":
                return (.aggregate(.count, operand), .integer64AttributeType)
            case "sum:":
                guard let type, numericTypes.contains(type) else { return nil }
                if integerTypes.contains(type) { return (.aggregate(.integerSum, operand), .integer64AttributeType) }
                return (.aggregate(.realSum, operand), .doubleAttributeType)
            case "average:":
                guard let type, numericTypes.contains(type) else { return nil }
                return (.aggregate(.average, operand), .doubleAttributeType)
            case "min:", "max:":
                // Strings order by Foundation's compare: in memory, not by the database's bytes.
                guard let type, numericTypes.contains(type) || type == .dateAttributeType else { return nil }
                return (.aggregate(expression.function == "min:" ? .minimum : .maximum, operand), type)
            default:
                return nil
            }
        }

        /// The attribute a key path ends at, for its value transformer and storage.
        private static func attribute(_ components: [String], in root: SQLSchema.Entity) -> NSAttributeDescription? {
            var entity: NSEntityDescription? = root.entity
            for name in components.dropLast() {
                entity = entity?.relationshipsByName[name]?.destinationEntity
            }
            return components.last.flatMap { entity?.attributesByName[$0] }
        }
    }
}

extension SQLQuery.DictionaryPlan {
    /// What SQL left of a dictionary-result fetch, done in memory on the rows the statement
    /// returned (each row without the keys whose values are nil, as Apple's leave them out): the
    /// `HAVING` predicate, the sorts SQL could not order by — stably, so ties keep the SQL order,
    /// the first row of each group — and the window.
    package func finish(_ rows: [[String: Any]], request: NSFetchRequest<NSFetchRequestResult>) -> [Any] {
        var rows = rows
        if filtersByHaving, let having = request.havingPredicate {
            rows = rows.filter { DictionaryResults.passesHaving(having, $0) }
        }
        if !sortInMemory.isEmpty {
            let descriptors = sortInMemory
            rows = rows.enumerated().sorted { a, b in
                for descriptor in descriptors {
                    let key = descriptor.key ?? ""
                    var result = descriptor.comparator(a.element[key] ?? NSNull(), b.element[key] ?? NSNull())
                    if !descriptor.ascending { result = ComparisonResult(rawValue: -result.rawValue) ?? result }
                    if result != .orderedSame { return result == .orderedAscending }
                }
                return a.offset < b.offset
            }.map(\.element)
        }
        if !windowInSQL { rows = request.window(rows) }
        return rows.map { NSDictionary(dictionary: $0) }
    }
}
