import ArgumentParser
import CoreData
import Foundation

/// `coredata convert SRC DEST --type xml|binary|sqlite`: copies a store into a new store of
/// another type with `migratePersistentStore`, keeping every object, value, relationship, order,
/// the metadata and the store UUID (issue 25).
struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Copy a store into a new store of another type (SQLite, XML or binary).",
        discussion: """
            Reads the source read-only and writes a new store at the destination, which must not \
            exist, through Core Data's migratePersistentStore: every object, value and \
            relationship, the order of ordered relationships, the metadata and the store UUID \
            move. A SQLite source opens with the model cached in it; XML and binary stores need \
            --model.
            """)

    enum StoreType: String, ExpressibleByArgument, CaseIterable {
        case sqlite, xml, binary

        var coreDataType: String {
            switch self {
            case .sqlite: NSSQLiteStoreType
            case .xml: NSXMLStoreType
            case .binary: NSBinaryStoreType
            }
        }
    }

    @Argument(help: "The store to copy: SQLite, XML or binary.") var source: String
    @Argument(help: "The new store's file; it must not exist.") var destination: String
    @Option(help: "The new store's type: sqlite, xml or binary.") var type: StoreType
    @Option(help: "The model, when the source does not keep one (XML and binary stores).") var model: String?

    func run() throws {
        let target = URL(fileURLWithPath: destination)
        guard !FileManager.default.fileExists(atPath: target.path) else {
            throw ToolError.usage("\(destination): already exists; the converted store is always a new file")
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
            try? FileManager.default.removeItem(at: target)
            throw ToolError.data("\(destination): the store was not converted: \(ToolError.describe(error))")
        }
        print("Converted:          \(source) (\(opened.type)) → \(destination) (\(type.coreDataType))")
        print("Objects:            \(count)")
        print("UUID:               \(opened.metadata[NSStoreUUIDKey] ?? "?") (kept)")
        print(String(format: "Time:               %.2f s", Date().timeIntervalSince(started)))
    }
}
