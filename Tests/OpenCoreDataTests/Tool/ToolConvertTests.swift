import Foundation
import Testing

/// `coredata convert SRC DEST --type xml|binary|sqlite`, and the other commands on
/// XML and binary stores, run as a user runs them: a real Apple-written SQLite store goes to
/// XML, on to binary and back to SQLite, and exports the same JSON at the end as at the start.
@Suite("coredata tool: convert")
struct ToolConvertTests {
    let directory = TemporaryDirectory()

    @Test func aStoreGoesThroughEveryTypeAndBackUnchanged() throws {
        guard let root = Fixtures.root() else { return }
        let source = try FixtureStores.copy("ddg-bookmarks/Bookmarks_V5.sqlite", root: root, to: directory)
        let model = root.appendingPathComponent("stores/ddg-bookmarks/BookmarksModel.xcdatamodeld").path
        let before = try Tool.run(["export", source.path])
        #expect(before.status == 0, "\(before.error)")
        let xml = directory.file("Bookmarks.xml")
        let binary = directory.file("Bookmarks.binary")
        let back = directory.file("Bookmarks.sqlite")
        let toXML = try Tool.run(["convert", source.path, xml.path, "--type", "xml"])
        #expect(toXML.status == 0, "\(toXML.error)")
        #expect(toXML.output.contains("(SQLite) → \(xml.path) (XML)"))
        #expect(toXML.output.contains("(kept)"))
        #expect(try String(contentsOf: xml, encoding: .utf8).contains("<!DOCTYPE database SYSTEM"))
        let toBinary = try Tool.run(["convert", xml.path, binary.path, "--type", "binary", "--model", model])
        #expect(toBinary.status == 0, "\(toBinary.error)")
        let toSQLite = try Tool.run(["convert", binary.path, back.path, "--type", "sqlite", "--model", model])
        #expect(toSQLite.status == 0, "\(toSQLite.error)")
        let after = try Tool.run(["export", back.path, "--model", model])
        #expect(after.status == 0, "\(after.error)")
        #expect(after.output == before.output)
        // The other commands read XML and binary stores too.
        let info = try Tool.run(["info", xml.path, "--model", model])
        #expect(info.status == 0, "\(info.error)")
        #expect(info.output.contains("Type:               XML"))
        #expect(info.output.contains("matches the store"))
        let query = try Tool.run(["query", binary.path, "BookmarkEntity", "--model", model, "--count"])
        #expect(query.status == 0, "\(query.error)")
        let check = try Tool.run(["check", binary.path, "--model", model])
        #expect(check.status == 0 && check.output.contains("no problems found"), "\(check.output)\(check.error)")
        let bare = try Tool.run(["info", binary.path])
        #expect(bare.status == 0 && bare.output.contains("pass --model to count them"))
    }

    @Test func convertRefusesAnExistingDestinationAndAStoreWithoutItsModel() throws {
        let existing = directory.file("exists.xml")
        try Data("x".utf8).write(to: existing)
        let source = directory.file("source.xml")
        try Data(
            """
            <database><databaseInfo><version>134481920</version><UUID>0E82928F-05F0-40AF-851B-1FA617A37DB3</UUID>\
            <nextObjectID>100</nextObjectID><metadata></metadata></databaseInfo></database>
            """.utf8
        ).write(to: source)
        let refused = try Tool.run(["convert", source.path, existing.path, "--type", "xml"])
        #expect(refused.status == 2 && refused.error.contains("already exists"))
        let noModel = try Tool.run(["convert", source.path, directory.file("new.sqlite").path, "--type", "sqlite"])
        #expect(noModel.status == 2 && noModel.error.contains("an XML store holds no model; pass --model"))
        let badType = try Tool.run(["convert", source.path, directory.file("new.db").path, "--type", "csv"])
        #expect(badType.status == 2)
    }
}
