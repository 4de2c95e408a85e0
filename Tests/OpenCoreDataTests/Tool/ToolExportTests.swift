import CoreData
import Foundation
import Testing

/// `coredata export` and `coredata import`: the JSON format round-trips every attribute type and
/// every kind of relationship, and a failed import leaves the store as it was. Related
/// documentation: NSAttributeType (the attribute types); NSRelationshipDescription
/// (to-one, to-many, ordered, inverse).
@Suite("coredata tool: export and import")
struct ToolExportTests {
    let directory = TemporaryDirectory()

    /// Item (one attribute of every storable type) with a sub-entity SpecialItem; Tag (many-to-many
    /// with Item), List (ordered to-many of Items, inverse to-one), and a to-one without inverse.
    static func model() -> NSManagedObjectModel {
        func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = true
            return attribute
        }
        func relationship(_ name: String, _ destination: NSEntityDescription, toMany: Bool) -> NSRelationshipDescription
        {
            let relationship = NSRelationshipDescription()
            relationship.name = name
            relationship.destinationEntity = destination
            relationship.maxCount = toMany ? 0 : 1
            return relationship
        }
        let item = NSEntityDescription()
        item.name = "Item"
        let special = NSEntityDescription()
        special.name = "SpecialItem"
        let tag = NSEntityDescription()
        tag.name = "Tag"
        let list = NSEntityDescription()
        list.name = "List"
        let tags = relationship("tags", tag, toMany: true)
        let items = relationship("items", item, toMany: true)
        tags.inverseRelationship = items
        items.inverseRelationship = tags
        let entries = relationship("entries", item, toMany: true)
        entries.isOrdered = true
        let owner = relationship("list", list, toMany: false)
        entries.inverseRelationship = owner
        owner.inverseRelationship = entries
        let favorite = relationship("favorite", tag, toMany: false)
        let transformable = attribute("payload", .transformableAttributeType)
        item.properties = [
            attribute("small", .integer16AttributeType), attribute("medium", .integer32AttributeType),
            attribute("large", .integer64AttributeType), attribute("amount", .decimalAttributeType),
            attribute("ratio", .doubleAttributeType), attribute("weight", .floatAttributeType),
            attribute("title", .stringAttributeType), attribute("done", .booleanAttributeType),
            attribute("due", .dateAttributeType), attribute("blob", .binaryDataAttributeType),
            attribute("token", .UUIDAttributeType), attribute("link", .URIAttributeType), transformable, tags, owner,
            favorite,
        ]
        special.properties = [attribute("level", .integer64AttributeType)]
        item.subentities = [special]
        tag.properties = [attribute("name", .stringAttributeType), items]
        list.properties = [attribute("name", .stringAttributeType), entries]
        let model = NSManagedObjectModel()
        model.entities = [item, special, tag, list]
        return model
    }

    /// A store with edge values: extremes, nil, NaN and infinities, empty strings and data,
    /// dates before 2001, every relationship kind, an ordered to-many in a non-key order.
    func makeStore() throws -> URL {
        let url = directory.file("Original.sqlite")
        let context = try sqliteStack(url, model: Self.model())
        let tags = ["red", "green", "blue"].map { name -> NSManagedObject in
            let tag = NSEntityDescription.insertNewObject(forEntityName: "Tag", into: context)
            tag.setValue(name, forKey: "name")
            return tag
        }
        let list = NSEntityDescription.insertNewObject(forEntityName: "List", into: context)
        list.setValue("chores", forKey: "name")
        var items: [NSManagedObject] = []
        for index in 0..<6 {
            let item = NSEntityDescription.insertNewObject(
                forEntityName: index % 3 == 2 ? "SpecialItem" : "Item", into: context)
            if index % 3 == 2 { item.setValue(index * 100, forKey: "level") }
            if index > 0 {
                item.setValue([Int16.min, Int16.max, 0, 7, -1][index % 5], forKey: "small")
                item.setValue(Int32.max, forKey: "medium")
                item.setValue([Int64.min, Int64.max, 0][index % 3], forKey: "large")
                item.setValue(Decimal(string: "12345678901234567890.123456789")! * Decimal(index), forKey: "amount")
                item.setValue([Double.nan, .infinity, -.infinity, 0.1, -2.5e-300][index % 5], forKey: "ratio")
                item.setValue(Float(index) / 3, forKey: "weight")
                item.setValue(index == 1 ? "" : "Ünïcødé, \"quoted\"\nline \(index)", forKey: "title")
                item.setValue(index % 2 == 0, forKey: "done")
                item.setValue(Date(timeIntervalSinceReferenceDate: -86_400.25 * Double(index * 1_000)), forKey: "due")
                item.setValue(
                    index == 2 ? Data() : Data((0..<(index * 7)).map { UInt8($0 * 37 % 256) }), forKey: "blob")
                item.setValue(
                    UUID(uuid: (UInt8(index), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)), forKey: "token")
                item.setValue(URL(string: "https://example.com/\(index)?q=a%20b"), forKey: "link")
                item.setValue(["a", "b", "\(index)"] as NSArray, forKey: "payload")
                item.mutableSetValue(forKey: "tags").addObjects(from: Array(tags.prefix(index % 4)))
                item.setValue(tags[index % 3], forKey: "favorite")
            }
            items.append(item)
        }
        list.mutableOrderedSetValue(forKey: "entries").addObjects(from: [items[4], items[1], items[5], items[0]])
        try context.save()
        return url
    }

    @Test func exportImportExportIsIdentical() throws {
        let original = try makeStore()
        let first = try Tool.run(["export", original.path])
        #expect(first.status == 0, "\(first.error)")
        let file = directory.file("export.json")
        try Data(first.output.utf8).write(to: file)

        let copy = directory.file("Copy.sqlite")
        let imported = try Tool.run(["import", copy.path, "--model", original.path, file.path])
        #expect(imported.status == 0, "\(imported.error)")
        #expect(imported.output.contains("imported 10 objects"))
        let second = try Tool.run(["export", copy.path])
        #expect(second.status == 0, "\(second.error)")
        #expect(second.output == first.output)

        // The document says what it holds: typed values and references by @id.
        let document = try #require(try JSONSerialization.jsonObject(with: Data(first.output.utf8)) as? [String: Any])
        let entities = try #require(document["entities"] as? [String: [[String: Any]]])
        #expect(entities["Item"]?.count == 4 && entities["SpecialItem"]?.count == 2)
        var byID: [String: [String: Any]] = [:]
        for object in entities.values.joined() { byID[object["@id"] as? String ?? ""] = object }
        // The ordered to-many keeps its order: items 4, 1, 5 and 0 by their titles.
        let entries = try #require(entities["List"]?.first?["entries"] as? [String])
        let titles = entries.map { byID[$0]?["title"] as? String ?? "nil" }
        #expect(titles == ["Ünïcødé, \"quoted\"\nline 4", "", "Ünïcødé, \"quoted\"\nline 5", "nil"])
        let item1 = try #require(byID.values.first { $0["title"] as? String == "" })
        #expect(item1["ratio"] as? String == "inf")
        #expect((item1["large"] as? NSNumber)?.int64Value == Int64.max)
        #expect(item1["due"] as? Double == -86_400.25 * 1_000)
        #expect((item1["tags"] as? [String])?.count == 1)
    }

    @Test func aFailedImportLeavesTheStoreAsItWas() throws {
        let original = try makeStore()
        let before = try Data(contentsOf: original)
        let bad = directory.file("bad.json")
        let document: [String: Any] = [
            "format": "coredata-export", "version": 1,
            "entities": ["Tag": [["@id": "Tag/1", "name": "x"], ["@id": "Tag/2", "name": 5]]],
        ]
        try JSONSerialization.data(withJSONObject: document).write(to: bad)
        let result = try Tool.run(["import", original.path, "--model", original.path, bad.path])
        #expect(result.status == 1)
        #expect(result.error == "coredata: \(bad.path): Tag/2.name: expected a string, found a number\n")
        #expect(try Data(contentsOf: original) == before)

        // Into a store that did not exist: no file is left behind.
        let fresh = directory.file("Fresh.sqlite")
        let dangling: [String: Any] = [
            "format": "coredata-export", "version": 1,
            "entities": ["Item": [["@id": "Item/1", "favorite": "Tag/9"]]],
        ]
        try JSONSerialization.data(withJSONObject: dangling).write(to: bad)
        let second = try Tool.run(["import", fresh.path, "--model", original.path, bad.path])
        #expect(second.status == 1)
        #expect(second.error.contains("Item/1.favorite: no object Tag/9 in the file"))
        #expect(!FileManager.default.fileExists(atPath: fresh.path))
    }
}
