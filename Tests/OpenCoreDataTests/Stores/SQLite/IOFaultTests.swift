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
        // The case issue 19 found: the WAL's sync fails at the commit, after its frames were written.
        #expect(failedSyncs > 0, "a failed sync must fail the save")
    }
}
