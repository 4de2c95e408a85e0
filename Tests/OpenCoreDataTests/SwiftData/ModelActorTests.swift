import Foundation
import OpenCoreData
import SwiftData
import Testing

/// A city's visits on a day: one model per city and day (`#Unique`), indexed by day and by city
/// and day (`#Index`).
@Model
final class Visit {
    #Unique<Visit>([\.city, \.day])
    #Index<Visit>([\.day], [\.city, \.day])

    var city: String
    var day: Int
    var count: Int

    init(city: String, day: Int, count: Int) {
        self.city = city
        self.day = day
        self.count = count
    }
}

/// A place indexed by name (binary) and by position (R-tree), with `Schema.Index` types.
@Model
final class Landmark {
    #Index<Landmark>(.binary([\.name]), .rtree([\.latitude, \.longitude]))

    var name: String
    var latitude: Double
    var longitude: Double

    init(name: String, latitude: Double, longitude: Double) {
        self.name = name
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// Counts visits away from the main actor, on its own context.
@ModelActor
actor VisitCounter {
    /// Inserts and saves a model, returning its identifier.
    func record(city: String, day: Int, count: Int) throws -> PersistentIdentifier {
        let visit = Visit(city: city, day: day, count: count)
        modelContext.insert(visit)
        try modelContext.save()
        return visit.persistentModelID
    }

    /// Adds one to the count of `id`'s model and saves: a read, a change and a save that would
    /// lose increments if two ran at once on one context.
    func increment(_ id: PersistentIdentifier) throws {
        guard let visit = self[id, as: Visit.self] else { return }
        visit.count += 1
        try modelContext.save()
    }

    func count(of id: PersistentIdentifier) -> Int? { self[id, as: Visit.self]?.count }
}

/// `@ModelActor`, `#Unique` and `#Index`. Rules from Apple's SwiftData documentation:
/// `ModelActor()` (the actor gets `modelContainer`, `modelExecutor` and `init(modelContainer:)`;
/// its code runs on the executor, with `modelContext`), `DefaultSerialModelExecutor` (one job at
/// a time), `ModelActor.subscript(id:as:)` (the model of an identifier, `nil` when there is
/// none), `Unique(_:)` (models with the same values of a constraint's properties are one model:
/// a second insert updates the first), `Index(_:)` (an index of the store on the properties).
@Suite("SwiftData: @ModelActor, #Unique, #Index")
struct SwiftDataModelActorTests {
    /// A model actor saves on its own context; the main context fetches what it saved; jobs run
    /// one at a time, so 40 concurrent increments of one model all count.
    @Test func aModelActorWorksOnItsOwnContextOneJobAtATime() async throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(
            for: Visit.self, configurations: ModelConfiguration(url: directory.file("visits.store")))
        let counter = VisitCounter(modelContainer: container)
        #expect(counter.modelContainer === container)
        let id = try await counter.record(city: "Oslo", day: 1, count: 0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<40 { group.addTask { try await counter.increment(id) } }
            try await group.waitForAll()
        }
        #expect(await counter.count(of: id) == 40)
        let stored = try ModelContext(container).fetch(FetchDescriptor<Visit>())
        #expect(stored.map(\.count) == [40])
        #expect(stored.first?.persistentModelID == id)
    }

    /// The subscript answers `nil` for an identifier whose model was deleted; `model(for:)` of a
    /// context returns the model of a stored identifier.
    @Test func identifiersFindTheirModels() async throws {
        let container = try ModelContainer(
            for: Visit.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let counter = VisitCounter(modelContainer: container)
        let id = try await counter.record(city: "Lund", day: 3, count: 7)
        let context = ModelContext(container)
        #expect((context.model(for: id) as? Visit)?.count == 7)
        let visit = try #require(context.model(for: id) as? Visit)
        context.delete(visit)
        try context.save()
        #expect(await counter.count(of: id) == nil)
    }

    /// `#Unique` makes the pair a uniqueness constraint (an insert of the same city and day
    /// updates the stored model) and `#Index` the store's indexes, in Apple's index names.
    @Test @MainActor func uniqueAndIndexMacrosShapeTheEntityAndTheStore() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("visits.store")
        let container = try ModelContainer(for: Visit.self, configurations: ModelConfiguration(url: url))
        let entity = try #require(container.schema.entity(for: Visit.self))
        #expect(entity.uniquenessConstraints == [["city", "day"]])
        #expect(entity.indices == [["day"], ["city", "day"]])
        let described = try #require(
            NSManagedObjectModel.makeManagedObjectModel(for: [Visit.self])?.entitiesByName["Visit"])
        #expect(described.indexes.map(\.name) == ["day", "city_day"])
        let context = container.mainContext
        context.insert(Visit(city: "Oslo", day: 1, count: 1))
        context.insert(Visit(city: "Oslo", day: 2, count: 2))
        try context.save()
        context.insert(Visit(city: "Oslo", day: 1, count: 5))
        try context.save()
        let visits = try ModelContext(container).fetch(FetchDescriptor<Visit>(sortBy: [SortDescriptor(\.day)]))
        #expect(visits.map(\.count) == [5, 2])
        let indexes = try sqlite3(url, "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'ZVISIT'")
        #expect(Set(["Z_Visit_day", "Z_Visit_city_day", "Z_Visit_UNIQUE_city_day"]).isSubset(of: Set(indexes)))
    }

    /// `#Index(_: Schema.Index<T>.Types<T>...)` (SwiftData reference, iOS 18: each index "either
    /// binary or R-tree"): the entity gets a fetch index per type, its elements of the collation
    /// type Core Data names (`NSFetchIndexElementType.binary`, `.rTree`), and the store indexes
    /// the columns.
    @Test @MainActor func indexTypesAreTheFetchIndexesCollationTypes() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("landmarks.store")
        let container = try ModelContainer(for: Landmark.self, configurations: ModelConfiguration(url: url))
        #expect(container.schema.entity(for: Landmark.self)?.indices == [["name"], ["latitude", "longitude"]])
        let entity = try #require(
            NSManagedObjectModel.makeManagedObjectModel(for: [Landmark.self])?.entitiesByName["Landmark"])
        #expect(entity.indexes.map(\.name) == ["name", "latitude_longitude"])
        #expect(entity.indexes.map { $0.elements.map(\.collationType) } == [[.binary], [.rTree, .rTree]])
        container.mainContext.insert(Landmark(name: "Nidaros", latitude: 63.43, longitude: 10.40))
        try container.mainContext.save()
        let indexes = try sqlite3(
            url, "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'ZLANDMARK'")
        #expect(Set(["Z_Landmark_name", "Z_Landmark_latitude_longitude"]).isSubset(of: Set(indexes)))
        let north = try container.mainContext.fetch(
            FetchDescriptor<Landmark>(predicate: #Predicate { $0.latitude > 60 && $0.longitude < 11 }))
        #expect(north.map(\.name) == ["Nidaros"])
    }
}
