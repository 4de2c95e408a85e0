import Foundation
import Testing

@testable import OpenCoreData

/// A transformable value is an `NSKeyedArchiver` archive read back with
/// `NSSecureUnarchiveFromDataTransformer` (its reference: "converts data to and from classes that
/// support secure coding"). The archive comes from a store file, which can be damaged or hostile,
/// and Foundation's unarchiver on Linux traps on many malformed archives — the store fuzz target
/// found a value whose `$class` named a string, and flipped bytes in a binary store a set in the
/// property list, a class named `NSObject` and a dictionary key of `$null`. Archives of
/// Foundation's classes are decoded by the library's own reader; others are checked before
/// Foundation sees them. A malformed archive makes the transformer answer nil, as it does for any
/// archive it cannot read (and the store then keeps the bytes, `Transformable.decode`).
@Suite("Transformable values: hostile archives")
struct HostileArchiveTests {
    /// An XML keyed archive: `$objects` as given, the root at `root`.
    static func archive(_ objects: String, root: Int = 1) -> Data {
        Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
            <key>$archiver</key><string>NSKeyedArchiver</string>
            <key>$version</key><integer>100000</integer>
            <key>$top</key><dict><key>root</key><dict><key>CF$UID</key><integer>\(root)</integer></dict></dict>
            <key>$objects</key><array><string>$null</string>\(objects)</array>
            </dict></plist>
            """.utf8)
    }

    static let allowed = NSSecureUnarchiveFromDataTransformer.allowedTopLevelClasses

    static func passesCheck(_ data: Data) -> Bool {
        KeyedArchive.checkedForUnarchiver(data, allowedClasses: allowed) != nil
    }

    static func uid(_ index: Int) -> String { "<dict><key>CF$UID</key><integer>\(index)</integer></dict>" }

    /// `NSArray` of one string, as an archiver lays it out.
    static let array =
        "<dict><key>NS.objects</key><array>\(uid(2))</array><key>$class</key>\(uid(3))</dict>"
        + "<string>hello</string>"
        + "<dict><key>$classname</key><string>NSArray</string><key>$classes</key><array><string>NSArray</string><string>NSObject</string></array></dict>"

    @Test("a well-formed archive of allowed classes is read")
    func wellFormedIsRead() {
        #expect(Self.passesCheck(Self.archive(Self.array)))
        let value = NSSecureUnarchiveFromDataTransformer().transformedValue(Self.archive(Self.array))
        #expect(
            (value as? [Any])?.first as? String == "hello" || (value as? NSArray)?.firstObject as? String == "hello")
    }

    @Test(
        "a malformed archive is refused before Foundation's unarchiver sees it",
        arguments: [
            // `$class` naming a string (the fuzz finding), and naming nothing.
            "<dict><key>$class</key>\(uid(2))<key>text</key>\(uid(2))</dict><string>not a class</string>",
            "<dict><key>text</key>\(uid(2))</dict><string>x</string>",
            // A reference past the end of `$objects`.
            "<dict><key>NS.objects</key><array>\(uid(9))</array><key>$class</key>\(uid(2))</dict>"
                + "<dict><key>$classname</key><string>NSArray</string><key>$classes</key><array><string>NSArray</string></array></dict>",
            // An array that contains itself.
            "<dict><key>NS.objects</key><array>\(uid(1))</array><key>$class</key>\(uid(2))</dict>"
                + "<dict><key>$classname</key><string>NSArray</string><key>$classes</key><array><string>NSArray</string></array></dict>",
            // A class description naming a class that is not allowed (flipped bytes in a binary
            // store found both: Foundation's unarchiver traps on them).
            "<dict><key>NS.objects</key><array/><key>$class</key>\(uid(2))</dict>"
                + "<dict><key>$classname</key><string>NSObject</string><key>$classes</key><array><string>NSObject</string></array></dict>",
            "<dict><key>NS.objects</key><array/><key>$class</key>\(uid(2))</dict>"
                + "<dict><key>$classname</key><string>NSKeyedArchiver</string><key>$classes</key><array><string>NSObject</string></array></dict>",
            // A class name that is no class name at all.
            "<dict><key>NS.objects</key><array/><key>$class</key>\(uid(2))</dict>"
                + "<dict><key>$classname</key><string>$s4main3FooCN</string><key>$classes</key><array><string>NSObject</string></array></dict>",
            // A class description without `$classes`.
            "<dict><key>NS.objects</key><array/><key>$class</key>\(uid(2))</dict>"
                + "<dict><key>$classname</key><string>NSArray</string></dict>",
        ])
    func malformedIsRefused(_ objects: String) {
        let data = Self.archive(objects)
        #expect(!Self.passesCheck(data))
        #expect(NSSecureUnarchiveFromDataTransformer().transformedValue(data) == nil)
    }

    @Test("a binary archive holding a property-list set is refused (Foundation's reader crashes on one)")
    func propertyListSetIsRefused() throws {
        let data = try #require(CompiledModelEncoder.plainArchive(["w1", "x"]))
        #expect(Self.passesCheck(data))
        // The two-element `$classes` array (marker 0xA2, before the string "NSArray") becomes a set (0xC2).
        var bytes = [UInt8](data)
        let name = Array("NSArray".utf8)
        let classes = try #require(
            (name.count..<bytes.count).last { bytes[$0] == 0xA2 && Array(bytes[($0 - name.count)..<$0]) == name })
        bytes[classes] = 0xC2
        #expect(!Self.passesCheck(Data(bytes)))
        #expect(NSSecureUnarchiveFromDataTransformer().transformedValue(Data(bytes)) == nil)
    }

    @Test("a subclass of an allowed class is read; a class the transformer does not allow is not")
    func classesAreChecked() throws {
        let mutable =
            "<dict><key>NS.objects</key><array>\(Self.uid(2))</array><key>$class</key>\(Self.uid(3))</dict>"
            + "<string>hello</string>"
            + "<dict><key>$classname</key><string>NSMutableArray</string><key>$classes</key><array><string>NSMutableArray</string><string>NSArray</string><string>NSObject</string></array></dict>"
        #expect(Self.passesCheck(Self.archive(mutable)))
        let point = try NSKeyedArchiver.archivedData(
            withRootObject: ArchivedPoint(x: 3), requiringSecureCoding: true)
        #expect(NSSecureUnarchiveFromDataTransformer().transformedValue(point) == nil)
        #expect((PointTransformer().transformedValue(point) as? ArchivedPoint)?.x == 3)
    }

    /// Values of every Foundation class the default transformer allows, nested in the ways
    /// archives nest them.
    static var plainValues: [Any] {
        [
            "text", NSMutableString(string: "mutable"), 42, 2.5, true, Data([1, 2, 3]),
            NSMutableData(data: Data([4])), Date(timeIntervalSinceReferenceDate: 700_000_000.25),
            UUID(uuidString: "0E82928F-05F0-40AF-851B-1FA617A37DB3")!, URL(string: "https://example.org/a?b=c")!,
            URL(string: "c/d", relativeTo: URL(string: "https://example.org/a/"))!, NSNull(),
            ["a", 1, ["nested": [true, 0.5]]] as NSArray, NSMutableArray(array: ["m"]), NSSet(array: ["s", 2]),
            ["k": "v", "n": 3, "list": ["x"]] as NSDictionary, NSMutableDictionary(dictionary: ["z": NSNull()]),
        ]
    }

    @Test(
        "Foundation's classes decode here to what Foundation's unarchiver gives",
        arguments: 0..<17)
    func plainValuesMatchFoundation(_ index: Int) throws {
        let value = Self.plainValues[index]
        let data = try NSKeyedArchiver.archivedData(withRootObject: value, requiringSecureCoding: true)
        let theirs = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClasses: Self.allowed, from: data))
        let ours = try #require(NSSecureUnarchiveFromDataTransformer().transformedValue(data))
        #expect(Self.plainValues.count == 17)
        #expect(NSArray(array: [ours]).isEqual(NSArray(array: [theirs])), "\(ours) ≠ \(theirs)")
    }

    @Test("the archives this library writes for transformable values decode to the value written")
    func plainArchivesRoundTrip() throws {
        let value: [String: Any] = [
            "when": Date(timeIntervalSinceReferenceDate: 5),
            "id": UUID(uuidString: "0E82928F-05F0-40AF-851B-1FA617A37DB3")!,
            "link": URL(string: "https://example.org")!, "amount": Decimal(string: "12.75")!,
            "list": [1, 2.5, "three", false], "bytes": Data([9]),
        ]
        for (key, item) in value {
            let data = try #require(CompiledModelEncoder.plainArchive(item))
            #expect(NSSecureUnarchiveFromDataTransformer().transformedValue(data) != nil, "\(key)")
        }
        let data = try #require(CompiledModelEncoder.plainArchive(value))
        let decoded = try #require(NSSecureUnarchiveFromDataTransformer().transformedValue(data) as? [String: Any])
        #expect(decoded["when"] as? Date == Date(timeIntervalSinceReferenceDate: 5))
        #expect(decoded["id"] as? UUID == UUID(uuidString: "0E82928F-05F0-40AF-851B-1FA617A37DB3"))
        #expect(decoded["link"] as? URL == URL(string: "https://example.org"))
        #expect(decoded["amount"] as? Decimal == Decimal(string: "12.75"))
        #expect(decoded["bytes"] as? Data == Data([9]))
        let list = try #require(decoded["list"] as? [Any])
        #expect(list.count == 4)
        #expect(list.first as? Int == 1)
        #expect(list.dropFirst().first as? Double == 2.5)
        #expect(list.dropFirst(2).first as? String == "three")
        #expect(list.last as? Bool == false)
    }

    @Test("an archive of Foundation's classes is decoded here even beside a description of a class nothing uses")
    func unusedDescriptionsPlayNoPart() {
        // A dictionary holding a decimal in this library's form, which Foundation's unarchiver
        // cannot read (it crashes on the nil it makes of it), and a description of an app's class
        // no object names: flipped bytes made such an archive, and it must not go to Foundation.
        let objects =
            "<dict><key>NS.keys</key><array>\(Self.uid(2))</array><key>NS.objects</key><array>\(Self.uid(3))</array>"
            + "<key>$class</key>\(Self.uid(6))</dict><string>amount</string>"
            + "<dict><key>NS.decimal</key>\(Self.uid(4))<key>$class</key>\(Self.uid(5))</dict><string>12.75</string>"
            + "<dict><key>$classname</key><string>NSDecimalNumber</string><key>$classes</key><array><string>NSDecimalNumber</string><string>NSNumber</string></array></dict>"
            + "<dict><key>$classname</key><string>NSDictionary</string><key>$classes</key><array><string>NSDictionary</string></array></dict>"
            + "<dict><key>$classname</key><string>OpenCoreDataTests.ArchivedPoint</string><key>$classes</key><array><string>NSObject</string></array></dict>"
        let decoded = PointTransformer.withDecimals.transformedValue(Self.archive(objects)) as? [String: Any]
        #expect(decoded?["amount"] as? Decimal == Decimal(string: "12.75"))
    }

    @Test("a dictionary whose key is $null is refused (flipped bytes found Foundation's unarchiver crashing on one)")
    func dictionaryWithNullKeyIsRefused() {
        let objects =
            "<dict><key>NS.keys</key><array>\(Self.uid(0))</array><key>NS.objects</key><array>\(Self.uid(2))</array>"
            + "<key>$class</key>\(Self.uid(3))</dict><string>value</string>"
            + "<dict><key>$classname</key><string>NSDictionary</string><key>$classes</key><array><string>NSDictionary</string><string>NSObject</string></array></dict>"
        #expect(Self.passesCheck(Self.archive(objects)))
        #expect(NSSecureUnarchiveFromDataTransformer().transformedValue(Self.archive(objects)) == nil)
    }

    @Test(
        "a dictionary whose NS.objects became $classname, or a value naming a class description, is refused (flipped bytes found Foundation's unarchiver reading past a dictionary's objects)"
    )
    func classDescriptionInPlaceOfValueIsRefused() {
        let pointClass =
            "<dict><key>$classname</key><string>OpenCoreDataTests.ArchivedPoint</string><key>$classes</key><array><string>OpenCoreDataTests.ArchivedPoint</string><string>NSObject</string></array></dict>"
        let dictionaryClass =
            "<dict><key>$classname</key><string>NSDictionary</string><key>$classes</key><array><string>NSDictionary</string><string>NSObject</string></array></dict>"
        let arrayClass =
            "<dict><key>$classname</key><string>NSArray</string><key>$classes</key><array><string>NSArray</string><string>NSObject</string></array></dict>"
        // The archive the flipped bytes made: [point, ["inner": point] with its NS.objects key
        // renamed $classname, "text"]; Foundation's unarchiver crashed on it.
        let damaged =
            "<dict><key>$class</key>\(Self.uid(9))<key>NS.objects</key><array>\(Self.uid(2))\(Self.uid(4))\(Self.uid(8))</array></dict>"
            + "<dict><key>x</key><integer>1</integer><key>$class</key>\(Self.uid(3))</dict>" + pointClass
            + "<dict><key>$class</key>\(Self.uid(7))<key>NS.keys</key><array>\(Self.uid(5))</array><key>$classname</key><array>\(Self.uid(6))</array></dict>"
            + "<string>inner</string><dict><key>x</key><integer>2</integer><key>$class</key>\(Self.uid(3))</dict>"
            + dictionaryClass + "<string>text</string>" + arrayClass
        #expect(PointTransformer().transformedValue(Self.archive(damaged)) == nil)
        #expect(NSSecureUnarchiveFromDataTransformer().transformedValue(Self.archive(damaged)) == nil)
        // The same archive with the key intact reads.
        let intact = damaged.replacingOccurrences(
            of: "<key>$classname</key><array>\(Self.uid(6))</array>",
            with: "<key>NS.objects</key><array>\(Self.uid(6))</array>")
        #expect((PointTransformer().transformedValue(Self.archive(intact)) as? [Any])?.count == 3)
        // An array whose element is a class description, not a value.
        let described =
            "<dict><key>NS.objects</key><array>\(Self.uid(3))</array><key>$class</key>\(Self.uid(3))</dict>"
            + "<string>unused</string>" + arrayClass
        #expect(NSSecureUnarchiveFromDataTransformer().transformedValue(Self.archive(described)) == nil)
    }

    @Test("arrays nested up to the nesting limit are read; deeper ones are refused")
    func nestingIsBounded() {
        func nested(_ depth: Int) -> Data {
            // Object n (1-based) is an array holding object n + 1; the last holds a string.
            var objects = ""
            for n in 1...depth {
                objects +=
                    "<dict><key>NS.objects</key><array>\(Self.uid(n + 1))</array><key>$class</key>\(Self.uid(depth + 2))</dict>"
            }
            objects += "<string>bottom</string>"
            objects +=
                "<dict><key>$classname</key><string>NSArray</string><key>$classes</key><array><string>NSArray</string></array></dict>"
            return Self.archive(objects)
        }
        #expect(NSSecureUnarchiveFromDataTransformer().transformedValue(nested(KeyedArchive.maximumNesting - 1)) != nil)
        #expect(NSSecureUnarchiveFromDataTransformer().transformedValue(nested(KeyedArchive.maximumNesting + 1)) == nil)
    }

    @Test("flipped bytes in archives of Foundation's classes and of an app's own never crash the transformer")
    func flippedBytes() throws {
        let plain: NSDictionary = [
            "list": ["a", 1, 2.5], "set": NSSet(array: ["p", "q"]), "when": Date(timeIntervalSinceReferenceDate: 9),
            "id": UUID(), "link": URL(string: "https://example.org/x")!, "bytes": Data([1, 2]),
        ]
        let own: NSArray = [ArchivedPoint(x: 1), ["inner": ArchivedPoint(x: 2)], "text"]
        let cases: [(NSSecureUnarchiveFromDataTransformer, [UInt8])] = [
            (
                NSSecureUnarchiveFromDataTransformer(),
                [UInt8](try NSKeyedArchiver.archivedData(withRootObject: plain, requiringSecureCoding: true))
            ),
            (
                PointTransformer(),
                [UInt8](try NSKeyedArchiver.archivedData(withRootObject: own, requiringSecureCoding: true))
            ),
        ]
        var generator = SystemRandomNumberGenerator()
        for (transformer, bytes) in cases {
            #expect(transformer.transformedValue(Data(bytes)) != nil)
            var refused = 0
            for _ in 0..<1_500 {
                var damaged = bytes
                for _ in 0..<Int.random(in: 1...3, using: &generator) {
                    damaged[Int.random(in: 0..<damaged.count, using: &generator)] = UInt8.random(
                        in: 0...255, using: &generator)
                }
                if transformer.transformedValue(Data(damaged)) == nil { refused += 1 }
            }
            #expect(refused > 0)
        }
    }

    @Test("a root out of range, bytes that are no property list, and an empty value are refused")
    func notArchivesAreRefused() {
        #expect(!Self.passesCheck(Self.archive(Self.array, root: 7)))
        #expect(!Self.passesCheck(Data("bplist00garbage".utf8)))
        #expect(!Self.passesCheck(Data()))
    }
}

/// A class of an app's own, archived with secure coding.
final class ArchivedPoint: NSObject, NSSecureCoding {
    static var supportsSecureCoding: Bool { true }
    let x: Int
    init(x: Int) { self.x = x }
    func encode(with coder: NSCoder) { coder.encode(x, forKey: "x") }
    init?(coder: NSCoder) { x = coder.decodeInteger(forKey: "x") }
}

/// A transformer of the app's own that allows its class, as Apple's documentation asks
/// (subclass `NSSecureUnarchiveFromDataTransformer`, override `allowedTopLevelClasses`).
final class PointTransformer: NSSecureUnarchiveFromDataTransformer, @unchecked Sendable {
    override static var allowedTopLevelClasses: [AnyClass] {
        [ArchivedPoint.self, NSArray.self, NSDictionary.self, NSString.self, NSNumber.self]
    }

    /// An instance (the classes are the type's).
    static let withDecimals = PointTransformer()
}
