import Foundation
import SwiftData

/// How a trip is travelled.
enum Transport: String, Codable, Sendable {
    case train, plane, car, bike
}

/// Where a place is: a `Codable` struct, which SwiftData stores as a composite attribute — a
/// column per property, so a predicate can ask for it.
struct Coordinates: Codable, Sendable {
    var latitude: Double
    var longitude: Double
}

/// A trip, as an app describes it with SwiftData: its stops are deleted with it.
@Model
final class Trip {
    @Attribute(.unique) var name: String
    var start: Date
    var end: Date
    var transport: Transport
    var budget: Double?
    /// Labels, stored together as one value.
    var tags: [String] = []
    @Relationship(deleteRule: .cascade, inverse: \Stop.trip) var stops: [Stop] = []

    init(name: String, start: Date, end: Date, transport: Transport) {
        self.name = name
        self.start = start
        self.end = end
        self.transport = transport
    }

    /// Whole days from start to end.
    var days: Int { Int(end.timeIntervalSince(start) / 86_400) }
}

/// A place on a trip, with the nights spent there.
@Model
final class Stop {
    var city: String
    var nights: Int
    var location: Coordinates = Coordinates(latitude: 0, longitude: 0)
    var trip: Trip?

    init(city: String, nights: Int) {
        self.city = city
        self.nights = nights
    }
}
