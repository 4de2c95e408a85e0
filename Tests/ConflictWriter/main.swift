// A second process for the two-process conflict test (Tests/OpenCoreDataTests/Concurrency/
// TwoProcessTests.swift): it reads an object from a SQLite store, waits for the test to change
// the same row, then changes it too and saves with a merge policy.
//
// Usage: ConflictWriter <store path> <object URI> <policy> <salary>
//   policy: error | storeTrump | objectTrump | overwrite | rollback
// Protocol: prints "read" once the object is read, waits for a line on standard input, then
// prints "saved" or "error <code>" and exits 0. Anything else exits 1 with a message.
//
// Also the victim of the kill test (Tests/OpenCoreDataTests/Stores/SQLite/KillTests.swift):
//   ConflictWriter batches <store path> <count> [<store type>]
// creates (or opens) the store of `batchModel()` (SQLite unless a type is given: the atomic
// stores' kill test, Tests/OpenCoreDataTests/Stores/Atomic/AtomicStoreKillTests.swift, passes XML
// or Binary) and saves <count> batches of 10 items, printing "batch <n>" after each save
// returns, until the test kills it.
//
// And of the two-process remote-change test (Tests/OpenCoreDataTests/Stores/SQLite/RemoteChangeTests.swift):
//   ConflictWriter history-batches <store path> <count>
// saves like `batches`, into a store opened with NSPersistentHistoryTrackingKey.
//
// And of the kill-during-migration test (Tests/OpenCoreDataTests/Migration/MigrationKillTests.swift):
//   ConflictWriter migrate <store path>
// opens the store with `migratedBatchModel()` and automatic lightweight migration, and prints
// "migrated";
//   ConflictWriter migrate-to <store path> <store type> <model file> [<resources folder>]
// opens a fixture lineage's store with the model file and automatic migration (inferred, or
// through a mapping model in the resources folder, searched as one of the program's bundles), and
// prints "migrated".
//
// And of the PostgreSQL store's several-processes test
// (Tests/OpenCoreDataTests/Stores/PostgreSQL/PostgreSQLProcessTests.swift):
//   ConflictWriter hammer <postgres URL> <contexts> <rounds> [history]
// opens the store of `hammerModel()` at the URL and runs <contexts> private-queue contexts at once,
// each adding 1 to the shared counter <rounds> times (NSErrorMergePolicy: a conflict is reported,
// counted, rolled back and tried again) and then inserting the tags k0…k9 under
// NSMergeByPropertyObjectTrumpMergePolicy (a tag another context or process inserted first becomes
// an update), then five counters of its own, one save each. Prints "done <increments> <conflicts>".
// With `history` the store is opened with NSPersistentHistoryTrackingKey
// (PostgreSQLHistoryTests).
import CoreData
import Foundation
import OpenCoreDataPostgres

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(1)
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// An attribute of the models below.
func modelAttribute(_ name: String, _ type: NSAttributeType, optional: Bool) -> NSAttributeDescription {
    let attribute = NSAttributeDescription()
    attribute.name = name
    attribute.attributeType = type
    attribute.isOptional = optional
    return attribute
}

/// The kill test's model: `Item` with `batch`, `index` and a `payload` string. The test builds
/// the same one.
func batchModel() -> NSManagedObjectModel {
    func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
        modelAttribute(name, type, optional: false)
    }
    let item = NSEntityDescription()
    item.name = "Item"
    item.properties = [
        attribute("batch", .integer64AttributeType), attribute("index", .integer64AttributeType),
        attribute("payload", .stringAttributeType),
    ]
    let model = NSManagedObjectModel()
    model.entities = [item]
    return model
}

func saveBatches(path: String, count: Int, type: String = NSSQLiteStoreType, history: Bool = false) -> Never {
    do {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: batchModel())
        try coordinator.addPersistentStore(
            ofType: type, configurationName: nil, at: URL(fileURLWithPath: path),
            options: history ? [NSPersistentHistoryTrackingKey: true] : nil)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        for batch in 1...max(1, count) {
            for index in 0..<10 {
                let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                item.setValue(Int64(batch), forKey: "batch")
                item.setValue(Int64(index), forKey: "index")
                item.setValue(String(repeating: "x", count: 200), forKey: "payload")
            }
            try context.save()
            say("batch \(batch)")
        }
        exit(0)
    } catch {
        fail("\(error)")
    }
}

/// The kill-during-migration test's later model: `Item` renamed `Entry`, `payload` renamed
/// `body` (renaming identifiers), and a new required Boolean `flag` with a default. The test
/// builds the same one.
func migratedBatchModel() -> NSManagedObjectModel {
    let model = batchModel()
    let entry = model.entities[0]
    entry.name = "Entry"
    entry.renamingIdentifier = "Item"
    let body = entry.properties.first { $0.name == "payload" }
    body?.name = "body"
    body?.renamingIdentifier = "payload"
    let flag = NSAttributeDescription()
    flag.name = "flag"
    flag.attributeType = .booleanAttributeType
    flag.isOptional = false
    flag.defaultValue = false
    entry.properties += [flag]
    return model
}

/// Opens the store with `migratedBatchModel()` and automatic lightweight migration, prints
/// "migrated" and exits, unless the test kills it first.
func migrate(path: String) -> Never {
    do {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: migratedBatchModel())
        try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: URL(fileURLWithPath: path),
            options: [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true])
        say("migrated")
        exit(0)
    } catch {
        fail("\(error)")
    }
}

/// Opens the store with the model at `modelPath` and automatic migration, the mapping models in
/// `resources` (when given) searched as one of the program's bundles; prints "migrated".
func migrate(path: String, type: String, modelPath: String, resources: String?) -> Never {
    do {
        guard let model = NSManagedObjectModel(contentsOf: URL(fileURLWithPath: modelPath)) else {
            fail("no model at \(modelPath)")
        }
        let bundles = resources.flatMap { Bundle(path: $0) }.map { [$0] } ?? []
        try ModelVersions.$additionalBundles.withValue(bundles) {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(
                ofType: type, configurationName: nil, at: URL(fileURLWithPath: path),
                options: [
                    NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true,
                ])
        }
        say("migrated")
        exit(0)
    } catch {
        fail("\(error)")
    }
}

/// The several-processes test's model: `Counter` (`name`, `value`) and `Tag` (`key`, unique, and
/// `writer`). The test builds the same one.
func hammerModel() -> NSManagedObjectModel {
    func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
        modelAttribute(name, type, optional: true)
    }
    let counter = NSEntityDescription()
    counter.name = "Counter"
    counter.properties = [attribute("name", .stringAttributeType), attribute("value", .integer64AttributeType)]
    let tag = NSEntityDescription()
    tag.name = "Tag"
    tag.properties = [attribute("key", .stringAttributeType), attribute("writer", .stringAttributeType)]
    tag.uniquenessConstraints = [["key"]]
    let model = NSManagedObjectModel()
    model.entities = [counter, tag]
    return model
}

func hammer(url: URL, contexts: Int, rounds: Int, history: Bool) -> Never {
    let coordinator = NSPersistentStoreCoordinator(managedObjectModel: hammerModel())
    do {
        try coordinator.addPersistentStore(
            ofType: NSPostgreSQLStoreType, configurationName: nil, at: url,
            options: history ? [NSPersistentHistoryTrackingKey: true] : nil)
    } catch {
        fail("\(error)")
    }
    final class Tally: @unchecked Sendable {
        let lock = NSLock()
        var increments = 0
        var conflicts = 0
        var failure: String?
    }
    let tally = Tally()
    DispatchQueue.concurrentPerform(iterations: contexts) { index in
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        context.performAndWait {
            do {
                let request = NSFetchRequest<NSManagedObject>(entityName: "Counter")
                request.predicate = NSPredicate(format: "name == 'shared'")
                var done = 0
                while done < rounds {
                    context.refreshAllObjects()
                    guard let counter = try context.fetch(request).first else { throw CocoaError(.coderValueNotFound) }
                    let value = (counter.value(forKey: "value") as? Int) ?? 0
                    counter.setValue(value + 1, forKey: "value")
                    do {
                        try context.save()
                        done += 1
                    } catch let error as NSError where error.code == NSManagedObjectMergeError {
                        context.rollback()
                        tally.lock.lock()
                        tally.conflicts += 1
                        tally.lock.unlock()
                    }
                }
                tally.lock.lock()
                tally.increments += done
                tally.lock.unlock()
                context.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
                for key in 0..<10 {
                    let tag = NSEntityDescription.insertNewObject(forEntityName: "Tag", into: context)
                    tag.setValue("k\(key)", forKey: "key")
                    tag.setValue("\(ProcessInfo.processInfo.processIdentifier)/\(index)", forKey: "writer")
                    try context.save()
                }
                // Saves that only insert, checking nothing: five counters of its own, one save each.
                for extra in 0..<5 {
                    let counter = NSEntityDescription.insertNewObject(forEntityName: "Counter", into: context)
                    counter.setValue(
                        "extra \(ProcessInfo.processInfo.processIdentifier)/\(index)/\(extra)", forKey: "name")
                    try context.save()
                }
            } catch {
                tally.lock.lock()
                tally.failure = "\(error)"
                tally.lock.unlock()
            }
        }
    }
    if let failure = tally.failure { fail(failure) }
    say("done \(tally.increments) \(tally.conflicts)")
    exit(0)
}

let arguments = CommandLine.arguments
if arguments.count == 5 || (arguments.count == 6 && arguments[5] == "history"), arguments[1] == "hammer",
    let url = URL(string: arguments[2]), let contexts = Int(arguments[3]), let rounds = Int(arguments[4])
{
    hammer(url: url, contexts: contexts, rounds: rounds, history: arguments.count == 6)
}
if arguments.count >= 5, arguments.count <= 6, arguments[1] == "migrate-to" {
    migrate(
        path: arguments[2], type: arguments[3], modelPath: arguments[4],
        resources: arguments.count == 6 ? arguments[5] : nil)
}
if arguments.count == 4 || arguments.count == 5, arguments[1] == "batches", let count = Int(arguments[3]) {
    saveBatches(path: arguments[2], count: count, type: arguments.count == 5 ? arguments[4] : NSSQLiteStoreType)
}
if arguments.count == 4, arguments[1] == "history-batches", let count = Int(arguments[3]) {
    saveBatches(path: arguments[2], count: count, history: true)
}
if arguments.count == 3, arguments[1] == "migrate" {
    migrate(path: arguments[2])
}
guard arguments.count == 5, let uri = URL(string: arguments[2]), let salary = Double(arguments[4]) else {
    fail("usage: ConflictWriter <store path> <object URI> <policy> <salary>")
}
let policies: [String: Any] = [
    "error": NSErrorMergePolicy, "storeTrump": NSMergeByPropertyStoreTrumpMergePolicy,
    "objectTrump": NSMergeByPropertyObjectTrumpMergePolicy, "overwrite": NSOverwriteMergePolicy,
    "rollback": NSRollbackMergePolicy,
]
guard let policy = policies[arguments[3]] else { fail("unknown policy \(arguments[3])") }

do {
    let url = URL(fileURLWithPath: arguments[1])
    let model = try NSManagedObjectModel(contentsOfStoreAt: url)
    let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
    try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
    let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
    context.persistentStoreCoordinator = coordinator
    context.mergePolicy = policy
    try context.performAndWait {
        guard let id = coordinator.managedObjectID(forURIRepresentation: uri) else { fail("no object \(uri)") }
        let object = try context.existingObject(with: id)
        say("read")
        _ = readLine()
        object.setValue("Ada (second process)", forKey: "name")
        object.setValue(salary, forKey: "salary")
        do {
            try context.save()
            say("saved")
        } catch let error as NSError {
            say("error \(error.code)")
        }
    }
} catch {
    fail("\(error)")
}
