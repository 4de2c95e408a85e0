import Foundation
import OpenCoreData
import Testing

@testable import SwiftData

/// `ModelContext`'s notifications, author, batches and enumeration. Rules from Apple's SwiftData
/// documentation: `ModelContext.willSave` and `didSave` (posted around a save; `didSave`'s user
/// info holds the inserted, updated and deleted identifiers under `NotificationKey`),
/// `ModelContext.author` (the author of the context's transactions in persistent history),
/// `fetch(_:batchSize:)` (a `FetchResultsCollection` of the results), and
/// `enumerate(_:batchSize:allowEscapingMutations:block:)` (each model once, in order).
@Suite("SwiftData: ModelContext notifications, author and batches")
struct SwiftDataContextFeatureTests {
    static func stack() throws -> ModelContainer {
        try ModelContainer(
            for: Trip.self, configurations: ModelConfiguration(url: TemporaryDirectory().file("trips.store")))
    }

    @Test @MainActor func savesPostWillSaveAndDidSaveWithTheIdentifiers() throws {
        let container = try Self.stack()
        let context = ModelContext(container)
        let posted = Collector<(Notification.Name, [String: [PersistentIdentifier]])>()
        let observers = [ModelContext.willSave, ModelContext.didSave].map { name in
            NotificationCenter.default.addObserver(forName: name, object: context, queue: nil) { notification in
                var identifiers: [String: [PersistentIdentifier]] = [:]
                for (key, value) in notification.userInfo ?? [:] {
                    if let key = key as? String, let ids = value as? [PersistentIdentifier] { identifiers[key] = ids }
                }
                posted.append((notification.name, identifiers))
            }
        }
        defer { observers.forEach(NotificationCenter.default.removeObserver) }

        let trips = SwiftDataModelTests.trips()
        for trip in trips { context.insert(trip) }
        try context.save()
        trips[0].nights += 1
        context.delete(trips[1])
        try context.save()

        let events = posted.values
        #expect(
            events.map(\.0) == [
                ModelContext.willSave, ModelContext.didSave, ModelContext.willSave, ModelContext.didSave,
            ])
        let key = ModelContext.NotificationKey.self
        #expect(Set(events[1].1[key.insertedIdentifiers.rawValue] ?? []) == Set(trips.map(\.persistentModelID)))
        #expect(events[3].1[key.updatedIdentifiers.rawValue] == [trips[0].persistentModelID])
        #expect(events[3].1[key.deletedIdentifiers.rawValue] == [trips[1].persistentModelID])
        #expect(events[3].1[key.insertedIdentifiers.rawValue] == [])
    }

    @Test @MainActor func theAuthorIsRecordedInPersistentHistory() throws {
        let container = try Self.stack()
        let context = ModelContext(container)
        context.author = "importer"
        context.insert(SwiftDataModelTests.trips()[0])
        try context.save()
        let result = try context.managedObjectContext.execute(
            NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?))
        let history = try #require((result as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction])
        #expect(history.last?.author == "importer")
    }

    /// Batches and enumeration give every model once, in the descriptor's order; a change made
    /// inside `enumerate` is kept and saved.
    @Test @MainActor func batchesAndEnumerationVisitEveryModelInOrder() throws {
        let container = try Self.stack()
        let context = ModelContext(container)
        for trip in SwiftDataPredicateTests.trips() { context.insert(trip) }
        try context.save()
        let descriptor = FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.budget)])
        let expected = try context.fetch(descriptor).map(\.name)

        let reader = ModelContext(container)
        let batched = try reader.fetch(descriptor, batchSize: 2)
        #expect(batched.count == 5)
        #expect(batched.map(\.name) == expected)

        var visited: [String] = []
        try reader.enumerate(descriptor, batchSize: 2) { trip in
            visited.append(trip.name)
            if trip.name == "Lake" { trip.nights = 40 }
        }
        #expect(visited == expected)
        try reader.save()
        let lake = try ModelContext(container).fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "Lake" }))
        #expect(lake.map(\.nights) == [40])
    }
}

/// `ModelContainer.deleteAllData()` (SwiftData reference: deletes all the data in the container's
/// stores): afterwards the stores are empty and still open — new models save and fetch — and the
/// main context holds no models of the old data.
@Suite("SwiftData: ModelContainer.deleteAllData")
struct SwiftDataDeleteAllDataTests {
    @Test @MainActor func deleteAllDataEmptiesTheStoresAndKeepsThemOpen() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("trips.store")
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: url))
        for trip in SwiftDataModelTests.trips() { container.mainContext.insert(trip) }
        try container.mainContext.save()
        #expect(try container.mainContext.fetchCount(FetchDescriptor<Trip>()) == 3)

        container.deleteAllData()
        #expect(try container.mainContext.fetchCount(FetchDescriptor<Trip>()) == 0)
        #expect(!container.mainContext.hasChanges)
        container.mainContext.insert(SwiftDataModelTests.trips()[0])
        try container.mainContext.save()
        let reopened = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: url))
        #expect(try ModelContext(reopened).fetch(FetchDescriptor<Trip>()).map(\.name) == ["Alps"])
    }
}

/// `ModelContext.autosaveEnabled` (SwiftData reference: `true` by default for a container's main
/// context, `false` for contexts you create; an autosaving context saves its pending changes by
/// itself): on Linux the main context saves on the main queue's next turn after a change.
@Suite("SwiftData: autosave")
struct SwiftDataAutosaveTests {
    @Test @MainActor func theMainContextSavesByItselfAfterAChange() async throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(
            for: Trip.self, configurations: ModelConfiguration(url: directory.file("trips.store")))
        let main = container.mainContext
        #expect(main.autosaveEnabled)
        #expect(!ModelContext(container).autosaveEnabled)
        main.insert(SwiftDataModelTests.trips()[0])
        #expect(main.hasChanges)
        for _ in 0..<200 where main.hasChanges { try await Task.sleep(for: .milliseconds(10)) }
        #expect(!main.hasChanges)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 1)

        main.autosaveEnabled = false
        main.insert(SwiftDataModelTests.trips()[1])
        try await Task.sleep(for: .milliseconds(100))
        #expect(main.hasChanges)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 1)
    }
}
