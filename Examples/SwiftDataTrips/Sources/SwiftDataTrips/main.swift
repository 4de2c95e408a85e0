import Foundation
import SwiftData

// The store goes in a fresh folder (pass a path to keep it somewhere else).
let folder =
    CommandLine.arguments.dropFirst().first.map { URL(fileURLWithPath: $0) }
    ?? FileManager.default.temporaryDirectory.appendingPathComponent("SwiftDataTrips-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
let configuration = ModelConfiguration(url: folder.appendingPathComponent("Trips.store"))
var failures = 0

/// Prints a check and counts it when it fails.
@MainActor func check(_ condition: Bool, _ what: String) {
    print(condition ? "ok   " : "FAIL ", what)
    if !condition { failures += 1 }
}

/// Unwraps a value the checks above need.
func require<T>(_ value: T?) throws -> T {
    guard let value else { throw CocoaError(.coderValueNotFound) }
    return value
}

let day = Date(timeIntervalSinceReferenceDate: 820_000_000)
let container = try ModelContainer(for: Trip.self, configurations: configuration)
let importer = TripImporter(modelContainer: container)
let imported = try await importer.importTrips(
    ["Alps,Zermatt:3,Chamonix:2", "Coast,Lisbon:4", "North,Oslo:2,Bergen:3,Tromsø:2"], startingOn: day)
check(imported == 3, "the background import saved 3 trips")

let context = ModelContext(container)
let long = try context.fetch(
    FetchDescriptor(predicate: #Predicate<Trip> { $0.stops.count >= 2 }, sortBy: [SortDescriptor(\.name)]))
check(long.map(\.name) == ["Alps", "North"], "trips with two stops or more: \(long.map(\.name))")

let viaOslo = try context.fetch(
    FetchDescriptor(predicate: #Predicate<Trip> { $0.stops.contains { $0.city == "Oslo" } }))
check(viaOslo.map(\.name) == ["North"], "the trip through Oslo")

let byTrain = Transport.train
let trains = try context.fetchCount(FetchDescriptor(predicate: #Predicate<Trip> { $0.transport == byTrain }))
check(trains == 2, "two trips by train")

let arctic = try context.fetch(
    FetchDescriptor(
        predicate: #Predicate<Stop> { $0.location.latitude > 60 }, sortBy: [SortDescriptor(\.location.latitude)]))
check(arctic.map(\.city) == ["Bergen", "Tromsø"], "stops north of 60°: \(arctic.map(\.city))")

let north = try require(viaOslo.first)
check(north.tags == ["tour", "3 stops"], "the North trip's tags: \(north.tags)")
check(north.days == 7 && north.stops.allSatisfy { $0.trip === north }, "the North trip's 7 days and its stops")

// A trip with the same name replaces the stored one (`.unique`), and deleting a trip deletes its stops.
context.insert(Trip(name: "Coast", start: day, end: day.addingTimeInterval(86_400), transport: .car))
try context.save()
context.delete(north)
try context.save()

let reopened = ModelContext(try ModelContainer(for: Trip.self, configurations: configuration))
let trips = try reopened.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]))
check(trips.map(\.name) == ["Alps", "Coast"], "after the upsert and the deletion: \(trips.map(\.name))")
check(trips.last?.transport == .car, "the Coast trip is now by car")
check(try reopened.fetchCount(FetchDescriptor<Stop>()) == 3, "the deleted trip's stops are gone")

print(failures == 0 ? "All checks passed; the store is \(configuration.url.path)" : "\(failures) checks failed")
exit(failures == 0 ? 0 : 1)
