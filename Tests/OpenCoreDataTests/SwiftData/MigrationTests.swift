import Foundation
import OpenCoreData
import SwiftData
import Testing

/// The first version of an app's schema: journeys with a name and a length.
enum JourneySchemaV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static var models: [any PersistentModel.Type] { [Journey.self] }

    @Model
    final class Journey {
        var name: String
        var nights: Int

        init(name: String, nights: Int) {
            self.name = name
            self.nights = nights
        }
    }
}

/// The second version adds an optional property: a lightweight change.
enum JourneySchemaV2: VersionedSchema {
    static let versionIdentifier = Schema.Version(2, 0, 0)
    static var models: [any PersistentModel.Type] { [Journey.self] }

    @Model
    final class Journey {
        var name: String
        var nights: Int
        var weeks: Int?

        init(name: String, nights: Int) {
            self.name = name
            self.nights = nights
        }
    }
}

/// The third makes names unique, which the stored duplicates must give way to first.
enum JourneySchemaV3: VersionedSchema {
    static let versionIdentifier = Schema.Version(3, 0, 0)
    static var models: [any PersistentModel.Type] { [Journey.self] }

    @Model
    final class Journey {
        #Unique<Journey>([\.name])
        var name: String
        var nights: Int
        var weeks: Int?

        init(name: String, nights: Int) {
            self.name = name
            self.nights = nights
        }
    }
}

/// From version 1 to 3: lightweight to 2, then a custom stage that removes duplicate names on
/// version 2 (keeping the longest journey) and fills in the weeks on version 3.
enum JourneyMigrationPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] {
        [JourneySchemaV1.self, JourneySchemaV2.self, JourneySchemaV3.self]
    }

    static var stages: [MigrationStage] {
        [
            .lightweight(fromVersion: JourneySchemaV1.self, toVersion: JourneySchemaV2.self),
            .custom(
                fromVersion: JourneySchemaV2.self, toVersion: JourneySchemaV3.self,
                willMigrate: { context in
                    let journeys = try context.fetch(
                        FetchDescriptor<JourneySchemaV2.Journey>(sortBy: [SortDescriptor(\.nights, order: .reverse)]))
                    var seen: Set<String> = []
                    for journey in journeys where !seen.insert(journey.name).inserted { context.delete(journey) }
                    try context.save()
                },
                didMigrate: { context in
                    for journey in try context.fetch(FetchDescriptor<JourneySchemaV3.Journey>()) {
                        journey.weeks = journey.nights / 7
                    }
                    try context.save()
                }),
        ]
    }
}

/// SwiftData's schema migration. Rules from Apple's SwiftData documentation: `VersionedSchema`
/// (a version's models and identifier), `SchemaMigrationPlan` (the versions and the stages between
/// them), `MigrationStage.lightweight` and `.custom(fromVersion:toVersion:willMigrate:didMigrate:)`
/// (`willMigrate` runs with a context of the old version before the step, `didMigrate` with one of
/// the new version after it), `ModelContainer(for:migrationPlan:configurations:)` (a store of an
/// earlier version is migrated when the container opens it).
@Suite("SwiftData: VersionedSchema and SchemaMigrationPlan")
struct SwiftDataMigrationTests {
    @Test func aStoreOfTheFirstVersionOpensAtTheLastThroughThePlan() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("journeys.store")
        do {
            let container = try ModelContainer(
                for: Schema(versionedSchema: JourneySchemaV1.self), configurations: [ModelConfiguration(url: url)])
            let context = ModelContext(container)
            for (name, nights) in [("Alps", 7), ("Alps", 14), ("Coast", 3)] {
                context.insert(JourneySchemaV1.Journey(name: name, nights: nights))
            }
            try context.save()
        }
        let schema = Schema(versionedSchema: JourneySchemaV3.self)
        #expect(schema.version == Schema.Version(3, 0, 0))
        let container = try ModelContainer(
            for: schema, migrationPlan: JourneyMigrationPlan.self, configurations: [ModelConfiguration(url: url)])
        let journeys = try ModelContext(container).fetch(
            FetchDescriptor<JourneySchemaV3.Journey>(sortBy: [SortDescriptor(\.name)]))
        #expect(journeys.map(\.name) == ["Alps", "Coast"])
        #expect(journeys.map(\.nights) == [14, 3])
        #expect(journeys.map(\.weeks) == [2, 0])

        // The unique constraint of version 3 holds: inserting a journey of a stored name updates it.
        let context = ModelContext(container)
        context.insert(JourneySchemaV3.Journey(name: "Coast", nights: 4))
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<JourneySchemaV3.Journey>()) == 2)
    }

    /// Without a plan a store is migrated lightweight when it can be; when it cannot (version 3's
    /// unique names meet stored duplicates) opening fails with Core Data's error and the store is
    /// left as it was — never emptied.
    @Test func aStoreThatCannotMigrateWithoutAPlanIsAnErrorAndKeepsItsData() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("journeys.store")
        let v1 = Schema(versionedSchema: JourneySchemaV1.self)
        do {
            let context = ModelContext(try ModelContainer(for: v1, configurations: [ModelConfiguration(url: url)]))
            for (name, nights) in [("Alps", 7), ("Alps", 14)] {
                context.insert(JourneySchemaV1.Journey(name: name, nights: nights))
            }
            try context.save()
        }
        #expect(throws: NSError.self) {
            _ = try ModelContainer(
                for: Schema(versionedSchema: JourneySchemaV3.self), configurations: [ModelConfiguration(url: url)])
        }
        let reopened = try ModelContainer(for: v1, configurations: [ModelConfiguration(url: url)])
        #expect(try ModelContext(reopened).fetchCount(FetchDescriptor<JourneySchemaV1.Journey>()) == 2)
    }

    /// Versions order by their numbers; a schema without one is 1.0.0.
    @Test func versionsOrderByTheirNumbers() {
        #expect(Schema.Version(1, 10, 0) > Schema.Version(1, 9, 3))
        #expect(Schema.Version(2, 0, 0).description == "2.0.0")
        #expect(Schema([Trip.self]).version == Schema.Version(1, 0, 0))
    }
}
