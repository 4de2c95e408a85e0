import Foundation
import SwiftData

/// Imports trips away from the main actor, on its own context, as an app's background import does.
@ModelActor
actor TripImporter {
    /// Inserts a trip per line of `rows` (`name,city:nights,city:nights…`) and saves once.
    func importTrips(_ rows: [String], startingOn day: Date) throws -> Int {
        for (index, row) in rows.enumerated() {
            let fields = row.split(separator: ",").map(String.init)
            guard let name = fields.first else { continue }
            let start = day.addingTimeInterval(Double(index) * 30 * 86_400)
            let stops = fields.dropFirst().compactMap { field -> Stop? in
                let parts = field.split(separator: ":")
                guard parts.count == 2, let nights = Int(parts[1]) else { return nil }
                return Stop(city: String(parts[0]), nights: nights)
            }
            let nights = stops.reduce(0) { $0 + $1.nights }
            let trip = Trip(
                name: name, start: start, end: start.addingTimeInterval(Double(nights) * 86_400),
                transport: index % 2 == 0 ? .train : .plane)
            trip.stops = stops
            modelContext.insert(trip)
        }
        try modelContext.save()
        return try modelContext.fetchCount(FetchDescriptor<Trip>())
    }
}
