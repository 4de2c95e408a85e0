/// A fetch request as one SQL statement with bound parameters.
///
/// Translated: comparisons of key paths (across to-ones, as `LEFT JOIN`s) with constants, `[cdn]`
/// string operators through ``SQLiteFunctions``, `IN`, `BETWEEN`, `AND`/`OR`/`NOT`, `ANY`/`ALL`
/// over a to-many as `EXISTS`, `@count` and `@sum` over a to-many as sub-selects, `SELF`
/// comparisons, and `compare:` sort descriptors. Comparisons are written so they are never SQL
/// `NULL` (`IS`, `COALESCE(…, 0)`): a missing value makes a comparison false, as in memory, and
/// `NOT` keeps Core Data's two-valued meaning.
///
/// What does not translate (custom selectors and functions, `SUBQUERY`, comparisons of two key
/// paths, sort selectors other than `compare:`, …) is evaluated in memory over the rows the
/// SQL part selected, so the answer is the same; DEVIATIONS.md lists it.
struct SQLiteQuery {
    private(set) var selectSQL = ""
    private(set) var countSQL = ""
    /// The same query selecting only `Z_PK, Z_ENT` (a fetch with `fetchBatchSize`).
    private(set) var identifierSQL = ""
    private(set) var parameters: [SQLiteValue] = []
    private(set) var windowParameters: [SQLiteValue] = []
    private(set) var predicateInSQL = true
    private(set) var sortInSQL = true
    private(set) var windowInSQL = true
    /// The whole dictionary-result fetch in SQL, when it translates (see ``DictionaryPlan``).
    private(set) var dictionary: DictionaryPlan?

    var isComplete: Bool { predicateInSQL && sortInSQL && windowInSQL }

    init(store: SQLiteStore, mapping: SQLiteSchema.Entity, request: NSFetchRequest<NSFetchRequestResult>) {
        var builder = Builder(schema: store.schema, root: mapping)
        var conditions: [String] = []
        if mapping.numbers.count != builder.allNumbers(of: mapping.table).count || !request.includesSubentities {
            let numbers = request.includesSubentities ? mapping.numbers : [mapping.number]
            conditions.append("t0.Z_ENT IN (" + numbers.map(String.init).joined(separator: ", ") + ")")
        }
        if let predicate = request.predicate {
            if let sql = builder.predicate(predicate) {
                if sql != "1" { conditions.append(sql) }
            } else {
                predicateInSQL = false
                builder.discardParameters()
            }
        }
        var orderBy: [String] = []
        for descriptor in request.sortDescriptors ?? [] {
            guard let sql = builder.sortKey(descriptor) else {
                sortInSQL = false
                break
            }
            orderBy.append(sql + (descriptor.ascending ? "" : " DESC"))
        }
        if !sortInSQL { orderBy = [] }
        var dictionaryPlan: DictionaryPlan?
        if request.resultType == .dictionaryResultType, predicateInSQL {
            dictionaryPlan = DictionaryPlan(builder: &builder, request: request, sortTerms: sortInSQL ? orderBy : nil)
        }
        // Ties keep the store's order, as the in-memory path does.
        orderBy.append("t0.Z_PK")
        windowInSQL = predicateInSQL && sortInSQL && request.resultType != .dictionaryResultType
        let from = "FROM \(quote(mapping.table.name)) t0" + builder.joins.joined()
        let whereClause = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        dictionaryPlan?.finish(from: from + whereClause, parameters: builder.parameters, request: request)
        dictionary = dictionaryPlan
        var window = ""
        if windowInSQL, request.fetchLimit > 0 || request.fetchOffset > 0 {
            window = " LIMIT ? OFFSET ?"
            windowParameters = [
                .integer(request.fetchLimit > 0 ? Int64(request.fetchLimit) : -1), .integer(Int64(request.fetchOffset)),
            ]
        }
        parameters = builder.parameters
        selectSQL =
            "SELECT \(store.selectList(mapping.table, alias: "t0")) \(from)\(whereClause) ORDER BY "
            + orderBy.joined(separator: ", ") + window
        identifierSQL =
            "SELECT t0.Z_PK, t0.Z_ENT \(from)\(whereClause) ORDER BY " + orderBy.joined(separator: ", ") + window
        countSQL = "SELECT COUNT(*) FROM (SELECT t0.Z_PK \(from)\(whereClause)\(window))"
    }

    /// Translates expressions and predicates, collecting joins and parameters.
    struct Builder {
        let schema: SQLiteSchema
        let root: SQLiteSchema.Entity
        private(set) var joins: [String] = []
        private(set) var parameters: [SQLiteValue] = []
        private var aliases: [String: String] = [:]
        private var nextAlias = 1

        init(schema: SQLiteSchema, root: SQLiteSchema.Entity) {
            self.schema = schema
            self.root = root
        }

        mutating func discardParameters() { parameters = [] }

        func allNumbers(of table: SQLiteSchema.Table) -> [Int64] { schema[table.root].numbers }

        /// What a key path denotes in SQL.
        enum Term {
            /// A column value: an attribute (with its type) or a to-one's primary key, with the
            /// column holding its entity number when the destination has sub-entities.
            case attribute(String, NSAttributeType)
            case object(String, entityColumn: String?, destination: NSEntityDescription)
            /// A to-many at `owner` alias: the rest of the path continues on its destination.
            case toMany(owner: String, SQLiteSchema.Entity, slot: Int, rest: [String])
            /// A scalar sub-select (`@count`, `@sum`).
            case scalar(String, NSAttributeType?)
        }

        // MARK: Key paths

        mutating func term(_ components: [String], alias: String = "t0", mapping: SQLiteSchema.Entity? = nil) -> Term? {
            var mapping = mapping ?? root
            var alias = alias
            var prefix = alias
            if components == ["self"] || components == ["SELF"] {
                return .object("\(alias).Z_PK", entityColumn: "\(alias).Z_ENT", destination: mapping.entity)
            }
            for (index, name) in components.enumerated() {
                let layout = mapping.entity.layout
                guard let slot = layout.slotByName[name] else { return nil }
                let isLast = index == components.count - 1
                switch mapping.storage[slot] {
                case .attribute(let column, let type):
                    return isLast ? .attribute("\(alias).\(quote(column))", type) : nil
                case .toOne(let column, let entityColumn):
                    guard let destination = layout.relationship(at: slot).destinationEntity else { return nil }
                    if isLast {
                        return .object(
                            "\(alias).\(quote(column))", entityColumn: entityColumn.map { "\(alias).\(quote($0))" },
                            destination: destination)
                    }
                    let target = schema[destination]
                    prefix += "." + name
                    if let existing = aliases[prefix] {
                        alias = existing
                    } else {
                        let next = "t\(nextAlias)"
                        nextAlias += 1
                        joins.append(
                            " LEFT JOIN \(quote(target.table.name)) \(next) ON \(next).Z_PK = \(alias).\(quote(column))"
                        )
                        aliases[prefix] = next
                        alias = next
                    }
                    mapping = target
                case .toManyByInverse, .join:
                    let rest = Array(components[(index + 1)...])
                    if rest == ["@count"] {
                        guard let sub = subselect(owner: alias, mapping: mapping, slot: slot, select: "COUNT(*)")
                        else { return nil }
                        return .scalar(sub, .integer64AttributeType)
                    }
                    if rest.count == 2, rest[0] == "@sum" {
                        guard let destination = layout.relationship(at: slot).destinationEntity,
                            let column = schema.column(of: rest[1], in: schema[destination]),
                            let slotOfColumn = destination.layout.slotByName[rest[1]],
                            case .attribute(_, let type) = schema[destination].storage[slotOfColumn],
                            let sub = subselect(
                                owner: alias, mapping: mapping, slot: slot, select: "TOTAL(d.\(quote(column)))")
                        else { return nil }
                        _ = type
                        return .scalar(sub, .doubleAttributeType)
                    }
                    return .toMany(owner: alias, mapping, slot: slot, rest: rest)
                case .none:
                    return nil
                }
            }
            return nil
        }

        /// `(SELECT <select> FROM <destination> d … WHERE d belongs to owner)`.
        func subselect(owner: String, mapping: SQLiteSchema.Entity, slot: Int, select: String) -> String? {
            guard let source = membership(owner: owner, mapping: mapping, slot: slot) else { return nil }
            return "(SELECT \(select) \(source))"
        }

        /// `FROM … WHERE …` naming the destination rows of a to-many as `d`.
        func membership(owner: String, mapping: SQLiteSchema.Entity, slot: Int) -> String? {
            guard let destination = mapping.entity.layout.relationship(at: slot).destinationEntity else { return nil }
            let target = schema[destination]
            var filter = ""
            if target.numbers.count != allNumbers(of: target.table).count {
                filter = " AND d.Z_ENT IN (" + target.numbers.map(String.init).joined(separator: ", ") + ")"
            }
            switch mapping.storage[slot] {
            case .toManyByInverse(let table, let column, _):
                return "FROM \(quote(table)) d WHERE d.\(quote(column)) = \(owner).Z_PK" + filter
            case .join(let join, let sourceColumn, let destinationColumn, _):
                return
                    "FROM \(quote(join.name)) j JOIN \(quote(target.table.name)) d ON d.Z_PK = j.\(quote(destinationColumn))"
                    + " WHERE j.\(quote(sourceColumn)) = \(owner).Z_PK" + filter
            default:
                return nil
            }
        }

        // MARK: Predicates

        mutating func predicate(_ predicate: NSPredicate, alias: String = "t0", mapping: SQLiteSchema.Entity? = nil)
            -> String?
        {
            switch predicate {
            case let constant as ConstantPredicate:
                return constant.value ? "1" : "0"
            case let compound as NSCompoundPredicate:
                var parts: [String] = []
                for sub in Self.operands(of: compound) {
                    guard let sql = self.predicate(sub, alias: alias, mapping: mapping) else { return nil }
                    parts.append(sql)
                }
                switch compound.compoundPredicateType {
                case .not: return parts.count == 1 ? "NOT (\(parts[0]))" : nil
                case .and: return parts.isEmpty ? "1" : "(" + parts.joined(separator: " AND ") + ")"
                case .or: return parts.isEmpty ? "0" : "(" + parts.joined(separator: " OR ") + ")"
                }
            case let comparison as NSComparisonPredicate:
                return self.comparison(comparison, alias: alias, mapping: mapping)
            default:
                return nil
            }
        }

        /// The operands of an AND or OR with nested ANDs in an AND (ORs in an OR) taken apart, so
        /// that `a OR b OR c` — parsed as `(a OR b) OR c` — is one flat SQL list: a parenthesis per
        /// term would overflow SQLite's parser stack after about 100 terms.
        private static func operands(of compound: NSCompoundPredicate) -> [NSPredicate] {
            guard compound.compoundPredicateType != .not else { return compound.predicates }
            var operands: [NSPredicate] = []
            var pending = Array(compound.predicates.reversed())
            while let next = pending.popLast() {
                if let inner = next as? NSCompoundPredicate,
                    inner.compoundPredicateType == compound.compoundPredicateType
                {
                    pending.append(contentsOf: inner.predicates.reversed())
                } else {
                    operands.append(next)
                }
            }
            return operands
        }

        private static func containsNaN(_ value: Any?) -> Bool {
            guard let value = DynamicValue.unwrap(value) else { return false }
            if let number = DynamicValue.number(value), case .double(let double) = number { return double.isNaN }
            if let elements = DynamicValue.elements(value) { return elements.contains { containsNaN($0) } }
            return false
        }

        private static func constant(_ expression: NSExpression) -> (value: Any?, isConstant: Bool) {
            switch expression.node {
            case .constant(let value): return (value, true)
            case .aggregate:
                if let values = expression.constantAggregate { return (values, true) }
                return (nil, false)
            default: return (nil, false)
            }
        }

        /// The key path an expression reads from the evaluated object (`SELF` as `self`).
        static func path(_ expression: NSExpression) -> [String]? {
            switch expression.node {
            case .keyPath(let operand, let path):
                if let operand, case .evaluatedObject = operand.node {} else if operand != nil { return nil }
                return path.components
            case .evaluatedObject:
                return ["self"]
            default:
                return nil
            }
        }

        private static func flipped(_ type: NSComparisonPredicate.Operator) -> NSComparisonPredicate.Operator? {
            switch type {
            case .lessThan: return .greaterThan
            case .lessThanOrEqualTo: return .greaterThanOrEqualTo
            case .greaterThan: return .lessThan
            case .greaterThanOrEqualTo: return .lessThanOrEqualTo
            case .equalTo, .notEqualTo: return type
            default: return nil
            }
        }

        private mutating func comparison(
            _ comparison: NSComparisonPredicate, alias: String, mapping: SQLiteSchema.Entity?
        ) -> String? {
            var type = comparison.predicateOperatorType
            var lhs = comparison.leftExpression
            var rhs = comparison.rightExpression
            guard type != .customSelector else { return nil }
            if Self.path(lhs) == nil, Self.path(rhs) != nil, comparison.comparisonPredicateModifier == .direct {
                guard let flipped = Self.flipped(type) else { return nil }
                type = flipped
                swap(&lhs, &rhs)
            }
            guard let components = Self.path(lhs) else { return nil }
            let (value, isConstant) = Self.constant(rhs)
            // SQLite binds NaN as NULL, which `IS` would match: a NaN constant is judged in
            // memory, where it equals nothing and is unequal to everything.
            guard isConstant, !Self.containsNaN(value) else { return nil }
            guard let term = term(components, alias: alias, mapping: mapping) else { return nil }
            let options = comparison.options
            switch comparison.comparisonPredicateModifier {
            case .direct:
                return direct(term, type, options, value)
            case .any, .all:
                guard case .toMany(let owner, let ownerMapping, let slot, let rest) = term, !rest.isEmpty,
                    let source = membership(owner: owner, mapping: ownerMapping, slot: slot),
                    let destination = ownerMapping.entity.layout.relationship(at: slot).destinationEntity
                else { return nil }
                let saved = nextAlias
                let inner = NSComparisonPredicate(
                    leftExpression: NSExpression(forKeyPath: rest.joined(separator: ".")), rightExpression: rhs,
                    modifier: .direct, type: type, options: options)
                // Inside the sub-select the path continues from `d`; joins there are not supported.
                let joinCount = joins.count
                guard let condition = self.comparison(inner, alias: "d", mapping: schema[destination]),
                    joins.count == joinCount
                else {
                    nextAlias = saved
                    return nil
                }
                // Key-value coding leaves nil out of a to-many's values: so do ANY and ALL here.
                var present = ""
                switch self.term(rest, alias: "d", mapping: schema[destination]) {
                case .attribute(let column, _)?, .object(let column, _, _)?: present = "\(column) IS NOT NULL AND "
                default: break
                }
                if comparison.comparisonPredicateModifier == .any {
                    return "EXISTS (SELECT 1 \(source) AND \(present)\(condition))"
                }
                return "NOT EXISTS (SELECT 1 \(source) AND \(present)NOT (\(condition)))"
            @unknown default:
                return nil
            }
        }

        private mutating func bind(_ value: SQLiteValue) -> String {
            parameters.append(value)
            return "?"
        }

        /// The key of an object constant: its primary key in this store, or -1, which no row has.
        private func objectKey(_ value: Any?) -> SQLiteValue? {
            switch DynamicValue.unwrap(value) {
            case nil: return .null
            case let object as NSManagedObject:
                return .integer(SQLiteStore.primaryKey(object.objectID) ?? -1)
            case let id as NSManagedObjectID:
                return .integer(SQLiteStore.primaryKey(id) ?? -1)
            default:
                return nil
            }
        }

        /// Whether a constant is of the kind a column of `type` holds, so SQL compares like memory does.
        private static func kindMatches(_ type: NSAttributeType, _ value: Any?) -> Bool {
            guard let value = DynamicValue.unwrap(value) else { return true }
            switch type {
            case .stringAttributeType: return value is String
            case .dateAttributeType: return value is Date
            case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .doubleAttributeType,
                .floatAttributeType, .booleanAttributeType, .decimalAttributeType:
                return !(value is String) && !(value is Date) && DynamicValue.number(value) != nil
            case .UUIDAttributeType: return value is UUID
            case .URIAttributeType: return value is URL
            case .binaryDataAttributeType: return value is Data
            default: return false
            }
        }

        private mutating func direct(
            _ term: Term, _ type: NSComparisonPredicate.Operator, _ options: NSComparisonPredicate.Options,
            _ value: Any?
        ) -> String? {
            switch term {
            case .object(let column, _, _):
                switch type {
                case .equalTo, .notEqualTo:
                    guard let key = objectKey(value) else { return nil }
                    return "\(column) \(type == .equalTo ? "IS" : "IS NOT") \(bind(key))"
                case .in:
                    guard let elements = DynamicValue.unwrap(value).flatMap(DynamicValue.elements) else { return nil }
                    var keys: [String] = []
                    for element in elements {
                        guard let key = objectKey(element), key != .null else { return nil }
                        keys.append(bind(key))
                    }
                    return keys.isEmpty ? "0" : "COALESCE(\(column) IN (\(keys.joined(separator: ", "))), 0)"
                default:
                    return nil
                }
            case .attribute(let column, let attributeType):
                return attributeComparison(column, attributeType, type, options, value)
            case .scalar(let sql, let attributeType):
                return attributeComparison(sql, attributeType ?? .doubleAttributeType, type, options, value)
            case .toMany:
                return nil
            }
        }

        private mutating func attributeComparison(
            _ column: String, _ attributeType: NSAttributeType, _ type: NSComparisonPredicate.Operator,
            _ options: NSComparisonPredicate.Options, _ value: Any?
        ) -> String? {
            let isString = attributeType == .stringAttributeType
            let folds = isString && !options.subtracting([.normalized]).isEmpty
            switch type {
            case .equalTo, .notEqualTo, .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
                guard Self.kindMatches(attributeType, value) else { return nil }
                if folds || (isString && type != .equalTo && type != .notEqualTo) {
                    // String order and folded equality follow the in-memory rules exactly.
                    guard let string = DynamicValue.unwrap(value) as? String else { return nil }
                    return stringMatch(column, type, options, string)
                }
                guard let parameter = SQLiteValues.parameter(value, type: attributeType) else { return nil }
                switch type {
                case .equalTo: return "\(column) IS \(bind(parameter))"
                case .notEqualTo: return "\(column) IS NOT \(bind(parameter))"
                default:
                    guard parameter != .null else { return "0" }
                    let symbol = [
                        .lessThan: "<", .lessThanOrEqualTo: "<=", .greaterThan: ">", .greaterThanOrEqualTo: ">=",
                    ][
                        type]!
                    return "COALESCE(\(column) \(symbol) \(bind(parameter)), 0)"
                }
            case .beginsWith, .endsWith, .like, .matches, .contains:
                guard isString, let string = DynamicValue.unwrap(value) as? String else { return nil }
                return stringMatch(column, type, options, string)
            case .in:
                guard let elements = DynamicValue.unwrap(value).flatMap(DynamicValue.elements) else { return nil }
                if elements.isEmpty { return "0" }
                if folds { return nil }
                var placeholders: [String] = []
                for element in elements {
                    guard DynamicValue.unwrap(element) != nil, Self.kindMatches(attributeType, element),
                        let parameter = SQLiteValues.parameter(element, type: attributeType)
                    else { return nil }
                    placeholders.append(bind(parameter))
                }
                return "COALESCE(\(column) IN (\(placeholders.joined(separator: ", "))), 0)"
            case .between:
                guard !isString, let bounds = DynamicValue.unwrap(value).flatMap(DynamicValue.elements),
                    bounds.count == 2,
                    bounds.allSatisfy({ DynamicValue.unwrap($0) != nil && Self.kindMatches(attributeType, $0) }),
                    let low = SQLiteValues.parameter(bounds[0], type: attributeType),
                    let high = SQLiteValues.parameter(bounds[1], type: attributeType)
                else { return nil }
                return "COALESCE(\(column) BETWEEN \(bind(low)) AND \(bind(high)), 0)"
            case .customSelector:
                return nil
            }
        }

        private mutating func stringMatch(
            _ column: String, _ type: NSComparisonPredicate.Operator, _ options: NSComparisonPredicate.Options,
            _ string: String
        ) -> String {
            let op = bind(.integer(Int64(type.rawValue)))
            let opts = bind(.integer(Int64(options.rawValue)))
            return "NSCoreDataStringMatch(\(op), \(opts), \(column), \(bind(.text(string))))"
        }

        // MARK: Sorting

        /// The ORDER BY term of a descriptor on an attribute path; `nil` when the descriptor must
        /// sort in memory. Numbers and dates sort by `compare:` as SQLite orders them; strings by
        /// any of the string selectors, through the collation that runs the in-memory comparison.
        mutating func sortKey(_ descriptor: NSSortDescriptor) -> String? {
            guard let key = descriptor.key, !descriptor.hasComparator else { return nil }
            let selector = descriptor.selector?.name ?? "compare:"
            guard case .attribute(let column, let type)? = term(KeyPathComponents(key).components) else { return nil }
            if type == .stringAttributeType {
                return SQLiteFunctions.collation(for: selector).map { "\(column) COLLATE \($0)" }
            }
            return selector == "compare:" ? column : nil
        }
    }
}
