import Foundation
import OpenCoreData
@_spi(Tools) import OpenCoreDataSQLite
import Testing

/// Many-to-many join tables with the names Apple's Core Data gives them (STORE-FORMAT.md, "Join
/// tables"), and stores whose names differ from the ones a new store would get. Apple: a store
/// "is dependent upon the model used to create it" (Core Data Model Versioning and Data Migration
/// Programming Guide, "Understanding Versions") — so an existing store's own tables are what its
/// data is read from.
@Suite("SQLite store: Apple's join-table names")
struct AppleJoinTableNameTests {
    /// A messaging app's shape: `Reaction.users` and `SystemMessage.users` (a sub-entity of the
    /// abstract `Message`) are both many-to-many relationships named `users` to `User`.
    /// Entity numbers: Message 1, SystemMessage 2, Reaction 3, User 4.
    static func model() -> NSManagedObjectModel {
        let message = NSEntityDescription()
        message.name = "Message"
        message.isAbstract = true
        let system = NSEntityDescription()
        system.name = "SystemMessage"
        let reaction = NSEntityDescription()
        reaction.name = "Reaction"
        let user = NSEntityDescription()
        user.name = "User"
        let reactionUsers = CompanyModel.relationship("users", to: user, toMany: true, rule: .nullifyDeleteRule)
        let userReactions = CompanyModel.relationship("reactions", to: reaction, toMany: true, rule: .nullifyDeleteRule)
        CompanyModel.link(reactionUsers, userReactions)
        let systemUsers = CompanyModel.relationship("users", to: user, toMany: true, rule: .nullifyDeleteRule)
        let userSystem = CompanyModel.relationship(
            "systemMessages", to: system, toMany: true, rule: .nullifyDeleteRule)
        CompanyModel.link(systemUsers, userSystem)
        message.properties = [CompanyModel.attribute("text", .stringAttributeType)]
        system.properties = [systemUsers]
        message.subentities = [system]
        reaction.properties = [CompanyModel.attribute("unicodeValue", .stringAttributeType), reactionUsers]
        user.properties = [CompanyModel.attribute("name", .stringAttributeType), userReactions, userSystem]
        let model = NSManagedObjectModel()
        model.entities = [message, system, reaction, user]
        return model
    }

    /// Two users; a reaction by both; a system message naming the second.
    static func populate(_ url: URL) throws {
        let context = try sqliteStack(url, model: model())
        let first = NSEntityDescription.insertNewObject(forEntityName: "User", into: context)
        first.setValue("first", forKey: "name")
        let second = NSEntityDescription.insertNewObject(forEntityName: "User", into: context)
        second.setValue("second", forKey: "name")
        let reaction = NSEntityDescription.insertNewObject(forEntityName: "Reaction", into: context)
        reaction.setValue("👍", forKey: "unicodeValue")
        reaction.mutableSetValue(forKey: "users").addObjects(from: [first, second])
        let message = NSEntityDescription.insertNewObject(forEntityName: "SystemMessage", into: context)
        message.setValue("added", forKey: "text")
        message.mutableSetValue(forKey: "users").add(second)
        try context.save()
        for store in context.persistentStoreCoordinator?.persistentStores ?? [] {
            try context.persistentStoreCoordinator?.remove(store)
        }
    }

    /// Reads every relationship of the store at `url` back, through both sides.
    static func expectContents(_ url: URL, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let context = try sqliteStack(url, model: model())
        let users = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "User"))
        let byName = Dictionary(uniqueKeysWithValues: users.map { ($0.value(forKey: "name") as? String ?? "", $0) })
        let reaction = try #require(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Reaction")).first)
        let message = try #require(
            try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "SystemMessage")).first)
        func names(_ object: NSManagedObject, _ key: String) -> Set<String> {
            Set(
                object.mutableSetValue(forKey: key).compactMap {
                    ($0 as? NSManagedObject)?.value(forKey: "name") as? String
                })
        }
        #expect(names(reaction, "users") == ["first", "second"], sourceLocation: sourceLocation)
        #expect(names(message, "users") == ["second"], sourceLocation: sourceLocation)
        #expect(byName["first"]?.mutableSetValue(forKey: "systemMessages").count == 0, sourceLocation: sourceLocation)
        #expect(byName["second"]?.mutableSetValue(forKey: "systemMessages").count == 1, sourceLocation: sourceLocation)
        #expect(byName["first"]?.mutableSetValue(forKey: "reactions").count == 1, sourceLocation: sourceLocation)
        #expect(
            try SQLiteStoreCheck.findings(storeAt: url, model: model()).isEmpty, "coredata check is clean",
            sourceLocation: sourceLocation)
    }

    static func columns(_ url: URL, _ table: String) throws -> [String] {
        try sqlite3(url, "SELECT name FROM pragma_table_info('\(table)')")
    }

    @Test("a column name another pair already took gets a digit, pairs taken in their naming entity's name order")
    func collidingColumnNames() throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("Messages.sqlite")
        try Self.populate(url)
        // As Apple wrote the real app's store: Z_19USERS (Z_19REACTIONS, Z_23USERS) and
        // Z_15USERS (Z_15SYSTEMMESSAGES, Z_23USERS1).
        #expect(try Self.columns(url, "Z_3USERS") == ["Z_3REACTIONS", "Z_4USERS"])
        #expect(try Self.columns(url, "Z_2USERS") == ["Z_2SYSTEMMESSAGES", "Z_4USERS1"])
        try Self.expectContents(url)
    }

    @Test(
        "a store's own join-table names are used: digits on the other pair, quoted tables, a table named from the other side"
    )
    func existingNamesWin() throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("Messages.sqlite")
        try Self.populate(url)
        // Swap which pair carries the digit, name Reaction's table from User's side, and leave the
        // names quoted in sqlite_master, as Apple's in-place migrations leave them.
        _ = try sqlite3(
            url,
            """
            ALTER TABLE Z_3USERS RENAME COLUMN Z_4USERS TO Z_4USERS_MOVING;
            ALTER TABLE Z_2USERS RENAME COLUMN Z_4USERS1 TO Z_4USERS;
            ALTER TABLE Z_3USERS RENAME COLUMN Z_4USERS_MOVING TO Z_4USERS1;
            ALTER TABLE Z_3USERS RENAME TO Z_4REACTIONS;
            ALTER TABLE Z_2USERS RENAME TO Z_2USERS_MOVING;
            ALTER TABLE Z_2USERS_MOVING RENAME TO Z_2USERS;
            """, readOnly: false)
        #expect(
            try sqlite3(url, "SELECT sql FROM sqlite_master WHERE name = 'Z_2USERS'").first?.contains("\"Z_2USERS\"")
                == true)
        try Self.expectContents(url)

        // Saving through the store's names keeps them.
        let context = try sqliteStack(url, model: Self.model())
        let reaction = try #require(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Reaction")).first)
        let users = reaction.mutableSetValue(forKey: "users")
        users.remove(try #require(users.anyObject()))
        try context.save()
        #expect(try sqlite3(url, "SELECT count(*) FROM Z_4REACTIONS") == ["1"])
    }

    @Test("a store an earlier OpenCoreData wrote, with Z_4USERS in both tables, still reads")
    func earlierNames() throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("Messages.sqlite")
        try Self.populate(url)
        _ = try sqlite3(url, "ALTER TABLE Z_2USERS RENAME COLUMN Z_4USERS1 TO Z_4USERS", readOnly: false)
        try Self.expectContents(url)
    }

    @Test("a many-to-many that is its own inverse keeps its other end in REFLEXIVE, and reads back both ways")
    func reflexive() throws {
        let person = NSEntityDescription()
        person.name = "Person"
        let friends = CompanyModel.relationship("friends", to: person, toMany: true, rule: .nullifyDeleteRule)
        friends.inverseRelationship = friends
        person.properties = [CompanyModel.attribute("name", .stringAttributeType), friends]
        let model = NSManagedObjectModel()
        model.entities = [person]
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("People.sqlite")
        let context = try sqliteStack(url, model: model)
        let ann = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
        ann.setValue("Ann", forKey: "name")
        let bob = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
        bob.setValue("Bob", forKey: "name")
        ann.mutableSetValue(forKey: "friends").add(bob)
        try context.save()
        #expect(try Self.columns(url, "Z_1FRIENDS") == ["Z_1FRIENDS", "REFLEXIVE"])

        let reader = try sqliteStack(url, model: model)
        let people = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
        for person in people {
            let names = person.mutableSetValue(forKey: "friends").compactMap {
                ($0 as? NSManagedObject)?.value(forKey: "name") as? String
            }
            #expect(names == [person.value(forKey: "name") as? String == "Ann" ? "Bob" : "Ann"])
        }
    }
}
