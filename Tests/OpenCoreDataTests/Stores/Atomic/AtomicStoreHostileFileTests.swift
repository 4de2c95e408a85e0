import CoreData
import Foundation
import Testing

/// Damaged and hostile XML and binary store files: every one is refused with a Cocoa
/// error when the store is added — `NSFileReadCorruptFileError` (259, "The file isn’t in the
/// correct format", Foundation's Cocoa error codes) for a file that is not a store of the type —
/// never a crash, a hang or memory in proportion to a count the file claims.
@Suite("Hostile atomic store files")
struct AtomicStoreHostileFileTests {
    let directory = TemporaryDirectory()

    init() { _ = StoreKind.registered }

    /// A valid store of `kind` with a few objects, as bytes.
    func validStore(_ kind: StoreKind) throws -> Data {
        let url = directory.file("valid-\(UUID().uuidString).\(kind.rawValue)")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        try coordinator.addPersistentStore(ofType: kind.type, configurationName: nil, at: url)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let owner = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: context)
        owner.setValue("Ada", forKey: "name")
        for n in 1...3 {
            let thing = NSEntityDescription.insertNewObject(forEntityName: "Thing", into: context)
            for (key, value) in ConformanceModel.values(n) { thing.setValue(value, forKey: key) }
            thing.setValue(owner, forKey: "owner")
        }
        try context.save()
        return try Data(contentsOf: url)
    }

    /// The error adding a store of `kind` over `bytes` gives, or `nil` when it opens.
    func openError(_ kind: StoreKind, _ bytes: Data) -> NSError? {
        let url = directory.file("hostile-\(UUID().uuidString).\(kind.rawValue)")
        try? bytes.write(to: url)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        do {
            try coordinator.addPersistentStore(ofType: kind.type, configurationName: nil, at: url)
            return nil
        } catch {
            return error as NSError
        }
    }

    func expectCorrupt(
        _ kind: StoreKind, _ bytes: Data, _ reason: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let error = openError(kind, bytes)
        #expect(error?.domain == NSCocoaErrorDomain, sourceLocation: sourceLocation)
        #expect(error?.code == NSFileReadCorruptFileError, sourceLocation: sourceLocation)
        let said = (error?.userInfo["reason"] as? String) ?? ""
        #expect(said.contains(reason), "\(said)", sourceLocation: sourceLocation)
    }

    @Test(
        "A store cut short at any byte is an error or, cut only in trailing space, the whole store",
        arguments: [StoreKind.xml, .binary])
    func truncated(kind: StoreKind) throws {
        let bytes = try validStore(kind)
        for length in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 400)) {
            let prefix = bytes.prefix(length)
            if let error = openError(kind, Data(prefix)) {
                #expect(error.domain == NSCocoaErrorDomain)
                #expect(error.code == NSFileReadCorruptFileError)
            } else {
                // Only whitespace after the root element may go.
                #expect(
                    bytes[length...].allSatisfy { $0 == 0x0A || $0 == 0x20 }, "opened at \(length) of \(bytes.count)")
            }
        }
    }

    @Test("Flipped bytes in a binary store never crash the reader")
    func flippedBytes() throws {
        let bytes = [UInt8](try validStore(.binary))
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            var damaged = bytes
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                damaged[Int.random(in: 0..<damaged.count, using: &generator)] = UInt8.random(
                    in: 0...255, using: &generator)
            }
            if let error = openError(.binary, Data(damaged)) { #expect(error.domain == NSCocoaErrorDomain) }
        }
    }

    static let header = """
        <?xml version="1.0"?>
        <!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">
        <database><databaseInfo><version>134481920</version><UUID>0E82928F-05F0-40AF-851B-1FA617A37DB3</UUID><nextObjectID>110</nextObjectID><metadata></metadata></databaseInfo>
        """

    @Test("Malformed, hostile or inconsistent XML stores are refused with the reason")
    func hostileXML() {
        let cases: [(String, String)] = [
            ("<database>", "ends inside <database>"),
            (
                Self.header
                    + "<object type=\"THING\" id=\"z101\"><attribute name=\"i16\" type=\"int16\">seven</attribute></object></database>",
                "is not a int16"
            ),
            (
                Self.header
                    + "<object type=\"THING\" id=\"z101\"><attribute name=\"when\" type=\"date\">yesterday</attribute></object></database>",
                "is not a date"
            ),
            (
                Self.header
                    + "<object type=\"THING\" id=\"z101\"><attribute name=\"uid\" type=\"uuid\">not-a-uuid</attribute></object></database>",
                "is not a uuid"
            ),
            (Self.header + "<object type=\"GHOST\" id=\"z101\"></object></database>", "which the model does not have"),
            (
                Self.header
                    + "<object type=\"THING\" id=\"101\"></object><object type=\"THING\" id=\"z101\"></object></database>",
                "two objects"
            ),
            (Self.header + "<object type=\"THING\" id=\"zebra\"></object></database>", "is not zN"),
            (
                Self.header
                    + "<object type=\"THING\" id=\"z101\"><relationship name=\"owner\" idrefs=\"z999\"></relationship></object></database>",
                "does not hold"
            ),
            (
                Self.header
                    + "<object type=\"THING\" id=\"z101\"><relationship name=\"owner\" idrefs=\"z102\"></relationship></object><object type=\"LABEL\" id=\"z102\"></object></database>",
                "not a Owner"
            ),
            (
                Self.header
                    + "<object type=\"OWNER\" id=\"z101\"></object><object type=\"THING\" id=\"z102\"><relationship name=\"owner\" idrefs=\"z101 z101\"></relationship></object></database>",
                "several destinations"
            ),
            (
                Self.header
                    + "<object type=\"THING\" id=\"z101\"><relationship name=\"i16\" idrefs=\"\"></relationship></object></database>",
                "which it is not"
            ),
            (
                "<?xml version=\"1.0\"?><!DOCTYPE database [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">]><database>&b;</database>",
                "declares entities"
            ),
            ("<database><databaseInfo>&xxe;</databaseInfo></database>", "undeclared entity"),
            (String(repeating: "<a>", count: 100_000) + String(repeating: "</a>", count: 100_000), "deeper than"),
            ("<database></database>", "no databaseInfo"),
            ("<?xml version=\"1.0\" encoding=\"UTF-16\"?><database/>", "utf-16"),
            ("<plist></plist>", "no <database> root element"),
            (
                Self.header.replacingOccurrences(
                    of: "<metadata></metadata>",
                    with: "<metadata><plist><dict><key>k</key><object/></dict></plist></metadata>") + "</database>",
                "metadata element"
            ),
            (
                Self.header.replacingOccurrences(
                    of: "<metadata></metadata>", with: "<metadata><plist><array/></plist></metadata>") + "</database>",
                "not a dictionary"
            ),
        ]
        for (text, reason) in cases {
            expectCorrupt(.xml, Data(text.utf8), reason)
        }
        expectCorrupt(.xml, Data([0x3C, 0xFF, 0xFE]), "not UTF-8")
    }

    /// Varint bytes of `value`.
    static func varint(_ value: UInt64) -> [UInt8] {
        var value = value
        var bytes: [UInt8] = []
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        return bytes + [UInt8(value)]
    }

    /// A binary store whose entity table and objects are `body`, with an empty metadata plist.
    static func binary(_ body: [UInt8], end: Bool = true) throws -> Data {
        let plist = try PropertyListSerialization.data(
            fromPropertyList: [NSStoreUUIDKey: "0E82928F-05F0-40AF-851B-1FA617A37DB3"], format: .binary, options: 0)
        var bytes = Array("OCDBIN01".utf8) + varint(UInt64(plist.count)) + [UInt8](plist) + varint(200)
        bytes += body
        if end { bytes += Array("OCDBEND1".utf8) }
        return Data(bytes)
    }

    static func string(_ text: String) -> [UInt8] { varint(UInt64(text.utf8.count)) + Array(text.utf8) }

    @Test("Malformed, hostile or inconsistent binary stores are refused with the reason")
    func hostileBinary() throws {
        let thing = Self.string("Thing") + Self.varint(1) + Self.string("i16")
        let cases: [([UInt8], String)] = [
            (Self.varint(1 << 60), "counts"),
            (Self.varint(1) + Self.string("Ghost") + Self.varint(0) + Self.varint(0), "which the model does not have"),
            (
                Self.varint(1) + thing + Self.varint(1) + Self.varint(0) + Self.varint(2) + [6] + Self.string("seven"),
                "holds a string for the i16 attribute"
            ),
            (Self.varint(1) + thing + Self.varint(1) + Self.varint(5) + Self.varint(2) + [1, 14], "entity 5 of 1"),
            (Self.varint(1) + thing + Self.varint(1) + Self.varint(0) + Self.varint(2) + [99], "unknown kind 99"),
            (
                Self.varint(1) + thing + Self.varint(1) + Self.varint(0) + Self.varint(2) + [8] + Self.varint(1 << 40),
                "counts"
            ),
            (
                Self.varint(1) + thing + Self.varint(2) + Self.varint(0) + Self.varint(2) + [1, 2] + Self.varint(0)
                    + Self.varint(2) + [1, 4], "two objects"
            ),
            (Self.varint(1) + thing + Self.varint(1) + Self.varint(0) + Self.varint(2) + [1, 2, 0xAA], "bytes after"),
            (Self.varint(1) + [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80], "does not end"),
            (Self.varint(1) + Self.string("Thing") + Self.varint(1) + [0x02, 0xFF, 0xFE], "not UTF-8"),
        ]
        for (body, reason) in cases {
            expectCorrupt(.binary, try Self.binary(body), reason)
        }
        expectCorrupt(.binary, try Self.binary(Self.varint(0) + Self.varint(0), end: false), "no end marker")
        expectCorrupt(
            .binary, Data("OCDBIN01".utf8) + Data([0x05, 1, 2]) + Data("OCDBEND1".utf8), "unreadable metadata")
        expectCorrupt(.binary, Data("OCDBIN01\u{03}abcOCDBEND1".utf8), "unreadable metadata")
        expectCorrupt(.binary, Data("SQLite format 3\0".utf8), "not a binary store")
    }

    @Test("A directory at the store's URL is refused, never read or written", arguments: [StoreKind.xml, .binary])
    func directoryAtURL(kind: StoreKind) throws {
        let url = directory.file("folder.\(kind.rawValue)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        #expect(throws: (any Error).self) {
            try coordinator.addPersistentStore(ofType: kind.type, configurationName: nil, at: url)
        }
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue)
    }
}
