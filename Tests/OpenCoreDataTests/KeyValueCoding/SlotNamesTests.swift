import Foundation
import Testing

@testable import OpenCoreData

/// Key-value coding finds a property by its name (NSKeyValueCoding: `value(forKey:)` "returns the
/// value for the property identified by a given key"). Its lookup by UTF-8 bytes must
/// answer exactly what the entity's name dictionary answers, for every key.
@Suite("Key-value coding: a property found by its name's bytes")
struct SlotNamesTests {
    static func entity(_ names: [String]) -> NSEntityDescription {
        let entity = NSEntityDescription()
        entity.name = "Thing"
        entity.properties = names.map { name in
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = .stringAttributeType
            return attribute
        }
        return entity
    }

    @Test("every name of a wide entity is found at its slot, and no other key is")
    func everyNameFound() {
        // Names sharing lengths, first and last bytes, so the hash's buckets collide; one longer
        // than a small string; one non-ASCII.
        var names =
            (0..<40).map { "p\($0 % 10)x\($0)" } + ["a", "ab", "ba", "aXb", "aYb", "é", "aVeryLongPropertyNameIndeed"]
        names.append("")
        let layout = Self.entity(names).layout
        for (slot, name) in names.enumerated() {
            #expect(layout.slot(named: name) == slot, "\(name.debugDescription)")
            #expect(layout.slot(named: String(decoding: Array(name.utf8), as: UTF8.self)) == slot)
        }
        for key in ["p0x1", "b", "aZb", "aVeryLongPropertyNameIndeeD", "self", "é\u{301}", " a"] {
            #expect(layout.slot(named: key) == nil, "\(key.debugDescription)")
            #expect(layout.slotByName[key] == nil)
        }
    }

    @Test("a key spelled with canonically equivalent Unicode finds the property, as the dictionary does")
    func equivalentSpellingFound() {
        let layout = Self.entity(["caf\u{E9}", "name"]).layout
        #expect(layout.slot(named: "cafe\u{301}") == 0)
        #expect(layout.slot(named: "cafe\u{301}") == layout.slotByName["cafe\u{301}"])
    }

    @Test("an entity with two properties of one name answers the slot the dictionary answers")
    func duplicateNamesAgree() {
        let layout = Self.entity(["name", "age", "name"]).layout
        #expect(layout.slot(named: "name") == layout.slotByName["name"])
        #expect(layout.slot(named: "age") == 1)
    }

    @Test("value(forKey:) and setValue(_:forKey:) reach the property through the lookup")
    func keyValueCodingUsesIt() throws {
        let model = NSManagedObjectModel()
        model.entities = [Self.entity(["first", "second", "caf\u{E9}"])]
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        _ = try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let object = NSEntityDescription.insertNewObject(forEntityName: "Thing", into: context)
        object.setValue("one", forKey: "first")
        object.setValue("two", forKey: "second")
        object.setValue("three", forKey: "cafe\u{301}")
        #expect(object.value(forKey: "first") as? String == "one")
        #expect(object.value(forKey: "second") as? String == "two")
        #expect(object.value(forKey: "caf\u{E9}") as? String == "three")
    }
}
