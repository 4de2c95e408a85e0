import CoreData
import Foundation
import Testing

/// A save whose writes or syncs fail. Core Data Programming Guide: `save()` either commits every
/// change or throws and leaves the context's changes in place; the store must say the truth about
/// which — also to a process that starts after this one was killed, which sees what the disk
/// holds. Each write and each sync of one save is failed in turn (an SQLite VFS shim,
/// `FaultyVFS`), and the outcome is checked three ways: the context, a copy of the files as a kill
/// at that moment would leave them, and a retry.
@Suite("Saves whose disk fails", .serialized)
struct IOFaultTests {
    let directory = TemporaryDirectory()

    private func employees(_ url: URL) throws -> [String] {
        let context = try sqliteStack(url)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        return try context.fetch(request).compactMap { $0.value(forKey: "name") as? String }.sorted()
    }

    /// A copy of the store's files as they are now: what a process killed at this moment leaves.
    private func snapshot(_ url: URL, to name: String) throws -> URL {
        let copy = directory.file(name)
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: url.path + suffix) {
            try FileManager.default.copyItem(atPath: url.path + suffix, toPath: copy.path + suffix)
        }
        return copy
    }

    private struct Outcome {
        var saved: Bool
        var failures: [String]
        var counted: Int
    }

    /// Creates a store holding Ada, then saves Bob and Cy with operation `failAt` failing.
    private func trial(_ number: Int, failAt: Int?) throws -> (Outcome, NSManagedObjectContext, URL) {
        let url = directory.file("Trial\(number)/Faults.sqlite")
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        FaultyVFS.watch(pathFragment: url.deletingLastPathComponent().path + "/")
        let context = try sqliteStack(url)
        context.employee("Ada")
        try context.save()
        context.employee("Bob")
        context.employee("Cy")
        FaultyVFS.fail(at: failAt)
        var saved = true
        do { try context.save() } catch { saved = false }
        let (counted, failures) = FaultyVFS.disarm()
        return (Outcome(saved: saved, failures: failures, counted: counted), context, url)
    }

    @Test func eachFailedWriteOrSyncOfASaveLeavesTheTruth() throws {
        let (clean, _, _) = try trial(0, failAt: nil)
        #expect(clean.saved)
        let operations = clean.counted
        #expect(operations >= 2, "a save writes and syncs")
        var failedSaves = 0
        var failedSyncs = 0
        for index in 0..<operations {
            let (outcome, context, url) = try trial(index + 1, failAt: index)
            #expect(outcome.failures.count == 1, "operation \(index) was failed")
            let afterKill = try employees(snapshot(url, to: "Killed\(index).sqlite"))
            if outcome.saved {
                // A failure SQLite recovers from (a write it retries elsewhere): the save holds.
                #expect(afterKill == ["Ada", "Bob", "Cy"], "\(outcome.failures): saved, so a kill keeps it")
                #expect(!context.hasChanges)
            } else {
                failedSaves += 1
                if outcome.failures.contains(where: { $0.hasPrefix("sync") }) { failedSyncs += 1 }
                #expect(context.hasChanges, "\(outcome.failures): a failed save keeps the context's changes")
                #expect(
                    afterKill == ["Ada"],
                    "\(outcome.failures): the save threw, yet a process started after a kill sees it")
                try context.save()
                #expect(try employees(url) == ["Ada", "Bob", "Cy"], "\(outcome.failures): the retry saves once")
            }
        }
        #expect(failedSaves > 0, "some failures must reach the save")
        // The case a fault-injection run found: the WAL's sync fails at the commit, after its frames were written.
        #expect(failedSyncs > 0, "a failed sync must fail the save")
    }

    /// Settles whether rows a failed save wrote can be read: the coordinator's row cache is what
    /// every context of the coordinator reads rows from, and a save fills it with the rows it
    /// wrote. Core Data Programming Guide, "Change Management": a context's save "either succeeds
    /// or fails as a whole" — so a row whose commit failed was never stored, and another context
    /// of the same coordinator must read what is stored, not the failed save's values.
    @Test func aFailedCommitLeavesNoRowForOtherContexts() throws {
        /// Saves Ada (salary 10), then changes her salary to 20 and inserts Bob, failing
        /// operation `failAt` of that save; answers whether it saved, and the coordinator.
        func trial(_ number: Int, failAt: Int?) throws -> (saved: Bool, counted: Int, context: NSManagedObjectContext) {
            let url = directory.file("Cache\(number)/Cache.sqlite")
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            FaultyVFS.watch(pathFragment: url.deletingLastPathComponent().path + "/")
            let context = try sqliteStack(url)
            let ada = context.employee("Ada", salary: 10)
            try context.save()
            ada.setValue(20.0, forKey: "salary")
            context.employee("Bob", salary: 5)
            FaultyVFS.fail(at: failAt)
            var saved = true
            do { try context.save() } catch { saved = false }
            return (saved, FaultyVFS.disarm().counted, context)
        }
        let operations = try trial(0, failAt: nil).counted
        var failedSaves = 0
        for index in 0..<operations {
            let (saved, _, writer) = try trial(index + 1, failAt: index)
            guard !saved else { continue }
            failedSaves += 1
            let reader = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            reader.persistentStoreCoordinator = writer.persistentStoreCoordinator
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            var found: [String: Double] = [:]
            for employee in try reader.fetch(request) {
                found[employee.value(forKey: "name") as? String ?? "?"] = employee.value(forKey: "salary") as? Double
            }
            #expect(found == ["Ada": 10], "operation \(index) failed the save; another context read \(found)")
            // The writer's own committed values are the stored ones too: a refresh that drops its
            // changes shows what is stored.
            let ada = try #require(writer.updatedObjects.first)
            writer.refresh(ada, mergeChanges: false)
            #expect(ada.value(forKey: "salary") as? Double == 10, "operation \(index): the writer's refreshed object")
        }
        #expect(failedSaves > 0, "some failures must reach the save")
    }
}
