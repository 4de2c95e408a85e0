import CoreData
import Testing

/// Numbers come back as Apple's do: `NSManagedObject.value(forKey:)` answers an `NSNumber` for a
/// scalar attribute (NSAttributeDescription reference: Integer 16/32/64, Double, Float and
/// Boolean attributes are represented by `NSNumber`), so code written for Apple platforms casts
/// it to the declared width, to `Int` or to `NSNumber` alike.
@Suite("Number attributes come back as NSNumber")
struct NumberValueTests {
    let directory = TemporaryDirectory()

    static func model() -> NSManagedObjectModel {
        let entity = NSEntityDescription()
        entity.name = "Counter"
        entity.properties = [
            CompanyModel.attribute("small", .integer16AttributeType),
            CompanyModel.attribute("medium", .integer32AttributeType),
            CompanyModel.attribute("large", .integer64AttributeType),
            CompanyModel.attribute("ratio", .doubleAttributeType),
            CompanyModel.attribute("flag", .booleanAttributeType),
        ]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }

    private func expectApplesCasts(_ counter: NSManagedObject, _ moment: Comment) {
        #expect(counter.value(forKey: "small") as? Int16 == 7, moment)
        #expect(counter.value(forKey: "small") as? Int == 7, moment)
        #expect((counter.value(forKey: "small") as? NSNumber)?.int16Value == 7, moment)
        #expect(counter.value(forKey: "medium") as? Int32 == 70_000, moment)
        #expect(counter.value(forKey: "medium") as? Int == 70_000, moment)
        #expect(counter.value(forKey: "large") as? Int64 == 1 << 40, moment)
        #expect(counter.value(forKey: "large") as? Int == 1 << 40, moment)
        #expect(counter.value(forKey: "ratio") as? Double == 2.5, moment)
        #expect(counter.value(forKey: "ratio") as? NSNumber == NSNumber(value: 2.5), moment)
        #expect(counter.value(forKey: "flag") as? Bool == true, moment)
        #expect(counter.value(forKey: "flag") as? Int == 1, moment)
        #expect(counter.primitiveValue(forKey: "small") as? Int16 == 7, moment)
    }

    @Test("inserted, fetched and refreshed objects answer NSNumber for scalar attributes")
    func scalarAttributesAreNSNumbers() throws {
        let url = directory.file("Counters.sqlite")
        let context = try sqliteStack(url, model: Self.model())
        let counter = NSEntityDescription.insertNewObject(forEntityName: "Counter", into: context)
        // Set with other widths than declared, as code often does (an Int for an Integer 16).
        counter.setValue(7, forKey: "small")
        counter.setValue(Int64(70_000), forKey: "medium")
        counter.setValue(1 << 40, forKey: "large")
        counter.setValue(2.5, forKey: "ratio")
        counter.setValue(true, forKey: "flag")
        expectApplesCasts(counter, "inserted")
        try context.save()
        context.refresh(counter, mergeChanges: false)
        expectApplesCasts(counter, "refreshed")
        let reader = try sqliteStack(url, model: Self.model())
        let fetched = try #require(try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Counter")).first)
        expectApplesCasts(fetched, "fetched")
        #expect(counter.committedValues(forKeys: ["small"])["small"] as? Int16 == 7)
        #expect(counter.dictionaryWithValues(forKeys: ["large"])["large"] as? Int == 1 << 40)
    }

    /// The number handed out for a value is the number `NSNumber(value:)` makes of it: same type
    /// encoding, same value. Small integers and Booleans come from a shared table (as Apple's
    /// tagged pointers make them free); the boundaries of the table and values outside it, the
    /// same way.
    @Test("a small number is shared and still has the type and value of a new NSNumber")
    func smallNumbersKeepTypeAndValue() throws {
        let context = try sqliteStack(directory.file("Small.sqlite"), model: Self.model())
        let counter = NSEntityDescription.insertNewObject(forEntityName: "Counter", into: context)
        func expectSame(_ key: String, _ value: Any, as expected: NSNumber) throws {
            counter.setValue(value, forKey: key)
            let number = try #require(counter.value(forKey: key) as? NSNumber, "\(key) = \(value)")
            #expect(String(cString: number.objCType) == String(cString: expected.objCType), "\(key) = \(value)")
            #expect(number == expected, "\(key) = \(value)")
            #expect(number.int64Value == expected.int64Value, "\(key) = \(value)")
        }
        for value in [-129, -128, -1, 0, 1, 77, 1_023, 1_024, Int.max, Int.min] {
            try expectSame("large", value, as: NSNumber(value: value))
            try expectSame("large", Int64(value), as: NSNumber(value: Int64(value)))
        }
        for value in [Int32.min, -129, -128, 0, 1_023, 1_024, Int32.max] {
            try expectSame("medium", value, as: NSNumber(value: value))
        }
        for value in [Int16.min, -129, -128, 5, 1_023, 1_024, Int16.max] {
            try expectSame("small", value, as: NSNumber(value: value))
        }
        try expectSame("flag", true, as: NSNumber(value: true))
        try expectSame("flag", false, as: NSNumber(value: false))
        // Two objects holding the same small value share its number; a large value is its own.
        let other = NSEntityDescription.insertNewObject(forEntityName: "Counter", into: context)
        counter.setValue(42, forKey: "large")
        other.setValue(42, forKey: "large")
        #expect(counter.value(forKey: "large") as AnyObject === other.value(forKey: "large") as AnyObject)
        #expect(counter.value(forKey: "large") as? Int == 42 && other.value(forKey: "large") as? Int16 == 42)
    }
}
