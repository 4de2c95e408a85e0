import CoreData
import Foundation
import Testing

/// A process killed at any moment while it saves to an XML or binary store leaves a file that
/// opens and holds every save that returned and no part of any other (an atomic store
/// writes a new file beside the old, syncs it and renames it over, so a crash leaves either the
/// old file or the new one — Core Data Programming Guide, "Persistent Store Types and
/// Behaviors": atomic stores are written in their entirety at each save).
@Suite("Killing a process that saves to an atomic store")
struct AtomicStoreKillTests {
    private func killedWriter(_ url: URL, type: String, after milliseconds: Int) throws -> Set<Int> {
        let text = try runConflictWriter(["batches", url.path, "200", type], killAfter: milliseconds)
        return Set(text.split(separator: "\n").compactMap { $0.hasPrefix("batch ") ? Int($0.dropFirst(6)) : nil })
    }

    @Test(
        "Every kill leaves a store that opens with every reported save whole",
        arguments: [NSXMLStoreType, NSBinaryStoreType])
    func kills(type: String) throws {
        let directory = TemporaryDirectory()
        var killedWhileSaving = 0
        for trial in 0..<40 {
            let url = directory.file("Kill\(trial).store")
            let reported = try killedWriter(url, type: type, after: Int.random(in: 20...400))
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
                .filter { $0.hasPrefix(".Kill\(trial).store.") }
            guard FileManager.default.fileExists(atPath: url.path) else {
                #expect(reported.isEmpty, "trial \(trial): saves returned but no file exists")
                continue
            }
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: KillTests.model())
            #expect(throws: Never.self, "trial \(trial): the store left by the kill must open") {
                try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url, options: nil)
            }
            guard !coordinator.persistentStores.isEmpty else { continue }
            let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            var perBatch: [Int: Int] = [:]
            for item in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item")) {
                perBatch[(item.value(forKey: "batch") as? NSNumber)?.intValue ?? -1, default: 0] += 1
            }
            for batch in reported {
                #expect(perBatch[batch] == 10, "trial \(trial): batch \(batch) returned from save but is not whole")
            }
            for (batch, count) in perBatch {
                #expect(count == 10, "trial \(trial): batch \(batch) is partial (\(count) of 10)")
            }
            let highest = perBatch.keys.max() ?? 0
            #expect(perBatch.count == highest, "trial \(trial): batches are not 1…\(highest)")
            #expect(highest <= (reported.max() ?? 0) + 1, "trial \(trial): more batches than were saved")
            if !reported.isEmpty { killedWhileSaving += 1 }
            // A kill between writing the new file and renaming it leaves it beside the store,
            // never in its place; the next save of that store makes its own.
            #expect(leftovers.count <= 1)
        }
        #expect(killedWhileSaving > 10)
    }
}
