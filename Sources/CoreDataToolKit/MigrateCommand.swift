import ArgumentParser
import CoreData
import Foundation
import Synchronization

/// `coredata migrate`: moves a store to a model's current version by lightweight migration, in
/// place.
struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a store, in place, to a model's current version by lightweight migration.",
        discussion: """
            Says which model wrote the store (a version of --model, or the model cached in the \
            store) and what the migration changes, entity by entity; then migrates, so an \
            interrupted migration leaves the store as it was. Without --mapping the migration is \
            inferred (lightweight) and runs in place, in SQL, in one transaction; with --mapping \
            (a compiled .cdm or an Xcode .xcmappingmodel) it runs through the mapping model into a \
            new store that then replaces the old one, with a progress bar when standard error is a \
            terminal. --dry-run only says. A PostgreSQL store (a postgres:// URL) migrates in place \
            only.
            """)

    @Argument(help: "The store: a SQLite file or a postgres:// URL.") var store: String
    @Option(
        help: "The model to migrate to: the current version of an .xcdatamodeld or .momd, or one .xcdatamodel or .mom.")
    var model: String
    @Option(help: "A mapping model (.cdm or .xcmappingmodel) from the store's model to --model.") var mapping: String?
    @Flag(help: "Say what the migration would do, and change nothing.") var dryRun = false

    func run() throws {
        let url = try OpenedStore.existingFile(store)
        let type = OpenedStore.storeType(of: url)
        let metadata = try OpenedStore.readMetadata(url)
        let destination = try OpenedStore.loadModel(model, matching: nil)
        print("Store:              \(OpenedStore.name(of: url))")
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
            ? writer : try? OpenedStore.cachedModel(url, path: store)
        let mappingModel = try mapping.map(Self.loadMapping)
        if mappingModel != nil, type == PostgreSQLSupport.storeType {
            throw ToolError.usage("\(store): a PostgreSQL store migrates in place only, without --mapping")
        }
        if let mappingModel {
            for line in Self.describe(mappingModel) { print(line) }
        } else {
            for line in InfoCommand.migration(from: source, to: destination) { print(line) }
        }
        if dryRun {
            print("Dry run:            the store was not changed")
            return
        }
        let started = Date()
        if let mappingModel {
            guard let source else {
                throw ToolError.data(
                    "\(url.path): the model that wrote the store is unknown; pass the versioned --model")
            }
            try Self.migrate(url, from: source, to: destination, with: mappingModel)
            print(
                String(
                    format: "Migrated:           through the mapping model, in %.2f s",
                    Date().timeIntervalSince(started)))
            return
        }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: destination)
        do {
            let opened = try coordinator.addPersistentStore(
                ofType: type, configurationName: nil, at: url,
                options: [
                    NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true,
                ])
            try coordinator.remove(opened)
        } catch {
            throw ToolError.data("\(store): the store was not migrated: \(Self.describe(error))")
        }
        print(String(format: "Migrated:           in place, in %.2f s", Date().timeIntervalSince(started)))
    }

    /// The mapping model at `path`, or a data error saying why it is not one.
    private static func loadMapping(_ path: String) throws -> NSMappingModel {
        let url = try OpenedStore.existingFile(path)
        do {
            return try NSMappingModel.mappingModel(contentsOf: url)
        } catch {
            throw ToolError.data("--mapping \(path): \(describe(error))")
        }
    }

    /// One line per entity mapping and property mapping.
    static func describe(_ mapping: NSMappingModel) -> [String] {
        var lines = ["Mapping model:      \(mapping.entityMappings.count) entity mappings"]
        for entity in mapping.entityMappings {
            let policy = entity.entityMigrationPolicyClassName.map { ", policy \($0)" } ?? ""
            lines.append(
                "  \(entity.name ?? "?"): \(entity.sourceEntityName ?? "(new)") → \(entity.destinationEntityName ?? "(removed)")\(policy)"
            )
            for property in (entity.attributeMappings ?? []) + (entity.relationshipMappings ?? []) {
                lines.append(
                    "    \(property.name ?? "?") = \(property.valueExpression.map { "\($0)" } ?? "(no value)")")
            }
        }
        return lines
    }

    /// Migrates through NSMigrationManager into a new store beside the old, which then replaces
    /// it (SQLite's backup API, one transaction); the store keeps its UUID and metadata. The
    /// manager runs on another thread while a progress bar on standard error (when it is a
    /// terminal) follows its `migrationProgress`.
    private static func migrate(
        _ url: URL, from source: NSManagedObjectModel, to destination: NSManagedObjectModel,
        with mapping: NSMappingModel
    ) throws {
        let manager = NSMigrationManager(sourceModel: source, destinationModel: destination)
        let failure = Mutex<(any Error)?>(nil)
        let finished = DispatchSemaphore(value: 0)
        let work = UncheckedBox((manager, mapping, source, destination))
        Thread.detachNewThread {
            do {
                let (manager, mapping, source, destination) = work.value
                try ModelVersions.migrateReplacing(
                    storeAt: url, type: NSSQLiteStoreType, from: source, to: destination, with: mapping,
                    manager: manager)
            } catch {
                failure.withLock { $0 = error }
            }
            finished.signal()
        }
        let showsBar = Terminal.standardErrorIsTerminal
        while finished.wait(timeout: .now() + .milliseconds(100)) == .timedOut {
            if showsBar { Terminal.progress(manager.migrationProgress) }
        }
        if showsBar { Terminal.progress(manager.migrationProgress, done: true) }
        if let error = failure.withLock({ $0 }) {
            throw ToolError.data("\(url.path): the store was not migrated: \(describe(error))")
        }
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

/// Carries a value to the migration thread; the caller waits for that thread before using it again.
private struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
