import Foundation
import OpenCoreData
import Testing

@testable import SwiftData

/// The first trip's start, captured by a predicate as a value.
private let firstDay = SwiftDataModelTests.day

/// `#Predicate` and `SortDescriptor` in a `FetchDescriptor` (SwiftData reference, `FetchDescriptor`;
/// Foundation, `Predicate`): the store answers what it can — comparisons, equality, `nil` tests,
/// `&&`, `||`, `!`, arithmetic, sorts by numbers and dates — as one SQL statement, and every
/// predicate, translated or not, gives the answer Foundation's own evaluation gives.
@Suite("SwiftData: #Predicate and SortDescriptor in the store")
struct SwiftDataPredicateTests {
    static let notes: [String?] = ["skis", nil, "museums", nil, "boat"]

    static func trips() -> [Trip] {
        (0..<5).map { index in
            let trip = Trip(
                name: ["Alps", "Coast", "city", "Lake", "Fjord"][index],
                destination: ["Zermatt", "Lisbon", "Berlin", "Annecy", "Bergen"][index],
                startDate: SwiftDataModelTests.day.addingTimeInterval(Double(index * 86_400)),
                budget: [2_400, 900, 600, 1_200, 3_100][index], nights: [7, 3, 2, 4, 9][index],
                isBooked: index % 2 == 0)
            trip.notes = notes[index]
            return trip
        }
    }

    /// Each predicate, whether the store can answer it, and the same answer as in memory.
    static let table: [(name: String, inStore: Bool, predicate: Predicate<Trip>)] = [
        ("less than", true, #Predicate { $0.nights < 4 }),
        ("and", true, #Predicate { $0.budget >= 900 && $0.nights <= 7 }),
        ("or", true, #Predicate { $0.nights == 2 || $0.budget > 3_000 }),
        ("not", true, #Predicate { !($0.nights > 3) }),
        ("Boolean property", true, #Predicate { $0.isBooked }),
        ("negated Boolean", true, #Predicate { !$0.isBooked }),
        ("string equality", true, #Predicate { $0.destination == "Berlin" }),
        ("string inequality", true, #Predicate { $0.name != "Alps" }),
        ("nil test", true, #Predicate { $0.notes == nil }),
        ("non-nil test", true, #Predicate { $0.notes != nil }),
        ("arithmetic", true, #Predicate { $0.budget - 1_000 > 0 && $0.nights * 2 > 8 }),
        ("date", true, #Predicate { $0.startDate > firstDay }),
        ("string order, in memory", false, #Predicate { $0.name < "D" }),
        ("prefix, in memory", false, #Predicate { $0.destination.starts(with: "Ber") }),
    ]

    @Test @MainActor func everyPredicateGivesFoundationsAnswer() throws {
        let container = try ModelContainer(
            for: Trip.self, configurations: ModelConfiguration(url: TemporaryDirectory().file("trips.store")))
        let context = container.mainContext
        let trips = Self.trips()
        for trip in trips { context.insert(trip) }
        try context.save()
        for (name, inStore, predicate) in Self.table {
            let expected = try trips.filter { try predicate.evaluate($0) }.map(\.name).sorted()
            let fetched = try context.fetch(FetchDescriptor(predicate: predicate)).map(\.name).sorted()
            #expect(fetched == expected, "\(name)")
            #expect(try context.fetchCount(FetchDescriptor(predicate: predicate)) == expected.count, "\(name)")
            let translated = PredicateTranslation.predicate(predicate)
            if inStore {
                #expect(translated != nil, "\(name) runs in the store")
            }
        }
    }

    /// Sorts by numbers and dates run in the store with the window; a string sort stays
    /// Foundation's (its comparators are not the store's), with the same window.
    @Test @MainActor func sortsAndWindowsRunInTheStoreWhereTheyOrderAlike() throws {
        let container = try ModelContainer(
            for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = container.mainContext
        for trip in Self.trips() { context.insert(trip) }
        try context.save()
        var byBudget = FetchDescriptor<Trip>(
            predicate: #Predicate { $0.nights > 2 }, sortBy: [SortDescriptor(\.budget, order: .reverse)])
        byBudget.fetchOffset = 1
        byBudget.fetchLimit = 2
        #expect(FetchPlan(byBudget).isWhollyInStore)
        #expect(try context.fetch(byBudget).map(\.name) == ["Alps", "Lake"])

        var byName = FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)])
        byName.fetchLimit = 3
        #expect(!FetchPlan(byName).isWhollyInStore)
        let foundationOrder = Self.trips().sorted(using: SortDescriptor(\Trip.name)).prefix(3).map(\.name)
        #expect(try context.fetch(byName).map(\.name) == foundationOrder)
    }
}
