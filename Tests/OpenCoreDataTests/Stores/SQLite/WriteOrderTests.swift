import Foundation
import Testing

@testable import OpenCoreData
@testable import OpenCoreDataSQLite

/// The SQLite store writes a save's rows in primary-key order (ARCHITECTURE.md, "Rows
/// are written in key order"). A save's changes arrive as sets, in hash order; written in that
/// order, rows land in the middle of their table and split its pages half empty. Apple documents
/// no write order, so the rule is this store's own: what the tests pin is that inserts, updates
/// and deletes reach SQLite in ascending key order, and that nothing is written twice or left out.
@Suite("SQLite store: rows written in key order")
struct WriteOrderTests {
    let directory = TemporaryDirectory()

    /// The keys of the ZEMPLOYEE rows the store's writer inserts, updates and deletes from now
    /// on, each list in the order SQLite saw them (temporary triggers on the writer's connection).
    private func recordWrites(_ store: SQLiteStore) throws {
        try store.writer.execute("CREATE TEMP TABLE written (kind TEXT, pk INTEGER)")
        for (kind, event, row) in [
            ("insert", "INSERT", "new"), ("update", "UPDATE", "new"), ("delete", "DELETE", "old"),
        ] {
            try store.writer.execute(
                "CREATE TEMP TRIGGER record_\(kind) AFTER \(event) ON main.ZEMPLOYEE BEGIN "
                    + "INSERT INTO written VALUES ('\(kind)', \(row).Z_PK); END")
        }
    }

    private func written(_ store: SQLiteStore, _ kind: String) throws -> [Int64] {
        try store.writer.rows("SELECT pk FROM written WHERE kind = ? ORDER BY rowid", [.text(kind)]).map {
            guard case .integer(let pk) = $0[0] else { return -1 }
            return pk
        }
    }

    /// Strictly ascending: in key order, and no key twice.
    private static func isAscending(_ keys: [Int64]) -> Bool {
        zip(keys, keys.dropFirst()).allSatisfy { $0 < $1 }
    }

    @Test("one save's inserts, updates and deletes each reach SQLite in ascending key order")
    func savesWriteInKeyOrder() throws {
        let context = try sqliteStack(directory.file("Order.sqlite"))
        let store = try #require(context.persistentStoreCoordinator?.persistentStores.first as? SQLiteStore)
        try recordWrites(store)
        // Employees and managers share the ZEMPLOYEE table (Manager is a sub-entity).
        var objects: [NSManagedObject] = []
        for index in 0..<600 {
            objects.append(
                context.employee("E\(index)", salary: Double(index), entity: index % 5 == 0 ? "Manager" : "Employee"))
        }
        try context.save()
        let inserted = try written(store, "insert")
        #expect(inserted.count == 600)
        #expect(Self.isAscending(inserted))

        for object in objects.shuffled()
        where (object.value(forKey: "salary") as? Double ?? 0).truncatingRemainder(dividingBy: 3) == 0 {
            object.setValue("renamed", forKey: "name")
        }
        for object in objects.shuffled()
        where (object.value(forKey: "salary") as? Double ?? 0).truncatingRemainder(dividingBy: 7) == 1 {
            context.delete(object)
        }
        try context.save()
        let updated = try written(store, "update")
        let deleted = try written(store, "delete")
        // Every third salary, less the 28 deleted too (15, 36, … 582: ≡ 0 mod 3 and ≡ 1 mod 7).
        #expect(updated.count == 200 - 28)
        #expect(Self.isAscending(updated))
        #expect(deleted.count == 86)
        #expect(Self.isAscending(deleted))

        // What was written is what the store now holds.
        let fresh = try sqliteStack(directory.file("Order.sqlite"))
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        let remaining = try fresh.fetch(request)
        #expect(remaining.count == 600 - 86)
        #expect(remaining.filter { $0.value(forKey: "name") as? String == "renamed" }.count == 200 - 28)
    }

    @Test("key order: ascending keys, equal keys and keyless IDs in their given order, sorted input untouched")
    func inKeyOrderSorts() throws {
        let context = try sqliteStack(directory.file("Keys.sqlite"))
        let objects = (0..<5).map { context.employee("E\($0)") }
        try context.obtainPermanentIDs(for: objects)
        let ids = objects.map(\.objectID)
        let temporary = context.employee("T").objectID
        #expect(temporary.isTemporaryID)
        let shuffled = [ids[3], temporary, ids[0], ids[4], ids[1], ids[3], ids[2]]
        let ordered = SQLiteStore.inKeyOrder(shuffled.enumerated().map { $0 }, id: \.element)
        #expect(ordered.map(\.offset) == [1, 2, 4, 6, 0, 5, 3])
        #expect(SQLiteStore.inKeyOrder(ids, id: { $0 }) == ids)
    }
}
