import CoreData
import Foundation
import Testing

@testable import OpenCoreData

/// Core Data Programming Guide, "Reducing Memory Overhead": `reset()` — or letting a context go —
/// disposes of its managed objects so the memory they took can be reclaimed. Apple's allocator
/// gives free pages back to the system by itself; glibc's keeps them resident unless asked, so a
/// context that lets go of many objects at once asks it (`FreedMemory`), once releases have been
/// quiet for a moment. The memory this gives back is measured in BENCHMARKS.md; these tests pin
/// when it is asked.
@Suite("Memory given back after a large release", .serialized)
struct FreedMemoryTests {
    let directory = TemporaryDirectory()

    /// A store of `count` employees, saved, and a fresh context on it holding them all realized
    /// (`retainsRegisteredObjects`: nothing else holds them). The context that saved them is
    /// answered too: the caller keeps it, so its own objects going away ask nothing of the
    /// allocator while the test watches.
    private func contextHoldingEmployees(
        _ count: Int, retained: Bool = true
    ) throws -> (reader: NSManagedObjectContext, writer: NSManagedObjectContext) {
        let url = directory.file("Company.sqlite")
        let writer = try sqliteStack(url)
        for index in 0..<count { writer.employee("Employee \(index)") }
        try writer.save()
        let reader = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        reader.persistentStoreCoordinator = writer.persistentStoreCoordinator
        reader.retainsRegisteredObjects = retained
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.returnsObjectsAsFaults = false
        #expect(try reader.fetch(request).count == count)
        return (reader, writer)
    }

    /// Waits, up to four quiet periods, for the allocator to have been asked more often than
    /// `before`.
    private func trimmed(since before: Int) async -> Bool {
        for _ in 0..<(4 * Int(FreedMemory.quietPeriod / 100_000_000)) {
            if FreedMemory.trimCount > before { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return FreedMemory.trimCount > before
    }

    #if os(Linux)
        @Test("reset() of a context of many objects gives the freed memory back to the system")
        func resetGivesMemoryBack() async throws {
            let (context, writer) = try contextHoldingEmployees(FreedMemory.trimThreshold)
            let before = FreedMemory.trimCount
            #expect(context.registeredObjects.count == FreedMemory.trimThreshold)
            context.reset()
            #expect(context.registeredObjects.isEmpty)
            #expect(await trimmed(since: before), "the allocator was asked after the reset")
            withExtendedLifetime(writer) {}
        }

        @Test("a context of many objects going away gives the freed memory back to the system")
        func releaseGivesMemoryBack() async throws {
            let (reader, writer) = try contextHoldingEmployees(FreedMemory.trimThreshold)
            var context: NSManagedObjectContext? = reader
            _ = consume reader
            let before = FreedMemory.trimCount
            #expect(context?.registeredObjects.count == FreedMemory.trimThreshold)
            context = nil
            #expect(await trimmed(since: before), "the allocator was asked after the context went away")
            withExtendedLifetime(writer) {}
        }

        /// NSManagedObjectContext reference, `retainsRegisteredObjects`: by default a context
        /// keeps only strong references to objects with pending changes; the unchanged ones the
        /// app dropped go at the end of the event, many at once after a large fetch.
        @Test("unchanged objects the app no longer holds, let go of together, give their memory back")
        func sweptObjectsGiveMemoryBack() async throws {
            let (context, writer) = try contextHoldingEmployees(FreedMemory.trimThreshold, retained: false)
            let before = FreedMemory.trimCount
            context.processPendingChanges()
            #expect(context.registeredObjects.isEmpty, "nothing holds the fetched objects")
            #expect(await trimmed(since: before), "the allocator was asked after the objects went")
            withExtendedLifetime(writer) {}
        }
    #endif
}
