import BenchmarkModel
import CoreData

/// Typed `@NSManaged` accessors (supplied by the CoreDataModelGenerator plugin) against
/// `value(forKey:)` / `setValue(_:forKey:)` on the same objects, in memory: the cost of the
/// accessor path itself, with a plain Swift class as the floor (issue 22).
enum TypedAccessorBenchmarks {
    static let count = 100_000

    static func run() {
        print("\nTyped accessors vs key-value coding, \(count) objects in a context (in-memory store)")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: BenchmarkModel.sampleModel())
        _ = try! coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let samples = (0..<count).map { _ in Sample(context: context) }
        // Key-value coding first, so neither side pays for the first change of each object.
        let keyedSet = measure("setValue(_:forKey:): the same", repetitions: 5) {
            for (index, sample) in samples.enumerated() {
                sample.setValue(Int64(index), forKey: "id")
                sample.setValue("n", forKey: "name")
                sample.setValue(Double(index), forKey: "score")
            }
            return samples.count
        }
        let typedSet = measure("typed: set id, name, score on each", repetitions: 5) {
            for (index, sample) in samples.enumerated() {
                sample.id = Int64(index)
                sample.name = "n"
                sample.score = Double(index)
            }
            return samples.count
        }
        let keyedGet = measure("value(forKey:): the same", repetitions: 5) {
            var total = 0
            for sample in samples {
                total &+= Int((sample.value(forKey: "id") as? NSNumber)?.int64Value ?? 0)
                total &+= (sample.value(forKey: "name") as? String)?.utf8.count ?? 0
                total &+= Int((sample.value(forKey: "score") as? NSNumber)?.doubleValue ?? 0)
            }
            return total
        }
        let typedGet = measure("typed: read id, name, score of each", repetitions: 5) {
            var total = 0
            for sample in samples {
                total &+= Int(sample.id) &+ (sample.name?.utf8.count ?? 0) &+ Int(sample.score)
            }
            return total
        }
        final class Plain {
            var id: Int64 = 0
            var name: String?
            var score = 0.0
        }
        let plain = (0..<count).map { _ in Plain() }
        let plainSet = measure("baseline: set the same on plain Swift objects", repetitions: 5) {
            for (index, object) in plain.enumerated() {
                object.id = Int64(index)
                object.name = "n"
                object.score = Double(index)
            }
            return plain.count
        }
        let plainGet = measure("baseline: read them", repetitions: 5) {
            var total = 0
            for object in plain { total &+= Int(object.id) &+ (object.name?.utf8.count ?? 0) &+ Int(object.score) }
            return total
        }
        print("  set: typed \(ratio(typedSet, keyedSet)) of key-value coding, \(ratio(typedSet, plainSet)) of plain")
        print("  get: typed \(ratio(typedGet, keyedGet)) of key-value coding, \(ratio(typedGet, plainGet)) of plain")
    }
}
