import OpenCoreData

/// A fetch request as one SQL statement with bound parameters.
///
/// Translated: comparisons of key paths (across to-ones, as `LEFT JOIN`s) with constants, `[cdn]`
/// string operators through the dialect's string match, `IN`, `BETWEEN`, `AND`/`OR`/`NOT`, `ANY`/`ALL`
/// over a to-many as `EXISTS`, `@count` and `@sum` over a to-many as sub-selects, `SELF`
/// comparisons, and `compare:` sort descriptors. Comparisons are written so they are never SQL
/// `NULL` (`IS`, `COALESCE(…, 0)`): a missing value makes a comparison false, as in memory, and
/// `NOT` keeps Core Data's two-valued meaning.
///
/// What does not translate (custom selectors and functions, `SUBQUERY`, comparisons of two key
/// paths, sort selectors other than `compare:`, …) is evaluated in memory over the rows the
/// SQL part selected, so the answer is the same; DEVIATIONS.md lists it.
package struct SQLQuery {
    /// One statement's text and parameters.
    package struct Statement {
        package let sql: String
        package let parameters: [SQLValue]

        init(_ select: SQLSelect, dialect: any SQLDialect) {
            (sql, parameters) = SQLWriter.write(select, dialect: dialect)
        }

        init(sql: String, parameters: [SQLValue]) {
            self.sql = sql
            self.parameters = parameters
        }
    }

    /// The rows' select list and the rest: as much of the request as SQL can say.
    package private(set) var select: Statement
    /// `COUNT(*)` of the rows the request selects, window included; meaningful when ``isComplete``.
    /// Written when asked for: most fetches never ask, and writing it with every query wrote a
    /// long `IN` list once more for nothing.
    package var count: Statement { Statement(countSelect, dialect: dialect) }
    /// The same query selecting only `Z_PK, Z_ENT` (a fetch with `fetchBatchSize`); written when
    /// asked for, as ``count`` is.
    package var identifiers: Statement { Statement(keysSelect, dialect: dialect) }
    private let countSelect: SQLSelect
    private let keysSelect: SQLSelect
    private let dialect: any SQLDialect
    package private(set) var predicateInSQL = true
    /// The rows' filter (entity numbers and predicate) on the table aliased `t0`.
    package private(set) var rowFilter: SQLExpression?
    /// Whether the filter reads other tables through joins (then it cannot qualify an `UPDATE`).
    package private(set) var joinsTables = false
    package private(set) var sortInSQL = true
    package private(set) var windowInSQL = true
    /// The whole dictionary-result fetch in SQL, when it translates (see ``DictionaryPlan``).
    package private(set) var dictionary: DictionaryPlan?

    package var isComplete: Bool { predicateInSQL && sortInSQL && windowInSQL }

    package init(
        schema: SQLSchema, mapping: SQLSchema.Entity, request: NSFetchRequest<NSFetchRequestResult>,
        dialect: any SQLDialect
    ) {
        var builder = Builder(schema: schema, root: mapping, dialect: dialect)
        var conditions: [SQLExpression] = []
        if mapping.numbers.count != builder.allNumbers(of: mapping.table).count || !request.includesSubentities {
            let numbers = request.includesSubentities ? mapping.numbers : [mapping.number]
            conditions.append(.inList(.column("t0", "Z_ENT"), numbers.map(SQLExpression.integer)))
        }
        if let predicate = request.predicate {
            if let condition = builder.predicate(predicate) {
                if condition != .boolean(true) { conditions.append(condition) }
            } else {
                predicateInSQL = false
            }
        }
        var orderBy: [SQLSelect.Order] = []
        for descriptor in request.sortDescriptors ?? [] {
            guard let order = builder.sortKey(descriptor) else {
                sortInSQL = false
                break
            }
            orderBy.append(order)
        }
        if !sortInSQL { orderBy = [] }
        let filter: SQLExpression? =
            conditions.isEmpty ? nil : conditions.count == 1 ? conditions[0] : .and(conditions)
        rowFilter = filter
        joinsTables = !builder.joins.isEmpty
        let from = SQLSelect(from: .table(mapping.table.name, alias: "t0"), joins: builder.joins, filter: filter)
        if request.resultType == .dictionaryResultType, predicateInSQL {
            dictionary = DictionaryPlan(
                builder: &builder, request: request, sortTerms: sortInSQL ? orderBy : nil, base: from)
        }
        // Ties keep the store's order, as the in-memory path does.
        orderBy.append(.key(.column("t0", "Z_PK")))
        windowInSQL = predicateInSQL && sortInSQL && request.resultType != .dictionaryResultType
        var rows = from
        rows.joins = builder.joins
        rows.orderBy = orderBy
        if windowInSQL {
            rows.limit = request.fetchLimit > 0 ? request.fetchLimit : nil
            rows.offset = request.fetchOffset
        }
        var keys = rows
        keys.columns = [.column("t0", "Z_PK"), .column("t0", "Z_ENT")]
        rows.columns = (["Z_PK", "Z_ENT", "Z_OPT"] + mapping.table.columns.map(\.name)).map { .column("t0", $0) }
        var counted = rows
        counted.columns = [.column("t0", "Z_PK")]
        counted.orderBy = []
        select = Statement(rows, dialect: dialect)
        keysSelect = keys
        countSelect = SQLSelect(columns: [.aggregate(.count, nil)], from: .select(counted, alias: "counted"))
        self.dialect = dialect
    }

    /// Lowers predicates, key paths and sorts to the SQL tree, collecting the joins they need.
    struct Builder {
        let schema: SQLSchema
        let root: SQLSchema.Entity
        let dialect: any SQLDialect
        private(set) var joins: [SQLSelect.Join] = []
        private var aliases: [String: String] = [:]
        private var nextAlias = 1

        init(schema: SQLSchema, root: SQLSchema.Entity, dialect: any SQLDialect) {
            self.schema = schema
            self.root = root
            self.dialect = dialect
        }

        func allNumbers(of table: SQLSchema.Table) -> [Int64] { schema[table.root].numbers }

        /// What a key path denotes in SQL.
        enum Term {
            /// A column value: an attribute (with its type) or a to-one's primary key, with the
            /// column holding its entity number when the destination has sub-entities.
            case attribute(SQLExpression, NSAttributeType)
            case object(SQLExpression, entityColumn: SQLExpression?, destination: NSEntityDescription)
            /// A to-many at `owner` alias: the rest of the path continues on its destination.
            case toMany(owner: String, SQLSchema.Entity, slot: Int, rest: [String])
            /// A scalar sub-select (`@count`, `@sum`).
            case scalar(SQLExpression, NSAttributeType?)
        }

        // MARK: Key paths

        mutating func term(_ components: [String], alias: String = "t0", mapping: SQLSchema.Entity? = nil) -> Term? {
            var mapping = mapping ?? root
            var alias = alias
            var prefix = alias
            if components == ["self"] || components == ["SELF"] {
                return .object(
                    .column(alias, "Z_PK"), entityColumn: .column(alias, "Z_ENT"), destination: mapping.entity)
            }
            for (index, name) in components.enumerated() {
                let layout = mapping.entity.layout
                guard let slot = layout.slotByName[name] else { return nil }
                let isLast = index == components.count - 1
                switch mapping.storage[slot] {
                case .attribute(let column, let type):
                    return isLast ? .attribute(.column(alias, column), type) : nil
                case .composite(let columns):
                    // A namespaced key path (`magnitude.richter`) names a leaf's column; the whole
                    // composite, a dictionary, is compared in memory.
                    let rest = Array(components[(index + 1)...])
                    guard let leaf = columns.first(where: { $0.path == rest }) else { return nil }
                    return .attribute(.column(alias, leaf.column), leaf.type)
                case .toOne(let column, let entityColumn):
                    guard let destination = layout.relationship(at: slot).destinationEntity else { return nil }
                    if isLast {
                        return .object(
                            .column(alias, column), entityColumn: entityColumn.map { .column(alias, $0) },
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
                            SQLSelect.Join(
                                kind: .left, source: .table(target.table.name, alias: next),
                                on: .compare(.column(next, "Z_PK"), .equal, .column(alias, column))))
                        aliases[prefix] = next
                        alias = next
                    }
                    mapping = target
                case .toManyByInverse, .join:
                    let rest = Array(components[(index + 1)...])
                    if rest == ["@count"] {
                        guard
                            let sub = subselect(
                                owner: alias, mapping: mapping, slot: slot, select: .aggregate(.count, nil))
                        else { return nil }
                        return .scalar(sub, .integer64AttributeType)
                    }
                    if rest.count == 2, rest[0] == "@sum" {
                        guard let destination = layout.relationship(at: slot).destinationEntity,
                            let column = schema.column(of: rest[1], in: schema[destination]),
                            let slotOfColumn = destination.layout.slotByName[rest[1]],
                            case .attribute(_, let type) = schema[destination].storage[slotOfColumn],
                            let sub = subselect(
                                owner: alias, mapping: mapping, slot: slot,
                                select: .aggregate(.realSum, .column("d", column)))
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
        func subselect(owner: String, mapping: SQLSchema.Entity, slot: Int, select: SQLExpression) -> SQLExpression? {
            guard var rows = membership(owner: owner, mapping: mapping, slot: slot) else { return nil }
            rows.columns = [select]
            return .subquery(rows)
        }

        /// The destination rows of a to-many of `owner`, named `d`: a select without columns whose
        /// filter says which rows belong to the owner.
        func membership(owner: String, mapping: SQLSchema.Entity, slot: Int) -> SQLSelect? {
            guard let destination = mapping.entity.layout.relationship(at: slot).destinationEntity else { return nil }
            let target = schema[destination]
            var filter: [SQLExpression] = []
            switch mapping.storage[slot] {
            case .toManyByInverse(let table, let column, _):
                filter.append(.compare(.column("d", column), .equal, .column(owner, "Z_PK")))
                if target.numbers.count != allNumbers(of: target.table).count {
                    filter.append(.inList(.column("d", "Z_ENT"), target.numbers.map(SQLExpression.integer)))
                }
                return SQLSelect(from: .table(table, alias: "d"), filter: .and(filter))
            case .join(let join, let sourceColumn, let destinationColumn, _):
                filter.append(.compare(.column("j", sourceColumn), .equal, .column(owner, "Z_PK")))
                if target.numbers.count != allNumbers(of: target.table).count {
                    filter.append(.inList(.column("d", "Z_ENT"), target.numbers.map(SQLExpression.integer)))
                }
                return SQLSelect(
                    from: .table(join.name, alias: "j"),
                    joins: [
                        SQLSelect.Join(
                            kind: .inner, source: .table(target.table.name, alias: "d"),
                            on: .compare(.column("d", "Z_PK"), .equal, .column("j", destinationColumn)))
                    ],
                    filter: .and(filter))
            default:
                return nil
            }
        }

        // MARK: Predicates

        mutating func predicate(_ predicate: NSPredicate, alias: String = "t0", mapping: SQLSchema.Entity? = nil)
            -> SQLExpression?
        {
            switch predicate {
            case let constant as ConstantPredicate:
                return .boolean(constant.value)
            case let compound as NSCompoundPredicate:
                var parts: [SQLExpression] = []
                for sub in Self.operands(of: compound) {
                    guard let condition = self.predicate(sub, alias: alias, mapping: mapping) else { return nil }
                    parts.append(condition)
                }
                switch compound.compoundPredicateType {
                case .not: return parts.count == 1 ? .not(parts[0]) : nil
                case .and: return .and(parts)
                case .or: return .or(parts)
                }
            case let comparison as NSComparisonPredicate:
                return self.comparison(comparison, alias: alias, mapping: mapping)
            default:
                return nil
            }
        }

        /// The operands of an AND or OR with nested ANDs in an AND (ORs in an OR) taken apart, so
        /// that `a OR b OR c` — parsed as `(a OR b) OR c` — is one flat SQL list: a parenthesis per
        /// term would overflow a database's parser stack (SQLite's after about 100 terms).
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

        /// Whether the constant is NaN or a collection holding NaN. A number is never a collection:
        /// it is not asked for elements, so a long `IN` list of numbers is not asked, number by
        /// number, whether it conforms to the collection protocols (a dynamic cast each).
        private static func containsNaN(_ value: Any?) -> Bool {
            guard let value = DynamicValue.unwrap(value) else { return false }
            if integers(value) != nil { return false }
            if let number = DynamicValue.number(value) {
                if case .double(let double) = number { return double.isNaN }
                return false
            }
            if let elements = DynamicValue.elements(value) { return elements.contains { containsNaN($0) } }
            return false
        }

        /// `value` when it is a Swift array of `Int` exactly (what `id IN %@` with an array of
        /// IDs is given), read without a cast per element; `nil` for anything else, an array of
        /// `NSNumber` included, which the general path reads element by element.
        @inline(__always)
        private static func integers(_ value: Any) -> [Int]? {
            type(of: value) == [Int].self ? value as? [Int] : nil
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
            _ comparison: NSComparisonPredicate, alias: String, mapping: SQLSchema.Entity?
        ) -> SQLExpression? {
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
            // A database may bind NaN as NULL (SQLite does), which `IS` would match: a NaN
            // constant is judged in memory, where it equals nothing and is unequal to everything.
            guard isConstant, !Self.containsNaN(value) else { return nil }
            guard let term = term(components, alias: alias, mapping: mapping) else { return nil }
            let options = comparison.options
            switch comparison.comparisonPredicateModifier {
            case .direct:
                return direct(term, type, options, value)
            case .any, .all:
                guard case .toMany(let owner, let ownerMapping, let slot, let rest) = term, !rest.isEmpty,
                    var rows = membership(owner: owner, mapping: ownerMapping, slot: slot),
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
                guard case .and(var terms)? = rows.filter else { return nil }
                switch self.term(rest, alias: "d", mapping: schema[destination]) {
                case .attribute(let column, _)?, .object(let column, _, _)?: terms.append(.isNotNull(column))
                default: break
                }
                let any = comparison.comparisonPredicateModifier == .any
                terms.append(any ? condition : .not(condition))
                rows.filter = .and(terms)
                rows.columns = [.integer(1)]
                return any ? .exists(rows) : .not(.exists(rows))
            @unknown default:
                return nil
            }
        }

        /// The key of an object constant: its primary key in this store, or -1, which no row has.
        private func objectKey(_ value: Any?) -> SQLValue? {
            switch DynamicValue.unwrap(value) {
            case nil: return .null
            case let object as NSManagedObject:
                return .integer(object.objectID.sqlKey ?? -1)
            case let id as NSManagedObjectID:
                return .integer(id.sqlKey ?? -1)
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
        ) -> SQLExpression? {
            switch term {
            case .object(let column, _, _):
                switch type {
                case .equalTo, .notEqualTo:
                    guard let key = objectKey(value) else { return nil }
                    if type == .equalTo, key != .null {
                        return .falseIfNull(.compare(column, .equal, .parameter(key)))
                    }
                    return .compare(column, type == .equalTo ? .same : .notSame, .parameter(key))
                case .in:
                    guard let elements = DynamicValue.unwrap(value).flatMap(DynamicValue.elements) else { return nil }
                    var keys: [SQLExpression] = []
                    for element in elements {
                        guard let key = objectKey(element), key != .null else { return nil }
                        keys.append(.parameter(key))
                    }
                    return keys.isEmpty ? .boolean(false) : .falseIfNull(.inList(column, keys))
                default:
                    return nil
                }
            case .attribute(let column, let attributeType):
                return attributeComparison(column, attributeType, type, options, value)
            case .scalar(let subquery, let attributeType):
                return attributeComparison(subquery, attributeType ?? .doubleAttributeType, type, options, value)
            case .toMany:
                return nil
            }
        }

        /// `value` as an SQL database compares it with a string attribute's column for equality:
        /// an integer takes the column's TEXT affinity and is compared as its decimal text, so
        /// `name == 9` and `name IN {9, 10}` match the strings "9" and "10", as Apple's SQLite
        /// store finds them (SQLite, "Type Conversions Prior To Comparison": a bound value meeting
        /// a TEXT column is converted to text). Other values are left as they are.
        private static func asText(_ value: Any?, for attributeType: NSAttributeType) -> Any? {
            guard attributeType == .stringAttributeType, let present = DynamicValue.unwrap(value),
                !(present is String), !(present is Date), let integer = DynamicValue.number(present)?.exactInt
            else { return value }
            return String(integer)
        }

        private func attributeComparison(
            _ column: SQLExpression, _ attributeType: NSAttributeType, _ type: NSComparisonPredicate.Operator,
            _ options: NSComparisonPredicate.Options, _ value: Any?
        ) -> SQLExpression? {
            let isString = attributeType == .stringAttributeType
            let value = type == .equalTo || type == .notEqualTo ? Self.asText(value, for: attributeType) : value
            let folds = isString && !options.subtracting([.normalized]).isEmpty
            switch type {
            case .equalTo, .notEqualTo, .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
                guard Self.kindMatches(attributeType, value) else { return nil }
                if folds || (isString && type != .equalTo && type != .notEqualTo) {
                    // String order and folded equality follow the in-memory rules exactly.
                    guard let string = DynamicValue.unwrap(value) as? String else { return nil }
                    return stringMatch(column, type, options, string)
                }
                guard let parameter = SQLValues.parameter(value, type: attributeType) else { return nil }
                switch type {
                case .equalTo where parameter != .null:
                    // Equal to a value: `=` with unknown read as false gives what `IS` gives, and
                    // an index serves it in every database (PostgreSQL's `IS NOT DISTINCT FROM`
                    // uses none).
                    return .falseIfNull(.compare(column, .equal, .parameter(parameter)))
                case .equalTo: return .compare(column, .same, .parameter(parameter))
                case .notEqualTo: return .compare(column, .notSame, .parameter(parameter))
                default:
                    guard parameter != .null else { return .boolean(false) }
                    let comparison: SQLComparison =
                        switch type {
                        case .lessThan: .less
                        case .lessThanOrEqualTo: .lessOrEqual
                        case .greaterThan: .greater
                        default: .greaterOrEqual
                        }
                    return .falseIfNull(.compare(column, comparison, .parameter(parameter)))
                }
            case .beginsWith, .endsWith, .like, .matches, .contains:
                guard isString, let string = DynamicValue.unwrap(value) as? String else { return nil }
                return stringMatch(column, type, options, string)
            case .in:
                if let integers = DynamicValue.unwrap(value).flatMap(Self.integers), !integers.isEmpty,
                    let list = Self.parameters(integers, type: attributeType)
                {
                    return .falseIfNull(.inList(column, list))
                }
                guard let elements = DynamicValue.unwrap(value).flatMap(DynamicValue.elements) else { return nil }
                if elements.isEmpty { return .boolean(false) }
                if folds { return nil }
                var list: [SQLExpression] = []
                for element in elements.map({ Self.asText($0, for: attributeType) }) {
                    guard DynamicValue.unwrap(element) != nil, Self.kindMatches(attributeType, element),
                        let parameter = SQLValues.parameter(element, type: attributeType)
                    else { return nil }
                    list.append(.parameter(parameter))
                }
                return .falseIfNull(.inList(column, list))
            case .between:
                guard !isString, let bounds = DynamicValue.unwrap(value).flatMap(DynamicValue.elements),
                    bounds.count == 2,
                    bounds.allSatisfy({ DynamicValue.unwrap($0) != nil && Self.kindMatches(attributeType, $0) }),
                    let low = SQLValues.parameter(bounds[0], type: attributeType),
                    let high = SQLValues.parameter(bounds[1], type: attributeType)
                else { return nil }
                return .falseIfNull(.between(column, low: .parameter(low), high: .parameter(high)))
            case .customSelector:
                return nil
            }
        }

        /// The parameters of an `IN` list of integers compared with a number column, as
        /// ``SQLValues/parameter(_:type:)`` makes each (an integer kept exact for an integer or
        /// Boolean column, a real for a floating-point one) without a dynamic cast per element;
        /// `nil` for another type.
        private static func parameters(_ integers: [Int], type: NSAttributeType) -> [SQLExpression]? {
            switch type {
            case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .booleanAttributeType:
                return integers.map { .parameter(.integer(Int64($0))) }
            case .doubleAttributeType, .floatAttributeType:
                return integers.map { .parameter(.real(Double($0))) }
            default:
                return nil
            }
        }

        /// A string comparison under the in-memory rules, when the dialect can judge it in SQL.
        private func stringMatch(
            _ column: SQLExpression, _ type: NSComparisonPredicate.Operator, _ options: NSComparisonPredicate.Options,
            _ string: String
        ) -> SQLExpression? {
            guard let parameter = dialect.stringMatchParameter(type, options, string) else { return nil }
            return .stringMatch(operator: type, options: options, column, .parameter(parameter))
        }

        // MARK: Sorting

        /// The ORDER BY term of a descriptor on an attribute path; `nil` when the descriptor must
        /// sort in memory. Numbers and dates sort by `compare:` as SQL orders them; strings by
        /// any of the string selectors, through the collation that runs the in-memory comparison.
        mutating func sortKey(_ descriptor: NSSortDescriptor) -> SQLSelect.Order? {
            guard let key = descriptor.key, !descriptor.hasComparator else { return nil }
            let selector = descriptor.selector?.name ?? "compare:"
            guard case .attribute(let column, let type)? = term(KeyPathComponents(key).components) else { return nil }
            if type == .stringAttributeType {
                guard dialect.collation(forSelector: selector) != nil else { return nil }
                return SQLSelect.Order(expression: column, selector: selector, descending: !descriptor.ascending)
            }
            guard selector == "compare:" else { return nil }
            return SQLSelect.Order(expression: column, descending: !descriptor.ascending)
        }
    }
}
