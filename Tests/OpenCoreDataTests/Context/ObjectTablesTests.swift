import Foundation
import Testing

@testable import OpenCoreData

/// A context's registry files its objects in one table per key space: a root entity
/// with its sub-entities, and every temporary ID together. Core Data Programming Guide, "Faulting
/// and Uniquing": a context holds at most one object per ID and `object(with:)` answers it;
/// `registeredObject(for:)` answers `nil` for an ID it does not hold. Filed apart, every object
/// must still be found under exactly the IDs equal to its own (``NSManagedObjectID/isSame(as:)``:
/// same key and root entity), and what goes through every object must reach each once.
@Suite("Registry tables")
struct ObjectTablesTests {
    /// `Party` (abstract) with sub-entities `Person` and `Company`, an unrelated `Row`, and
    /// `count` more plain entities; immutable.
    static func model(extra count: Int = 0) -> NSManagedObjectModel {
        let party = NSEntityDescription()
        party.name = "Party"
        party.isAbstract = true
        let person = NSEntityDescription()
        person.name = "Person"
        let company = NSEntityDescription()
        company.name = "Company"
        party.subentities = [person, company]
        let row = NSEntityDescription()
        row.name = "Row"
        let extra = (0..<count).map { index in
            let entity = NSEntityDescription()
            entity.name = "Extra\(index)"
            return entity
        }
        let model = NSManagedObjectModel()
        model.entities = [party, person, company, row] + extra
        // Immutable, as a coordinator makes it: each entity keeps one layout from here on.
        model.isEditable = false
        return model
    }

    static func object(_ model: NSManagedObjectModel, _ name: String, key: Int64?) -> NSManagedObject {
        let layout = model.entitiesByName[name]!.layout
        let object = NSManagedObject(entity: layout.entity, insertInto: nil)
        object.assign(
            objectID: key.map { NSManagedObjectID(layout: layout, key: .integer($0), space: nil) }
                ?? NSManagedObjectID.temporary(for: layout))
        return object
    }

    static func id(_ model: NSManagedObjectModel, _ name: String, _ key: Int64) -> NSManagedObjectID {
        NSManagedObjectID(layout: model.entitiesByName[name]!.layout, key: .integer(key), space: nil)
    }

    @Test("objects of every key space are found under the IDs equal to theirs, and only those")
    func lookupsAcrossKeySpaces() {
        let model = Self.model()
        let tables = ObjectTables()
        let person = Self.object(model, "Person", key: 7)
        let company = Self.object(model, "Company", key: 8)
        let row = Self.object(model, "Row", key: 7)
        let newPerson = Self.object(model, "Person", key: nil)
        let newRow = Self.object(model, "Row", key: nil)
        for object in [person, company, row, newPerson, newRow] { tables.insert(object) }
        #expect(tables.count == 5)
        #expect(tables[Self.id(model, "Person", 7)] === person)
        #expect(tables[Self.id(model, "Row", 7)] === row)
        #expect(tables[Self.id(model, "Company", 8)] === company)
        // An ID of the root entity with a sub-entity object's key is the same ID, and finds it.
        #expect(Self.id(model, "Party", 7).isSame(as: Self.id(model, "Person", 7)))
        #expect(tables[Self.id(model, "Party", 7)] === person)
        #expect(tables[Self.id(model, "Company", 7)] === person)
        #expect(tables[Self.id(model, "Row", 8)] == nil)
        #expect(tables[newPerson.objectID] === newPerson)
        #expect(tables[newRow.objectID] === newRow)
        #expect(tables[NSManagedObjectID.temporary(for: model.entitiesByName["Row"]!.layout)] == nil)
        #expect(tables.remove(Self.id(model, "Row", 7).value) === row)
        #expect(tables[Self.id(model, "Row", 7)] == nil)
        #expect(tables[Self.id(model, "Person", 7)] === person)
        #expect(
            Set(tables.entries.map(ObjectIdentifier.init))
                == Set([person, company, newPerson, newRow].map(ObjectIdentifier.init)))
    }

    @Test("with more key spaces than a scan covers, every object is still found")
    func manyKeySpaces() {
        let model = Self.model(extra: 20)
        let tables = ObjectTables()
        let objects = (0..<20).map { Self.object(model, "Extra\($0)", key: 1) }
        for object in objects { tables.insert(object) }
        for (index, object) in objects.enumerated() {
            #expect(tables[Self.id(model, "Extra\(index)", 1)] === object)
        }
        #expect(tables[Self.id(model, "Row", 1)] == nil)
        #expect(tables.count == 20)
    }

    /// As a context going away or reset lets go of its objects (``IDTable`` tests pin one table's):
    /// every table is empty before the first chunk, and the objects of all come out once each, in
    /// one order of addresses.
    @Test("draining empties every table and hands out each object once, in address order")
    func drainAcrossTables() {
        let model = Self.model()
        let tables = ObjectTables()
        var objects: [NSManagedObject] = []
        for key in Int64(1)...300 {
            objects.append(Self.object(model, ["Person", "Company", "Row"][Int(key % 3)], key: key))
        }
        objects += (0..<10).map { _ in Self.object(model, "Row", key: nil) }
        for object in objects { tables.insert(object) }
        var drained: [NSManagedObject] = []
        var countDuringDrain: [Int] = []
        tables.drainInMemoryOrder(chunkSize: 64) { chunk in
            countDuringDrain.append(tables.count)
            drained += chunk
        }
        #expect(countDuringDrain.allSatisfy { $0 == 0 })
        #expect(drained.count == objects.count)
        #expect(Set(drained.map(ObjectIdentifier.init)) == Set(objects.map(ObjectIdentifier.init)))
        #expect(zip(drained, drained.dropFirst()).allSatisfy { ObjectIdentifier($0) < ObjectIdentifier($1) })
        #expect(tables.count == 0)
        #expect(tables[Self.id(model, "Row", 3)] == nil)
    }

    /// What a registry sweep uses: the objects only the tables hold are taken out, of every table.
    @Test("removeAll(where:) takes out of every table what it picks")
    func removeAllAcrossTables() {
        let model = Self.model()
        let tables = ObjectTables()
        let kept = [Self.object(model, "Person", key: 1), Self.object(model, "Row", key: 1)]
        for object in kept { tables.insert(object) }
        tables.insert(Self.object(model, "Company", key: 2))
        tables.insert(Self.object(model, "Row", key: 3))
        tables.insert(Self.object(model, "Row", key: nil))
        let removed = tables.removeAll { isKnownUniquelyReferenced(&$0) }
        #expect(removed.count == 3)
        #expect(tables.count == 2)
        #expect(tables[Self.id(model, "Person", 1)] === kept[0])
        #expect(tables[Self.id(model, "Row", 1)] === kept[1])
        #expect(tables[Self.id(model, "Row", 3)] == nil)
    }
}
