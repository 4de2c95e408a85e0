import CoreData
import Foundation
import Testing

/// A transformer of the classic kind: the value forward to `Data`, back in reverse.
final class ReversedTextTransformer: ValueTransformer, @unchecked Sendable {
    static let name = NSValueTransformerName("TransformableTests.ReversedText")

    override func transformedValue(_ value: Any?) -> Any? {
        (value as? String).map { Data(String($0.reversed()).utf8) }
    }

    override func reverseTransformedValue(_ value: Any?) -> Any? {
        (value as? Data).map { String(String(decoding: $0, as: UTF8.self).reversed()) }
    }
}

/// A subclass of Apple's secure transformer, as apps register one for their own value classes.
final class StringListTransformer: NSSecureUnarchiveFromDataTransformer, @unchecked Sendable {
    static let name = NSValueTransformerName("TransformableTests.StringList")
    override class var allowedTopLevelClasses: [AnyClass] { [NSArray.self, NSString.self] }
}

/// Transformable attributes. NSSecureUnarchiveFromDataTransformer reference: it
/// "converts data to and from classes that support secure coding" — `transformedValue` unarchives
/// `Data`, `reverseTransformedValue` archives — and Core Data uses it (and its subclasses) in
/// reverse when it stores a value; a transformer of your own turns the value into `Data` forward
/// (NSAttributeDescription, `valueTransformerName`; Core Data Programming Guide, "Non-Standard
/// Persistent Attributes").
@Suite("Transformable attributes", .serialized)
struct TransformableTests {
    let directory = TemporaryDirectory()

    static let registered: Void = {
        ValueTransformer.setValueTransformer(ReversedTextTransformer(), forName: ReversedTextTransformer.name)
        ValueTransformer.setValueTransformer(StringListTransformer(), forName: StringListTransformer.name)
    }()

    static func model() -> NSManagedObjectModel {
        _ = registered
        let entity = NSEntityDescription()
        entity.name = "Note"
        let plain = CompanyModel.attribute("plain", .transformableAttributeType)
        let reversed = CompanyModel.attribute("reversed", .transformableAttributeType)
        reversed.valueTransformerName = ReversedTextTransformer.name.rawValue
        let list = CompanyModel.attribute("list", .transformableAttributeType)
        list.valueTransformerName = StringListTransformer.name.rawValue
        entity.properties = [plain, reversed, list]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }

    @Test("NSSecureUnarchiveFromDataTransformer unarchives forward and archives in reverse")
    func secureTransformerDirection() throws {
        let transformer = NSSecureUnarchiveFromDataTransformer()
        let archived = try #require(transformer.reverseTransformedValue(["a", "b"] as NSArray) as? Data)
        let decoded = try NSKeyedUnarchiver.unarchivedObject(ofClasses: [NSArray.self, NSString.self], from: archived)
        #expect(decoded as? [String] == ["a", "b"])
        #expect(transformer.transformedValue(archived) as? [String] == ["a", "b"])
        #expect(transformer.transformedValue(Data("not an archive".utf8)) == nil)
    }

    @Test("values survive save and refetch through the default, a custom and a secure-subclass transformer")
    func valuesSurviveSaveAndRefetch() throws {
        let url = directory.file("Notes.sqlite")
        do {
            let context = try sqliteStack(url, model: Self.model())
            let note = NSEntityDescription.insertNewObject(forEntityName: "Note", into: context)
            note.setValue(["k": [1, 2.5, "x"] as NSArray] as NSDictionary, forKey: "plain")
            note.setValue("stressed", forKey: "reversed")
            note.setValue(["x", "y"] as NSArray, forKey: "list")
            try context.save()
        }
        let context = try sqliteStack(url, model: Self.model())
        let note = try #require(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Note")).first)
        let plain = note.value(forKey: "plain") as? [String: Any]
        #expect((plain?["k"] as? [Any])?.count == 3)
        #expect((plain?["k"] as? [Any])?.last as? String == "x")
        #expect(note.value(forKey: "reversed") as? String == "stressed")
        #expect(note.value(forKey: "list") as? [String] == ["x", "y"])
        // What the store holds is what Apple's Core Data would read: the custom transformer's
        // forward output, and keyed archives Foundation's unarchiver reads.
        #expect(
            try sqlite3(url, "SELECT hex(ZREVERSED) FROM ZNOTE") == [
                Data("desserts".utf8).map { String(format: "%02X", $0) }.joined()
            ])
    }

    /// The same value is stored as the same bytes on every save (Foundation's archiver on Linux
    /// orders dictionary keys differently from call to call).
    @Test("a property-list value is archived the same way every time, and Foundation unarchives it")
    func deterministicArchives() throws {
        let url = directory.file("Notes.sqlite")
        let context = try sqliteStack(url, model: Self.model())
        for _ in 0..<5 {
            let note = NSEntityDescription.insertNewObject(forEntityName: "Note", into: context)
            note.setValue(["name": "Ada", "tags": ["a", "b"], "age": 36] as NSDictionary, forKey: "plain")
        }
        try context.save()
        let stored = try sqlite3(url, "SELECT DISTINCT hex(ZPLAIN) FROM ZNOTE")
        #expect(stored.count == 1)
        let hex = try #require(stored.first)
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        let decoded = try NSKeyedUnarchiver.unarchivedObject(
            ofClasses: [NSDictionary.self, NSArray.self, NSString.self, NSNumber.self], from: Data(bytes))
        let dictionary = decoded as? [String: Any]
        #expect(dictionary?["name"] as? String == "Ada")
        #expect(dictionary?["tags"] as? [String] == ["a", "b"])
        #expect((dictionary?["age"] as? NSNumber)?.intValue == 36)
    }
}
