import CoreData

/// Checks the key paths a user typed against the entity, so an unknown key is a usage error
/// instead of a failure deep in a fetch.
enum KeyPaths {
    /// A key path of `entity`: each step a property, relationships leading on; `@count`, `@sum`…
    /// and what follows an attribute are not checked further.
    static func check(_ keyPath: String, in entity: NSEntityDescription) throws {
        var current = entity
        for component in keyPath.split(separator: ".").map(String.init) {
            if component.hasPrefix("@") || component == "self" || component == "SELF" { return }
            if let relationship = current.relationshipsByName[component] {
                guard let destination = relationship.destinationEntity else { return }
                current = destination
                continue
            }
            if current.propertiesByName[component] != nil || hasSubentityProperty(component, current) { return }
            throw ToolError.usage("unknown key '\(component)' in entity \(current.name ?? "?") (in '\(keyPath)')")
        }
    }

    /// Every key path a predicate compares, checked against `entity`.
    static func check(_ predicate: NSPredicate, in entity: NSEntityDescription) throws {
        switch predicate {
        case let compound as NSCompoundPredicate:
            for case let sub as NSPredicate in compound.subpredicates { try check(sub, in: entity) }
        case let comparison as NSComparisonPredicate:
            try check(comparison.leftExpression, in: entity)
            try check(comparison.rightExpression, in: entity)
        default:
            break
        }
    }

    private static func check(_ expression: NSExpression, in entity: NSEntityDescription) throws {
        switch expression.expressionType {
        case .keyPath:
            try check(expression.keyPath, in: entity)
        case .function:
            for argument in expression.arguments ?? [] { try check(argument, in: entity) }
        default:
            break
        }
    }

    private static func hasSubentityProperty(_ name: String, _ entity: NSEntityDescription) -> Bool {
        entity.subentities.contains { $0.propertiesByName[name] != nil || hasSubentityProperty(name, $0) }
    }
}
