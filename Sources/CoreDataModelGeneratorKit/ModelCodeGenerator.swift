import Foundation
import OpenCoreData

/// Xcode's code generation for a model's entities (Xcode's "Generating code" article; the Codegen
/// setting of each entity, `codeGenerationType` in the model source): Class Definition (`"class"`)
/// writes `<Class>+CoreDataClass.swift` with the class and `<Class>+CoreDataProperties.swift` with
/// its properties; Category/Extension (`"category"`) writes only the properties, the app writes
/// the class; Manual/None writes nothing.
///
/// The output follows Xcode's: the class name from the entity's class (`representedClassName`),
/// the parent entity's class as superclass, `public` declarations, a typed `fetchRequest()`, one
/// `@NSManaged` property per attribute and relationship of the entity itself with Xcode's Swift
/// types, the to-many accessors Xcode generates, and `Identifiable` (on root entities; a sub-entity's class
/// inherits it). Two differences, both because
/// Swift on Linux has no Objective-C: no `@objc(…)` lines, and the accessors of the `@NSManaged`
/// declarations come from this generator too (`AccessorGenerator`).
public enum ModelCodeGenerator {
    /// One generated file.
    public struct File: Equatable, Sendable {
        /// Xcode's file name, such as `Book+CoreDataClass.swift`.
        public let name: String
        public let text: String

        /// A file named `name` holding `text`.
        public init(name: String, text: String) {
            self.name = name
            self.text = text
        }
    }

    /// The files Xcode would generate for the model source at `url` (an `.xcdatamodeld`, whose
    /// current version is used, or an `.xcdatamodel`).
    ///
    /// - Throws: the model loading error (`NSCocoaErrorDomain`) when the file is not a model.
    public static func files(forModelAt url: URL) throws -> [File] {
        files(for: try NSManagedObjectModel(validatingContentsOf: url))
    }

    /// The files for each entity of `model` whose Codegen asks for them, in entity-name order;
    /// with `everyEntity`, every entity as Class Definition (what a test of every model uses).
    static func files(for model: NSManagedObjectModel, everyEntity: Bool = false) -> [File] {
        var files: [File] = []
        for entity in model.entities.sorted(by: { ($0.name ?? "") < ($1.name ?? "") }) {
            guard let codegen = everyEntity ? "class" : entity.codeGenerationType,
                codegen == "class" || codegen == "category"
            else {
                continue
            }
            let name = className(entity)
            if codegen == "class" {
                files.append(File(name: "\(name)+CoreDataClass.swift", text: classFile(entity, name: name)))
            }
            files.append(File(name: "\(name)+CoreDataProperties.swift", text: propertiesFile(entity, name: name)))
        }
        return files
    }

    /// The entity's class name without a module prefix; the entity's name when it has none.
    static func className(_ entity: NSEntityDescription) -> String {
        var name = entity.managedObjectClassName ?? ""
        for prefix in ["$(PRODUCT_MODULE_NAME).", "."] where name.hasPrefix(prefix) {
            name.removeFirst(prefix.count)
        }
        if let dot = name.lastIndex(of: ".") { name = String(name[name.index(after: dot)...]) }
        if name.isEmpty || name == "NSManagedObject" { return entity.name ?? "NSManagedObject" }
        return name
    }

    private static func header(_ file: String) -> String {
        """
        //
        //  \(file)
        //
        //  This file was automatically generated and should not be edited.
        //  (OpenCoreData's CoreDataModelGenerator, as Xcode generates it.)
        //

        import Foundation
        import CoreData

        """
    }

    private static func classFile(_ entity: NSEntityDescription, name: String) -> String {
        let superclass = entity.superentity.map(className) ?? "NSManagedObject"
        return header("\(name)+CoreDataClass.swift") + """

            public class \(name): \(superclass) {

            }

            """
    }

    private static func propertiesFile(_ entity: NSEntityDescription, name: String) -> String {
        let own = entity.properties.filter { property in
            guard let parent = entity.superentity else { return true }
            return parent.propertiesByName[property.name] == nil
        }
        .sorted { $0.name < $1.name }
        var text = header("\(name)+CoreDataProperties.swift")
        text += """


            extension \(name) {

                @nonobjc public class func fetchRequest() -> NSFetchRequest<\(name)> {
                    return NSFetchRequest<\(name)>(entityName: "\(entity.name ?? name)")
                }


            """
        for property in own {
            guard let type = swiftType(property) else { continue }
            text += "    @NSManaged public var \(property.name): \(type)\n"
        }
        text += "\n}\n"
        for case let relationship as NSRelationshipDescription in own where relationship.isToMany {
            text += toManyAccessors(relationship, owner: name)
        }
        // A sub-entity's class inherits the conformance of its parent's.
        if entity.superentity == nil {
            text += """

                extension \(name) : Identifiable {

                }

                """
        }
        return text
    }

    /// Xcode's Swift type of a property; `nil` for a fetched property (not generated here).
    static func swiftType(_ property: NSPropertyDescription) -> String? {
        switch property {
        case let relationship as NSRelationshipDescription:
            if relationship.isToMany { return relationship.isOrdered ? "NSOrderedSet?" : "NSSet?" }
            return (relationship.destinationEntity.map(className) ?? "NSManagedObject") + "?"
        case let attribute as NSAttributeDescription:
            let scalar = attribute.usesScalarValueType
            switch attribute.attributeType {
            case .integer16AttributeType: return scalar ? "Int16" : "NSNumber?"
            case .integer32AttributeType: return scalar ? "Int32" : "NSNumber?"
            case .integer64AttributeType: return scalar ? "Int64" : "NSNumber?"
            case .floatAttributeType: return scalar ? "Float" : "NSNumber?"
            case .doubleAttributeType: return scalar ? "Double" : "NSNumber?"
            case .booleanAttributeType: return scalar ? "Bool" : "NSNumber?"
            case .decimalAttributeType: return "NSDecimalNumber?"
            case .stringAttributeType: return "String?"
            case .dateAttributeType: return "Date?"
            case .binaryDataAttributeType: return "Data?"
            case .UUIDAttributeType: return "UUID?"
            case .URIAttributeType: return "URL?"
            case .objectIDAttributeType: return "NSManagedObjectID?"
            // Apple's documentation declares a composite as the dictionary that holds it in memory.
            case .compositeAttributeType: return "[String: Any]?"
            case .transformableAttributeType:
                return (attribute.customClassName.flatMap { $0.isEmpty ? nil : $0 } ?? "NSObject") + "?"
            default: return "NSObject?"
            }
        default:
            return nil
        }
    }

    /// The accessors Xcode generates for a to-many: four for an unordered one, ten for an
    /// ordered one, named after the relationship with its first letter uppercased.
    private static func toManyAccessors(_ relationship: NSRelationshipDescription, owner: String) -> String {
        let key = relationship.name.prefix(1).uppercased() + relationship.name.dropFirst()
        let member = relationship.destinationEntity.map(className) ?? "NSManagedObject"
        var lines: [String] = []
        if relationship.isOrdered {
            lines += [
                "@NSManaged public func insertInto\(key)(_ value: \(member), at idx: Int)",
                "@NSManaged public func removeFrom\(key)(at idx: Int)",
                "@NSManaged public func insertInto\(key)(_ values: [\(member)], at indexes: NSIndexSet)",
                "@NSManaged public func removeFrom\(key)(at indexes: NSIndexSet)",
                "@NSManaged public func replace\(key)(at idx: Int, with value: \(member))",
                "@NSManaged public func replace\(key)(at indexes: NSIndexSet, with values: [\(member)])",
            ]
        }
        let collection = relationship.isOrdered ? "NSOrderedSet" : "NSSet"
        lines += [
            "@NSManaged public func addTo\(key)(_ value: \(member))",
            "@NSManaged public func removeFrom\(key)(_ value: \(member))",
            "@NSManaged public func addTo\(key)(_ values: \(collection))",
            "@NSManaged public func removeFrom\(key)(_ values: \(collection))",
        ]
        return "\n// MARK: Generated accessors for \(relationship.name)\nextension \(owner) {\n\n"
            + lines.map { "    \($0)\n" }.joined(separator: "\n") + "\n}\n"
    }
}
