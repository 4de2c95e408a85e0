import CoreData
import Foundation
import OpenCoreDataSQL
import Testing

@testable import OpenCoreDataPostgres

/// Derived attributes in every SQL store, written by the one row plan the stores share.
///
/// Apple's documentation, `NSDerivedAttributeDescription`: "A description of an attribute that
/// derives its value by performing a calculation on a related attribute" — the store computes the
/// value (Apple's SQLite store with its `Z_DA_` triggers); a program never sets it. So a save that
/// updates an object must not write back the derived value the object read earlier over the one
/// the store holds.
@Suite("SQL stores: derived attributes")
struct DerivedAttributeTests {
    static var kinds: [String] { ["sqlite"] + (PostgresTestServer.runsTests ? ["postgres"] : []) }

    /// `Item`: `name`, `count`, and `searchName` derived from `name`.
    static func model() -> NSManagedObjectModel {
        let item = NSEntityDescription()
        item.name = "Item"
        let derived = NSDerivedAttributeDescription()
        derived.name = "searchName"
        derived.attributeType = .stringAttributeType
        derived.isOptional = true
        derived.derivationExpression = NSExpression(forKeyPath: "name")
        item.properties = [
            CompanyModel.attribute("name", .stringAttributeType),
            CompanyModel.attribute("count", .integer64AttributeType), derived,
        ]
        let model = NSManagedObjectModel()
        model.entities = [item]
        return model
    }

    /// A store of `kind`, and how to set and read its `Item` rows' derived column directly.
    struct Store {
        let type: String
        let url: URL
        let context: NSManagedObjectContext
        /// Sets every row's derived column to "Ada", as the store deriving it from `name` would.
        let setDerived: () throws -> Void
        let derived: () throws -> [String]
    }

    static func store(_ kind: String, directory: TemporaryDirectory) throws -> Store {
        if kind == "sqlite" {
            let url = directory.file("derived.sqlite")
            return Store(
                type: NSSQLiteStoreType, url: url, context: try sqliteStack(url, model: model()),
                setDerived: { _ = try sqlite3Write(url, "UPDATE ZITEM SET ZSEARCHNAME = 'Ada'") },
                derived: { try sqlite3(url, "SELECT ZSEARCHNAME FROM ZITEM") })
        }
        let url = PostgresTestServer.url(schema: PostgresTestServer.uniqueSchema("derived"))
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model())
        try coordinator.addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let link = { try PostgresLink.connect(try PostgresLocation(url: url, options: nil)) }
        return Store(
            type: NSPostgreSQLStoreType, url: url, context: context,
            setDerived: {
                let connection = try link()
                defer { connection.close() }
                try connection.query("UPDATE \"ZITEM\" SET \"ZSEARCHNAME\" = $1", [.text("Ada")])
            },
            derived: {
                let connection = try link()
                defer { connection.close() }
                return try connection.query("SELECT \"ZSEARCHNAME\" FROM \"ZITEM\"").rows.compactMap { row in
                    if case .text(let text)? = row.first { return text }
                    return nil
                }
            })
    }

    @Test(arguments: kinds)
    func anUpdateNeverWritesADerivedValueBackOverTheStoresOwn(kind: String) throws {
        let directory = TemporaryDirectory()
        let store = try Self.store(kind, directory: directory)
        let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: store.context)
        item.setValue("Ada", forKey: "name")
        item.setValue(1, forKey: "count")
        try store.context.save()
        // The store derives the value; the object still holds what it had before the save.
        try store.setDerived()
        #expect(item.value(forKey: "searchName") == nil)

        item.setValue(2, forKey: "count")
        try store.context.save()
        #expect(try store.derived() == ["Ada"])
        // Another coordinator reads the store's value.
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.model())
        try coordinator.addPersistentStore(ofType: store.type, configurationName: nil, at: store.url, options: nil)
        let reader = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        reader.persistentStoreCoordinator = coordinator
        let read = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item"))
        #expect(read.map { $0.value(forKey: "searchName") as? String } == ["Ada"])
        #expect(item.value(forKey: "count") as? Int == 2)
    }
}
