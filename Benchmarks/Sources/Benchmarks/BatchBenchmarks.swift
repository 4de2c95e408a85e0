import BenchmarkModel
import CoreData
import GRDB
import GRDBSQLite

/// Batch requests against the same work written by hand, on N rows of the 8-attribute `Person`:
/// insert N rows in one transaction, set one column of the rows matching `age > 50` (about
/// half), delete those rows. The baselines: the SQLite C API with a reused prepared statement and
/// one `UPDATE`/`DELETE … WHERE` statement; GRDB records inserted one by one and
/// `updateAll`/`deleteAll` on a filtered request. A delete's time leaves out filling the table
/// before it. Issue 24; results: BENCHMARKS.md.
enum BatchBenchmarks {
    static let count = SQLiteBenchmarks.count
    static let directory = SQLiteBenchmarks.directory

    static func run() {
        print("\nBatch requests vs hand-written SQL and GRDB (N = \(count))")
        try? FileManager.default.removeItem(at: directory)
        try! FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let raw = RawSQLite()
        let grdb = GRDBRecords()
        let ours = CoreDataStore()
        let operations = ["batch insert N", "batch update age > 50", "batch delete age > 50"]
        var results: [String: [Duration]] = [:]

        results["SQLite C API"] = [
            measure("SQLite C API: insert", repetitions: 3) {
                raw.reset()
                return raw.insertAll()
            },
            measure("SQLite C API: update", repetitions: 3) {
                raw.exec("UPDATE person SET note = 'batch' WHERE age > 50")
                return Int(sqlite3_changes(raw.db))
            },
            measure(
                "SQLite C API: delete", repetitions: 3,
                setup: {
                    raw.reset()
                    _ = raw.insertAll()
                }
            ) {
                raw.exec("DELETE FROM person WHERE age > 50")
                return Int(sqlite3_changes(raw.db))
            },
        ]
        results["GRDB records"] = [
            measure("GRDB: insert", repetitions: 3) {
                grdb.reset()
                return grdb.insertAll()
            },
            measure("GRDB: update", repetitions: 3) {
                try! grdb.queue.write { db in
                    try PersonRecord.filter(Column("age") > 50).updateAll(db, Column("note").set(to: "batch"))
                }
            },
            measure(
                "GRDB: delete", repetitions: 3,
                setup: {
                    grdb.reset()
                    _ = grdb.insertAll()
                }
            ) {
                try! grdb.queue.write { db in try PersonRecord.filter(Column("age") > 50).deleteAll(db) }
            },
        ]
        let rows = (0..<count).map { index -> [String: Any] in
            let row = SQLiteBenchmarks.Row(index)
            var values: [String: Any] = [
                "id": row.id, "name": row.name, "email": row.email, "age": row.age, "salary": row.salary,
                "active": row.active, "created": row.created,
            ]
            values["note"] = row.note
            return values
        }
        func insertAll() -> Int {
            ours.reset()
            let request = NSBatchInsertRequest(entityName: "Person", objects: rows)
            request.resultType = .count
            let result = try! ours.context().execute(request) as! NSBatchInsertResult
            return (result.result as! NSNumber).intValue
        }
        results["OpenCoreData"] = [
            measure("OpenCoreData: insert", repetitions: 3) { insertAll() },
            measure("OpenCoreData: update", repetitions: 3) {
                let request = NSBatchUpdateRequest(entityName: "Person")
                request.predicate = NSPredicate(format: "age > 50")
                request.propertiesToUpdate = ["note": "batch"]
                request.resultType = .updatedObjectsCountResultType
                let result = try! ours.context().execute(request) as! NSBatchUpdateResult
                return (result.result as! NSNumber).intValue
            },
            measure("OpenCoreData: delete", repetitions: 3, setup: { _ = insertAll() }) {
                let fetch = NSFetchRequest<NSFetchRequestResult>(entityName: "Person")
                fetch.predicate = NSPredicate(format: "age > 50")
                let request = NSBatchDeleteRequest(fetchRequest: fetch)
                request.resultType = .resultTypeCount
                let result = try! ours.context().execute(request) as! NSBatchDeleteResult
                return (result.result as! NSNumber).intValue
            },
        ]
        print("\n  | operation | hand-written SQLite | GRDB records | OpenCoreData | ratio to SQLite | ratio to GRDB |")
        print("  |---|---|---|---|---|---|")
        for (index, operation) in operations.enumerated() {
            let a = results["SQLite C API"]![index]
            let b = results["GRDB records"]![index]
            let c = results["OpenCoreData"]![index]
            print("  | \(operation) | \(format(a)) | \(format(b)) | \(format(c)) | \(ratio(c, a)) | \(ratio(c, b)) |")
        }
    }
}
