/// Checks a model just read from a file — Xcode's source (`.xcdatamodel`) or a compiled one
/// (`.mom`, a store's cached model) — for what Xcode would refuse to build, so that a damaged or
/// hostile file is an error when it loads rather than a crash or a wrong answer later:
///
/// * a stored attribute without a type (Xcode: "must have a defined type"; undefined is for
///   transient attributes only);
/// * a relationship count below zero (a maximum of −1, which Apple writes, means no limit);
/// * an inverse whose destination is not the relationship's entity, one of its superentities or
///   one of its subentities — graph maintenance would set the wrong objects;
/// * a uniqueness constraint or index naming a property the entity does not have;
/// * two entities with the same name — models find entities by name;
/// * two properties of one entity (its own or inherited) with the same name — Apple's compiled
///   models key properties by name, so Xcode never writes such a file, and an inverse naming
///   that name would lead to either.
///
/// What Xcode accepts with a warning stays a warning here (``ModelWarnings``): a minimum or
/// maximum that is not a number is ignored, as validation ignores it.
enum ModelConsistency {
    /// - Throws: ``ModelProblem`` naming the entity and property at fault.
    static func check(_ entities: [NSEntityDescription], path: String?) throws {
        var entityNames = Set<String>()
        for entity in entities where !entityNames.insert(entity.name ?? "").inserted {
            // Models find entities by name; Xcode never writes two of one name.
            throw ModelProblem(message: "has two entities named \(entity.name ?? "")")
        }
        for entity in entities {
            let entityName = entity.name ?? ""
            var names = Set<String>()
            for property in entity.properties where !names.insert(property.name).inserted {
                throw ModelProblem(message: "gives entity \(entityName) two properties named \(property.name)")
            }
            let properties = entity.propertiesByName
            for property in entity.declaredProperties {
                let owner = "\(entityName).\(property.name)"
                if let attribute = property as? NSAttributeDescription {
                    try check(attribute, owner: owner, path: path)
                } else if let relationship = property as? NSRelationshipDescription {
                    try check(relationship, in: entity, owner: owner)
                }
            }
            for constraint in entity.uniquenessConstraints {
                for element in constraint {
                    let name = (element as? NSPropertyDescription)?.name ?? (element as? String) ?? "\(element)"
                    guard properties[name] != nil else {
                        throw ModelProblem(
                            message:
                                "gives entity \(entityName) a uniqueness constraint on the unknown property \(name)")
                    }
                }
            }
            let indexed =
                entity.compoundIndexNames.joined() + entity.indexes.flatMap(\.elements).compactMap(\.propertyName)
            for name in indexed where properties[name] == nil && !name.isEmpty {
                throw ModelProblem(message: "gives entity \(entityName) an index on the unknown property \(name)")
            }
        }
    }

    private static func check(_ attribute: NSAttributeDescription, owner: String, path: String?) throws {
        if attribute.attributeType == .undefinedAttributeType && !attribute.isTransient
            && !(attribute is NSDerivedAttributeDescription)
        {
            throw ModelProblem(
                message: "gives the stored attribute \(owner) no type (only a transient attribute may be undefined)")
        }
        let isNumeric: Bool
        switch attribute.attributeType {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .decimalAttributeType,
            .doubleAttributeType, .floatAttributeType, .dateAttributeType:
            isNumeric = true
        case .stringAttributeType, .binaryDataAttributeType:
            isNumeric = false
        default:
            return
        }
        func usable(_ text: String?, _ what: String) -> String? {
            guard let text else { return nil }
            let valid = isNumeric ? Double(text).map { !$0.isNaN } ?? false : Int(text).map { $0 >= 0 } ?? false
            if valid { return text }
            ModelWarnings.warn("ignores the \(what) \"\(text)\" of \(owner), which is not a number", path: path)
            return nil
        }
        attribute.minimumValueText = usable(attribute.minimumValueText, "minimum")
        attribute.maximumValueText = usable(attribute.maximumValueText, "maximum")
    }

    private static func check(
        _ relationship: NSRelationshipDescription, in entity: NSEntityDescription, owner: String
    ) throws {
        // Apple's compiled models write −1 for some unbounded to-manys (SampleModel2's
        // `Author.books`), and the version hash keeps it: −1 is "no limit", as 0 is.
        guard relationship.minCount >= 0, relationship.maxCount >= -1 else {
            throw ModelProblem(
                message:
                    "gives relationship \(owner) a negative count (minimum \(relationship.minCount), maximum \(relationship.maxCount))"
            )
        }
        guard let inverse = relationship.inverseRelationship, let back = inverse.destinationEntity else { return }
        if isRelated(back, entity) { return }
        throw ModelProblem(
            message:
                "gives relationship \(owner) the inverse \(inverse.entity?.name ?? "").\(inverse.name), which leads to \(back.name ?? "") instead"
        )
    }

    /// Whether `a` is `b`, one of its superentities or one of its subentities.
    private static func isRelated(_ a: NSEntityDescription, _ b: NSEntityDescription) -> Bool {
        func isAncestor(_ ancestor: NSEntityDescription, of entity: NSEntityDescription) -> Bool {
            var current: NSEntityDescription? = entity
            while let node = current {
                if node === ancestor { return true }
                current = node.superentity
            }
            return false
        }
        return isAncestor(a, of: b) || isAncestor(b, of: a)
    }
}
