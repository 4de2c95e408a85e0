import Foundation
import OpenCoreData
import SwiftData
import Testing

/// A `Codable` struct a model holds: SwiftData stores it as a composite attribute.
struct Address: Codable, Equatable {
    var street: String
    var city: String
    var postcode: String?
    var location: Coordinates
    var kind: AddressKind
}

struct Coordinates: Codable, Equatable {
    var latitude: Double
    var longitude: Double
}

enum AddressKind: String, Codable, CaseIterable {
    case home, work
}

@Model
final class Contact {
    var name: String
    var address: Address
    var previous: Address?
    var tags: [String]
    var scores: [Int: Double]?
    var visits: [Date]

    init(name: String, address: Address, tags: [String] = [], visits: [Date] = []) {
        self.name = name
        self.address = address
        self.tags = tags
        self.visits = visits
    }
}

/// A struct with a list inside, which a composite attribute cannot hold.
struct Route: Codable, Equatable {
    var stops: [String]
}

/// An enum with associated values.
enum Status: Codable, Equatable {
    case active
    case paused(until: Date, reason: String)
}

@Model
final class Delivery {
    var route: Route
    var status: Status

    init(route: Route, status: Status) {
        self.route = route
        self.status = status
    }
}

/// `Codable` values in models. Apple's SwiftData documentation, "Defining data relationships…" and
/// `Schema.CompositeAttribute` ("an attribute that derives its value by composing other
/// attributes"): a model's property may be any `Codable` type; a struct is stored as a composite
/// attribute whose elements are its properties (each a column, so they stay queryable), and a
/// collection of values as one attribute ("Using structs and enums in SwiftData models": an array is
/// stored in a single property, as a binary property list).
@Suite("SwiftData: Codable structs and collections of values")
struct SwiftDataCodableValueTests {
    static let home = Address(
        street: "1 Rue Cler", city: "Paris", postcode: "75007", location: Coordinates(latitude: 48.85, longitude: 2.3),
        kind: .home)
    static let office = Address(
        street: "Via Roma 2", city: "Turin", postcode: nil, location: Coordinates(latitude: 45.07, longitude: 7.68),
        kind: .work)

    @Test func aStructIsACompositeAttributeOfItsProperties() throws {
        let schemaAddress = try #require(
            Schema([Contact.self]).entity(for: Contact.self)?.attributesByName["address"] as? Schema.CompositeAttribute)
        #expect(ObjectIdentifier(schemaAddress.valueType) == ObjectIdentifier(Address.self))
        #expect(schemaAddress.properties.map(\.name) == ["street", "city", "postcode", "location", "kind"])
        let entity = try #require(
            NSManagedObjectModel.makeManagedObjectModel(for: [Contact.self])?.entitiesByName["Contact"])
        let address = try #require(entity.attributesByName["address"] as? NSCompositeAttributeDescription)
        #expect(address.attributeType == .compositeAttributeType)
        #expect(!address.isOptional)
        #expect(address.elements.map(\.name) == ["street", "city", "postcode", "location", "kind"])
        #expect(address.elements.map(\.isOptional) == [false, false, true, false, false])
        #expect(address.elements[0].attributeType == .stringAttributeType)
        #expect(address.elements[4].attributeType == .stringAttributeType)
        let location = try #require(address.elements[3] as? NSCompositeAttributeDescription)
        #expect(location.elements.map(\.name) == ["latitude", "longitude"])
        #expect(location.elements.map(\.attributeType) == [.doubleAttributeType, .doubleAttributeType])
        #expect((entity.attributesByName["previous"] as? NSCompositeAttributeDescription)?.isOptional == true)
        #expect(entity.attributesByName["tags"]?.attributeType == .binaryDataAttributeType)
        #expect(entity.attributesByName["scores"]?.isOptional == true)
    }

    @Test @MainActor func structsAndCollectionsRoundTripThroughTheStore() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("contacts.store")
        let container = try ModelContainer(for: Contact.self, configurations: ModelConfiguration(url: url))
        let context = container.mainContext
        let ada = Contact(name: "Ada", address: Self.home, tags: ["math", "engines"])
        #expect(ada.address == Self.home)
        context.insert(ada)
        let visit = Date(timeIntervalSinceReferenceDate: 700_000_000)
        context.insert(Contact(name: "Grace", address: Self.office, visits: [visit]))
        ada.previous = Self.office
        ada.scores = [1: 9.5, 2: 7]
        try context.save()
        // Each leaf of the struct is a column of its own; the list is one property list.
        #expect(
            try sqlite3(
                url, "SELECT ZNAME || ':' || ZCITY || ':' || ZLATITUDE || ':' || ZKIND FROM ZCONTACT ORDER BY ZNAME")
                == ["Ada:Paris:48.85:home", "Grace:Turin:45.07:work"])
        #expect(
            try sqlite3(url, "SELECT substr(CAST(ZTAGS AS TEXT), 1, 6) FROM ZCONTACT WHERE ZNAME = 'Ada'") == ["bplist"]
        )

        let reread = try ModelContext(container).fetch(FetchDescriptor<Contact>(sortBy: [SortDescriptor(\.name)]))
        try #require(reread.count == 2)
        #expect(reread[0].address == Self.home)
        #expect(reread[0].previous == Self.office)
        #expect(reread[0].tags == ["math", "engines"])
        #expect(reread[0].scores == [1: 9.5, 2: 7])
        #expect(reread[1].address == Self.office)
        #expect(reread[1].previous == nil)
        #expect(reread[1].visits == [visit])
        #expect(reread[1].scores == nil)

        // The Core Data API sees the composite as Apple documents it: a dictionary of the elements.
        let request = NSFetchRequest<NSManagedObject>(entityName: "Contact")
        request.predicate = NSPredicate(format: "address.city == %@", "Turin")
        let coordinator = NSPersistentStoreCoordinator(
            managedObjectModel: try #require(NSManagedObjectModel.makeManagedObjectModel(for: [Contact.self])))
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        let coreData = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        coreData.persistentStoreCoordinator = coordinator
        let objects = try coreData.fetch(request)
        #expect(objects.count == 1)
        #expect(objects.first?.value(forKeyPath: "address.location.longitude") as? Double == 7.68)
    }

    @Test @MainActor func aChangedStructIsSaved() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("contacts.store")
        let container = try ModelContainer(for: Contact.self, configurations: ModelConfiguration(url: url))
        let context = container.mainContext
        let ada = Contact(name: "Ada", address: Self.home)
        context.insert(ada)
        try context.save()
        ada.address.city = "Lyon"
        ada.address.location.latitude = 45.76
        ada.tags.append("poetry")
        #expect(context.hasChanges)
        try context.save()
        let reread = try #require(try ModelContext(container).fetch(FetchDescriptor<Contact>()).first)
        #expect(reread.address.city == "Lyon")
        #expect(reread.address.location.latitude == 45.76)
        #expect(reread.address.street == "1 Rue Cler")
        #expect(reread.tags == ["poetry"])
    }

    /// A struct's members stay queryable (`Schema.CompositeAttribute`: composites can be queried):
    /// a predicate or a sort on `$0.address.city` runs in the store as one SQL statement, with
    /// the answers Foundation's evaluation gives.
    @Test @MainActor func predicatesAndSortsOnAStructsMembersRunInTheStore() throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(
            for: Contact.self, configurations: ModelConfiguration(url: directory.file("contacts.store")))
        let context = container.mainContext
        context.insert(Contact(name: "Ada", address: Self.home))
        context.insert(Contact(name: "Grace", address: Self.office))
        context.insert(
            Contact(
                name: "Mary",
                address: Address(
                    street: "3 Marine Parade", city: "Lyme Regis", postcode: "DT7",
                    location: Coordinates(latitude: 50.72, longitude: -2.93), kind: .home)))
        try context.save()
        let all = try context.fetch(FetchDescriptor<Contact>())
        let home = AddressKind.home
        let table: [(String, Predicate<Contact>)] = [
            ("member", #Predicate { $0.address.city == "Paris" }),
            ("nested member", #Predicate { $0.address.location.latitude > 46 }),
            ("optional member", #Predicate { $0.address.postcode != nil && $0.name != "Ada" }),
            ("enum member", #Predicate { $0.address.kind == home }),
        ]
        for (label, predicate) in table {
            let expected = try all.filter { try predicate.evaluate($0) }.map(\.name).sorted()
            let fetched = try context.fetch(FetchDescriptor(predicate: predicate)).map(\.name).sorted()
            #expect(fetched == expected, "\(label)")
            #expect(!expected.isEmpty, "\(label)")
            #expect(try SwiftDataPredicateTests.runsInSQL(FetchDescriptor(predicate: predicate), context), "\(label)")
        }
        let byLatitude = FetchDescriptor<Contact>(sortBy: [SortDescriptor(\.address.location.latitude)])
        #expect(try context.fetch(byLatitude).map(\.name) == ["Grace", "Ada", "Mary"])
    }

    /// A `Codable` value a composite cannot hold (a struct with a list, an enum with associated
    /// values) is still a `Codable` value SwiftData stores: kept as one property list, it comes back
    /// as it was.
    @Test @MainActor func codableValuesACompositeCannotHoldAreStoredAsAPropertyList() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("deliveries.store")
        let container = try ModelContainer(for: Delivery.self, configurations: ModelConfiguration(url: url))
        let entity = try #require(
            NSManagedObjectModel.makeManagedObjectModel(for: [Delivery.self])?.entitiesByName["Delivery"])
        #expect(entity.attributesByName["route"]?.attributeType == .binaryDataAttributeType)
        #expect(entity.attributesByName["status"]?.attributeType == .binaryDataAttributeType)
        let until = Date(timeIntervalSinceReferenceDate: 810_000_000)
        container.mainContext.insert(
            Delivery(route: Route(stops: ["depot", "market"]), status: .paused(until: until, reason: "snow")))
        container.mainContext.insert(Delivery(route: Route(stops: []), status: .active))
        try container.mainContext.save()
        let reread = try ModelContext(container).fetch(FetchDescriptor<Delivery>())
        #expect(Set(reread.map(\.route.stops)) == [["depot", "market"], []])
        #expect(reread.contains { $0.status == .paused(until: until, reason: "snow") })
        #expect(reread.contains { $0.status == .active })
    }
}
