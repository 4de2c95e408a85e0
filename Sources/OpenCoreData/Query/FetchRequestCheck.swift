/// Checks the key paths of a fetch against its entity before the fetch runs, so a key the model
/// does not have — in the predicate (through to-ones, to-manys, `ANY`, `SUBQUERY`, `%K`), in a
/// sort descriptor, or among the properties to fetch or group by (names, property descriptions,
/// expression descriptions' expressions) — is a thrown error instead of a trap deep inside
/// key-value coding.
///
/// Apple's SQLite store refuses such a fetch too, raising "keypath … not found in entity"; keys
/// can come from users (a search field, `coredata query --where`), so here it is a Cocoa error.
///
/// The walk uses its own stack, not recursion: a predicate can be long (a flat `AND` of 100,000
/// terms) as well as deep.
enum FetchRequestCheck {
    /// Keys every managed object answers besides its properties (`NSManagedObject` key-value coding).
    private static let objectKeys: Set<String> = [
        "self", "objectID", "entity", "managedObjectContext", "isInserted", "inserted", "isUpdated", "updated",
        "isDeleted", "deleted", "isFault", "fault", "hasChanges",
    ]

    /// - Throws: `NSCoreDataError` (134060) naming the key path and the entity.
    static func validate(_ request: NSFetchRequest<NSFetchRequestResult>, entity: NSEntityDescription) throws {
        if let predicate = request.predicate { try check(predicate, entity: entity) }
        for descriptor in request.sortDescriptors ?? [] {
            guard let key = descriptor.key else { continue }
            guard !key.isEmpty else {
                throw CoreDataError.make(
                    NSCoreDataError, "A sort descriptor of the fetch of \(entity.name ?? "") has an empty key.")
            }
            try checkPath(KeyPathComponents(key).components, from: entity, whole: key, root: entity)
        }
        for property in (request.propertiesToFetch ?? []) + (request.propertiesToGroupBy ?? []) {
            try checkProperty(property, entity: entity)
        }
    }

    /// One element of `propertiesToFetch` or `propertiesToGroupBy`: a key path, a property of the
    /// entity, or an expression description whose expression reads key paths of the entity.
    private static func checkProperty(_ property: Any, entity: NSEntityDescription) throws {
        switch property {
        case let description as NSExpressionDescription:
            guard let expression = description.expression else { return }
            try walk([.expression(expression, [:])], entity: entity)
        case let description as NSPropertyDescription:
            try checkPath([description.name], from: entity, whole: description.name, root: entity)
        case let key as String:
            guard !key.isEmpty else {
                throw CoreDataError.make(
                    NSCoreDataError, "A property to fetch or group by of \(entity.name ?? "") has an empty name.")
            }
            try checkPath(KeyPathComponents(key).components, from: entity, whole: key, root: entity)
        default:
            throw CoreDataError.make(
                NSCoreDataError,
                "A property to fetch or group by of \(entity.name ?? "") is a \(type(of: property)), not a name, a property description or an expression description."
            )
        }
    }

    private enum Item {
        case predicate(NSPredicate, [String: NSEntityDescription])
        case expression(NSExpression, [String: NSEntityDescription])
    }

    private static func check(_ predicate: NSPredicate, entity: NSEntityDescription) throws {
        try walk([.predicate(predicate, [:])], entity: entity)
    }

    /// Checks every key path `items` reach, predicates and expressions alike.
    private static func walk(_ items: [Item], entity: NSEntityDescription) throws {
        var stack = items
        while let item = stack.popLast() {
            switch item {
            case .predicate(let predicate, let variables):
                if let comparison = predicate as? NSComparisonPredicate {
                    stack.append(.expression(comparison.leftExpression, variables))
                    stack.append(.expression(comparison.rightExpression, variables))
                } else if let compound = predicate as? NSCompoundPredicate {
                    for sub in compound.predicates { stack.append(.predicate(sub, variables)) }
                }
            case .expression(let expression, let variables):
                switch expression.node {
                case .keyPath(let operand, let path):
                    switch operand?.node {
                    case nil, .evaluatedObject?:
                        try checkPath(path.components, from: entity, whole: nil, root: entity)
                    case .variable(let name)?:
                        if let bound = variables[name] {
                            try checkPath(path.components, from: bound, whole: nil, root: entity)
                        }
                    case .subquery(let collection, _, _)?:
                        // `SUBQUERY(…).key`: the key applies to the objects the subquery keeps.
                        if let kept = destination(of: collection, entity: entity, variables: variables) {
                            try checkPath(path.components, from: kept, whole: nil, root: entity)
                        }
                        stack.append(.expression(operand!, variables))
                    case .some:
                        stack.append(.expression(operand!, variables))
                    }
                case .function(_, let operand, let arguments):
                    if let operand { stack.append(.expression(operand, variables)) }
                    for argument in arguments { stack.append(.expression(argument, variables)) }
                case .aggregate(let elements):
                    for element in elements { stack.append(.expression(element, variables)) }
                case .union(let a, let b), .intersect(let a, let b), .minus(let a, let b):
                    stack.append(.expression(a, variables))
                    stack.append(.expression(b, variables))
                case .subquery(let collection, let variable, let predicate):
                    stack.append(.expression(collection, variables))
                    var inner = variables
                    inner[variable] = destination(of: collection, entity: entity, variables: variables)
                    stack.append(.predicate(predicate, inner))
                case .conditional(let predicate, let a, let b):
                    stack.append(.predicate(predicate, variables))
                    stack.append(.expression(a, variables))
                    stack.append(.expression(b, variables))
                case .block(_, let arguments):
                    for argument in arguments ?? [] { stack.append(.expression(argument, variables)) }
                case .constant, .evaluatedObject, .variable, .anyKey, .indexSymbol:
                    break
                }
            }
        }
    }

    /// The entity a `SUBQUERY`'s collection holds, when it is a key path ending at a relationship.
    private static func destination(
        of collection: NSExpression, entity: NSEntityDescription, variables: [String: NSEntityDescription]
    ) -> NSEntityDescription? {
        guard case .keyPath(let operand, let path) = collection.node else { return nil }
        var current: NSEntityDescription?
        switch operand?.node {
        case nil, .evaluatedObject?: current = entity
        case .variable(let name)?: current = variables[name]
        default: return nil
        }
        for component in path.components {
            guard let relationship = current?.relationshipsByName[component] else { return nil }
            current = relationship.destinationEntity
        }
        return current
    }

    /// Follows `components` from `entity`: properties by name, relationships to their destination,
    /// collection operators (`@count`, `@sum.salary`…) over the current entity. Past an attribute
    /// or fetched property the path reads into a value, which key-value coding answers.
    private static func checkPath(
        _ components: [String], from entity: NSEntityDescription, whole: String?, root: NSEntityDescription
    ) throws {
        var current = entity
        for component in components {
            if component.hasPrefix("@") { continue }
            if objectKeys.contains(component) { return }
            guard let property = current.propertiesByName[component] else {
                let path = whole ?? components.joined(separator: ".")
                throw CoreDataError.make(
                    NSCoreDataError,
                    "keypath \(path) not found in entity \(current.name ?? "")"
                        + (current === root ? "" : " (reached from \(root.name ?? ""))") + ".",
                    ["keyPath": path, "entity": current.name ?? ""])
            }
            guard let relationship = property as? NSRelationshipDescription,
                let destination = relationship.destinationEntity
            else { return }
            current = destination
        }
    }
}
