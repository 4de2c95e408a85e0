import CoreData
import Foundation
import OpenCoreDataPostgres

/// The PostgreSQL store under load: several processes, each with several contexts on threads of
/// their own, saving and fetching against one server at once for a fixed time, as the servers of
/// a team that outgrew one machine would. Run with `Benchmarks postgres-load [processes contexts
/// seconds]` (8, 4 and 60 by default) after `Scripts/postgres-server.sh start`; results:
/// BENCHMARKS.md.
///
/// Each context (a *worker*, numbered across all processes) repeats, at random, four operations:
///
/// * **tally** — adds one to its own attribute (`w<worker>`) of one of the shared `Tally` rows and
///   saves. Every worker holds all `Tally` objects from its start and never refreshes them, so
///   the rows it saves are usually stale: another worker has saved them since. The store's
///   optimistic locking finds the conflict and the merge policy (merge by property, object trump,
///   counted by ``CountingMergePolicy``) resolves it: the worker's own attribute wins, the others
///   take the store's values.
/// * **counter** — adds one to one of four shared counters under the error merge policy; a
///   conflict fails the save, and the worker refreshes the counter and tries again.
/// * **insert** — inserts one `Item` and saves.
/// * **fetch** — fetches the 50 newest items of a random worker, sorted by serial number, and
///   reads each one's title.
///
/// Afterwards the parent counts **lost updates** in the store: each worker's attribute summed
/// over the tallies against the tally saves it saw succeed, the counters' sum against the counter
/// saves that succeeded, and the items against the inserts saved. A merge policy that wrote a
/// stale value over another worker's, or a save reported as done that was not, shows there.
enum PostgresLoadRun {
    static let tallies = 64
    static let counters = 4
    static let schema = "bench_load"

    struct Configuration {
        var processes = 8
        var contexts = 4
        var seconds = 60.0
        var workers: Int { processes * contexts }
    }

    /// What one worker did, written by its process as JSON for the parent.
    struct WorkerReport: Codable {
        var worker = 0
        /// Nanoseconds each completed operation took, by operation.
        var latencies: [String: [Int64]] = [:]
        /// Tally saves that succeeded (each added one to this worker's attribute of one row).
        var tallySaves = 0
        /// Counter saves that succeeded (each added one to one counter).
        var counterSaves = 0
        /// Items inserted by saves that succeeded.
        var inserted = 0
        /// Optimistic-locking conflicts the merge policy resolved in tally saves.
        var mergedConflicts = 0
        /// Counter saves that failed with a merge conflict and were tried again.
        var counterRetries = 0
        /// Saves that failed for any other reason, with the first error's description.
        var failedSaves = 0
        var firstFailure: String?
        /// Bytes of the titles the fetches read (so no read is skipped).
        var titleBytes = 0
    }

    static var storeURL: URL {
        var components = URLComponents(url: PostgresBenchmarks.url, resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "schema", value: schema)]
        return components.url!
    }

    /// `Tally` (a slot number and one attribute per worker), `Counter` (a name and a value) and
    /// `Item` (worker, serial number, title, score; worker and serial indexed).
    static func model(workers: Int) -> NSManagedObjectModel {
        func attribute(_ name: String, _ type: NSAttributeType, indexed: Bool = false) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = false
            attribute.isIndexed = indexed
            if type == .integer64AttributeType { attribute.defaultValue = 0 }
            return attribute
        }
        let tally = NSEntityDescription()
        tally.name = "Tally"
        tally.properties =
            [attribute("slot", .integer64AttributeType)]
            + (0..<workers).map { attribute("w\($0)", .integer64AttributeType) }
        let counter = NSEntityDescription()
        counter.name = "Counter"
        counter.properties = [attribute("name", .stringAttributeType), attribute("value", .integer64AttributeType)]
        let item = NSEntityDescription()
        item.name = "Item"
        item.properties = [
            attribute("worker", .integer64AttributeType, indexed: true),
            attribute("serial", .integer64AttributeType, indexed: true), attribute("title", .stringAttributeType),
            attribute("score", .doubleAttributeType),
        ]
        let model = NSManagedObjectModel()
        model.entities = [tally, counter, item]
        return model
    }

    static func coordinator(workers: Int) -> NSPersistentStoreCoordinator {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model(workers: workers))
        _ = try! coordinator.addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil, at: storeURL)
        return coordinator
    }

    // MARK: The parent

    static func run(_ arguments: [String]) {
        var configuration = Configuration()
        if arguments.count == 3, let processes = Int(arguments[0]), let contexts = Int(arguments[1]),
            let seconds = Double(arguments[2])
        {
            configuration = Configuration(processes: processes, contexts: contexts, seconds: seconds)
        }
        print(
            "\nPostgreSQL store under load: \(configuration.processes) processes × \(configuration.contexts) contexts,"
                + " \(configuration.seconds) s, server \(PostgresBenchmarks.host):\(PostgresBenchmarks.port)")
        prepare(workers: configuration.workers)

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("opencoredata-load")
        try? FileManager.default.removeItem(at: directory)
        try! FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let children = (0..<configuration.processes).map { process in
            let child = SQLiteBenchmarks.ownChild([
                "postgres-load-process", String(process), String(configuration.contexts),
                String(configuration.workers), String(configuration.seconds),
                directory.appendingPathComponent("process\(process).json").path,
            ])
            try! child.run()
            return child
        }
        for child in children { child.waitUntilExit() }
        var reports: [WorkerReport] = []
        for process in 0..<configuration.processes {
            let file = directory.appendingPathComponent("process\(process).json")
            guard let data = try? Data(contentsOf: file) else {
                print("  process \(process) wrote no report (exit status \(children[process].terminationStatus))")
                continue
            }
            reports += try! JSONDecoder().decode([WorkerReport].self, from: data)
        }
        summarize(reports, configuration: configuration)
    }

    /// Empties the schema and makes the shared rows: the tallies, all zero, and the counters.
    static func prepare(workers: Int) {
        RawPostgresAdmin().dropSchema(schema)
        let coordinator = coordinator(workers: workers)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        context.performAndWait {
            for slot in 0..<tallies {
                let tally = NSEntityDescription.insertNewObject(forEntityName: "Tally", into: context)
                tally.setValue(slot, forKey: "slot")
            }
            for index in 0..<counters {
                let counter = NSEntityDescription.insertNewObject(forEntityName: "Counter", into: context)
                counter.setValue("counter \(index)", forKey: "name")
            }
            try! context.save()
        }
        for store in coordinator.persistentStores { try? coordinator.remove(store) }
    }

    static func summarize(_ reports: [WorkerReport], configuration: Configuration) {
        let seconds = configuration.seconds
        print("  | operation | completed | per second | p50 | p99 |")
        print("  |---|---|---|---|---|")
        for operation in ["tally", "counter", "insert", "fetch"] {
            let all = reports.flatMap { $0.latencies[operation] ?? [] }.sorted()
            guard !all.isEmpty else { continue }
            let p50 = all[all.count / 2]
            let p99 = all[min(all.count - 1, all.count * 99 / 100)]
            print(
                "  | \(operation) | \(all.count) | \(String(format: "%.0f", Double(all.count) / seconds)) |"
                    + " \(milliseconds(p50)) | \(milliseconds(p99)) |")
        }
        let merged = reports.reduce(0) { $0 + $1.mergedConflicts }
        let retries = reports.reduce(0) { $0 + $1.counterRetries }
        let failed = reports.reduce(0) { $0 + $1.failedSaves }
        print("  workers reporting: \(reports.count) of \(configuration.workers)")
        print("  optimistic-locking conflicts resolved by the merge policy (tally saves): \(merged)")
        print("  counter saves refused by the error policy and tried again: \(retries)")
        print("  saves failed for another reason: \(failed)")
        if let failure = reports.compactMap(\.firstFailure).first { print("    first: \(failure)") }

        // What the store holds against what the workers saw saved.
        let coordinator = coordinator(workers: configuration.workers)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        context.performAndWait {
            let tallies = try! context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Tally"))
            var lostTally = 0
            var extraTally = 0
            for report in reports {
                let stored = tallies.reduce(0) { $0 + ($1.value(forKey: "w\(report.worker)") as! Int) }
                if stored < report.tallySaves { lostTally += report.tallySaves - stored }
                if stored > report.tallySaves { extraTally += stored - report.tallySaves }
            }
            let counterObjects = try! context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Counter"))
            let counted = counterObjects.reduce(0) { $0 + ($1.value(forKey: "value") as! Int) }
            let counterSaves = reports.reduce(0) { $0 + $1.counterSaves }
            let items = try! context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Item"))
            let inserted = reports.reduce(0) { $0 + $1.inserted }
            let tallySaves = reports.reduce(0) { $0 + $1.tallySaves }
            print(
                "  tally increments: \(tallySaves) saved, lost \(lostTally), stored without a save \(extraTally)")
            print(
                "  counter increments: \(counterSaves) saved, \(counted) stored,"
                    + " lost \(max(0, counterSaves - counted))")
            print("  items: \(inserted) saved, \(items) stored, lost \(max(0, inserted - items))")
            let lost = lostTally + max(0, counterSaves - counted) + max(0, inserted - items)
            print("  lost updates: \(lost)")
        }
        for store in coordinator.persistentStores { try? coordinator.remove(store) }
    }

    static func milliseconds(_ nanoseconds: Int64) -> String {
        String(format: "%.2f ms", Double(nanoseconds) / 1e6)
    }

    // MARK: A child process

    /// One process of the run: `contexts` workers on one coordinator, each on a thread of its own.
    static func runProcess(index: Int, contexts: Int, workers: Int, seconds: Double, reportPath: String) {
        let coordinator = coordinator(workers: workers)
        let group = DispatchGroup()
        let reports = ReportBox(count: contexts)
        for slot in 0..<contexts {
            let worker = index * contexts + slot
            group.enter()
            let thread = Thread {
                let report = Worker(worker: worker, of: workers, coordinator: coordinator).run(seconds: seconds)
                reports.set(slot, report)
                group.leave()
            }
            thread.start()
        }
        group.wait()
        let data = try! JSONEncoder().encode(reports.all)
        try! data.write(to: URL(fileURLWithPath: reportPath))
        for store in coordinator.persistentStores { try? coordinator.remove(store) }
    }

    final class ReportBox: @unchecked Sendable {
        private let lock = NSLock()
        private var reports: [WorkerReport]
        init(count: Int) { reports = Array(repeating: WorkerReport(), count: count) }
        func set(_ index: Int, _ report: WorkerReport) { lock.withLock { reports[index] = report } }
        var all: [WorkerReport] { lock.withLock { reports } }
    }

    /// Merge by property, object trump, counting the optimistic-locking conflicts it resolves.
    final class CountingMergePolicy: NSMergePolicy, @unchecked Sendable {
        var conflicts = 0
        init() { super.init(merge: .mergeByPropertyObjectTrumpMergePolicyType) }
        override func resolve(optimisticLockingConflicts list: [NSMergeConflict]) throws {
            conflicts += list.count
            try super.resolve(optimisticLockingConflicts: list)
        }
    }

    /// One context's loop.
    final class Worker {
        let worker: Int
        let workers: Int
        let context: NSManagedObjectContext
        let policy = CountingMergePolicy()
        var report = WorkerReport()

        init(worker: Int, of workers: Int, coordinator: NSPersistentStoreCoordinator) {
            self.worker = worker
            self.workers = workers
            context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            report.worker = worker
        }

        func run(seconds: Double) -> WorkerReport {
            context.performAndWait {
                let tallies = try! context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Tally"))
                let counters = try! context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Counter"))
                let clock = ContinuousClock()
                let end = clock.now + .milliseconds(Int(seconds * 1000))
                var serial = 0
                while clock.now < end {
                    let pick = Int.random(in: 0..<100)
                    let start = clock.now
                    let operation: String
                    if pick < 40 {
                        operation = "tally"
                        tally(tallies.randomElement()!)
                    } else if pick < 60 {
                        operation = "counter"
                        increment(counters.randomElement()!)
                    } else if pick < 85 {
                        operation = "insert"
                        insertItem(serial: serial)
                        serial += 1
                    } else {
                        operation = "fetch"
                        fetchItems()
                    }
                    let elapsed = clock.now - start
                    report.latencies[operation, default: []].append(
                        elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
                }
                report.mergedConflicts = policy.conflicts
            }
            return report
        }

        private func save(policy: Any) -> Bool {
            context.mergePolicy = policy
            do {
                try context.save()
                return true
            } catch {
                failed(error)
                return false
            }
        }

        /// A save that failed for a reason the run does not expect: its changes are let go and it
        /// is counted, the first one's error kept for the report.
        private func failed(_ error: any Error) {
            context.rollback()
            report.failedSaves += 1
            if report.firstFailure == nil { report.firstFailure = "\(error)" }
        }

        private func tally(_ tally: NSManagedObject) {
            let key = "w\(worker)"
            tally.setValue((tally.value(forKey: key) as! Int) + 1, forKey: key)
            if save(policy: policy) { report.tallySaves += 1 }
        }

        private func increment(_ counter: NSManagedObject) {
            context.mergePolicy = NSErrorMergePolicy
            while true {
                counter.setValue((counter.value(forKey: "value") as! Int) + 1, forKey: "value")
                do {
                    try context.save()
                    report.counterSaves += 1
                    return
                } catch let error as NSError where error.code == NSManagedObjectMergeError {
                    // Another worker saved the counter since this context read it: take the
                    // store's value and add one to that.
                    report.counterRetries += 1
                    context.rollback()
                    context.refresh(counter, mergeChanges: false)
                } catch {
                    failed(error)
                    return
                }
            }
        }

        private func insertItem(serial: Int) {
            let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
            item.setValue(worker, forKey: "worker")
            item.setValue(serial, forKey: "serial")
            item.setValue("item \(serial) of worker \(worker)", forKey: "title")
            item.setValue(Double(serial) * 0.5, forKey: "score")
            if save(policy: policy) { report.inserted += 1 }
            // A long-running worker does not keep every item it made.
            context.refresh(item, mergeChanges: false)
        }

        private func fetchItems() {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
            request.predicate = NSPredicate(format: "worker == %d", Int.random(in: 0..<workers))
            request.sortDescriptors = [NSSortDescriptor(key: "serial", ascending: false)]
            request.fetchLimit = 50
            let items = try! context.fetch(request)
            for item in items { report.titleBytes += (item.value(forKey: "title") as! String).utf8.count }
        }
    }
}
