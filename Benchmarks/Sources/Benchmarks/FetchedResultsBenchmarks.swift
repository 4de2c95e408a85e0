import BenchmarkModel
import CoreData
import Foundation

/// NSFetchedResultsController over 100,000 objects of a SQLite store (issue 26): the cost of one change — an
/// object's sort key changed, the context's change processed, the delegate told — against the
/// cost of fetching and sectioning the results again, which is what a controller that refetched
/// would pay per change.
enum FetchedResultsBenchmarks {
    static let count = 100_000

    final class Counter: NSFetchedResultsControllerDelegate {
        var changes = 0
        func controller(
            _ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any,
            at indexPath: IndexPath?, for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?
        ) { changes += 1 }
    }

    static func run() {
        print("\nFetched results controller, \(count) objects in 60 sections (SQLite store)")
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ocd-results-\(UUID().uuidString).sqlite")
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: BenchmarkModel.make())
        _ = try! coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        for index in 0..<count { CoreDataStore.insert(SQLiteBenchmarks.Row(index), into: context) }
        try! context.save()
        let people = try! context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
        request.sortDescriptors = [
            NSSortDescriptor(key: "age", ascending: true), NSSortDescriptor(key: "name", ascending: true),
        ]
        var controller: NSFetchedResultsController<NSManagedObject>!
        let fetch = measure("performFetch: fetch, sort and section N", repetitions: 3) {
            controller = NSFetchedResultsController(
                fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "age", cacheName: nil)
            try! controller.performFetch()
            return controller.sections?.count ?? 0
        }
        let counter = Counter()
        controller.delegate = counter
        var next = 0
        let changes = measure("1,000 changes of one object's sort key, each processed", repetitions: 3) {
            for _ in 0..<1000 {
                let person = people[(next &* 7919) % people.count]
                person.setValue("Renamed \(next)", forKey: "name")
                next += 1
                context.processPendingChanges()
            }
            return counter.changes
        }
        let perChange = (Double(changes.components.seconds) + Double(changes.components.attoseconds) / 1e18) / 1000
        let whole = Double(fetch.components.seconds) + Double(fetch.components.attoseconds) / 1e18
        print(String(format: "  one change: %.1f µs, %.5f of a full performFetch", perChange * 1e6, perChange / whole))
        // The same request on the in-memory store, which sorts in memory.
        let memory = NSPersistentStoreCoordinator(managedObjectModel: BenchmarkModel.make())
        _ = try! memory.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
        let memoryContext = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        memoryContext.persistentStoreCoordinator = memory
        for index in 0..<count { CoreDataStore.insert(SQLiteBenchmarks.Row(index), into: memoryContext) }
        try! memoryContext.save()
        _ = measure("in-memory store: fetch N sorted by age, name", repetitions: 3) {
            try! memoryContext.fetch(request).count
        }
    }
}
