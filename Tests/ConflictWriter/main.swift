// A second process for the two-process conflict test (Tests/OpenCoreDataTests/Concurrency/
// TwoProcessTests.swift): it reads an object from a SQLite store, waits for the test to change
// the same row, then changes it too and saves with a merge policy.
//
// Usage: ConflictWriter <store path> <object URI> <policy> <salary>
//   policy: error | storeTrump | objectTrump | overwrite | rollback
// Protocol: prints "read" once the object is read, waits for a line on standard input, then
// prints "saved" or "error <code>" and exits 0. Anything else exits 1 with a message.
import CoreData
import Foundation

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(1)
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = CommandLine.arguments
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
