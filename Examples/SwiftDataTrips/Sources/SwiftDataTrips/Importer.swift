import Foundation
import SwiftData

/// Imports trips away from the main actor, on its own context, as an app's background import does.
@ModelActor
actor TripImporter {
    /// Where the cities of the import are.
    static let places: [String: Coordinates] = [
        "Zermatt": Coordinates(latitude: 46.02, longitude: 7.75),
        "Chamonix": Coordinates(latitude: 45.92, longitude: 6.87),
        "Lisbon": Coordinates(latitude: 38.72, longitude: -9.14),
        "Oslo": Coordinates(latitude: 59.91, longitude: 10.75),
        "Bergen": Coordinates(latitude: 60.39, longitude: 5.32),
        "Tromsø": Coordinates(latitude: 69.65, longitude: 18.96),
    ]

    /// Inserts a trip per line of `rows` (`name,city:nights,city:nights…`) and saves once.
    func importTrips(_ rows: [String], startingOn day: Date) throws -> Int {
        for (index, row) in rows.enumerated() {
            let fields = row.split(separator: ",").map(String.init)
            guard let name = fields.first else { continue }
            let start = day.addingTimeInterval(Double(index) * 30 * 86_400)
            let stops = fields.dropFirst().compactMap { field -> Stop? in
                let parts = field.split(separator: ":")
                guard parts.count == 2, let nights = Int(parts[1]) else { return nil }
                let stop = Stop(city: String(parts[0]), nights: nights)
                stop.location = Self.places[stop.city] ?? stop.location
                return stop
            }
            let nights = stops.reduce(0) { $0 + $1.nights }
            let trip = Trip(
                name: name, start: start, end: start.addingTimeInterval(Double(nights) * 86_400),
                transport: index % 2 == 0 ? .train : .plane)
            trip.stops = stops
            trip.tags = stops.count > 1 ? ["tour", "\(stops.count) stops"] : ["stay"]
            modelContext.insert(trip)
        }
        try modelContext.save()
        return try modelContext.fetchCount(FetchDescriptor<Trip>())
    }
}
