import ArgumentParser
import CoreData
import Foundation

/// `coredata convert SRC DEST --type xml|binary|sqlite|postgres`: copies a store into a new store of
/// another type with `migratePersistentStore`, keeping every object, value, relationship, order,
/// the metadata and the store UUID.
struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Copy a store into a new store of another type (SQLite, XML, binary or PostgreSQL).",
        discussion: """
            Reads the source read-only and writes a new store at the destination, which must not \
            exist, through Core Data's migratePersistentStore: every object, value and \
            relationship, the order of ordered relationships, the metadata and the store UUID \
            move. A SQLite or PostgreSQL source opens with the model cached in it; XML and binary \
            stores need --model. A PostgreSQL store is named by its URL \
            (postgres://user@host:port/database?schema=name).
            """)

    enum StoreType: String, ExpressibleByArgument, CaseIterable {
        case sqlite, xml, binary, postgres

        var coreDataType: String {
            switch self {
            case .sqlite: NSSQLiteStoreType
            case .xml: NSXMLStoreType
            case .binary: NSBinaryStoreType
            case .postgres: PostgreSQLSupport.storeType
            }
        }
    }

    @Argument(help: "The store to copy: SQLite, XML, binary, or a PostgreSQL URL.") var source: String
    @Argument(help: "The new store's file (it must not exist), or a PostgreSQL URL whose schema holds no store.")
    var destination: String
    @Option(help: "The new store's type: sqlite, xml, binary or postgres.") var type: StoreType
    @Option(help: "The model, when the source does not keep one (XML and binary stores).") var model: String?

    func run() throws {
        let target: URL
        if type == .postgres {
            _ = try PostgreSQLSupport.required(for: destination)
            guard OpenedStore.isPostgres(destination), let url = URL(string: destination) else {
                throw ToolError.usage("\(destination): a PostgreSQL store is named by a postgres:// URL")
            }
            if (try? NSPersistentStoreCoordinator.metadataForPersistentStore(
                ofType: PostgreSQLSupport.storeType, at: url))
                != nil
            {
                throw ToolError.usage("\(destination): already holds a store; the converted store is always a new one")
            }
            target = url
        } else {
            target = URL(fileURLWithPath: destination)
            guard !FileManager.default.fileExists(atPath: target.path) else {
                throw ToolError.usage("\(destination): already exists; the converted store is always a new file")
            }
        }
        let opened = try OpenedStore.open(source, modelPath: model)
        guard let store = opened.coordinator.persistentStores.first else {
            throw ToolError.data("\(source): no store was opened")
        }
        let started = Date()
        let count = try opened.model.entities.filter { $0.superentity == nil }.reduce(0) { total, entity in
            try total + opened.context.count(for: NSFetchRequest<NSManagedObject>(entityName: entity.name ?? ""))
        }
        do {
            _ = try opened.coordinator.migratePersistentStore(
                store, to: target, options: nil, withType: type.coreDataType)
        } catch {
            if target.isFileURL { try? FileManager.default.removeItem(at: target) }
            throw ToolError.data("\(destination): the store was not converted: \(ToolError.describe(error))")
        }
        print("Converted:          \(source) (\(opened.type)) → \(destination) (\(type.coreDataType))")
        print("Objects:            \(count)")
        print("UUID:               \(opened.metadata[NSStoreUUIDKey] ?? "?") (kept)")
        print(String(format: "Time:               %.2f s", Date().timeIntervalSince(started)))
    }
}
