import CoreData
import Foundation
import Testing

/// A value of the wrong type for its attribute is refused, never stored as something else
/// (a string on an Integer 16 read back as nil, `Int.max` on an Integer 16 as
/// 9223372036854775807, a date on a string as its description). Apple refuses such a value as it is
/// set (NSManagedObject `setValue(_:forKey:)`: "Unacceptable type of value for attribute"); Swift has
/// no exception to raise there, so the save fails with the validation error (Core Data Programming
/// Guide, "Object Validation"; `NSValidationNumberTooLargeError` for a number the type cannot hold).
@Suite("Values of the wrong type")
struct ValueTypeValidationTests {
    let directory = TemporaryDirectory()

    static func model() -> NSManagedObjectModel {
        let entity = NSEntityDescription()
        entity.name = "Row"
        entity.properties = [
            CompanyModel.attribute("small", .integer16AttributeType),
            CompanyModel.attribute("ratio", .doubleAttributeType),
            CompanyModel.attribute("when", .dateAttributeType), CompanyModel.attribute("text", .stringAttributeType),
            CompanyModel.attribute("blob", .binaryDataAttributeType), CompanyModel.attribute("id", .UUIDAttributeType),
        ]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }

    @Test(
        "a wrong type or an integer too wide for its attribute fails the save, and nothing is written",
        arguments: [
            ("small", "seven" as any Sendable, NSManagedObjectValidationError),
            ("small", Int.max, NSValidationNumberTooLargeError),
            ("small", -40_000, NSValidationNumberTooSmallError), ("small", 1e10, NSValidationNumberTooLargeError),
            ("ratio", "2.5", NSManagedObjectValidationError), ("when", "yesterday", NSManagedObjectValidationError),
            ("text", Date(timeIntervalSinceReferenceDate: 0), NSManagedObjectValidationError),
            ("blob", "bytes", NSManagedObjectValidationError), ("id", "not a UUID", NSManagedObjectValidationError),
        ] as [(String, any Sendable, Int)])
    func wrongTypesFailTheSave(key: String, value: any Sendable, code: Int) throws {
        let url = directory.file("Rows.sqlite")
        let context = try sqliteStack(url, model: Self.model())
        let row = NSEntityDescription.insertNewObject(forEntityName: "Row", into: context)
        row.setValue(value, forKey: key)
        let error = #expect(throws: NSError.self) { try context.save() }
        #expect(error?.code == code, "\(key) = \(value)")
        #expect(error?.userInfo[NSValidationKeyErrorKey] as? String == key)
        #expect(try sqlite3(url, "SELECT count(*) FROM ZROW") == ["0"])
    }

    @Test("values of the right type, in other widths and Foundation forms, save")
    func rightTypesSave() throws {
        let context = try sqliteStack(directory.file("Rows.sqlite"), model: Self.model())
        let row = NSEntityDescription.insertNewObject(forEntityName: "Row", into: context)
        row.setValue(Int64(32_767), forKey: "small")
        row.setValue(NSNumber(value: 3), forKey: "ratio")
        row.setValue(NSDate(timeIntervalSinceReferenceDate: 5), forKey: "when")
        row.setValue(NSString(string: "text"), forKey: "text")
        row.setValue(Data([1, 2]), forKey: "blob")
        row.setValue(UUID(), forKey: "id")
        try context.save()
        #expect(row.value(forKey: "small") as? Int16 == 32_767)
    }
}
