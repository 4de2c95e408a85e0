import CoreData
import Foundation
import OpenCoreDataSQL
import Testing

@testable import OpenCoreDataPostgres

/// Rows read as the server sends them: the caller gets every row of a statement once, in order,
/// and an error while reading one — a damaged row among many — is the fetch's error, with the
/// connection left ready for the next statement (NSManagedObjectContext `fetch(_:)`: "returns an
/// array of objects that meet the criteria specified by request"; on failure it throws, and the
/// context goes on working).
@Suite("PostgreSQL store: rows read as they arrive", .enabled(if: PostgresTestServer.runsTests))
struct PostgreSQLRowReadingTests {
    func link() throws -> PostgresLink {
        try PostgresLink.connect(try PostgresLocation(url: URL(string: PostgresTestServer.baseURL), options: nil))
    }

    /// A statement of many more rows than one batch between the event loop and the reader gives
    /// each row once, in the statement's order.
    @Test func everyRowOnceInOrder() throws {
        let link = try link()
        defer { link.close() }
        var seen: [Int64] = []
        try link.select("SELECT n, n * 2 FROM generate_series(1, $1::int) AS n ORDER BY n", [.integer(5000)]) { row in
            guard case .integer(let n) = row[0], case .integer(let twice) = row[1] else { return }
            #expect(twice == n * 2)
            seen.append(n)
        }
        #expect(seen == Array(1...5000))
    }

    /// When the reader stops at a row by throwing, that error is what the statement throws, the
    /// rows after it are not given to the reader, and the next statement on the connection reads
    /// its own rows, none left over from the first.
    @Test func anErrorWhileReadingIsThrownAndTheConnectionGoesOn() throws {
        let link = try link()
        defer { link.close() }
        var read = 0
        let error = #expect(throws: NSError.self) {
            try link.select("SELECT n FROM generate_series(1, 3000) AS n ORDER BY n", []) { row in
                read += 1
                if row.first == .integer(100) {
                    throw NSError(domain: NSCocoaErrorDomain, code: NSCoreDataError)
                }
            }
        }
        #expect(error?.code == NSCoreDataError)
        #expect(read == 100)
        #expect(try link.select("SELECT 7, 'seven'", []) == [[.integer(7), .text("seven")]])
    }

    /// An abstract entity has no objects of its own (NSEntityDescription `isAbstract`): a row among
    /// many whose `Z_ENT` names one is a damaged store, and the fetch throws `NSCoreDataError`
    /// instead of making such an object. The same context then fetches again once the row is
    /// repaired.
    @Test func aDamagedRowAmongManyIsTheFetchsErrorAndTheStoreGoesOn() throws {
        let model = AbstractWriterModel.make()
        let schema = PostgresTestServer.uniqueSchema("damaged")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(
            ofType: NSPostgreSQLStoreType, configurationName: nil, at: PostgresTestServer.url(schema: schema),
            options: nil)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        for index in 0..<500 {
            NSEntityDescription.insertNewObject(forEntityName: "Author", into: context)
                .setValue("author \(index)", forKey: "name")
        }
        try context.save()
        context.reset()
        let quoted = "\"\(schema)\""
        let writerNumber = try PostgresTestServer.run(
            "SELECT \"Z_ENT\" FROM \(quoted).\"Z_PRIMARYKEY\" WHERE \"Z_NAME\" = 'Writer'")
        let authorNumber = try PostgresTestServer.run(
            "SELECT \"Z_ENT\" FROM \(quoted).\"Z_PRIMARYKEY\" WHERE \"Z_NAME\" = 'Author'")
        _ = try PostgresTestServer.run(
            "UPDATE \(quoted).\"ZWRITER\" SET \"Z_ENT\" = $1 WHERE \"ZNAME\" = 'author 250'", [.integer(writerNumber)])

        let request = NSFetchRequest<NSManagedObject>(entityName: "Writer")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        let error = #expect(throws: NSError.self) { try context.fetch(request) }
        #expect(error?.code == NSCoreDataError)
        #expect(error?.localizedDescription.contains("abstract entity Writer") == true)

        _ = try PostgresTestServer.run(
            "UPDATE \(quoted).\"ZWRITER\" SET \"Z_ENT\" = $1 WHERE \"ZNAME\" = 'author 250'", [.integer(authorNumber)])
        #expect(try context.fetch(request).count == 500)
    }
}
