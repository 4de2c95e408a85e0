import Foundation
import Testing

@testable import OpenCoreData

/// Inputs the fuzz targets (`Fuzz/`) found, each kept as a test of the rule it broke: a store,
/// model or property list from anywhere is read or refused with an error, never a trap.
@Suite("Fuzz findings")
struct FuzzFindingTests {
    let directory = TemporaryDirectory()

    /// An abstract entity has no objects of its own (NSEntityDescription, `isAbstract`), so a row
    /// whose `Z_ENT` names one is damage: the fetch throws instead of trapping while creating an
    /// object of an abstract entity.
    @Test func aRowNamingAnAbstractEntityIsAFetchError() throws {
        let model = AbstractWriterModel.make()
        let url = directory.file("Abstract.sqlite")
        let context = try sqliteStack(url, model: model)
        NSEntityDescription.insertNewObject(forEntityName: "Author", into: context).setValue("Ann", forKey: "name")
        try context.save()
        let writerNumber = try #require(
            try sqlite3(url, "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Writer'").first)
        _ = try sqlite3(url, "UPDATE ZWRITER SET Z_ENT = \(writerNumber)", readOnly: false)

        let fresh = try sqliteStack(url, model: model)
        let error = #expect(throws: NSError.self) {
            try fresh.fetch(NSFetchRequest<NSManagedObject>(entityName: "Writer"))
        }
        #expect(error?.code == NSCoreDataError)
        #expect(error?.localizedDescription.contains("abstract entity Writer") == true)
    }

    /// A start tag that never ends (`systemVersion="23E22tedClassName="User"`) is a parse error
    /// libxml2 recovers from; the model loaded with no entities. It is malformed XML.
    @Test func anUnendedStartTagIsMalformedXML() throws {
        let url = directory.file("Broken.xcdatamodel")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        let xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" systemVersion="23E22tedClassName="User" syncable="YES">
                <attribute name="name" attributeType="String"/>
                </entity>
            </model>
            """
        try Data(xml.utf8).write(to: url.appendingPathComponent("contents"))
        let error = #expect(throws: NSError.self) { try NSManagedObjectModel(validatingContentsOf: url) }
        #expect((error?.userInfo[NSDebugDescriptionErrorKey] as? String)?.contains("not well-formed XML") == true)
    }

    /// Found by the model fuzz target: an attribute without `=` crashed Foundation's `XMLParser`
    /// on Linux. Model files are checked as plain XML before Foundation reads them; a DOCTYPE
    /// (which could declare entities that expand without bound) is refused with the rest.
    @Test(
        "XML that is not plain and well-formed is refused before Foundation reads it",
        arguments: [
            ("<model><entity namecLocalTimestamp\" optional=\"YES\"/></model>", "without '='"),
            ("<!DOCTYPE model [<!ENTITY a \"aaaa\">]><model/>", "DOCTYPE"),
            ("<model><entity name=\"&lol;\"/></model>", "undeclared entity"),
            ("<model><entity name=\"A\" name=\"B\"/></model>", "repeats the attribute name"),
            ("<model></entity>", "not open"),
            ("<model/><model/>", "after its root element"),
            // Found by the model fuzz target: XMLDocument crashed on an unknown encoding.
            ("<?xml version=\"1.0\" encoding=\"UTF-6\"?><model/>", "utf-6"),
            // Found by the model fuzz target: libxml2 recovered past a NUL.
            ("<model><entity name=\"A\u{0}\"/></model>", "control character 0"),
        ])
    func notPlainXML(xml: String, expected: String) throws {
        let url = directory.file("Odd\(abs(xml.hashValue)).xcdatamodel")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try Data(xml.utf8).write(to: url.appendingPathComponent("contents"))
        let error = #expect(throws: NSError.self) { try NSManagedObjectModel(validatingContentsOf: url) }
        let message = error?.userInfo[NSDebugDescriptionErrorKey] as? String ?? ""
        #expect(message.contains("not well-formed XML") && message.contains(expected), "\(message)")
    }

    /// Xcode compiles a model with no entities; its archive decodes to an empty model.
    @Test func aModelWithoutEntitiesSurvivesCompiling() throws {
        let decoded = try CompiledModelDecoder.model(from: CompiledModelEncoder.archive(NSManagedObjectModel()))
        #expect(decoded.entities.isEmpty)
    }

    // MARK: Binary property lists

    /// A `bplist00` file of `objects` (each an encoded object), one-byte offsets and references,
    /// whose top object is the first.
    private static func binaryPlist(_ objects: [[UInt8]]) -> Data {
        var bytes = Array("bplist00".utf8)
        var offsets: [UInt8] = []
        for object in objects {
            offsets.append(UInt8(bytes.count))
            bytes += object
        }
        let table = bytes.count
        bytes += offsets
        bytes += [0, 0, 0, 0, 0, 0, 1, 1]
        bytes += [0, 0, 0, 0, 0, 0, 0, UInt8(objects.count)]
        bytes += [0, 0, 0, 0, 0, 0, 0, 0]
        bytes += [0, 0, 0, 0, 0, 0, 0, UInt8(table)]
        return Data(bytes)
    }

    @Test func aWellFormedBinaryPlistReadsAsFoundationReadsIt() throws {
        // {"a": [1, "b"]}
        let data = Self.binaryPlist([[0xD1, 1, 2], [0x51, 0x61], [0xA2, 3, 4], [0x10, 1], [0x51, 0x62]])
        let ours = try #require(try PropertyListReader.propertyList(from: data) as? [String: Any])
        let foundation = try #require(
            try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
        #expect(ours.keys.sorted() == foundation.keys.sorted())
        let list = try #require(ours["a"] as? [Any])
        #expect(list.first as? Int == 1)
        #expect(list.last as? String == "b")
    }

    /// Found by the archive fuzz target: Foundation's `PropertyListSerialization` on Linux crashes
    /// on a dictionary whose key is a set; the reader refuses it. Cycles and fan-out are refused too.
    static func damagedPlists() -> [[[UInt8]]] {
        let setKey: [[UInt8]] = [[0xD1, 1, 3], [0xC1, 2], [0x51, 0x78], [0x10, 1]]  // {{"x"}: 1}
        let selfContaining: [[UInt8]] = [[0xA1, 0]]  // an array containing itself
        let missing: [[UInt8]] = [[0xA1, 9]]  // a reference past the object table
        let longString: [[UInt8]] = [[0x5F, 0x10, 200]]  // a string longer than the file
        let hugeUID: [[UInt8]] = [[0x87, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]]  // past Int.max
        // Each array holds the next one twice, 25 deep: 2²⁵ values.
        var fanOut: [[UInt8]] = []
        for level in 0..<24 { fanOut.append([0xA2, UInt8(level + 1), UInt8(level + 1)]) }
        fanOut.append([0x10, 1])
        return [setKey, selfContaining, missing, longString, hugeUID, fanOut]
    }

    /// Found by the archive fuzz target: Foundation's `PropertyListSerialization` on Linux crashes
    /// on a dictionary whose key is a set; the reader refuses it. Cycles and fan-out are refused too.
    @Test("damaged binary property lists are errors", arguments: damagedPlists())
    func damagedBinaryPlists(objects: [[UInt8]]) throws {
        let data = Self.binaryPlist(objects)
        #expect(throws: PropertyListReader.Problem.self) { try PropertyListReader.propertyList(from: data) }
    }

    /// Found by the archive fuzz target: Foundation reads any "bplist" header as binary, and
    /// crashed on a damaged "bplist0p" one; every such header is ours to read or refuse.
    @Test func anyBinaryHeaderIsReadHere() throws {
        var data = Self.binaryPlist([[0xD1, 1, 2], [0x51, 0x61], [0x10, 1]])
        data[7] = UInt8(ascii: "p")
        #expect(throws: PropertyListReader.Problem.self) { try PropertyListReader.propertyList(from: data) }
    }

    @Test func truncatingABinaryPlistAnywhereIsAnError() throws {
        let data = Self.binaryPlist([[0xD1, 1, 2], [0x51, 0x61], [0xA2, 3, 4], [0x10, 1], [0x51, 0x62]])
        for length in 0..<data.count {
            _ = try? PropertyListReader.propertyList(from: data.prefix(length))
        }
    }
}
