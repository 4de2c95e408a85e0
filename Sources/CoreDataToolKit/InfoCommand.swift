import ArgumentParser
import CoreData

/// `coredata info STORE`: what the store is and what it holds.
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show a store's type, UUID, metadata and entities with their row counts.",
        discussion:
            "With --model, also whether the model's version hashes match the store's, and which entities differ; "
            + "and when the model's current version is not the store's, whether lightweight migration can move the "
            + "store to it and what each entity's migration does, or why a mapping model is needed.")

    @Argument(help: "The store: a SQLite, XML or binary file, or a postgres:// URL.") var store: String
    @Option(help: "A model file to compare with the store's version hashes.") var model: String?

    func run() throws {
        let url = try OpenedStore.existingFile(store)
        let metadata = try OpenedStore.readMetadata(url)
        print("Store:              \(OpenedStore.name(of: url))")
        print("Type:               \(metadata[NSStoreTypeKey] ?? "?")")
        print("UUID:               \(metadata[NSStoreUUIDKey] ?? "?")")
        print("Framework version:  \(metadata["NSPersistenceFrameworkVersion"] ?? "?")")
        print("Metadata keys:      \(metadata.keys.sorted().joined(separator: ", "))")
        var matches = true
        if let model {
            let loaded = try OpenedStore.loadModel(model, matching: metadata)
            let differing = Self.differingEntities(loaded, metadata)
            matches = differing.isEmpty
            print(
                "Model:              \(model) "
                    + (matches
                        ? "matches the store"
                        : "does not match the store; entities that differ: "
                            + differing.joined(separator: ", ")))
            let current = try OpenedStore.loadModel(model, matching: nil)
            if !Self.differingEntities(current, metadata).isEmpty {
                // The store's own model: the version of the given model that wrote it, or the
                // model cached in the store.
                let source = matches ? loaded : try? NSManagedObjectModel(contentsOfStoreAt: url)
                for line in Self.migration(from: source, to: current) { print(line) }
            }
        }
        // Count with the given model when it matches, else with the store's own.
        if model == nil, !OpenedStore.keepsItsModel(url) {
            print(
                "Entities:           (pass --model to count them: only SQLite and PostgreSQL stores keep their model)")
            return
        }
        let opened = try OpenedStore.open(store, modelPath: matches ? model : nil)
        print("Entities:           \(opened.usesCachedModel ? "(from the model cached in the store)" : "")")
        let entities = opened.model.entities.sorted { ($0.name ?? "") < ($1.name ?? "") }
        let width = entities.map { Self.label($0).count }.max() ?? 0
        for entity in entities {
            let request = NSFetchRequest<NSManagedObject>(entityName: entity.name ?? "")
            request.includesSubentities = false
            let count = try opened.context.count(for: request)
            print("  \(Self.label(entity).padding(toLength: width, withPad: " ", startingAt: 0))  \(count)")
        }
    }

    /// `Name` or `Name : Parent`.
    static func label(_ entity: NSEntityDescription) -> String {
        (entity.name ?? "?") + (entity.superentity.map { " : \($0.name ?? "?")" } ?? "")
    }

    /// What moving a store written with `source` to `destination` takes: the inferred mapping,
    /// entity by entity, or why it cannot be inferred.
    static func migration(from source: NSManagedObjectModel?, to destination: NSManagedObjectModel) -> [String] {
        guard let source else {
            return [
                "Migration:          unknown: the store has no cached model and the model has no version that wrote it"
            ]
        }
        do {
            let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: source, destinationModel: destination)
            return [
                "Migration:          to the model's current version, by lightweight migration (an inferred mapping):"
            ]
                + mapping.entityMappings.map { "  " + describe($0, source: source) }
        } catch let error as NSError {
            let reason = error.userInfo["reason"] as? String ?? error.localizedDescription
            return [
                "Migration:          to the model's current version, not by lightweight migration (\(reason)); it needs a mapping model"
            ]
        }
    }

    /// One entity mapping: `Post: hexColor ← color, new softDeleted, dropped content`.
    private static func describe(_ mapping: NSEntityMapping, source: NSManagedObjectModel) -> String {
        let from = mapping.sourceEntityName ?? ""
        let to = mapping.destinationEntityName ?? ""
        switch mapping.mappingType {
        case .addEntityMappingType: return "\(to): new entity"
        case .removeEntityMappingType: return "\(from): removed, with its rows"
        case .copyEntityMappingType: return "\(to): unchanged"
        default: break
        }
        var parts: [String] = []
        var read: Set<String> = []
        for property in (mapping.attributeMappings ?? []) + (mapping.relationshipMappings ?? []) {
            let name = property.name ?? ""
            guard let old = property.valueExpression?.arguments?.first?.constantValue as? String else {
                parts.append("new \(name)")
                continue
            }
            read.insert(old)
            if old != name { parts.append("\(name) ← \(old)") }
        }
        let stored = source.entitiesByName[from]?.properties.filter {
            !$0.isTransient && !($0 is NSFetchedPropertyDescription)
        }
        for property in stored ?? [] where !read.contains(property.name) { parts.append("dropped \(property.name)") }
        let label = from == to ? to : "\(from) → \(to)"
        return label + ": " + (parts.isEmpty ? "changed (each property as it was)" : parts.joined(separator: ", "))
    }

    /// Entities whose version hash differs between the model and the store, or that only one has.
    static func differingEntities(_ model: NSManagedObjectModel, _ metadata: [String: Any]) -> [String] {
        let stored = metadata[NSStoreModelVersionHashesKey] as? [String: Data] ?? [:]
        let current = model.entityVersionHashesByName
        return Set(stored.keys).union(current.keys).filter { stored[$0] != current[$0] }.sorted()
    }
}
