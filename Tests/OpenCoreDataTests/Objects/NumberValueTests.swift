import CoreData
import Testing

/// Numbers come back as Apple's do: `NSManagedObject.value(forKey:)` answers an `NSNumber` for a
/// scalar attribute (NSAttributeDescription reference: Integer 16/32/64, Double, Float and
/// Boolean attributes are represented by `NSNumber`), so code written for Apple platforms casts
/// it to the declared width, to `Int` or to `NSNumber` alike (issue 18).
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
}
