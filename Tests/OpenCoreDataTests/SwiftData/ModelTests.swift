import Foundation
import OpenCoreData
import SwiftData
import Testing

/// A model class as an app writes it for Apple platforms.
@Model
final class Trip {
    var name: String
    var destination: String
    var startDate: Date
    var budget: Double
    var nights: Int
    var notes: String?
    var isBooked: Bool
    @Transient var viewCount = 0

    init(name: String, destination: String, startDate: Date, budget: Double, nights: Int, isBooked: Bool = false) {
        self.name = name
        self.destination = destination
        self.startDate = startDate
        self.budget = budget
        self.nights = nights
        self.isBooked = isBooked
    }
}

/// A value that is not `Codable`: SwiftData has no way to store it.
struct Outline {
    var corners: Int
}

@Model
final class Place {
    var name: String
    var outline: Outline

    init(name: String, outline: Outline) {
        self.name = name
        self.outline = outline
    }
}

/// SwiftData's API on Linux: `@Model` classes, `Schema`, `ModelContainer`, `ModelContext` and
/// `FetchDescriptor`, over the Core Data stack. Rules from Apple's SwiftData documentation: `Model()`
/// ("converts a Swift class into a stored model"; stored properties persist unless `@Transient`;
/// the class conforms to `PersistentModel` and `Observable`), `ModelContext` (`insert`, `delete`,
/// `save`, `rollback`, `fetch`, `fetchCount`, `hasChanges`), `FetchDescriptor` (predicate, sort,
/// limit, offset), `PersistentIdentifier` (`Codable`, `Hashable`), `ModelContainer` (an entity
/// per model class, named after it).
@Suite("SwiftData: @Model, Schema, ModelContainer, ModelContext")
struct SwiftDataModelTests {
    static let day = Date(timeIntervalSinceReferenceDate: 800_000_000)

    static func trips() -> [Trip] {
        [
            Trip(name: "Alps", destination: "Zermatt", startDate: day, budget: 2_400, nights: 7),
            Trip(
                name: "Coast", destination: "Lisbon", startDate: day.addingTimeInterval(86_400), budget: 900, nights: 3),
            Trip(
                name: "city", destination: "Berlin", startDate: day.addingTimeInterval(-86_400), budget: 600, nights: 2),
        ]
    }

    /// `Schema`: an entity per model class, named after the class, an attribute per persisted
    /// property with the type SwiftData stores it as (`Int` as Integer 64), optional exactly when
    /// the property's type is; `@Transient` properties are not in it.
    @Test func theSchemaIsAnEntityPerClassWithAnAttributePerStoredProperty() throws {
        let schema = Schema([Trip.self])
        // Apple's `Schema.Entity` and `Schema.Attribute` values.
        let entity = try #require(schema.entity(for: Trip.self))
        #expect(schema.entities.map(\.name) == ["Trip"])
        #expect(entity.name == "Trip")
        #expect(
            entity.properties.map(\.name) == [
                "name", "destination", "startDate", "budget", "nights", "notes", "isBooked",
            ])
        #expect(entity.relationships.isEmpty)
        #expect(entity.attributesByName["notes"]?.isOptional == true)
        #expect(
            entity.attributesByName["notes"].map { ObjectIdentifier($0.valueType) } == ObjectIdentifier(String.self))
        #expect(entity.attributesByName["nights"].map { ObjectIdentifier($0.valueType) } == ObjectIdentifier(Int.self))
        #expect(entity.attributesByName["name"]?.isOptional == false)
        #expect(entity.storedPropertiesByName["budget"]?.isAttribute == true)
        // The Core Data model it makes.
        let described = try #require(
            NSManagedObjectModel.makeManagedObjectModel(for: [Trip.self])?.entitiesByName["Trip"])
        let attributes = described.attributesByName
        #expect(Set(attributes.keys) == ["name", "destination", "startDate", "budget", "nights", "notes", "isBooked"])
        #expect(attributes["name"]?.attributeType == .stringAttributeType)
        #expect(attributes["startDate"]?.attributeType == .dateAttributeType)
        #expect(attributes["budget"]?.attributeType == .doubleAttributeType)
        #expect(attributes["nights"]?.attributeType == .integer64AttributeType)
        #expect(attributes["isBooked"]?.attributeType == .booleanAttributeType)
        #expect(attributes["notes"]?.isOptional == true)
        #expect(attributes["name"]?.isOptional == false)
    }

    /// A model in no context keeps the values its initializer set; `@Transient` properties stay
    /// ordinary stored properties.
    @Test func aNewModelKeepsItsValuesBeforeItJoinsAContext() {
        let trip = Trip(name: "Alps", destination: "Zermatt", startDate: Self.day, budget: 2_400, nights: 7)
        trip.notes = "skis"
        trip.viewCount += 1
        #expect(trip.name == "Alps")
        #expect(trip.nights == 7)
        #expect(trip.notes == "skis")
        #expect(trip.viewCount == 1)
        #expect(trip.modelContext == nil)
        #expect(!trip.hasChanges && !trip.isDeleted)
        trip.notes = nil
        #expect(trip.notes == nil)
    }

    /// A model is an ordinary Swift class until it joins a context ("ModelContext.insert(_:)":
    /// the context starts tracking the model as it is): a property set several times before then,
    /// back to nil included, joins with the value it was last set to, and is saved with it.
    @Test @MainActor func aModelJoinsWithTheValuesItWasLastSetTo() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("last.store")
        do {
            let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: url))
            let trip = Trip(name: "Alps", destination: "Zermatt", startDate: Self.day, budget: 2_400, nights: 7)
            trip.notes = "skis"
            trip.nights = 6
            trip.notes = nil
            trip.name = "Dolomites"
            trip.notes = "boots"
            let unset = Trip(name: "Coast", destination: "Nice", startDate: Self.day, budget: 900, nights: 3)
            unset.notes = "sun"
            unset.notes = nil
            container.mainContext.insert(trip)
            container.mainContext.insert(unset)
            #expect(trip.name == "Dolomites" && trip.nights == 6 && trip.notes == "boots")
            #expect(unset.notes == nil)
            try container.mainContext.save()
        }
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: url))
        let trips = try ModelContext(container).fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]))
        #expect(trips.map(\.name) == ["Coast", "Dolomites"])
        #expect(trips.map(\.notes) == [nil, "boots"])
        #expect(trips.map(\.nights) == [3, 6])
    }

    /// Saved models are in the store file: a new container on the same file fetches them with
    /// every value, and the Core Data API reads the same file with the schema's model.
    @Test @MainActor func savedModelsReadBackThroughSwiftDataAndCoreData() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("trips.store")
        do {
            let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: url))
            let context = container.mainContext
            for trip in Self.trips() { context.insert(trip) }
            #expect(context.hasChanges)
            try context.save()
            #expect(!context.hasChanges)
        }
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: url))
        let trips = try ModelContext(container).fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.budget)]))
        #expect(trips.map(\.name) == ["city", "Coast", "Alps"])
        #expect(trips.map(\.nights) == [2, 3, 7])
        #expect(
            trips.map(\.startDate) == [
                Self.day.addingTimeInterval(-86_400), Self.day.addingTimeInterval(86_400), Self.day,
            ])
        #expect(trips.allSatisfy { $0.notes == nil && !$0.isBooked })

        let coordinator = NSPersistentStoreCoordinator(
            managedObjectModel: try #require(NSManagedObjectModel.makeManagedObjectModel(for: [Trip.self])))
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        let coreData = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        coreData.persistentStoreCoordinator = coordinator
        let request = NSFetchRequest<NSManagedObject>(entityName: "Trip")
        request.sortDescriptors = [NSSortDescriptor(key: "nights", ascending: true)]
        let objects = try coreData.fetch(request)
        #expect(objects.map { $0.value(forKey: "destination") as? String } == ["Berlin", "Lisbon", "Zermatt"])
    }

    /// `FetchDescriptor`: the predicate keeps the models it accepts (a `#Predicate` as Apple's
    /// macro writes it), `sortBy` orders them, `fetchOffset` and `fetchLimit` window them; a
    /// fetch sees the context's unsaved inserts; `fetchCount` counts what `fetch` returns.
    @Test @MainActor func fetchDescriptorsFilterSortAndWindow() throws {
        let container = try ModelContainer(
            for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = container.mainContext
        for trip in Self.trips() { context.insert(trip) }
        try context.save()
        context.insert(Trip(name: "Lake", destination: "Annecy", startDate: Self.day, budget: 1_200, nights: 4))

        let affordable = #Predicate<Trip> { $0.budget < 2_000 && $0.nights > 2 }
        var descriptor = FetchDescriptor(predicate: affordable, sortBy: [SortDescriptor(\.name)])
        #expect(try context.fetch(descriptor).map(\.name) == ["Coast", "Lake"])
        #expect(try context.fetchCount(descriptor) == 2)
        descriptor.fetchLimit = 1
        descriptor.fetchOffset = 1
        #expect(try context.fetch(descriptor).map(\.name) == ["Lake"])

        var byNights = FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.nights, order: .reverse)])
        byNights.fetchLimit = 2
        #expect(try context.fetch(byNights).map(\.nights) == [7, 4])
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 4)
    }

    /// One model per stored object in a context: fetching twice gives the same instance, and it
    /// is the instance that was inserted. `delete` removes a model at the next save; `rollback`
    /// undoes unsaved changes.
    @Test @MainActor func aContextKeepsOneModelPerObjectDeletesAndRollsBack() throws {
        let container = try ModelContainer(
            for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = container.mainContext
        let trips = Self.trips()
        for trip in trips { context.insert(trip) }
        try context.save()
        let fetched = try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.budget)]))
        #expect(fetched[2] === trips[0])
        #expect(trips[0].modelContext === context)

        trips[0].budget = 3_000
        #expect(trips[0].hasChanges)
        context.rollback()
        #expect(trips[0].budget == 2_400)
        #expect(!trips[0].hasChanges)

        context.delete(trips[1])
        #expect(trips[1].isDeleted)
        try context.save()
        #expect(try context.fetch(FetchDescriptor<Trip>()).count == 2)
    }

    /// `PersistentIdentifier`: temporary before the first save, the store's afterwards; `Hashable`
    /// and `Codable`, so it round-trips through JSON.
    @Test @MainActor func persistentIdentifiersBecomeTheStoresAndRoundTripThroughJSON() throws {
        let container = try ModelContainer(
            for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = container.mainContext
        let trip = Self.trips()[0]
        let before = trip.persistentModelID
        context.insert(trip)
        try context.save()
        let saved = trip.persistentModelID
        #expect(saved != before)
        #expect(saved.entityName == "Trip")
        let decoded = try JSONDecoder().decode(PersistentIdentifier.self, from: JSONEncoder().encode(saved))
        #expect(decoded == saved)
        #expect(Set([saved, decoded]).count == 1)
    }

    /// `Observable`: reading a persisted property inside `withObservationTracking` and then
    /// setting it calls the change handler, as SwiftUI relies on.
    @Test func persistedPropertiesAreObservable() {
        let trip = Self.trips()[0]
        let changed = LockedFlag()
        withObservationTracking {
            _ = trip.name
        } onChange: {
            changed.set()
        }
        trip.name = "Alps again"
        #expect(changed.isSet)
    }

    /// A property of a type that cannot be stored (SwiftData stores the scalar types, `Codable`
    /// values and models; `Outline` is none of them) is a clear error when the container is made,
    /// never a trap or a silently dropped value.
    @Test func aPropertyThatCannotBeStoredIsAnErrorWhenTheContainerIsMade() {
        #expect {
            _ = try ModelContainer(for: Place.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        } throws: { error in
            let error = error as NSError
            return error.domain == NSCocoaErrorDomain && error.code == NSPersistentStoreIncompatibleSchemaError
                && error.localizedDescription.contains("Place.outline")
        }
    }
}

@Model
final class Tag {
    @Attribute(.unique) var name: String
    var uses: Int
    @Attribute(.externalStorage, originalName: "colour") var color: String?
    @Attribute(.ephemeral) var isSelected: Bool

    init(name: String, uses: Int, color: String? = nil) {
        self.name = name
        self.uses = uses
        self.color = color
        self.isSelected = false
    }
}

/// `@Attribute(_:originalName:hashModifier:)`: the options become the attribute's in the model
/// (`.unique` a uniqueness constraint, `originalName` the renaming identifier a migration maps by,
/// `.externalStorage`, `.ephemeral` a transient attribute), and `.unique` makes an insert with a
/// stored value an upsert ("Meet SwiftData", WWDC23: the stored model takes the new values).
@Suite("SwiftData: @Attribute")
struct SwiftDataAttributeTests {
    @Test func attributeOptionsAreTheModelsAttributeSettings() throws {
        let schemaEntity = try #require(Schema([Tag.self]).entity(for: Tag.self))
        #expect(schemaEntity.uniquenessConstraints == [["name"]])
        #expect(schemaEntity.attributesByName["name"]?.isUnique == true)
        #expect(schemaEntity.attributesByName["color"]?.originalName == "colour")
        #expect(schemaEntity.attributesByName["isSelected"]?.isTransient == true)
        let entity = try #require(NSManagedObjectModel.makeManagedObjectModel(for: [Tag.self])?.entitiesByName["Tag"])
        #expect(entity.uniquenessConstraints.map { $0.compactMap { $0 as? String } } == [["name"]])
        let color = try #require(entity.attributesByName["color"])
        #expect(color.renamingIdentifier == "colour")
        #expect(color.allowsExternalBinaryDataStorage)
        #expect(entity.attributesByName["isSelected"]?.isTransient == true)
        #expect(entity.attributesByName["uses"]?.renamingIdentifier == nil)
    }

    @Test @MainActor func insertingAUniqueValueAgainUpdatesTheStoredModel() throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(
            for: Tag.self, configurations: ModelConfiguration(url: directory.file("tags.store")))
        let context = container.mainContext
        context.insert(Tag(name: "swift", uses: 1, color: "orange"))
        context.insert(Tag(name: "linux", uses: 2))
        try context.save()
        context.insert(Tag(name: "swift", uses: 5))
        try context.save()
        let tags = try ModelContext(container).fetch(FetchDescriptor<Tag>(sortBy: [SortDescriptor(\.name)]))
        #expect(tags.map(\.name) == ["linux", "swift"])
        #expect(tags.map(\.uses) == [2, 5])
    }
}

/// `ModelContext`'s change lists and bulk calls (SwiftData reference, `ModelContext`):
/// `insertedModelsArray`, `changedModelsArray` and `deletedModelsArray` list the unsaved models;
/// `delete(model:where:)` deletes what a predicate accepts; `transaction(block:)` runs the block
/// and saves; `fetchIdentifiers` and `registeredModel(for:)` answer by identifier.
@Suite("SwiftData: ModelContext's change lists and bulk calls")
struct SwiftDataContextTests {
    @Test @MainActor func changeListsBulkDeletesTransactionsAndIdentifiers() throws {
        let container = try ModelContainer(
            for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = container.mainContext
        let trips = SwiftDataModelTests.trips()
        try context.transaction {
            for trip in trips { context.insert(trip) }
            #expect(context.insertedModelsArray.count == 3)
        }
        #expect(!context.hasChanges)
        #expect(context.insertedModelsArray.isEmpty)

        trips[0].nights = 8
        context.delete(trips[1])
        context.processPendingChanges()
        #expect(context.changedModelsArray.compactMap { $0 as? Trip } == [trips[0]])
        #expect(context.deletedModelsArray.compactMap { $0 as? Trip } == [trips[1]])
        try context.save()

        try context.delete(model: Trip.self, where: #Predicate { $0.budget < 1_000 })
        try context.save()
        let left = try context.fetchIdentifiers(FetchDescriptor<Trip>())
        #expect(left == [trips[0].persistentModelID])
        let found: Trip? = context.registeredModel(for: left[0])
        #expect(found === trips[0])
    }
}

/// A model declaring numbers of every width SwiftData stores, optional and not.
@Model
final class Reading {
    var small: Int16
    var medium: Int32
    var large: Int64
    var count: Int
    var byte: UInt8
    var ratio: Float
    var value: Double
    var flag: Bool
    var missing: Int?
    var present: Double?
    var when: Date?

    init(_ seed: Int, missing: Int? = nil, present: Double? = nil) {
        small = Int16(seed)
        medium = Int32(seed) * 1_000
        large = Int64(seed) * 10_000_000_000
        count = -seed
        byte = UInt8(seed % 256)
        ratio = Float(seed) / 4
        value = Double(seed) / 8
        flag = seed % 2 == 1
        self.missing = missing
        self.present = present
        when = seed == 0 ? nil : Date(timeIntervalSinceReferenceDate: Double(seed))
    }
}

/// SwiftData, `Model()`: a model's stored properties come back from the store with the types and
/// values they were saved with. Core Data hands numbers out as `NSNumber`s of the attribute's type
/// (Integer 16/32/64, Float, Double, Boolean); the declared width, optional or not, is what the
/// property reads as, and no value reads as `nil`.
@Suite("SwiftData: numbers of every width")
struct SwiftDataNumberTests {
    @Test @MainActor func numbersReadBackAtTheirDeclaredWidths() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("readings.store")
        do {
            let container = try ModelContainer(for: Reading.self, configurations: ModelConfiguration(url: url))
            let context = container.mainContext
            context.insert(Reading(3, missing: nil, present: 2.5))
            context.insert(Reading(0, missing: 42, present: nil))
            try context.save()
        }
        let container = try ModelContainer(for: Reading.self, configurations: ModelConfiguration(url: url))
        let readings = try ModelContext(container).fetch(FetchDescriptor<Reading>(sortBy: [SortDescriptor(\.small)]))
        #expect(readings.count == 2)
        let zero = try #require(readings.first)
        let three = try #require(readings.last)
        #expect(three.small == 3 && three.medium == 3_000 && three.large == 30_000_000_000 && three.count == -3)
        #expect(three.byte == 3 && three.ratio == 0.75 && three.value == 0.375 && three.flag)
        #expect(three.missing == nil && three.present == 2.5)
        #expect(three.when == Date(timeIntervalSinceReferenceDate: 3))
        #expect(zero.small == 0 && zero.count == 0 && !zero.flag && zero.ratio == 0)
        #expect(zero.missing == 42 && zero.present == nil && zero.when == nil)
    }
}

/// Enums with raw values, as apps declare a model's states.
enum ChorePriority: Int, Codable, Sendable {
    case low, normal, high
}

enum ChoreState: String, Codable, Sendable {
    case open, done
}

@Model
final class Chore {
    var title: String
    var priority: ChorePriority
    var state: ChoreState?

    init(title: String, priority: ChorePriority, state: ChoreState? = nil) {
        self.title = title
        self.priority = priority
        self.state = state
    }
}

/// Enums SwiftData stores (SwiftData, "Defining data relationships with enumerations and model
/// classes": a model's properties may be enumerations): a `RawRepresentable` enum is stored as its
/// raw value, in the attribute type of the raw value, and comes back as the same case; a
/// predicate comparing it with a case runs in the store.
@Suite("SwiftData: enumerations")
struct SwiftDataEnumTests {
    @Test @MainActor func enumsAreStoredAsTheirRawValues() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("chores.store")
        let container = try ModelContainer(for: Chore.self, configurations: ModelConfiguration(url: url))
        let attributes = try #require(
            NSManagedObjectModel.makeManagedObjectModel(for: [Chore.self])?.entitiesByName["Chore"]
        ).attributesByName
        #expect(attributes["priority"]?.attributeType == .integer64AttributeType)
        #expect(attributes["state"]?.attributeType == .stringAttributeType)
        #expect(attributes["state"]?.isOptional == true)

        let context = container.mainContext
        let dishes = Chore(title: "dishes", priority: .high)
        #expect(dishes.priority == .high)
        context.insert(dishes)
        context.insert(Chore(title: "plants", priority: .low, state: .done))
        dishes.state = .open
        try context.save()
        #expect(
            try sqlite3(url, "SELECT ZTITLE || ':' || ZPRIORITY || ':' || ZSTATE FROM ZCHORE ORDER BY ZTITLE") == [
                "dishes:2:open", "plants:0:done",
            ])

        let done = ChoreState.done
        let fetched = try ModelContext(container).fetch(
            FetchDescriptor<Chore>(predicate: #Predicate { $0.state == done }))
        #expect(fetched.map(\.title) == ["plants"])
        #expect(fetched.first?.priority == .low)
        #expect(fetched.first?.state == .done)
    }
}

/// A value a model keeps through a value transformer of its own.
final class Palette: NSObject, @unchecked Sendable {
    let colors: [String]
    init(_ colors: [String]) { self.colors = colors }
}

/// Turns a palette into the comma-separated names of its colours, and back.
final class PaletteTransformer: OpenCoreData.ValueTransformer, @unchecked Sendable {
    override func transformedValue(_ value: Any?) -> Any? {
        (value as? Palette).map { Data($0.colors.joined(separator: ",").utf8) }
    }

    override func reverseTransformedValue(_ value: Any?) -> Any? {
        (value as? Data).map { Palette(String(decoding: $0, as: UTF8.self).split(separator: ",").map(String.init)) }
    }
}

@Model
final class Poster {
    var title: String
    @Attribute(.transformable(by: PaletteTransformer.self)) var palette: Palette?

    init(title: String, palette: Palette?) {
        self.title = title
        self.palette = palette
    }
}

/// `Schema.Attribute.Option.transformable(by:)` (SwiftData reference: the value is stored in the
/// form the value transformer makes of it; the transformer is registered under its class's name):
/// the attribute is transformable with that transformer, the store holds the transformer's data,
/// and the value comes back through the reverse transformation.
@Suite("SwiftData: transformable attributes")
struct SwiftDataTransformableTests {
    @Test @MainActor func aTransformableValueIsStoredAsItsTransformersData() throws {
        OpenCoreData.ValueTransformer.setValueTransformer(PaletteTransformer(), forName: .init("PaletteTransformer"))
        let directory = TemporaryDirectory()
        let url = directory.file("posters.store")
        let container = try ModelContainer(for: Poster.self, configurations: ModelConfiguration(url: url))
        let palette = try #require(
            NSManagedObjectModel.makeManagedObjectModel(for: [Poster.self])?.entitiesByName["Poster"]?.attributesByName[
                "palette"])
        #expect(palette.attributeType == .transformableAttributeType)
        #expect(palette.valueTransformerName == "PaletteTransformer")

        let context = ModelContext(container)
        context.insert(Poster(title: "Bauhaus", palette: Palette(["red", "blue", "yellow"])))
        context.insert(Poster(title: "Blank", palette: nil))
        try context.save()
        #expect(
            try sqlite3(url, "SELECT CAST(ZPALETTE AS TEXT) FROM ZPOSTER WHERE ZTITLE = 'Bauhaus'") == [
                "red,blue,yellow"
            ])

        let posters = try ModelContext(container).fetch(FetchDescriptor<Poster>(sortBy: [SortDescriptor(\.title)]))
        #expect(posters.map { $0.palette?.colors ?? [] } == [["red", "blue", "yellow"], []])
    }
}
