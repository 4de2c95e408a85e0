extension SQLiteQuery {
    /// A `.dictionaryResultType` fetch as one SQL statement: `propertiesToFetch` as the select
    /// list (attributes, to-one relationships as object IDs, key paths across to-ones, `@count`
    /// and `@sum` over to-manys), `sum:`/`count:`/`min:`/`max:`/`average:` expression
    /// descriptions as SQL aggregates, `propertiesToGroupBy` as `GROUP BY`,
    /// `returnsDistinctResults` as a grouping by every column, and the sort and window.
    ///
    /// Groups and distinct rows come in the order of their first row, as the in-memory path
    /// (``DictionaryResults``) gives them. The `havingPredicate` and sort descriptors that name
    /// result columns but do not translate (string order follows Foundation's `compare:`, not
    /// SQLite's bytes) run on the rows SQL returns. Anything else — other functions, strings in
    /// `min:`/`max:`, decimals, externally stored data, to-many values, columns outside the
    /// grouping — leaves the plan `nil`, and the fetch runs in memory.
    ///
    /// Related documentation: NSFetchRequest reference (`propertiesToFetch`,
    /// `propertiesToGroupBy`, `havingPredicate`, `returnsDistinctResults`); NSExpressionDescription.
    struct DictionaryPlan {
        /// How a result column is read from the statement.
        enum Reader {
            /// One column holding an attribute of this type.
            case value(NSAttributeType, NSAttributeDescription?)
            /// A primary key, followed by its entity number when `hasEntityColumn`.
            case object(hasEntityColumn: Bool, destination: NSEntityDescription)
        }

        /// One key of the result dictionaries.
        struct Column {
            let name: String
            let reader: Reader
        }

        private(set) var columns: [Column] = []
        private(set) var sql = ""
        private(set) var parameters: [SQLiteValue] = []
        /// Descriptors applied to the result rows (by column name) after the statement.
        private(set) var sortInMemory: [NSSortDescriptor] = []
        /// Whether the `havingPredicate` filters the rows (the request is grouped).
        private(set) var filtersByHaving = false
        private(set) var windowInSQL = true

        private var select: [String] = []
        private var groupBy: [String] = []
        private var orderBy: [String] = []

        private static let numericTypes: Set<NSAttributeType> = [
            .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .doubleAttributeType,
            .floatAttributeType, .booleanAttributeType,
        ]
        private static let integerTypes: Set<NSAttributeType> = [
            .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .booleanAttributeType,
        ]

        init?(builder: inout Builder, request: NSFetchRequest<NSFetchRequestResult>, sortTerms: [String]?) {
            let entity = builder.root.entity
            let properties: [Any] =
                request.propertiesToFetch
                ?? entity.properties.filter { ($0 as? NSAttributeDescription).map { !$0.isTransient } ?? false }
            var plainColumns: [String] = []
            var plainNames: [String] = []
            var hasAggregate = false
            for property in properties {
                switch property {
                case let description as NSExpressionDescription:
                    guard let expression = description.expression else { return nil }
                    if expression.expressionType == .function {
                        guard let (sql, type) = Self.aggregate(expression, builder: &builder) else { return nil }
                        select.append(sql)
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
                guard let components, let sql = Self.plainSQL(components, builder: &builder) else { return nil }
                groupBy.append(sql.joined(separator: ", "))
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
            let tieBreaker = rowsAreGroups ? "MIN(t0.Z_PK)" : "t0.Z_PK"
            let descriptors = request.sortDescriptors ?? []
            if let sortTerms,
                !rowsAreGroups || sortTerms.allSatisfy({ groupBy.contains(Self.withoutDirection($0)) })
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
        }

        /// Completes the statement once every join is known.
        mutating func finish(from: String, parameters: [SQLiteValue], request: NSFetchRequest<NSFetchRequestResult>) {
            var sql = "SELECT \(select.joined(separator: ", ")) \(from)"
            if !groupBy.isEmpty { sql += " GROUP BY " + groupBy.joined(separator: ", ") }
            sql += " ORDER BY " + orderBy.joined(separator: ", ")
            self.parameters = parameters
            if windowInSQL, request.fetchLimit > 0 || request.fetchOffset > 0 {
                sql += " LIMIT ? OFFSET ?"
                self.parameters += [
                    .integer(request.fetchLimit > 0 ? Int64(request.fetchLimit) : -1),
                    .integer(Int64(request.fetchOffset)),
                ]
            }
            self.sql = sql
        }

        /// Adds a plain (not aggregated) column; returns its SQL, as a grouping would name it.
        private mutating func add(_ name: String, _ components: [String], builder: inout Builder) -> String? {
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
            return parts.joined(separator: ", ")
        }

        /// The SQL of a key path's value: one column, or a key and an entity number.
        private static func plainSQL(_ components: [String], builder: inout Builder) -> [String]? {
            switch builder.term(components) {
            case .attribute(let column, let type)?:
                // Decimals are stored as text, and external data needs its file read.
                guard type != .decimalAttributeType,
                    attribute(components, in: builder.root)?.allowsExternalBinaryDataStorage != true
                else { return nil }
                return [column]
            case .scalar(let sql, _)?:
                return [sql]
            case .object(let column, let entityColumn, _)?:
                return [column] + (entityColumn.map { [$0] } ?? [])
            default:
                return nil
            }
        }

        /// `sum:`, `count:`, `min:`, `max:` or `average:` of one key path, and how to read it.
        private static func aggregate(_ expression: NSExpression, builder: inout Builder) -> (String, NSAttributeType)?
        {
            guard let arguments = expression.arguments, arguments.count == 1,
                let components = Builder.path(arguments[0]), let term = builder.term(components)
            else { return nil }
            let operand: String
            let type: NSAttributeType?
            switch term {
            case .attribute(let column, let attributeType):
                guard attribute(components, in: builder.root)?.allowsExternalBinaryDataStorage != true else {
                    return nil
                }
                operand = column
                type = attributeType
            case .scalar(let sql, let scalarType):
                operand = sql
                type = scalarType ?? .doubleAttributeType
            case .object(let column, _, _):
                operand = column
                type = nil
            case .toMany:
                return nil
            }
            switch expression.function {
            case "count:":
                return ("COUNT(\(operand))", .integer64AttributeType)
            case "sum:":
                guard let type, numericTypes.contains(type) else { return nil }
                if integerTypes.contains(type) { return ("COALESCE(SUM(\(operand)), 0)", .integer64AttributeType) }
                return ("TOTAL(\(operand))", .doubleAttributeType)
            case "average:":
                guard let type, numericTypes.contains(type) else { return nil }
                return ("AVG(\(operand))", .doubleAttributeType)
            case "min:", "max:":
                // Strings order by Foundation's compare: in memory, not by SQLite's bytes.
                guard let type, numericTypes.contains(type) || type == .dateAttributeType else { return nil }
                return ("\(expression.function == "min:" ? "MIN" : "MAX")(\(operand))", type)
            default:
                return nil
            }
        }

        /// The attribute a key path ends at, for its value transformer and storage.
        private static func attribute(_ components: [String], in root: SQLiteSchema.Entity) -> NSAttributeDescription? {
            var entity: NSEntityDescription? = root.entity
            for name in components.dropLast() {
                entity = entity?.relationshipsByName[name]?.destinationEntity
            }
            return components.last.flatMap { entity?.attributesByName[$0] }
        }

        private static func withoutDirection(_ term: String) -> String {
            term.hasSuffix(" DESC") ? String(term.dropLast(5)) : term
        }
    }
}
