import ArgumentParser
import CoreData

/// `coredata query STORE ENTITY`: objects of one entity, filtered, sorted and windowed.
struct QueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Print the objects of an entity, with a predicate, sort and window.",
        discussion: """
            Relationships print as object-ID URIs (x-coredata://<store UUID>/<Entity>/p<key>). \
            Example: coredata query Company.sqlite Employee --where "salary > 5000 AND \
            department.name BEGINSWITH[c] 'r'" --sort department.name,salary:desc --limit 10
            """)

    @Argument(help: "The store: a SQLite, XML or binary file, or a postgres:// URL.") var store: String
    @Argument(help: "The entity to fetch (sub-entities included).") var entity: String
    @Option(name: .customLong("where"), help: "A predicate in Core Data's format syntax.") var predicate: String?
    @Option(help: "Sort keys, comma-separated; append :desc to sort one descending.") var sort: String?
    @Option(help: "At most this many objects.") var limit: Int?
    @Option(help: "Skip this many objects first.") var offset: Int?
    @Option(help: "The key paths to print, comma-separated (default: attributes and to-one relationships).")
    var fields: String?
    @Option(help: "table, json or csv.") var format: OutputFormat = .table
    @Flag(help: "Print only the number of matching objects.") var count = false
    @Option(help: "The model file; default: the model cached in the store.") var model: String?

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must not be negative") }
        if let offset, offset < 0 { throw ValidationError("--offset must not be negative") }
    }

    func run() throws {
        let opened = try OpenedStore.open(store, modelPath: model)
        let entity = try opened.entity(self.entity)
        let request = NSFetchRequest<NSManagedObject>(entityName: self.entity)
        request.predicate = try Self.predicate(predicate, entity: entity)
        request.sortDescriptors = try Self.sortDescriptors(sort, entity: entity)
        request.fetchLimit = limit ?? 0
        request.fetchOffset = offset ?? 0
        if count {
            let total = try opened.context.count(for: request)
            Swift.print(total)
            return
        }
        let columns = try Self.fields(fields, entity: entity)
        request.returnsObjectsAsFaults = false
        let objects = try opened.context.fetch(request)
        let rows = objects.map { object in
            var row: [String: Any] = [:]
            for column in columns {
                if column == "objectID" {
                    row[column] = object.objectID
                } else {
                    row[column] = Self.value(object, column)
                }
            }
            return row
        }
        try RowPrinter.print(rows, columns: columns, format: format)
    }

    /// The value of a key path; a key only a sub-entity has is nil on the others.
    static func value(_ root: NSManagedObject, _ keyPath: String) -> Any? {
        let components = keyPath.split(separator: ".").map(String.init)
        var object = root
        for (index, component) in components.enumerated() {
            if index + 1 < components.count, components[index + 1].hasPrefix("@") {
                // A collection operator: key-value coding from here on.
                return object.value(forKeyPath: components[index...].joined(separator: "."))
            }
            guard object.entity.propertiesByName[component] != nil else { return nil }
            let value = object.value(forKey: component)
            if index == components.count - 1 { return value }
            guard let next = value as? NSManagedObject else { return nil }
            object = next
        }
        return object
    }

    /// The parsed predicate; a malformed one is a usage error showing where it went wrong.
    static func predicate(_ format: String?, entity: NSEntityDescription) throws -> NSPredicate? {
        guard let format else { return nil }
        let predicate: NSPredicate
        do {
            predicate = try NSPredicate(validatingFormat: format, argumentArray: nil)
        } catch {
            let description = (error as? NSPredicateFormatError)?.description ?? ToolError.describe(error)
            throw ToolError.usage("malformed predicate: \(description)")
        }
        try KeyPaths.check(predicate, in: entity)
        return predicate
    }

    /// `key[,key:desc]` as sort descriptors (strings compare as `compare:` does).
    static func sortDescriptors(_ text: String?, entity: NSEntityDescription) throws -> [NSSortDescriptor]? {
        guard let text else { return nil }
        return try text.split(separator: ",").map { part in
            let pieces = part.split(separator: ":").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let key = pieces.first, !key.isEmpty, pieces.count <= 2 else {
                throw ToolError.usage("malformed sort key '\(part)': use key or key:desc")
            }
            let direction = pieces.count == 2 ? pieces[1].lowercased() : "asc"
            guard direction == "asc" || direction == "desc" else {
                throw ToolError.usage("malformed sort key '\(part)': the direction is asc or desc")
            }
            try KeyPaths.check(key, in: entity)
            return NSSortDescriptor(key: key, ascending: direction == "asc")
        }
    }

    /// The columns to print: the listed key paths, or the entity's stored attributes and to-one
    /// relationships (a key only a sub-entity has, too), after `objectID`.
    static func fields(_ text: String?, entity: NSEntityDescription) throws -> [String] {
        if let text {
            let keys = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            for key in keys where key != "objectID" { try KeyPaths.check(key, in: entity) }
            return keys
        }
        var names = ["objectID"]
        func collect(_ entity: NSEntityDescription) {
            for property in entity.properties where !names.contains(property.name) {
                switch property {
                case let attribute as NSAttributeDescription where !attribute.isTransient:
                    names.append(attribute.name)
                case let relationship as NSRelationshipDescription where !relationship.isToMany:
                    names.append(relationship.name)
                default:
                    break
                }
            }
            for sub in entity.subentities { collect(sub) }
        }
        collect(entity)
        return names
    }
}
