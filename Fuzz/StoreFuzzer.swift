import Foundation

@testable import OpenCoreData
@testable import OpenCoreDataSQLite

/// libFuzzer entry point: any bytes, written as an SQLite store file, must open with the model
/// cached in it and read every object and its persistent history, and migrate in place to a later
/// version of that model — or fail with an error. Never a crash, a hang or a trap: a store file can come from anywhere
/// (DEVIATIONS.md lists the limits).
@_cdecl("LLVMFuzzerTestOneInput")
public func storeFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let path = NSTemporaryDirectory() + "opencoredata-store-fuzz-\(getpid()).sqlite"
    func removeStore() { for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) } }
    removeStore()
    // The store is this input's alone: nothing of it is left in the temporary directory.
    defer { removeStore() }
    guard FileManager.default.createFile(atPath: path, contents: Data(bytes: data, count: size)) else { return 0 }
    let url = URL(fileURLWithPath: path)
    _ = try? NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url, options: nil)
    guard let model = try? NSManagedObjectModel(contentsOfStoreAt: url) else { return 0 }
    for entity in model.entities { _ = entity.versionHash }
    let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
    guard
        (try? coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: url,
            options: [NSReadOnlyPersistentStoreOption: true, NSPersistentHistoryTrackingKey: true])) != nil
    else { return 0 }
    let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
    context.persistentStoreCoordinator = coordinator
    if let history = try? context.execute(
        NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?))
        as? NSPersistentHistoryResult
    {
        for transaction in (history.result as? [NSPersistentHistoryTransaction] ?? []).prefix(8) {
            for change in (transaction.changes ?? []).prefix(64) {
                _ = change.updatedProperties?.count
                _ = change.tombstone?.count
                _ = change.oldValues?.count
            }
        }
    }
    for entity in model.entities {
        guard let name = entity.name else { continue }
        let request = NSFetchRequest<NSManagedObject>(entityName: name)
        request.fetchLimit = 64
        guard let objects = try? context.fetch(request) else { continue }
        for object in objects {
            for property in entity.properties where !(property is NSFetchedPropertyDescription) {
                let value = object.value(forKey: property.name)
                if let set = value as? Set<NSManagedObject> {
                    for related in set.prefix(8) { _ = related.value(forKey: "objectID") }
                } else if let related = value as? NSManagedObject {
                    _ = related.entity.name
                }
            }
        }
        let count = NSFetchRequest<NSDictionary>(entityName: name)
        count.resultType = .dictionaryResultType
        _ = try? context.count(for: count)
    }
    // Then a lightweight migration in place, to the same model with one attribute more on every
    // root entity: inference, the migration plan and its SQL run on whatever the file holds.
    guard let later = try? NSManagedObjectModel(contentsOfStoreAt: url) else { return 0 }
    for entity in later.entities where entity.superentity == nil {
        let added = NSAttributeDescription()
        added.name = "fuzzAdded"
        added.attributeType = .integer64AttributeType
        added.isOptional = false
        added.defaultValue = 7
        entity.properties += [added]
    }
    let migrating = NSPersistentStoreCoordinator(managedObjectModel: later)
    _ = try? migrating.addPersistentStore(
        ofType: NSSQLiteStoreType, configurationName: nil, at: url,
        options: [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true])
    return 0
}
