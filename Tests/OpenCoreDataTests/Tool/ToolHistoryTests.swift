import CoreData
import Foundation
import Testing

/// `coredata history STORE [--after N] [--author A] [--format json]`, run as a person
/// runs it: it prints the transactions and changes of a store's persistent history — Apple-written
/// or written here — and changes nothing.
@Suite("coredata tool: history")
struct ToolHistoryTests {
    let directory = TemporaryDirectory()

    @Test("Apple-written history prints, as a table and as JSON, and the store is left as it was")
    func appleWritten() throws {
        guard let root = Fixtures.root() else { return }
        let url = try FixtureStores.copy(
            "coredataplus-samplemodel/SampleModel2/Fixtures/SampleModel2_V2.sqlite", root: root, to: directory)
        let before = try Tool.snapshot(directory.url)
        let table = try Tool.run(["history", url.path])
        #expect(table.status == 0, "\(table.error)")
        #expect(table.output.hasPrefix("#1  2024-05-10T18:14:11.682Z  bundle com.apple.dt.xctest.tool, process xctest"))
        #expect(table.output.components(separatedBy: "\n  insert ").count - 1 == 126)
        #expect(table.output.hasSuffix("(1 transaction)\n"))
        let json = try Tool.run(["history", url.path, "--format", "json"])
        let parsed = try #require(
            try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]])
        #expect(parsed.first?["processID"] as? String == "xctest")
        #expect((parsed.first?["changes"] as? [Any])?.count == 126)
        #expect(try Tool.snapshot(directory.url) == before)
    }

    @Test("--after and --author narrow the transactions; updates list their properties, deletes their tombstones")
    func narrowing() throws {
        let url = directory.file("history.sqlite")
        let model = CompanyModel.make()
        model.entitiesByName["Employee"]?.attributesByName["name"]?.preservesValueInHistoryOnDeletion = true
        do {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(
                ofType: NSSQLiteStoreType, configurationName: nil, at: url,
                options: [NSPersistentHistoryTrackingKey: true])
            let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            context.transactionAuthor = "importer"
            let ada = context.employee("Ada", salary: 1)
            try context.save()
            context.transactionAuthor = "editor"
            ada.setValue(2.0, forKey: "salary")
            try context.save()
            context.delete(ada)
            try context.save()
        }
        let all = try Tool.run(["history", url.path])
        #expect(all.status == 0, "\(all.error)")
        #expect(all.output.contains("(3 transactions)"))
        let later = try Tool.run(["history", url.path, "--after", "1"])
        #expect(later.output.contains("(2 transactions)"))
        #expect(later.output.contains("Employee/p1  salary\n"))
        #expect(later.output.contains("tombstone: name = Ada"))
        let editor = try Tool.run(["history", url.path, "--author", "editor"])
        #expect(editor.output.contains("author editor"))
        #expect(editor.output.contains("(2 transactions)"))
    }
}
