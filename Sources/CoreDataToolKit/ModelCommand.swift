import ArgumentParser
import CoreData

/// `coredata model MODEL-OR-STORE`: the entities of a model file or of the model cached in a store.
struct ModelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Describe a model: entities, attributes, relationships, inheritance, constraints, indexes.",
        discussion: """
            The argument is a model file (.xcdatamodeld, .xcdatamodel, .momd, .mom) or a store, \
            whose cached model is described. --dot writes a Graphviz entity-relationship diagram \
            instead; render it with: coredata model Model.xcdatamodeld --dot | dot -Tsvg > model.svg
            """)

    @Argument(help: "A model file or a SQLite store.") var path: String
    @Flag(help: "Write a Graphviz (dot) entity-relationship diagram.") var dot = false

    func run() throws {
        let model = try OpenedStore.modelFileOrCachedModel(path)
        print(dot ? ModelDescription.dot(model) : ModelDescription.text(model), terminator: "")
    }
}

/// A model as text or as a Graphviz diagram.
enum ModelDescription {
    static func entities(_ model: NSManagedObjectModel) -> [NSEntityDescription] {
        model.entities.sorted { ($0.name ?? "") < ($1.name ?? "") }
    }

    /// Xcode's name of an attribute type.
    static func typeName(_ type: NSAttributeType) -> String {
        switch type {
        case .integer16AttributeType: return "Integer 16"
        case .integer32AttributeType: return "Integer 32"
        case .integer64AttributeType: return "Integer 64"
        case .decimalAttributeType: return "Decimal"
        case .doubleAttributeType: return "Double"
        case .floatAttributeType: return "Float"
        case .stringAttributeType: return "String"
        case .booleanAttributeType: return "Boolean"
        case .dateAttributeType: return "Date"
        case .binaryDataAttributeType: return "Binary Data"
        case .UUIDAttributeType: return "UUID"
        case .URIAttributeType: return "URI"
        case .transformableAttributeType: return "Transformable"
        case .objectIDAttributeType: return "Object ID"
        case .compositeAttributeType: return "Composite"
        default: return "Undefined"
        }
    }

    static func deleteRuleName(_ rule: NSDeleteRule) -> String {
        switch rule {
        case .noActionDeleteRule: return "no action"
        case .nullifyDeleteRule: return "nullify"
        case .cascadeDeleteRule: return "cascade"
        case .denyDeleteRule: return "deny"
        @unknown default: return "unknown"
        }
    }

    static func text(_ model: NSManagedObjectModel) -> String {
        var out = ""
        for entity in entities(model) {
            var header = "entity \(entity.name ?? "?")"
            if let parent = entity.superentity { header += " : \(parent.name ?? "?")" }
            if entity.isAbstract { header += " (abstract)" }
            out += header + "\n"
            let own = entity.properties.filter { property in
                entity.superentity?.propertiesByName[property.name] == nil
            }
            let attributes = own.compactMap { $0 as? NSAttributeDescription }
            let relationships = own.compactMap { $0 as? NSRelationshipDescription }
            let width = own.map(\.name.count).max() ?? 0
            for attribute in attributes {
                var line = "  \(attribute.name.padding(toLength: width, withPad: " ", startingAt: 0))  "
                line += typeName(attribute.attributeType)
                var notes: [String] = []
                if attribute.isOptional { notes.append("optional") }
                if attribute.isTransient { notes.append("transient") }
                if let value = attribute.defaultValue { notes.append("default \(Values.text(value))") }
                if attribute.allowsExternalBinaryDataStorage { notes.append("external storage") }
                if attribute is NSDerivedAttributeDescription { notes.append("derived") }
                if !notes.isEmpty { line += " (" + notes.joined(separator: ", ") + ")" }
                out += line + "\n"
            }
            for relationship in relationships {
                var line = "  \(relationship.name.padding(toLength: width, withPad: " ", startingAt: 0))  "
                line += "\(relationship.isToMany ? "to-many" : "to-one") → "
                line += relationship.destinationEntity?.name ?? "?"
                var notes: [String] = []
                if relationship.isOrdered { notes.append("ordered") }
                if relationship.isOptional { notes.append("optional") }
                notes.append("inverse " + (relationship.inverseRelationship?.name ?? "none"))
                notes.append("delete " + deleteRuleName(relationship.deleteRule))
                if relationship.isTransient { notes.append("transient") }
                out += line + " (" + notes.joined(separator: ", ") + ")\n"
            }
            for property in own where !(property is NSAttributeDescription) && !(property is NSRelationshipDescription)
            {
                out += "  \(property.name.padding(toLength: width, withPad: " ", startingAt: 0))  fetched property\n"
            }
            for constraint in entity.uniquenessConstraints {
                let names = constraint.map { ($0 as? NSPropertyDescription)?.name ?? "\($0)" }
                out += "  unique (" + names.joined(separator: ", ") + ")\n"
            }
            for index in entity.indexes {
                let elements = index.elements.map { element in
                    (element.propertyName ?? element.property?.name ?? "?") + (element.isAscending ? "" : " desc")
                }
                out += "  index \(index.name) (" + elements.joined(separator: ", ") + ")\n"
            }
            out += "\n"
        }
        return out
    }

    /// A Graphviz digraph: one record per entity listing its attributes, an edge per
    /// relationship (each inverse pair once), dashed edges from sub-entities to their parents.
    static func dot(_ model: NSManagedObjectModel) -> String {
        func quoted(_ text: String) -> String {
            "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        func recordEscaped(_ text: String) -> String {
            var result = ""
            for character in text {
                if "{}|<>\\\"".contains(character) { result.append("\\") }
                result.append(character)
            }
            return result
        }
        var out = "digraph model {\n  rankdir=LR;\n  node [shape=record, fontname=\"Helvetica\"];\n"
        out += "  edge [fontname=\"Helvetica\", fontsize=10];\n"
        for entity in entities(model) {
            let name = entity.name ?? "?"
            let attributes = entity.properties.compactMap { $0 as? NSAttributeDescription }.filter { attribute in
                entity.superentity?.propertiesByName[attribute.name] == nil
            }
            let lines = attributes.map { recordEscaped("\($0.name): \(typeName($0.attributeType))") + "\\l" }
            let title = recordEscaped(entity.isAbstract ? "\(name) (abstract)" : name)
            out += "  \(quoted(name)) [label=\(quoted("{" + title + "|" + lines.joined() + "}"))];\n"
        }
        var drawn: Set<String> = []
        for entity in entities(model) {
            for relationship in entity.properties.compactMap({ $0 as? NSRelationshipDescription })
            where entity.superentity?.propertiesByName[relationship.name] == nil {
                let source = entity.name ?? "?"
                let destination = relationship.destinationEntity?.name ?? "?"
                let key = "\(source).\(relationship.name)"
                guard !drawn.contains(key) else { continue }
                drawn.insert(key)
                var label = relationship.name
                var attributes = ["arrowhead=\(relationship.isToMany ? "crow" : "normal")"]
                if let inverse = relationship.inverseRelationship, let inverseOwner = inverse.entity?.name {
                    drawn.insert("\(inverseOwner).\(inverse.name)")
                    label += " / \(inverse.name)"
                    attributes.append("dir=both")
                    attributes.append("arrowtail=\(inverse.isToMany ? "crow" : "normal")")
                }
                attributes.insert("label=\(quoted(label))", at: 0)
                out += "  \(quoted(source)) -> \(quoted(destination)) [\(attributes.joined(separator: ", "))];\n"
            }
            if let parent = entity.superentity {
                out +=
                    "  \(quoted(entity.name ?? "?")) -> \(quoted(parent.name ?? "?")) [style=dashed, arrowhead=empty];\n"
            }
        }
        return out + "}\n"
    }
}
