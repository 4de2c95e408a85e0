import CoreData
import Foundation

/// A context on an SQLite store at `url`.
func sqliteStack(_ url: URL, model: NSManagedObjectModel) throws -> NSManagedObjectContext {
    let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
    try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
    let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
    context.persistentStoreCoordinator = coordinator
    return context
}

/// A context on an in-memory store.
func memoryStack(_ model: NSManagedObjectModel) throws -> NSManagedObjectContext {
    let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
    try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
    let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
    context.persistentStoreCoordinator = coordinator
    return context
}

/// A directory removed when the value is released.
final class TemporaryDirectory: Sendable {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("company-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}
