import Foundation
import Testing

@testable import OpenCoreData

/// A transformable value is an `NSKeyedArchiver` archive read back with
/// `NSSecureUnarchiveFromDataTransformer` (its reference: "converts data to and from classes that
/// support secure coding"). The archive comes from a store file, which can be damaged or hostile,
/// and Foundation's unarchiver on Linux traps on some malformed archives — the store fuzz target
/// found a value whose `$class` named a string. Such an archive is refused before Foundation sees
/// it: the transformer answers nil, as it does for any archive it cannot read (and the store then
/// keeps the bytes, `Transformable.decode`).
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

    static func uid(_ index: Int) -> String { "<dict><key>CF$UID</key><integer>\(index)</integer></dict>" }

    /// `NSArray` of one string, as an archiver lays it out.
    static let array =
        "<dict><key>NS.objects</key><array>\(uid(2))</array><key>$class</key>\(uid(3))</dict>"
        + "<string>hello</string>"
        + "<dict><key>$classname</key><string>NSArray</string><key>$classes</key><array><string>NSArray</string><string>NSObject</string></array></dict>"

    @Test("a well-formed archive of allowed classes is read")
    func wellFormedIsRead() {
        #expect(KeyedArchive.isSafeForUnarchiver(Self.archive(Self.array)))
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
            // A class description without `$classes`.
            "<dict><key>NS.objects</key><array/><key>$class</key>\(uid(2))</dict>"
                + "<dict><key>$classname</key><string>NSArray</string></dict>",
        ])
    func malformedIsRefused(_ objects: String) {
        let data = Self.archive(objects)
        #expect(!KeyedArchive.isSafeForUnarchiver(data))
        #expect(NSSecureUnarchiveFromDataTransformer().transformedValue(data) == nil)
    }

    @Test("a root out of range, bytes that are no property list, and an empty value are refused")
    func notArchivesAreRefused() {
        #expect(!KeyedArchive.isSafeForUnarchiver(Self.archive(Self.array, root: 7)))
        #expect(!KeyedArchive.isSafeForUnarchiver(Data("bplist00garbage".utf8)))
        #expect(!KeyedArchive.isSafeForUnarchiver(Data()))
    }
}
