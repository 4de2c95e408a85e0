import ArgumentParser
import CoreData

/// `coredata export STORE`: every object as JSON (see ``ExportFormat``).
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write every object of a store as JSON.",
        discussion: """
            The format round-trips every attribute type and relationship: export, import into an \
            empty store, export again, and the output is identical. Each entity lists its objects \
            in key order; "@id" is <Entity>/<n>; relationships refer to @ids; dates are seconds \
            since 2001-01-01 UTC; data is base64; decimals are strings. The documentation's article on \
            the coredata tool has the whole format.
            """)

    @Argument(help: "The store: a SQLite, XML or binary file, or a postgres:// URL.") var store: String
    @Option(help: "json (the only format).") var format = "json"
    @Option(help: "The model file; default: the model cached in the store.") var model: String?
    @Option(name: .shortAndLong, help: "Write to this file instead of standard output.") var output: String?

    func validate() throws {
        guard format == "json" else { throw ValidationError("--format: only json is supported") }
    }

    func run() throws {
        // Transformable values as the bytes stored: re-archiving them would not give the same bytes.
        let opened = try OpenedStore.open(store, modelPath: model, transformablesAsData: true)
        let document = try Self.document(opened)
        let data = try JSONSerialization.data(
            withJSONObject: document, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        if let output {
            try (data + Data("\n".utf8)).write(to: URL(fileURLWithPath: output))
        } else {
            FileHandle.standardOutput.write(data + Data("\n".utf8))
        }
    }

    /// The export document of an opened store.
    static func document(_ opened: OpenedStore) throws -> [String: Any] {
        let entities = opened.model.entities.sorted { ($0.name ?? "") < ($1.name ?? "") }
        // Objects of exactly each entity, in key order, and the @id of every object.
        var objectsByEntity: [String: [NSManagedObject]] = [:]
        var identifiers: [NSManagedObjectID: String] = [:]
        var total = 0
        for entity in entities {
            let name = entity.name ?? ""
            let request = NSFetchRequest<NSManagedObject>(entityName: name)
            request.includesSubentities = false
            request.returnsObjectsAsFaults = false
            let objects = try opened.context.fetch(request).sorted { key($0.objectID) < key($1.objectID) }
            for (index, object) in objects.enumerated() { identifiers[object.objectID] = "\(name)/\(index + 1)" }
            objectsByEntity[name] = objects
            total += objects.count
        }
        let progress = ProgressBar("exporting", total: total)
        var done = 0
        var result: [String: Any] = [:]
        for entity in entities {
            let name = entity.name ?? ""
            let properties = ExportFormat.properties(of: entity)
            result[name] = (objectsByEntity[name] ?? []).map { object -> [String: Any] in
                var json: [String: Any] = ["@id": identifiers[object.objectID] ?? "?"]
                for property in properties {
                    let value = object.value(forKey: property.name)
                    switch property {
                    case let attribute as NSAttributeDescription:
                        json[property.name] = ExportFormat.encode(value, attribute)
                    case let relationship as NSRelationshipDescription:
                        json[property.name] = reference(value, relationship, identifiers)
                    default:
                        break
                    }
                }
                done += 1
                progress.update(done)
                return json
            }
        }
        progress.finish()
        return ["format": ExportFormat.name, "version": ExportFormat.version, "entities": result]
    }

    /// The primary key in an object ID's URI (`…/p<key>`), for key order.
    static func key(_ id: NSManagedObjectID) -> Int {
        Int(id.uriRepresentation().lastPathComponent.dropFirst()) ?? Int.max
    }

    private static func reference(
        _ value: Any?, _ relationship: NSRelationshipDescription, _ identifiers: [NSManagedObjectID: String]
    ) -> Any {
        func id(_ object: Any) -> String? { (object as? NSManagedObject).flatMap { identifiers[$0.objectID] } }
        guard relationship.isToMany else { return value.flatMap(id) ?? NSNull() }
        if let ordered = value as? NSOrderedSet { return ordered.array.compactMap(id) }
        if let set = value as? NSSet { return set.allObjects.compactMap(id).sorted(by: referenceOrder) }
        if let set = value as? Set<NSManagedObject> { return set.compactMap(id).sorted(by: referenceOrder) }
        return [String]()
    }

    /// `Entity/2` before `Entity/10`.
    static func referenceOrder(_ a: String, _ b: String) -> Bool {
        let (entityA, numberA) = split(a)
        let (entityB, numberB) = split(b)
        return entityA != entityB ? entityA < entityB : numberA < numberB
    }

    static func split(_ reference: String) -> (String, Int) {
        guard let slash = reference.lastIndex(of: "/") else { return (reference, 0) }
        return (String(reference[..<slash]), Int(reference[reference.index(after: slash)...]) ?? 0)
    }
}
