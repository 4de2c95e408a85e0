import CoreData
import Foundation
import OpenCoreData
import Testing

/// Every kind of constant against every attribute type gives the same objects from SQL as from
/// memory (fractions against integers, numbers against booleans and NaN arguments
/// answered differently). Core Data Programming Guide: a fetch's predicate means what it means in
/// memory; the SQLite store only runs it faster. Each constant compares by value, as
/// `NSNumber.compare(_:)` does: `flag == 2` matches no Boolean, `count == 36.5` no integer, and
/// NaN equals nothing. One exception is Apple's too: an integer compared for equality with a string
/// attribute (`label == 9`, `label IN {9, 10}`) runs in SQL, where the column's TEXT affinity
/// compares it as the text "9" (``integersAgainstStringsCompareAsText()``); in memory a string
/// never equals a number.
@Suite("Constants of every type against attributes of every type")
struct ConstantTypeEquivalenceTests {
    static func model() -> NSManagedObjectModel {
        let thing = NSEntityDescription()
        thing.name = "Thing"
        thing.properties = [
            CompanyModel.attribute("label", .stringAttributeType),
            CompanyModel.attribute("flag", .booleanAttributeType),
            CompanyModel.attribute("small", .integer16AttributeType),
            CompanyModel.attribute("count", .integer64AttributeType),
            CompanyModel.attribute("ratio", .doubleAttributeType),
            CompanyModel.attribute("single", .floatAttributeType),
            CompanyModel.attribute("price", .decimalAttributeType), CompanyModel.attribute("when", .dateAttributeType),
        ]
        let model = NSManagedObjectModel()
        model.entities = [thing]
        return model
    }

    private static func fill(_ context: NSManagedObjectContext) throws {
        let ratios: [Double?] = [0, 0.5, 1, 36.5, -2.25, .infinity, -.infinity, nil, 1e300, 3]
        for index in 0..<10 {
            let thing = NSEntityDescription.insertNewObject(forEntityName: "Thing", into: context)
            thing.setValue("t\(index)", forKey: "label")
            thing.setValue(index % 3 == 2 ? nil : index % 2 == 0, forKey: "flag")
            thing.setValue(Int16(index * 3 - 9), forKey: "small")
            thing.setValue(index == 9 ? Int64.max : Int64(index * 12 - 36), forKey: "count")
            thing.setValue(ratios[index], forKey: "ratio")
            thing.setValue(Float(index) / 2, forKey: "single")
            thing.setValue(Decimal(index) / 4, forKey: "price")
            thing.setValue(Date(timeIntervalSinceReferenceDate: Double(index) * 1e8), forKey: "when")
        }
        try context.save()
    }

    static let formats: [String] = [
        // Numbers against Booleans.
        "flag == 0.5", "flag == 2", "flag == 1", "flag == 0", "flag == YES", "flag != 2", "flag > 0.5", "flag < 1",
        "flag IN {2, 0.5}", "flag == nil",
        // Fractions and out-of-range numbers against integers.
        "small == 0.5", "small < 0.5", "small >= -3.5", "small BETWEEN {-2.5, 6.5}", "small == 70000",
        "small < 70000", "small > -70000", "count == 36.5", "count < 36.5", "count BETWEEN {35.5, 36.5}",
        "count > 1e19", "count < 1e19", "count == 9223372036854775807", "count >= 9.3e18", "count == -1e300",
        // Infinities and huge values against doubles and floats.
        "ratio == 1e300", "ratio > 1e308", "ratio < -1e308", "ratio == 36.5", "ratio != 36.5", "single == 0.5",
        "single > 2.25", "single < 1e39", "price == 0.5", "price > 1.1", "price < 1e300",
        // Booleans and numbers against strings and dates.
        "label == 1", "label == YES", "when > 0", "when < 1e300",
    ]

    /// NaN and the infinities as arguments, as a user's code passes them.
    static let arguments: [(String, Double)] = [
        ("ratio == %@", .nan), ("ratio != %@", .nan), ("ratio < %@", .nan), ("ratio > %@", .nan),
        ("count == %@", .nan), ("count < %@", .nan), ("small != %@", .nan), ("flag == %@", .nan),
        ("ratio == %@", .infinity), ("ratio < %@", .infinity), ("ratio > %@", -.infinity),
        ("count < %@", .infinity), ("count > %@", -.infinity), ("small == %@", .infinity),
    ]

    private func answers(_ predicate: OpenCoreData.NSPredicate, _ contexts: [NSManagedObjectContext]) throws
        -> [[String]]
    {
        try contexts.map { context in
            let request = NSFetchRequest<NSManagedObject>(entityName: "Thing")
            request.predicate = predicate
            return try context.fetch(request).compactMap { $0.value(forKey: "label") as? String }.sorted()
        }
    }

    /// The same ten things saved to an in-memory store and to a SQLite store in `directory`.
    private static func filledStacks(in directory: TemporaryDirectory) throws -> (
        memory: NSManagedObjectContext, sqlite: NSManagedObjectContext
    ) {
        let sqlite = try sqliteStack(directory.file("Constants.sqlite"), model: model())
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model())
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        let memory = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        memory.persistentStoreCoordinator = coordinator
        try fill(sqlite)
        try fill(memory)
        return (memory, sqlite)
    }

    @Test func sqlAndMemoryAgreeForEveryConstantType() throws {
        let directory = TemporaryDirectory()
        let (memory, sqlite) = try Self.filledStacks(in: directory)
        for format in Self.formats {
            let result = try answers(NSPredicate(format: format), [memory, sqlite])
            #expect(result[0] == result[1], "\(format)")
        }
        for (format, value) in Self.arguments {
            let result = try answers(NSPredicate(format: format, value as NSNumber), [memory, sqlite])
            #expect(result[0] == result[1], "\(format) with \(value)")
        }
        // The rules themselves, so that agreeing on a wrong answer is not enough.
        #expect(try answers(NSPredicate(format: "flag == 2"), [sqlite])[0].isEmpty)
        #expect(try answers(NSPredicate(format: "count == 36.5"), [sqlite])[0].isEmpty)
        #expect(try answers(NSPredicate(format: "ratio == %@", Double.nan as NSNumber), [sqlite])[0].isEmpty)
        #expect(
            try answers(NSPredicate(format: "count < 36.5"), [sqlite])[0] == ["t0", "t1", "t2", "t3", "t4", "t5", "t6"])
    }

    /// NSComparisonPredicate, `in`: each member of the right-hand collection is compared by
    /// value. A Swift `[Int]` argument — the IDs an app hands `id IN %@` — answers what the same
    /// numbers as `NSNumber`s answer, from SQL and from memory, against every attribute type
    /// (SQL reads such an array without a cast per element).
    @Test func anArrayOfIntsInAnInListAnswersAsNumbersDo() throws {
        let directory = TemporaryDirectory()
        let (memory, sqlite) = try Self.filledStacks(in: directory)
        let lists: [(key: String, list: [Int])] = [
            ("flag", [1, 2]), ("small", [-9, 0, 70_000, 3]), ("count", [-36, -24, 999]), ("ratio", [0, 1, 3, 36]),
            ("single", [0, 1, 2]), ("price", [0, 1, 2]), ("label", [1]), ("when", [0]),
        ]
        for (key, list) in lists {
            let format = "\(key) IN %@"
            let ints = try answers(NSPredicate(format: format, list), [memory, sqlite])
            let numbers = try answers(NSPredicate(format: format, list.map { $0 as NSNumber }), [memory, sqlite])
            #expect(ints[0] == ints[1], "\(format) with \(list): memory and SQL")
            #expect(ints == numbers, "\(format) with \(list): as Ints and as NSNumbers")
        }
        // The rules themselves, so that agreeing on a wrong answer is not enough.
        #expect(try answers(NSPredicate(format: "count IN %@", [-36, -24, 999]), [sqlite])[0] == ["t0", "t1"])
        #expect(try answers(NSPredicate(format: "ratio IN %@", [0, 1, 3]), [sqlite])[0] == ["t0", "t2", "t9"])
        #expect(
            try answers(NSPredicate(format: "small IN %@", [-9, 0, 70_000, 3]), [sqlite])[0] == ["t0", "t3", "t4"])
        #expect(try answers(NSPredicate(format: "flag IN %@", [1, 2]), [sqlite])[0] == ["t0", "t4", "t6"])
    }

    /// Reported from a real library's tests, which pass on Apple platforms: `numberPlate IN {9, 10,
    /// 11}` on a string attribute finds the objects whose plate is "9", "10" or "11" in Apple's
    /// SQLite store, which translates the comparison to SQL where SQLite converts a number meeting
    /// a TEXT column to text ("Type Conversions Prior To Comparison"). Equality and `IN` behave so
    /// here too, on SQLite and PostgreSQL; the in-memory store, as Apple's, matches none.
    @Test func integersAgainstStringsCompareAsText() throws {
        let directory = TemporaryDirectory()
        var contexts = [try sqliteStack(directory.file("Text.sqlite"), model: Self.model())]
        if PostgresTestServer.runsTests { contexts.append(try postgresStack("astext", model: Self.model())) }
        for context in contexts {
            for label in ["8", "9", "10", "11", "x", "09"] {
                NSEntityDescription.insertNewObject(forEntityName: "Thing", into: context).setValue(
                    label, forKey: "label")
            }
            try context.save()
            context.reset()
            #expect(try answers(NSPredicate(format: "label IN {9, 10, 11}"), [context])[0] == ["10", "11", "9"])
            #expect(try answers(NSPredicate(format: "label IN %@", [9, 10]), [context])[0] == ["10", "9"])
            #expect(try answers(NSPredicate(format: "label == 9"), [context])[0] == ["9"])
            #expect(try answers(NSPredicate(format: "label != 9"), [context])[0] == ["09", "10", "11", "8", "x"])
        }
    }
}
