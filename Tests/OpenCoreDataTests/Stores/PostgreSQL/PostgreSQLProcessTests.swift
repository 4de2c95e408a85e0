import CoreData
import Foundation
import OpenCoreDataPostgres
import Testing

/// Several processes, each with several contexts, writing the same rows of one PostgreSQL store at
/// once ("no lost update, every conflict reported or resolved by the policy").
///
/// Apple documents optimistic locking as the guard against lost updates: a save whose objects
/// changed in the store since they were fetched fails under `NSErrorMergePolicy` with
/// `NSManagedObjectMergeError` and the conflicts (NSMergePolicy reference; Core Data Programming
/// Guide, "Change Management"), and a uniqueness constraint's conflict is resolved by the merge
/// policy (`NSMergeByPropertyObjectTrumpMergePolicy` turns a duplicate insert into an update;
/// NSEntityDescription `uniquenessConstraints`).
@Suite("PostgreSQL store: several processes at once", .enabled(if: PostgresTestServer.runsTests))
struct PostgreSQLProcessTests {
    /// The model of `ConflictWriter hammer`, built the same way.
    static func model() -> NSManagedObjectModel {
        let counter = NSEntityDescription()
        counter.name = "Counter"
        counter.properties = [
            CompanyModel.attribute("name", .stringAttributeType),
            CompanyModel.attribute("value", .integer64AttributeType),
        ]
        let tag = NSEntityDescription()
        tag.name = "Tag"
        tag.properties = [
            CompanyModel.attribute("key", .stringAttributeType), CompanyModel.attribute("writer", .stringAttributeType),
        ]
        tag.uniquenessConstraints = [["key"]]
        let model = NSManagedObjectModel()
        model.entities = [counter, tag]
        return model
    }

    @Test func threeProcessesOfThreeContextsLoseNoUpdateAndKeepOneRowPerUniqueKey() throws {
        let url = PostgresTestServer.url(schema: PostgresTestServer.uniqueSchema("hammer"))
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.model())
        try coordinator.addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil, at: url)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let counter = NSEntityDescription.insertNewObject(forEntityName: "Counter", into: context)
        counter.setValue("shared", forKey: "name")
        counter.setValue(0, forKey: "value")
        try context.save()

        let processes = 3
        let contexts = 3
        let rounds = 15
        let outputs = Collector<String>()
        DispatchQueue.concurrentPerform(iterations: processes) { _ in
            let output =
                (try? runConflictWriter(["hammer", url.absoluteString, "\(contexts)", "\(rounds)"], killAfter: nil))
            outputs.append(output ?? "")
        }
        var increments = 0
        var conflicts = 0
        for output in outputs.values {
            let words = output.split(whereSeparator: \.isWhitespace)
            #expect(words.first == "done", "a process failed: \(output)")
            guard words.count == 3, let done = Int(words[1]), let reported = Int(words[2]) else { continue }
            increments += done
            conflicts += reported
        }
        #expect(increments == processes * contexts * rounds)
        // Every save that lost a race was told so; none overwrote another's increment. Read by a
        // new coordinator, so the values come from the server.
        let reader = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        reader.persistentStoreCoordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.model())
        try reader.persistentStoreCoordinator?.addPersistentStore(
            ofType: NSPostgreSQLStoreType, configurationName: nil, at: url)
        let shared = NSFetchRequest<NSManagedObject>(entityName: "Counter")
        shared.predicate = NSPredicate(format: "name == 'shared'")
        let stored = try reader.fetch(shared)
        #expect(stored.count == 1)
        #expect(stored.first?.value(forKey: "value") as? Int == processes * contexts * rounds)
        // Saves that only insert take no turn, and their keys never collide: every counter is there.
        let counters = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Counter"))
        #expect(counters.count == 1 + processes * contexts * 5)
        #expect(Set(counters.map(\.objectID)).count == counters.count)
        #expect(conflicts > 0, "nine writers of one row must meet at least once")
        // One row per key, however many processes inserted it.
        let tags = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Tag"))
        #expect(tags.count == 10)
        #expect(Set(tags.compactMap { $0.value(forKey: "key") as? String }) == Set((0..<10).map { "k\($0)" }))
    }
}
