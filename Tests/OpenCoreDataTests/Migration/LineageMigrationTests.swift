import Foundation
import Testing

@testable import OpenCoreData
@testable @_spi(Tools) import OpenCoreDataSQLite

/// A store of an app's early model version migrates to the current version in one step, as
/// Apple's automatic lightweight migration does ("Core Data can infer a mapping model" between any
/// two versions whose differences are lightweight — Core Data Model Versioning and Data Migration
/// Programming Guide, "Lightweight Migration"). The two versions carry the changes a real
/// messaging app made over 90 versions of its model: an ordered to-many made unordered and renamed
/// (`elementID`), an ordered many-to-many and a whole entity dropped, attributes dropped and added,
/// transient attributes of no type, external binary storage, new entities with many-to-many
/// relationships of one name to one entity, and a sub-entity hierarchy in one table.
@Suite("Lightweight migration across a lineage")
struct LineageMigrationTests {
    static let early = """
        <model userDefinedModelVersionIdentifier="2.3">
        <entity name="Conversation" representedClassName="ZMConversation">
            <attribute name="userDefinedName" optional="YES" attributeType="String"/>
            <attribute name="lastEventID" optional="YES" transient="YES"/>
            <attribute name="lastEventID_data" optional="YES" attributeType="Binary"/>
            <attribute name="isSilenced" attributeType="Boolean" defaultValueString="NO"/>
            <relationship name="messages" optional="YES" toMany="YES" deletionRule="Nullify" ordered="YES" destinationEntity="Message" inverseName="visibleInConversation" inverseEntity="Message"/>
            <relationship name="callParticipants" optional="YES" toMany="YES" deletionRule="Nullify" ordered="YES" destinationEntity="User" inverseName="activeCallConversations" inverseEntity="User"/>
            <relationship name="invitations" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="PersonalInvitation" inverseName="conversation" inverseEntity="PersonalInvitation"/>
        </entity>
        <entity name="Message" representedClassName="ZMMessage" isAbstract="YES">
            <attribute name="serverTimestamp" optional="YES" attributeType="Date"/>
            <attribute name="nonce_data" optional="YES" attributeType="Binary" indexed="YES" versionHashModifier="add_index1"/>
            <relationship name="visibleInConversation" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Conversation" inverseName="messages" inverseEntity="Conversation"/>
        </entity>
        <entity name="TextMessage" parentEntity="Message">
            <attribute name="text" optional="YES" attributeType="String"/>
        </entity>
        <entity name="SystemMessage" parentEntity="Message">
            <attribute name="systemMessageType" optional="YES" attributeType="Integer 16" defaultValueString="0"/>
            <relationship name="users" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="User" inverseName="systemMessages" inverseEntity="User"/>
        </entity>
        <entity name="PersonalInvitation">
            <attribute name="inviteeName" optional="YES" attributeType="String"/>
            <relationship name="conversation" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Conversation" inverseName="invitations" inverseEntity="Conversation"/>
        </entity>
        <entity name="User" representedClassName="ZMUser">
            <attribute name="name" optional="YES" attributeType="String"/>
            <attribute name="accentColorValue" optional="YES" attributeType="Integer 16" defaultValueString="NO"/>
            <attribute name="imageMediumData" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
            <attribute name="remoteIdentifier" optional="YES" transient="YES"/>
            <relationship name="activeCallConversations" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Conversation" inverseName="callParticipants" inverseEntity="Conversation"/>
            <relationship name="systemMessages" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="SystemMessage" inverseName="users" inverseEntity="SystemMessage"/>
        </entity>
        </model>
        """

    static let current = """
        <model userDefinedModelVersionIdentifier="2.98.0">
        <entity name="Conversation" representedClassName="ZMConversation">
            <attribute name="userDefinedName" optional="YES" attributeType="String"/>
            <attribute name="mutedStatus" attributeType="Integer 32" defaultValueString="NO"/>
            <attribute name="remoteIdentifier" optional="YES" transient="YES"/>
            <relationship name="allMessages" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Message" inverseName="visibleInConversation" inverseEntity="Message" elementID="messages"/>
        </entity>
        <entity name="Message" representedClassName="ZMMessage" isAbstract="YES">
            <attribute name="serverTimestamp" optional="YES" attributeType="Date"/>
            <attribute name="nonce_data" optional="YES" attributeType="Binary" indexed="YES" versionHashModifier="add_index1"/>
            <relationship name="visibleInConversation" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Conversation" inverseName="allMessages" inverseEntity="Conversation"/>
            <relationship name="reactions" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Reaction" inverseName="message" inverseEntity="Reaction"/>
        </entity>
        <entity name="TextMessage" parentEntity="Message">
            <attribute name="text" optional="YES" attributeType="String"/>
        </entity>
        <entity name="SystemMessage" parentEntity="Message">
            <attribute name="systemMessageType" optional="YES" attributeType="Integer 16" defaultValueString="0"/>
            <relationship name="users" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="User" inverseName="systemMessages" inverseEntity="User"/>
        </entity>
        <entity name="Reaction" representedClassName=".Reaction">
            <attribute name="unicodeValue" optional="YES" attributeType="String"/>
            <relationship name="message" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Message" inverseName="reactions" inverseEntity="Message"/>
            <relationship name="users" toMany="YES" deletionRule="Nullify" destinationEntity="User" inverseName="reactions" inverseEntity="User"/>
        </entity>
        <entity name="User" representedClassName="ZMUser">
            <attribute name="name" optional="YES" attributeType="String"/>
            <attribute name="accentColorValue" optional="YES" attributeType="Integer 16" defaultValueString="NO"/>
            <attribute name="handle" optional="YES" attributeType="String"/>
            <attribute name="remoteIdentifier" optional="YES" transient="YES"/>
            <relationship name="reactions" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Reaction" inverseName="users" inverseEntity="Reaction"/>
            <relationship name="systemMessages" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="SystemMessage" inverseName="users" inverseEntity="SystemMessage"/>
        </entity>
        </model>
        """

    /// An `.xcdatamodeld` holding both versions, the current one marked current.
    static func bundle(in directory: TemporaryDirectory) throws -> URL {
        let bundle = directory.url.appendingPathComponent("zmessaging.xcdatamodeld")
        for (name, xml) in [("zmessaging2.3", early), ("zmessaging2.98.0", current)] {
            let folder = bundle.appendingPathComponent(name + ".xcdatamodel")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(xml.utf8).write(to: folder.appendingPathComponent("contents"))
        }
        let marker = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>zmessaging2.98.0.xcdatamodel</string></dict></plist>
            """
        try Data(marker.utf8).write(to: bundle.appendingPathComponent(".xccurrentversion"))
        return bundle
    }

    @Test("an early version's store migrates to the current version in one step, every row and relationship kept")
    func earlyToCurrent() throws {
        let directory = TemporaryDirectory()
        let bundle = try Self.bundle(in: directory)
        let earlyModel = try NSManagedObjectModel(
            validatingContentsOf: bundle.appendingPathComponent("zmessaging2.3.xcdatamodel"))
        let url = directory.url.appendingPathComponent("store.wiredatabase")
        do {
            let context = try sqliteStack(url, model: earlyModel)
            let conversation = NSEntityDescription.insertNewObject(forEntityName: "Conversation", into: context)
            conversation.setValue("Team", forKey: "userDefinedName")
            var users: [NSManagedObject] = []
            for index in 0..<3 {
                let user = NSEntityDescription.insertNewObject(forEntityName: "User", into: context)
                user.setValue("user \(index)", forKey: "name")
                user.setValue(Data(repeating: UInt8(index), count: 16), forKey: "imageMediumData")
                users.append(user)
            }
            conversation.setValue(NSOrderedSet(array: users), forKey: "callParticipants")
            var messages: [NSManagedObject] = []
            for index in 0..<4 {
                let message = NSEntityDescription.insertNewObject(forEntityName: "TextMessage", into: context)
                message.setValue("text \(index)", forKey: "text")
                messages.append(message)
            }
            let system = NSEntityDescription.insertNewObject(forEntityName: "SystemMessage", into: context)
            system.mutableSetValue(forKey: "users").addObjects(from: Array(users.prefix(2)))
            messages.append(system)
            conversation.setValue(NSOrderedSet(array: messages), forKey: "messages")
            let invitation = NSEntityDescription.insertNewObject(forEntityName: "PersonalInvitation", into: context)
            invitation.setValue(conversation, forKey: "conversation")
            try context.save()
        }

        let currentModel = try NSManagedObjectModel(validatingContentsOf: bundle)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: currentModel)
        try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: url,
            options: [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true])
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        func count(_ entity: String) throws -> Int {
            try context.count(for: NSFetchRequest<NSFetchRequestResult>(entityName: entity))
        }
        #expect(try count("User") == 3)
        #expect(try count("Message") == 5)
        #expect(try count("TextMessage") == 4)
        #expect(try count("Conversation") == 1)
        #expect(try count("Reaction") == 0)
        let conversation = try #require(
            try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Conversation")).first)
        #expect(conversation.value(forKey: "userDefinedName") as? String == "Team")
        #expect(conversation.mutableSetValue(forKey: "allMessages").count == 5, "the renamed, now unordered to-many")
        let system = try #require(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "SystemMessage")).first)
        #expect(system.mutableSetValue(forKey: "users").count == 2)
        #expect(
            currentModel.isConfiguration(
                withName: nil, compatibleWithStoreMetadata: coordinator.persistentStores[0].metadata))

        // The migrated store is sound, and new relationships work.
        let reaction = NSEntityDescription.insertNewObject(forEntityName: "Reaction", into: context)
        reaction.setValue(system, forKey: "message")
        reaction.mutableSetValue(forKey: "users").addObjects(
            from: try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "User")))
        try context.save()
        try coordinator.remove(coordinator.persistentStores[0])
        let findings = try SQLiteStoreCheck.findings(storeAt: url, model: currentModel)
        #expect(findings.isEmpty, "\(findings)")
    }

    /// What the report did: `coredata migrate STORE --model App.xcdatamodeld` when no version of
    /// the model is the store's, so the model cached in the store is the source.
    @Test("coredata migrate takes the early store to the current version from its cached model, and check is clean")
    func toolFromCachedModel() throws {
        let directory = TemporaryDirectory()
        let bundle = try Self.bundle(in: directory)
        let early = bundle.appendingPathComponent("zmessaging2.3.xcdatamodel")
        let url = directory.url.appendingPathComponent("store.wiredatabase")
        do {
            let context = try sqliteStack(url, model: try NSManagedObjectModel(validatingContentsOf: early))
            let user = NSEntityDescription.insertNewObject(forEntityName: "User", into: context)
            let system = NSEntityDescription.insertNewObject(forEntityName: "SystemMessage", into: context)
            system.mutableSetValue(forKey: "users").add(user)
            try context.save()
        }
        // The early version leaves the bundle: only the store's cached model knows it.
        let kept = directory.url.appendingPathComponent("early.xcdatamodel")
        try FileManager.default.moveItem(at: early, to: kept)
        let migrated = try Tool.run(["migrate", url.path, "--model", bundle.path])
        #expect(migrated.status == 0, "\(migrated.error)")
        #expect(migrated.output.contains("(the model cached in the store is used)"))
        #expect(migrated.output.contains("Migrated:           in place"))
        let check = try Tool.run(["check", url.path, "--model", bundle.path])
        #expect(check.status == 0, "\(check.output)\(check.error)")
    }

    static func userModel(external: Bool) -> NSManagedObjectModel {
        let user = NSEntityDescription()
        user.name = "User"
        let image = CompanyModel.attribute("imageMediumData", .binaryDataAttributeType)
        image.allowsExternalBinaryDataStorage = external
        user.properties = [CompanyModel.attribute("name", .stringAttributeType), image]
        let model = NSManagedObjectModel()
        model.entities = [user]
        return model
    }

    static var migrating: [AnyHashable: Any] {
        [
            NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true,
        ]
    }

    static func write(_ images: [String: Data?], to url: URL, external: Bool) throws {
        let context = try sqliteStack(url, model: userModel(external: external))
        for (name, image) in images {
            let user = NSEntityDescription.insertNewObject(forEntityName: "User", into: context)
            user.setValue(name, forKey: "name")
            user.setValue(image, forKey: "imageMediumData")
        }
        try context.save()
        for store in context.persistentStoreCoordinator?.persistentStores ?? [] {
            try context.persistentStoreCoordinator?.remove(store)
        }
    }

    static func read(_ url: URL, external: Bool) throws -> [String: Data?] {
        let context = try sqliteStack(url, model: userModel(external: external), options: migrating)
        var images: [String: Data?] = [:]
        for user in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "User")) {
            images[user.value(forKey: "name") as? String ?? ""] = user.value(forKey: "imageMediumData") as? Data
        }
        return images
    }

    static let images: [String: Data?] = [
        "png": Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A]), "leading one": Data([1, 2, 3]),
        "leading two": Data([2, 0, 1]), "empty": Data(), "none": nil,
    ]

    /// Allowing external storage is a change of the model's version hash (STORE-FORMAT.md), so a
    /// store of the version without it migrates — lightweight — and each value reads back as it
    /// was written, whatever its first byte.
    @Test("a store of a version without external storage migrates to one with it, every value kept")
    func externalStorageAllowed() throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("Users.sqlite")
        try Self.write(Self.images, to: url, external: false)
        #expect(throws: (any Error).self) { try sqliteStack(url, model: Self.userModel(external: true)) }
        #expect(try Self.read(url, external: true) == Self.images)
    }

    @Test("a store of a version with external storage migrates to one without it, a value in a file moved into its row")
    func externalStorageDropped() throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("Users.sqlite")
        var images = Self.images
        images["large"] = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0) })
        try Self.write(images, to: url, external: true)
        #expect(try Self.read(url, external: false) == images)
        // Without a value in a file, the migration is made in place.
        let small = directory.url.appendingPathComponent("Small.sqlite")
        try Self.write(Self.images, to: small, external: true)
        #expect(try Self.read(small, external: false) == Self.images)
    }

    /// Before external storage took part in version hashes, this module wrote a store of a model
    /// that allows it with the hash and the cached model leaving the option out, and every value
    /// with its marker byte: opening it with the model migrates it and keeps every value.
    @Test("a store written before external storage was hashed opens with its model, every value kept")
    func storeFromBeforeTheHashChange() throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("Legacy.sqlite")
        let stored = Self.images.filter { $0.key != "empty" }
        try Self.write(stored, to: url, external: true)
        // As the earlier version left it: the hashes and the cached model of the model without the option.
        let plain = Self.userModel(external: false)
        var metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        metadata[NSStoreModelVersionHashesKey] = plain.entityVersionHashesByName
        try NSPersistentStoreCoordinator.setMetadata(metadata, forPersistentStoreOfType: NSSQLiteStoreType, at: url)
        let connection = try SQLiteConnection(path: url.path, mode: .readWrite(create: false))
        try connection.run(
            "UPDATE Z_MODELCACHE SET Z_CONTENT = ?",
            [.blob([UInt8](try ModelCache.deflate(CompiledModelEncoder.archive(plain))))])
        connection.close()
        #expect(try Self.read(url, external: true) == stored)
    }
}
