import Foundation
import OpenCoreData
import Testing

@testable import OpenCoreDataSQL
@testable import OpenCoreDataSQLite
@testable import SwiftData

/// The first trip's start, captured by a predicate as a value.
private let firstDay = SwiftDataModelTests.day

/// `#Predicate` and `SortDescriptor` in a `FetchDescriptor` (SwiftData reference, `FetchDescriptor`;
/// Foundation, `Predicate`): the store answers what it can — comparisons, equality, `nil` tests,
/// `&&`, `||`, `!`, strings' `contains` and `starts(with:)`, ranges, value lists, key
/// paths across to-ones, a to-many's `count`, `contains(where:)` and `allSatisfy`, sorts by
/// numbers, dates and strings compared lexically — as one SQL statement, and every predicate,
/// translated or not, gives the answer Foundation's own evaluation gives.
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

    /// Each predicate, whether the SQLite store answers it wholly in SQL, and the same answer
    /// as in memory.
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
        (
            "arithmetic, in memory over the rows SQL selects", false,
            #Predicate { $0.budget - 1_000 > 0 && $0.nights * 2 > 8 }
        ),
        ("date", true, #Predicate { $0.startDate > firstDay }),
        ("string order", true, #Predicate { $0.name < "D" }),
        ("prefix", true, #Predicate { $0.destination.starts(with: "Ber") }),
        ("substring", true, #Predicate { $0.destination.contains("er") }),
        ("case differs in a substring", true, #Predicate { $0.name.contains("C") }),
        ("closed range", true, #Predicate { (3...7).contains($0.nights) }),
        ("half-open range", true, #Predicate { (3..<7).contains($0.nights) }),
        ("value list", true, #Predicate { ["Lisbon", "Bergen", "Oslo"].contains($0.destination) }),
        ("nil coalescing, in memory", false, #Predicate { ($0.notes ?? "none") == "none" }),
        ("optional chain into a method, in memory", false, #Predicate { $0.notes?.contains("s") == true }),
    ]

    /// Across relationships: to-one key paths (optional chains), a to-many's count, `ANY` and
    /// `ALL` over a to-many.
    static let bookTable: [(name: String, inStore: Bool, predicate: Predicate<Book>)] = [
        ("to-one key path", true, #Predicate { $0.author?.name == "Borges" }),
        ("no to-one", true, #Predicate { $0.author == nil }),
        ("nil coalescing across a to-one, in memory", false, #Predicate { ($0.author?.name ?? "") < "C" }),
        ("count of a to-many", true, #Predicate { $0.labels.count >= 2 }),
        ("any of a to-many", true, #Predicate { $0.labels.contains { $0.text == "fantasy" } }),
        ("all of a to-many", true, #Predicate { $0.labels.allSatisfy { $0.text.starts(with: "f") } }),
        ("filter count, in memory", false, #Predicate { $0.labels.filter { $0.text.contains("a") }.count == 1 }),
    ]

    static func library() -> [Author] {
        let fantasy = Label(text: "fantasy")
        let fiction = Label(text: "fiction")
        let borges = Author(name: "Borges")
        let ficciones = Book(title: "Ficciones")
        ficciones.labels = [fiction, fantasy]
        borges.books = [ficciones, Book(title: "El Aleph")]
        let leGuin = Author(name: "Le Guin")
        let earthsea = Book(title: "A Wizard of Earthsea")
        earthsea.labels = [fantasy]
        leGuin.books = [earthsea]
        return [borges, leGuin]
    }

    @Test @MainActor func everyPredicateGivesFoundationsAnswer() throws {
        let container = try ModelContainer(
            for: Trip.self, configurations: ModelConfiguration(url: TemporaryDirectory().file("trips.store")))
        let context = container.mainContext
        for trip in Self.trips() { context.insert(trip) }
        try context.save()
        try Self.expectFoundationsAnswers(Self.table, in: context, named: \.name)
    }

    @Test @MainActor func predicatesAcrossRelationshipsGiveFoundationsAnswer() throws {
        let container = try ModelContainer(
            for: Author.self, configurations: ModelConfiguration(url: TemporaryDirectory().file("library.store")))
        let context = container.mainContext
        for author in Self.library() { context.insert(author) }
        context.insert(Book(title: "Anonymous"))
        try context.save()
        try Self.expectFoundationsAnswers(Self.bookTable, in: context, named: \.title)
        let prolific = try context.fetch(FetchDescriptor<Author>(predicate: #Predicate { $0.books.count > 1 }))
        #expect(prolific.map(\.name) == ["Borges"])
    }

    /// Fetches each predicate and expects Foundation's answer (its evaluation of every model),
    /// the count `fetchCount` gives, and whether the store runs it wholly in SQL.
    @MainActor static func expectFoundationsAnswers<T: PersistentModel>(
        _ table: [(name: String, inStore: Bool, predicate: Predicate<T>)], in context: ModelContext,
        named name: (T) -> String
    ) throws {
        let all = try context.fetch(FetchDescriptor<T>())
        for (label, inStore, predicate) in table {
            let expected = try all.filter { try predicate.evaluate($0) }.map(name).sorted()
            let fetched = try context.fetch(FetchDescriptor(predicate: predicate)).map(name).sorted()
            #expect(fetched == expected, "\(label)")
            #expect(try context.fetchCount(FetchDescriptor(predicate: predicate)) == expected.count, "\(label)")
            #expect(try runsInSQL(FetchDescriptor(predicate: predicate), context) == inStore, "\(label)")
        }
    }

    /// Whether the SQLite store answers `descriptor` with one SQL statement and nothing left to
    /// memory.
    static func runsInSQL<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, _ context: ModelContext) throws -> Bool
    {
        let plan = FetchPlan(descriptor)
        guard plan.memoryPredicate == nil else { return false }
        let coordinator = context.container.coordinator
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        let entity = try #require(coordinator.managedObjectModel.entitiesByName[Schema.entityName(of: T.self)])
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: Schema.entityName(of: T.self))
        request.entity = entity
        request.predicate = plan.storePredicate
        request.sortDescriptors = plan.storeSorts
        return SQLQuery(schema: store.schema, mapping: store.schema[entity], request: request, dialect: SQLiteDialect())
            .isComplete
    }

    /// Sorts by numbers, dates and strings (compared lexically, as a string's `<` and
    /// Foundation's `.lexical` do) run in the store with the window.
    @Test @MainActor func sortsAndWindowsRunInTheStore() throws {
        let container = try ModelContainer(
            for: Trip.self, configurations: ModelConfiguration(url: TemporaryDirectory().file("sorted.store")))
        let context = container.mainContext
        for trip in Self.trips() { context.insert(trip) }
        try context.save()
        var byBudget = FetchDescriptor<Trip>(
            predicate: #Predicate { $0.nights > 2 }, sortBy: [SortDescriptor(\.budget, order: .reverse)])
        byBudget.fetchOffset = 1
        byBudget.fetchLimit = 2
        #expect(try Self.runsInSQL(byBudget, context))
        #expect(try context.fetch(byBudget).map(\.name) == ["Alps", "Lake"])

        for sort in [SortDescriptor(\Trip.name), SortDescriptor(\Trip.name, comparator: .lexical, order: .reverse)] {
            var byName = FetchDescriptor<Trip>(sortBy: [sort])
            byName.fetchLimit = 3
            #expect(try Self.runsInSQL(byName, context))
            let foundationOrder = Self.trips().sorted(using: sort).prefix(3).map(\.name)
            #expect(try context.fetch(byName).map(\.name) == foundationOrder)
        }
    }
}
