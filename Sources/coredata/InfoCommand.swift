import ArgumentParser
import CoreData

/// `coredata info STORE`: what the store is and what it holds.
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show a store's type, UUID, metadata and entities with their row counts.",
        discussion:
            "With --model, also whether the model's version hashes match the store's, and which entities differ.")

    @Argument(help: "The SQLite store file.") var store: String
    @Option(help: "A model file to compare with the store's version hashes.") var model: String?

    func run() throws {
        let url = try OpenedStore.existingFile(store)
        let metadata = try OpenedStore.readMetadata(url)
        print("Store:              \(url.path)")
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
        }
        // Count with the given model when it matches, else with the store's own.
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

    /// Entities whose version hash differs between the model and the store, or that only one has.
    static func differingEntities(_ model: NSManagedObjectModel, _ metadata: [String: Any]) -> [String] {
        let stored = metadata[NSStoreModelVersionHashesKey] as? [String: Data] ?? [:]
        let current = model.entityVersionHashesByName
        return Set(stored.keys).union(current.keys).filter { stored[$0] != current[$0] }.sorted()
    }
}
