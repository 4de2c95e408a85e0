import CoreData
import Foundation
import OpenCoreDataSQL
import Testing

@testable import OpenCoreDataPostgres

/// A sort the store's indexes can answer is read from the index in order, on PostgreSQL as on
/// SQLite: an attribute marked Indexed, a fetch index (NSFetchIndexElementDescription
/// `isAscending`: "whether an index that supports direction is an ascending or descending index")
/// and the primary key that orders rows without sort descriptors. The store puts `nil` first in
/// ascending order and last in descending order (NSSortDescriptor: `nil` compares less than any
/// value), which PostgreSQL must be told; its indexes are made the same way, so either direction
/// reads one in order, where before every such fetch sorted all the rows the filter kept.
@Suite("PostgreSQL store: sorts read indexes in order", .enabled(if: PostgresTestServer.runsTests))
struct PostgreSQLIndexOrderTests {
    /// `Reading`: `taken` (a date, Indexed), `serial` (an integer, in a descending fetch index),
    /// `label` (text, not indexed).
    static func model() -> NSManagedObjectModel {
        let model = gaugeModel([
            ("taken", .dateAttributeType), ("serial", .integer64AttributeType), ("label", .stringAttributeType),
        ])
        let reading = model.entitiesByName["Gauge"]!
        reading.name = "Reading"
        reading.attributesByName["taken"]!.isIndexed = true
        let element = NSFetchIndexElementDescription(
            property: reading.attributesByName["serial"]!, collationType: .binary)
        element.isAscending = false
        reading.indexes = [NSFetchIndexDescription(name: "bySerial", elements: [element])]
        return model
    }

    @Test func sortsOnIndexedColumnsAndTheKeyNeedNoSortStep() throws {
        let model = Self.model()
        let schemaName = PostgresTestServer.uniqueSchema("index_order")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(
            ofType: NSPostgreSQLStoreType, configurationName: nil, at: PostgresTestServer.url(schema: schemaName),
            options: nil)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let start = Date(timeIntervalSinceReferenceDate: 800_000_000)
        for index in 0..<40 {
            let reading = NSEntityDescription.insertNewObject(forEntityName: "Reading", into: context)
            // Every tenth has neither a date nor a serial.
            if index % 10 != 3 {
                reading.setValue(start.addingTimeInterval(Double((index * 7) % 40) * 60), forKey: "taken")
                reading.setValue(Int64((index * 13) % 40), forKey: "serial")
            }
            reading.setValue("reading \(index)", forKey: "label")
        }
        try context.save()
        let store = try #require(coordinator.persistentStores.first as? PostgreSQLStore)
        let schema = try #require(store.schema)
        let entity = try #require(model.entitiesByName["Reading"])

        let link = try PostgresLink.connect(
            try PostgresLocation(url: URL(string: PostgresTestServer.baseURL), options: nil))
        defer { link.close() }
        _ = try link.query("SET search_path = \"\(schemaName)\"", [])
        // With sorting priced out, a plan still sorts only when no index gives the order.
        _ = try link.query("SET enable_sort = off", [])

        func request(_ key: String?, ascending: Bool, limit: Int) -> NSFetchRequest<NSFetchRequestResult> {
            let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Reading")
            request.entity = entity
            request.sortDescriptors = key.map { [NSSortDescriptor(key: $0, ascending: ascending)] }
            request.fetchLimit = limit
            return request
        }
        func plan(_ request: NSFetchRequest<NSFetchRequestResult>) throws -> String {
            let query = SQLQuery(
                schema: schema, mapping: schema[entity], request: request, dialect: PostgreSQLDialect())
            return try link.query("EXPLAIN " + query.select.sql, query.select.parameters).rows.compactMap { row in
                if case .text(let line)? = row.first { return line }
                return nil
            }.joined(separator: "\n")
        }
        // A whole sort of the rows; an incremental one, which orders only the rows of one index
        // key at a time (the key breaking ties) and stops at the limit, is reading in order.
        func sortsEveryRow(_ plan: String) -> Bool {
            plan.split(separator: "\n").contains { line in
                let node = line.trimmingCharacters(in: .whitespaces)
                return node.hasPrefix("Sort  (") || node.hasPrefix("->  Sort  (")
            }
        }
        func sorted(_ key: String, ascending: Bool, limit: Int) throws -> [Any?] {
            try context.fetch(request(key, ascending: ascending, limit: limit)).map {
                ($0 as! NSManagedObject).value(forKey: key)
            }
        }

        // No sort descriptors: the rows in key order, through the primary key's index.
        let keyOrder = try plan(request(nil, ascending: true, limit: 0))
        #expect(!sortsEveryRow(keyOrder), "\(keyOrder)")
        #expect(keyOrder.contains("pkey"), "\(keyOrder)")
        for ascending in [true, false] {
            let byDate = try plan(request("taken", ascending: ascending, limit: 5))
            #expect(!sortsEveryRow(byDate), "\(byDate)")
            #expect(byDate.contains("ZTAKEN_INDEX"), "\(byDate)")
            let bySerial = try plan(request("serial", ascending: ascending, limit: 5))
            #expect(!sortsEveryRow(bySerial), "\(bySerial)")
            #expect(bySerial.contains("Z_Reading_bySerial"), "\(bySerial)")
        }
        // The label has no index: the plan sorts, which is what the assertions above would see
        // if the indexes kept `NULL` elsewhere than the sort does.
        let byLabel = try plan(request("label", ascending: true, limit: 5))
        #expect(sortsEveryRow(byLabel), "\(byLabel)")

        // The order itself: `nil` first ascending, last descending, through either index.
        context.reset()
        let ascendingDates = try sorted("taken", ascending: true, limit: 6)
        #expect(ascendingDates.prefix(4).allSatisfy { $0 == nil })
        #expect(ascendingDates[4] as? Date == start)
        let descendingSerials = try sorted("serial", ascending: false, limit: 40)
        #expect(descendingSerials.first as? Int64 == 38)
        #expect(descendingSerials.suffix(4).allSatisfy { $0 == nil })
        let ascendingSerials = try sorted("serial", ascending: true, limit: 40)
        #expect(ascendingSerials.prefix(4).allSatisfy { $0 == nil })
        #expect(
            ascendingSerials.dropFirst(4).compactMap { $0 as? Int64 }
                == Array(0..<40).filter { $0 % 10 != 9 }.map(Int64.init))
    }
}
