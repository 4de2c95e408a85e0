import Foundation
import Testing

@testable import OpenCoreData

/// The XML store in Apple's XML store format. Xcode's `.xcmappingmodel/xcmapping.xml`
/// files are XML stores written by Apple's Core Data (Core Data Model Versioning and Data
/// Migration Programming Guide, "Mapping Overview": Xcode edits mapping models as Core Data
/// documents), so the fixtures' real ones are read back here, object by object.
@Suite("XML store")
struct XMLStoreTests {
    let directory = TemporaryDirectory()

    static let mappingFiles = [
        "stores/coredataplus-samplemodel/SampleModel/MappingModels/V2toV3.xcmappingmodel/xcmapping.xml",
        "stores/objcio-moody-migrations/mappings/Moody 2-Moody 3.xcmappingmodel/xcmapping.xml",
        "stores/objcio-moody-migrations/mappings/Moody 3-Moody 4.xcmappingmodel/xcmapping.xml",
        "stores/objcio-moody-migrations/mappings/Moody 4-Moody 5.xcmappingmodel/xcmapping.xml",
        "stores/objcio-moody-migrations/mappings/Moody 5-Moody 6.xcmappingmodel/xcmapping.xml",
    ]

    func open(_ url: URL, readOnly: Bool = true) throws -> NSManagedObjectContext {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: XcodeMappingFile.model)
        try coordinator.addPersistentStore(
            ofType: NSXMLStoreType, configurationName: nil, at: url,
            options: [NSIgnorePersistentStoreVersioningOption: true, NSReadOnlyPersistentStoreOption: readOnly])
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    func all(_ context: NSManagedObjectContext, _ entity: String) throws -> [NSManagedObject] {
        try context.fetch(NSFetchRequest<NSManagedObject>(entityName: entity))
    }

    /// What the file says, read with regular expressions independently of the store: each
    /// object's type and id, and its string attributes.
    struct Scan {
        var types: [String: String] = [:]
        var strings: [String: [String: String]] = [:]
        var idrefs: [String: [String: [String]]] = [:]

        init(_ text: String) {
            let object = try! Regex(#"<object type="(\w+)" id="(\w+)">([\s\S]*?)</object>"#)
            let string = try! Regex(#"<attribute name="(\w+)" type="string">([^<]*)</attribute>"#)
            let relation = try! Regex(#"<relationship name="(\w+)"[^>]*?(?: idrefs="([^"]*)")?></relationship>"#)
            for match in text.matches(of: object) {
                let id = String(match.output[2].substring!)
                types[id] = String(match.output[1].substring!)
                let body = String(match.output[3].substring!)
                for attribute in body.matches(of: string) {
                    strings[id, default: [:]][String(attribute.output[1].substring!)] = String(
                        attribute.output[2].substring!)
                }
                for relationship in body.matches(of: relation) {
                    idrefs[id, default: [:]][String(relationship.output[1].substring!)] =
                        relationship.output[2].substring.map { $0.split(separator: " ").map(String.init) } ?? []
                }
            }
        }
    }

    @Test("Xcode's xcmapping.xml files load as XML stores and read back every object", arguments: mappingFiles)
    func realMappingFiles(path: String) throws {
        guard let root = Fixtures.root() else { return }
        let url = root.appendingPathComponent(path)
        let text = try String(contentsOf: url, encoding: .utf8)
        let scan = Scan(text)
        let context = try open(url)
        let store = try #require(context.persistentStoreCoordinator?.persistentStores.first)
        let uuid = try #require(text.firstMatch(of: try Regex(#"<UUID>([0-9A-F-]+)</UUID>"#))?.output[1].substring)
        #expect(store.identifier == String(uuid))
        #expect((store.metadata[NSStoreModelVersionHashesKey] as? [String: Data])?.count == 5)
        var seen = 0
        for entity in ["XDDevMappingModel", "XDDevEntityMapping", "XDDevAttributeMapping", "XDDevRelationshipMapping"] {
            let request = NSFetchRequest<NSManagedObject>(entityName: entity)
            request.includesSubentities = false
            for object in try context.fetch(request) {
                seen += 1
                let id = "z\(object.objectID.uriRepresentation().lastPathComponent.dropFirst())"
                #expect(scan.types[id] == entity.uppercased())
                for (name, value) in scan.strings[id] ?? [:] {
                    let property = try #require(object.entity.attributesByName.keys.first { $0.lowercased() == name })
                    #expect(object.value(forKey: property) as? String == value, "\(id).\(name)")
                }
                for (name, references) in scan.idrefs[id] ?? [:] {
                    let property = try #require(
                        object.entity.relationshipsByName.keys.first { $0.lowercased() == name })
                    let value = object.value(forKey: property)
                    let related =
                        (value as? Set<NSManagedObject>).map(Array.init) ?? (value as? NSManagedObject).map { [$0] }
                        ?? []
                    let ids = related.map { "z\($0.objectID.uriRepresentation().lastPathComponent.dropFirst())" }
                    #expect(Set(ids) == Set(references), "\(id).\(name)")
                }
            }
        }
        #expect(seen == scan.types.count)
        let model = try #require(try all(context, "XDDevMappingModel").first)
        #expect((model.value(forKey: "sourceModelData") as? Data)?.starts(with: Array("bplist00".utf8)) == true)
        let mappings = try #require(model.value(forKey: "entityMappings") as? Set<NSManagedObject>)
        #expect(mappings.count == scan.types.values.filter { $0 == "XDDEVENTITYMAPPING" }.count)
    }

    @Test("An XML store saved here keeps an Apple-written file's objects and values")
    func rewritingAnAppleFile() throws {
        guard let root = Fixtures.root() else { return }
        let url = directory.file("xcmapping.xml")
        try FileManager.default.copyItem(at: root.appendingPathComponent(Self.mappingFiles[1]), to: url)
        let before = Scan(try String(contentsOf: url, encoding: .utf8))
        let context = try open(url, readOnly: false)
        let continent = try #require(
            try all(context, "XDDevEntityMapping").first { $0.value(forKey: "sourceName") as? String == "Continent" })
        continent.setValue("ContinentPolicy", forKey: "migrationPolicyClassName")
        try context.save()
        let after = Scan(try String(contentsOf: url, encoding: .utf8))
        #expect(after.types == before.types)
        var expected = before.strings
        expected["z107"]?["migrationpolicyclassname"] = "ContinentPolicy"
        #expect(after.strings == expected)
        #expect(after.idrefs.mapValues { $0.mapValues(Set.init) } == before.idrefs.mapValues { $0.mapValues(Set.init) })
        let reread = try open(url)
        let data = try #require(
            try all(reread, "XDDevMappingModel").first?.value(forKey: "destinationModelData") as? Data)
        let originalContext = try open(root.appendingPathComponent(Self.mappingFiles[1]))
        let original = try #require(
            try all(originalContext, "XDDevMappingModel").first?.value(forKey: "destinationModelData") as? Data)
        #expect(data == original)
    }

    /// Apple's XML and binary stores write their file when they are added, before any save (a
    /// Core Data stack library's test looks for the file right after `loadPersistentStores`).
    @Test("A new XML or binary store writes its file when it is added; it opens again with the same UUID")
    func newStoreWritesItsFileAtAdd() throws {
        for (type, name) in [(NSXMLStoreType, "New.xml"), (NSBinaryStoreType, "New.binary")] {
            let url = directory.file(name)
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompanyModel.make())
            let store = try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url, options: nil)
            #expect(FileManager.default.fileExists(atPath: url.path), "\(type)")
            let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(
                ofType: type, at: url, options: nil)
            #expect(metadata[NSStoreUUIDKey] as? String == store.identifier)
            #expect(metadata[NSStoreTypeKey] as? String == type)
        }
    }

    @Test("Files are written as Apple writes them: DOCTYPE, upper-case types, lower-case names, zN ids, min/max counts")
    func appleLayout() throws {
        _ = StoreKind.registered
        let url = directory.file("store.xml")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        let store = try coordinator.addPersistentStore(ofType: NSXMLStoreType, configurationName: nil, at: url)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let owner = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: context)
        owner.setValue("Ada", forKey: "name")
        let thing = NSEntityDescription.insertNewObject(forEntityName: "Thing", into: context)
        thing.setValue(Int16(7), forKey: "i16")
        thing.setValue(true, forKey: "flag")
        thing.setValue(Date(timeIntervalSinceReferenceDate: 1.5), forKey: "when")
        thing.setValue("a < b & \"c\"\r", forKey: "str")
        thing.setValue(owner, forKey: "owner")
        try context.save()
        let text = try String(contentsOf: url, encoding: .utf8)
        #expect(
            text.hasPrefix(
                "<?xml version=\"1.0\" standalone=\"yes\"?>\n<!DOCTYPE database SYSTEM \"file:///System/Library/DTDs/CoreData.dtd\">\n\n<database>\n    <databaseInfo>\n        <version>134481920</version>\n        <UUID>\(store.identifier!)</UUID>\n        <nextObjectID>102</nextObjectID>"
            ))
        #expect(text.contains("<object type=\"THING\" id=\"z102\">"))
        #expect(text.contains("<attribute name=\"i16\" type=\"int16\">7</attribute>"))
        #expect(text.contains("<attribute name=\"flag\" type=\"bool\">1</attribute>"))
        #expect(text.contains("<attribute name=\"when\" type=\"date\">1.5</attribute>"))
        #expect(text.contains("<attribute name=\"str\" type=\"string\">a &lt; b &amp; &quot;c&quot;&#13;</attribute>"))
        #expect(
            text.contains(
                "<relationship name=\"owner\" type=\"1/1\" destination=\"OWNER\" idrefs=\"z101\"></relationship>"))
        #expect(
            text.contains(
                "<relationship name=\"things\" type=\"0/0\" destination=\"THING\" idrefs=\"z102\"></relationship>"))
        #expect(text.contains("<relationship name=\"labels\" type=\"0/0\" destination=\"LABEL\"></relationship>"))
        #expect(text.contains("<key>NSStoreModelVersionHashes</key>"))
        #expect(!text.contains("<key>NSStoreUUID</key>"))
        #expect(text.hasSuffix("</database>\n"))
    }
}
