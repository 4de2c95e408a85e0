import BenchmarkModel
import CoreData
import Foundation

/// Saving and loading N objects with each store type (issue 25): a save of N new objects to a
/// new store, and adding the store in a new coordinator and fetching all N realized. The atomic
/// stores (XML, binary) read and write the whole file; SQLite writes rows and reads them back
/// lazily. The baseline writes and reads the same rows as a binary property list with
/// Foundation, about the least a whole-file format can do.
enum StoreTypeBenchmarks {
    static let count = 100_000
    static let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-store-types")

    static func run() {
        print("\nStore types: save N new objects, then load them in a new coordinator (N = \(count))")
        try? FileManager.default.removeItem(at: directory)
        try! FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let model = BenchmarkModel.make()
        let rows = (0..<count).map(SQLiteBenchmarks.Row.init)
        var results: [(String, Duration, Duration, Int)] = []
        for (name, type) in [("SQLite", NSSQLiteStoreType), ("XML", NSXMLStoreType), ("binary", NSBinaryStoreType)] {
            let url = directory.appendingPathComponent("store.\(name)")
            let save = measure("\(name): insert N + save to a new store", repetitions: 3) {
                let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
                try? coordinator.destroyPersistentStore(at: url, ofType: type, options: nil)
                _ = try! coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url)
                let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
                context.persistentStoreCoordinator = coordinator
                for row in rows { CoreDataStore.insert(row, into: context) }
                try! context.save()
                return count
            }
            let load = measure("\(name): add the store + fetch N realized", repetitions: 3) {
                let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
                _ = try! coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url)
                let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
                context.persistentStoreCoordinator = coordinator
                let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
                request.returnsObjectsAsFaults = false
                return try! context.fetch(request).reduce(0) { $0 &+ ($1.value(forKey: "age") as! Int) }
            }
            let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
            results.append((name, save, load, size))
        }
        let plist = directory.appendingPathComponent("rows.plist")
        let baselineSave = measure("baseline: N rows as a binary plist, written", repetitions: 3) {
            let array: [[Any]] = rows.map {
                [$0.id, $0.name, $0.email, $0.age, $0.salary, $0.active, $0.created, $0.note ?? ""]
            }
            try! PropertyListSerialization.data(fromPropertyList: array, format: .binary, options: 0).write(to: plist)
            return count
        }
        let baselineLoad = measure("baseline: the plist read back", repetitions: 3) {
            let array =
                try! PropertyListSerialization.propertyList(from: Data(contentsOf: plist), format: nil) as! [[Any]]
            return array.reduce(0) { $0 &+ ($1[3] as! Int) }
        }
        for (name, save, load, size) in results {
            print(
                "  \(name): save \(ratio(save, baselineSave)), load \(ratio(load, baselineLoad)) of the plist baseline; "
                    + "file \(size / 1024) KiB")
        }
    }
}
