import ArgumentParser
import CoreData
import Foundation

/// `coredata migrate`: moves a store to a model's current version by lightweight migration, in
/// place (issue 23).
struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a store, in place, to a model's current version by lightweight migration.",
        discussion: """
            Says which model wrote the store (a version of --model, or the model cached in the \
            store) and what the migration changes, entity by entity; then migrates in one \
            transaction, so an interrupted migration leaves the store as it was. --dry-run only \
            says. Mapping models (--mapping) are not supported yet.
            """)

    @Argument(help: "The SQLite store file.") var store: String
    @Option(
        help: "The model to migrate to: the current version of an .xcdatamodeld or .momd, or one .xcdatamodel or .mom.")
    var model: String
    @Option(help: "A mapping model (.xcmappingmodel or .cdm). Not supported yet.") var mapping: String?
    @Flag(help: "Say what the migration would do, and change nothing.") var dryRun = false

    func run() throws {
        if let mapping {
            throw ToolError.usage(
                "--mapping \(mapping): migrating with mapping models is not supported yet; without --mapping the migration is inferred"
            )
        }
        let url = try OpenedStore.existingFile(store)
        let metadata = try OpenedStore.readMetadata(url)
        let destination = try OpenedStore.loadModel(model, matching: nil)
        print("Store:              \(url.path)")
        if destination.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) {
            print("Model:              \(model) is the store's own; nothing to migrate")
            return
        }
        let writer = try OpenedStore.loadModel(model, matching: metadata)
        if writer.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) {
            print("Written by:         \(Self.versionName(of: model, matching: metadata) ?? model)")
        } else {
            print("Written by:         a model not in \(model) (the model cached in the store is used)")
        }
        let source =
            writer.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata)
            ? writer : try? NSManagedObjectModel(contentsOfStoreAt: url)
        for line in InfoCommand.migration(from: source, to: destination) { print(line) }
        if dryRun {
            print("Dry run:            the store was not changed")
            return
        }
        let started = Date()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: destination)
        do {
            let opened = try coordinator.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: url,
                options: [
                    NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true,
                ])
            try coordinator.remove(opened)
        } catch {
            throw ToolError.data("\(url.path): the store was not migrated: \(Self.describe(error))")
        }
        print(String(format: "Migrated:           in place, in %.2f s", Date().timeIntervalSince(started)))
    }

    /// The name of the version of the model at `path` whose hashes are the store's.
    private static func versionName(of path: String, matching metadata: [String: Any]) -> String? {
        let url = URL(fileURLWithPath: path)
        guard ["xcdatamodeld", "momd"].contains(url.pathExtension) else { return url.lastPathComponent }
        return OpenedStore.matchingVersion(of: url, metadata: metadata).map {
            "\(url.lastPathComponent)/\($0.lastPathComponent)"
        }
    }

    /// A migration error on one line: its description, its reason, and the error under it.
    private static func describe(_ error: any Error) -> String {
        let nsError = error as NSError
        var text = ToolError.describe(error)
        if let reason = nsError.userInfo["reason"] as? String, !text.contains(reason) { text += " (\(reason))" }
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError {
            text += " — " + ToolError.describe(underlying)
            if let reason = underlying.userInfo["reason"] as? String, !text.contains(reason) { text += " (\(reason))" }
        }
        return text
    }
}
