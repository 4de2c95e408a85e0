import CoreData
import Foundation
import OpenCoreDataPostgres
import Testing

/// Every kind of store this package offers: Apple's four types, a user's own atomic store, a store
/// over a third SQL database made of a connection and a dialect on the SQL store core
/// (``AlienSQLStore``), and the PostgreSQL store (when a server runs, ``PostgresTestServer``).
enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case inMemory, sqlite, xml, binary, userAtomic, alienSQL, postgres

    static var allCases: [StoreKind] {
        [.inMemory, .sqlite, .xml, .binary, .userAtomic, .alienSQL] + (PostgresTestServer.runsTests ? [.postgres] : [])
    }

    var testDescription: String { rawValue }

    var type: String {
        switch self {
        case .inMemory: NSInMemoryStoreType
        case .sqlite: NSSQLiteStoreType
        case .xml: NSXMLStoreType
        case .binary: NSBinaryStoreType
        case .userAtomic: JSONAtomicStore.typeName
        case .alienSQL: AlienSQLStore.typeName
        case .postgres: NSPostgreSQLStoreType
        }
    }

    /// Whether a new coordinator at the same URL reads what an earlier one saved.
    var persists: Bool { self != .inMemory }

    /// Whether two coordinators may share one file and see each other's saves at their next
    /// save (Apple's SQLite store; the XML and binary stores here).
    var sharesFile: Bool { [.sqlite, .xml, .binary, .alienSQL, .postgres].contains(self) }

    static let registered: Void = {
        NSPersistentStoreCoordinator.registerStoreClass(JSONAtomicStore.self, forStoreType: JSONAtomicStore.typeName)
        NSPersistentStoreCoordinator.registerStoreClass(AlienSQLStore.self, forStoreType: AlienSQLStore.typeName)
    }()
}

/// A model with one attribute of every type Core Data stores, a sub-entity, a to-one, a to-one
/// whose destination has a sub-entity, an ordered many-to-many and a cascading to-many, and a
/// uniqueness constraint.
enum ConformanceModel {
    static let shared = make()

    static func make() -> NSManagedObjectModel {
        let owner = NSEntityDescription()
        owner.name = "Owner"
        let thing = NSEntityDescription()
        thing.name = "Thing"
        let special = NSEntityDescription()
        special.name = "SpecialThing"
        let label = NSEntityDescription()
        label.name = "Label"
        let types: [(String, NSAttributeType)] = [
            ("code", .stringAttributeType), ("i16", .integer16AttributeType), ("i32", .integer32AttributeType),
            ("i64", .integer64AttributeType), ("dec", .decimalAttributeType), ("dbl", .doubleAttributeType),
            ("flt", .floatAttributeType), ("str", .stringAttributeType), ("flag", .booleanAttributeType),
            ("when", .dateAttributeType), ("blob", .binaryDataAttributeType), ("uid", .UUIDAttributeType),
            ("link", .URIAttributeType), ("words", .transformableAttributeType),
        ]
        let things = CompanyModel.relationship("things", to: thing, toMany: true, rule: .cascadeDeleteRule)
        let ownerRel = CompanyModel.relationship("owner", to: owner, toMany: false, rule: .nullifyDeleteRule)
        CompanyModel.link(things, ownerRel)
        let labels = CompanyModel.relationship("labels", to: label, toMany: true, rule: .nullifyDeleteRule)
        labels.isOrdered = true
        let labelled = CompanyModel.relationship("things", to: thing, toMany: true, rule: .nullifyDeleteRule)
        CompanyModel.link(labels, labelled)
        let favourite = CompanyModel.relationship("favourite", to: thing, toMany: false, rule: .nullifyDeleteRule)
        let favouredBy = CompanyModel.relationship("favouredBy", to: owner, toMany: true, rule: .nullifyDeleteRule)
        CompanyModel.link(favourite, favouredBy)
        owner.properties = [CompanyModel.attribute("name", .stringAttributeType, optional: false), things, favourite]
        thing.properties = types.map { CompanyModel.attribute($0.0, $0.1) } + [ownerRel, labels, favouredBy]
        thing.uniquenessConstraints = [["code"]]
        special.properties = [CompanyModel.attribute("extra", .stringAttributeType)]
        thing.subentities = [special]
        label.properties = [CompanyModel.attribute("title", .stringAttributeType), labelled]
        let model = NSManagedObjectModel()
        model.entities = [owner, thing, special, label]
        return model
    }

    /// The values thing `n` gets, by attribute name.
    static func values(_ n: Int) -> [String: Any] {
        [
            "code": "T\(n)", "i16": Int16(n), "i32": Int32(n * 1000), "i64": Int64(n) << 40,
            "dec": Decimal(string: "\(n).25")!, "dbl": Double(n) / 3, "flt": Float(n) / 4,
            "str": "thing \(n) <&> \"q\"\n",
            "flag": n % 2 == 0, "when": Date(timeIntervalSinceReferenceDate: Double(n) * 86_400.5),
            "blob": Data([UInt8(n), 0, 255]),
            "uid": UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", n))!,
            "link": URL(string: "https://example.com/\(n)?a=b&c=d")!, "words": ["w\(n)", "x"],
        ]
    }
}

/// One behaviour suite for every store kind: what Apple documents for a store —
/// saving and reading back every attribute type and relationship kind, fetching with predicates,
/// sorts, windows, counts and dictionary results, delete rules, metadata, optimistic locking
/// between coordinators and uniqueness constraints — holds for the in-memory, SQLite, XML and
/// binary stores and for a user's NSAtomicStore subclass alike (Core Data Programming Guide,
/// "Persistent Store Types and Behaviors": the store types differ in speed and size, not in what
/// they hold).
@Suite("Store conformance")
struct StoreConformanceTests {
    let directory = TemporaryDirectory()
    /// This test's prefix for PostgreSQL schema names.
    let schemaPrefix = PostgresTestServer.uniqueSchema("conformance")

    init() { _ = StoreKind.registered }

    func url(_ kind: StoreKind, _ name: String = "store") -> URL {
        if kind == .postgres { return PostgresTestServer.url(schema: "\(schemaPrefix)_\(name)") }
        return directory.file("\(name).\(kind.rawValue)")
    }

    func coordinator(
        _ kind: StoreKind, at url: URL, options: [AnyHashable: Any]? = nil
    ) throws -> (NSPersistentStoreCoordinator, NSPersistentStore) {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: ConformanceModel.shared)
        let store = try coordinator.addPersistentStore(
            ofType: kind.type, configurationName: nil, at: kind == .inMemory ? nil : url, options: options)
        return (coordinator, store)
    }

    func context(_ coordinator: NSPersistentStoreCoordinator) -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// Inserts an owner with `count` things (every third a SpecialThing), each with the labels
    /// `count`, …, 1 in that order.
    @discardableResult
    func populate(_ context: NSManagedObjectContext, count: Int) throws -> NSManagedObject {
        let owner = NSEntityDescription.insertNewObject(forEntityName: "Owner", into: context)
        owner.setValue("Ada", forKey: "name")
        let labels = (1...3).map { n -> NSManagedObject in
            let label = NSEntityDescription.insertNewObject(forEntityName: "Label", into: context)
            label.setValue("L\(n)", forKey: "title")
            return label
        }
        for n in 1...count {
            let thing = NSEntityDescription.insertNewObject(
                forEntityName: n % 3 == 0 ? "SpecialThing" : "Thing", into: context)
            for (key, value) in ConformanceModel.values(n) { thing.setValue(value, forKey: key) }
            if n % 3 == 0 { thing.setValue("extra \(n)", forKey: "extra") }
            thing.setValue(owner, forKey: "owner")
            thing.setValue(NSOrderedSet(array: labels.reversed()), forKey: "labels")
        }
        try context.save()
        return owner
    }

    func fetch(
        _ context: NSManagedObjectContext, _ entity: String, _ format: String? = nil, _ arguments: [Any] = [],
        sort: String? = nil
    ) throws -> [NSManagedObject] {
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        if let format { request.predicate = NSPredicate(format: format, argumentArray: arguments) }
        if let sort { request.sortDescriptors = [NSSortDescriptor(key: sort, ascending: true)] }
        return try context.fetch(request)
    }

    @Test(
        "Every attribute type, the sub-entity and every relationship kind read back as saved",
        arguments: StoreKind.allCases)
    func valuesReadBack(kind: StoreKind) throws {
        let url = url(kind)
        let (first, store) = try coordinator(kind, at: url)
        let uuid = try #require(store.identifier)
        try populate(context(first), count: 6)
        let reader = kind.persists ? try coordinator(kind, at: url).0 : first
        if kind.persists { #expect(reader.persistentStores.first?.identifier == uuid) }
        let context = context(reader)
        let things = try fetch(context, "Thing", sort: "i16")
        #expect(things.count == 6)
        for (index, thing) in things.enumerated() {
            let n = index + 1
            let expected = ConformanceModel.values(n)
            #expect(thing.value(forKey: "code") as? String == expected["code"] as? String)
            #expect((thing.value(forKey: "i16") as? NSNumber)?.intValue == n)
            #expect((thing.value(forKey: "i32") as? NSNumber)?.intValue == n * 1000)
            #expect((thing.value(forKey: "i64") as? NSNumber)?.int64Value == Int64(n) << 40)
            #expect((thing.value(forKey: "dec") as? NSDecimalNumber)?.decimalValue == expected["dec"] as? Decimal)
            #expect((thing.value(forKey: "dbl") as? NSNumber)?.doubleValue == Double(n) / 3)
            #expect((thing.value(forKey: "flt") as? NSNumber)?.floatValue == Float(n) / 4)
            #expect(thing.value(forKey: "str") as? String == expected["str"] as? String)
            #expect((thing.value(forKey: "flag") as? NSNumber)?.boolValue == (n % 2 == 0))
            #expect(thing.value(forKey: "when") as? Date == expected["when"] as? Date)
            #expect(thing.value(forKey: "blob") as? Data == expected["blob"] as? Data)
            #expect(thing.value(forKey: "uid") as? UUID == expected["uid"] as? UUID)
            #expect(thing.value(forKey: "link") as? URL == expected["link"] as? URL)
            #expect(thing.value(forKey: "words") as? [String] == ["w\(n)", "x"])
            #expect(thing.entity.name == (n % 3 == 0 ? "SpecialThing" : "Thing"))
            if n % 3 == 0 { #expect(thing.value(forKey: "extra") as? String == "extra \(n)") }
            let owner = try #require(thing.value(forKey: "owner") as? NSManagedObject)
            #expect(owner.value(forKey: "name") as? String == "Ada")
            let labels = try #require(thing.value(forKey: "labels") as? NSOrderedSet)
            #expect(
                labels.array.compactMap { ($0 as? NSManagedObject)?.value(forKey: "title") as? String } == [
                    "L3", "L2", "L1",
                ])
        }
        let owner = try #require(try fetch(context, "Owner").first)
        #expect((owner.value(forKey: "things") as? Set<NSManagedObject>)?.count == 6)
        let label = try #require(try fetch(context, "Label", "title == 'L2'").first)
        #expect((label.value(forKey: "things") as? Set<NSManagedObject>)?.count == 6)
    }

    /// Core Data Programming Guide, "Faulting and Uniquing": touching a to-many fires its fault,
    /// and its members are faults until each is touched, then read as saved — the sub-entity's
    /// members as their own entity, an ordered many-to-many's in its order — whichever store
    /// holds them (the SQL stores read the members' rows with the relationship).
    @Test("A to-many's members are faults until touched, then read back as saved", arguments: StoreKind.allCases)
    func toManyMembersReadBack(kind: StoreKind) throws {
        let url = url(kind)
        let (first, _) = try coordinator(kind, at: url)
        let writer = context(first)
        let saved = try populate(writer, count: 9)
        // A to-one whose destination has a sub-entity, naming one of the sub-entity's objects.
        let third = try #require(try fetch(writer, "Thing", "i16 == 3").first)
        saved.setValue(third, forKey: "favourite")
        try writer.save()
        let context = context(kind.persists ? try coordinator(kind, at: url).0 : first)
        let owner = try #require(try fetch(context, "Owner").first)
        let things = try #require(owner.value(forKey: "things") as? Set<NSManagedObject>)
        #expect(things.count == 9)
        if kind.persists { #expect(things.allSatisfy { $0.isFault }) }
        let byCode = things.sorted { ($0.value(forKey: "i16") as? Int ?? 0) < ($1.value(forKey: "i16") as? Int ?? 0) }
        for (index, thing) in byCode.enumerated() {
            let n = index + 1
            #expect(thing.value(forKey: "code") as? String == ConformanceModel.values(n)["code"] as? String)
            #expect(thing.value(forKey: "when") as? Date == ConformanceModel.values(n)["when"] as? Date)
            #expect(thing.entity.name == (n % 3 == 0 ? "SpecialThing" : "Thing"))
            if n % 3 == 0 { #expect(thing.value(forKey: "extra") as? String == "extra \(n)") }
            #expect(thing.value(forKey: "owner") as? NSManagedObject === owner)
        }
        let favourite = try #require(owner.value(forKey: "favourite") as? NSManagedObject)
        #expect(favourite === byCode[2])
        #expect(favourite.entity.name == "SpecialThing")
        #expect(favourite.value(forKey: "extra") as? String == "extra 3")
        #expect((favourite.value(forKey: "favouredBy") as? Set<NSManagedObject>) == [owner])
        let label = try #require(try fetch(context, "Label", "title == 'L2'").first)
        let labelled = try #require(label.value(forKey: "things") as? Set<NSManagedObject>)
        #expect(labelled == things)
        let labels = try #require(byCode.first?.value(forKey: "labels") as? NSOrderedSet)
        #expect(
            labels.array.compactMap { ($0 as? NSManagedObject)?.value(forKey: "title") as? String } == [
                "L3", "L2", "L1",
            ])
    }

    @Test("Fetches evaluate predicates, sorts, windows, counts and dictionary results", arguments: StoreKind.allCases)
    func fetching(kind: StoreKind) throws {
        let (coordinator, _) = try coordinator(kind, at: url(kind))
        let context = context(coordinator)
        try populate(context, count: 12)
        context.reset()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Thing")
        request.predicate = NSPredicate(format: "i32 > 3000 AND str BEGINSWITH[c] 'THING' AND owner.name == 'Ada'")
        request.sortDescriptors = [NSSortDescriptor(key: "dbl", ascending: false)]
        request.fetchOffset = 1
        request.fetchLimit = 4
        #expect(try context.fetch(request).map { $0.value(forKey: "code") as? String } == ["T11", "T10", "T9", "T8"])
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "SpecialThing")) == 4)
        let exact = NSFetchRequest<NSManagedObject>(entityName: "Thing")
        exact.includesSubentities = false
        #expect(try context.count(for: exact) == 8)
        #expect(try fetch(context, "Thing", "labels.@count == 3 AND ANY labels.title == 'L1'").count == 12)
        let four = ConformanceModel.values(4)
        #expect(
            try fetch(context, "Thing", "uid == %@", [four["uid"]!]).map { $0.value(forKey: "code") as? String } == [
                "T4"
            ])
        #expect(try fetch(context, "Thing", "when > %@ AND blob != nil", [four["when"]!]).count == 8)
        #expect(try fetch(context, "Thing", "dec >= 10").count == 3)
        let flags = NSFetchRequest<NSDictionary>(entityName: "Thing")
        flags.resultType = .dictionaryResultType
        flags.propertiesToFetch = ["flag"]
        flags.returnsDistinctResults = true
        flags.sortDescriptors = [NSSortDescriptor(key: "flag", ascending: true)]
        #expect(try context.fetch(flags).compactMap { ($0["flag"] as? NSNumber)?.boolValue } == [false, true])
    }

    @Test("Cascading deletes and nullified inverses are saved", arguments: StoreKind.allCases)
    func deleteRules(kind: StoreKind) throws {
        let url = url(kind)
        let (coordinator, _) = try coordinator(kind, at: url)
        let context = context(coordinator)
        let owner = try populate(context, count: 4)
        let label = try #require(try fetch(context, "Label", "title == 'L1'").first)
        context.delete(label)
        context.delete(owner)
        try context.save()
        let reader = kind.persists ? try self.coordinator(kind, at: url).0 : coordinator
        let again = self.context(reader)
        #expect(try fetch(again, "Owner").isEmpty)
        #expect(try fetch(again, "Thing").isEmpty)
        #expect(try fetch(again, "Label").count == 2)
        #expect(
            try fetch(again, "Label").allSatisfy {
                ($0.value(forKey: "things") as? Set<NSManagedObject>)?.isEmpty ?? false
            })
    }

    @Test("Metadata set on the coordinator is saved with the store", arguments: StoreKind.allCases.filter(\.persists))
    func metadata(kind: StoreKind) throws {
        let url = url(kind)
        let (coordinator, store) = try coordinator(kind, at: url)
        var metadata = coordinator.metadata(for: store)
        metadata["AppKey"] = "value"
        coordinator.setMetadata(metadata, for: store)
        try populate(context(coordinator), count: 1)
        let read = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: kind.type, at: url, options: nil)
        #expect(read["AppKey"] as? String == "value")
        #expect(read[NSStoreUUIDKey] as? String == store.identifier)
        #expect(read[NSStoreTypeKey] as? String == kind.type)
        #expect(try self.coordinator(kind, at: url).1.metadata["AppKey"] as? String == "value")
    }

    @Test(
        "A save over another coordinator's save of the same object is a merge conflict",
        arguments: StoreKind.allCases.filter(\.sharesFile))
    func optimisticLocking(kind: StoreKind) throws {
        let url = url(kind)
        let (a, _) = try coordinator(kind, at: url)
        try populate(context(a), count: 2)
        let (b, _) = try coordinator(kind, at: url)
        let contextA = context(a)
        let contextB = context(b)
        let thingA = try #require(try fetch(contextA, "Thing", "code == 'T1'").first)
        let thingB = try #require(try fetch(contextB, "Thing", "code == 'T1'").first)
        thingA.setValue("from A", forKey: "str")
        try contextA.save()
        thingB.setValue("from B", forKey: "str")
        #expect(throws: (any Error).self) { try contextB.save() }
        do {
            try contextB.save()
        } catch let error as NSError {
            #expect(error.code == NSManagedObjectMergeError)
        }
        contextB.mergePolicy = NSMergePolicy.mergeByPropertyObjectTrump
        try contextB.save()
        let check = context(try coordinator(kind, at: url).0)
        #expect(try fetch(check, "Thing", "code == 'T1'").first?.value(forKey: "str") as? String == "from B")
        // B's other objects and A's inserts both survive: the later save read the earlier one.
        let inserted = NSEntityDescription.insertNewObject(forEntityName: "Label", into: contextA)
        inserted.setValue("from A", forKey: "title")
        try contextA.save()
        let other = NSEntityDescription.insertNewObject(forEntityName: "Label", into: contextB)
        other.setValue("from B", forKey: "title")
        try contextB.save()
        let last = context(try coordinator(kind, at: url).0)
        #expect(
            Set(try fetch(last, "Label").compactMap { $0.value(forKey: "title") as? String }) == [
                "L1", "L2", "L3", "from A", "from B",
            ])
    }

    @Test("Uniqueness constraints refuse a duplicate, or merge it under a merge policy", arguments: StoreKind.allCases)
    func uniqueness(kind: StoreKind) throws {
        let (coordinator, _) = try coordinator(kind, at: url(kind))
        let context = context(coordinator)
        try populate(context, count: 2)
        let duplicate = NSEntityDescription.insertNewObject(forEntityName: "Thing", into: context)
        duplicate.setValue("T1", forKey: "code")
        do {
            try context.save()
            Issue.record("a duplicate code was saved")
        } catch let error as NSError {
            #expect(error.code == NSManagedObjectConstraintMergeError)
        }
        context.mergePolicy = NSMergePolicy.mergeByPropertyObjectTrump
        try context.save()
        #expect(try fetch(self.context(coordinator), "Thing", "code == 'T1'").count == 1)
    }

    @Test(
        "migratePersistentStore changes the type and keeps every object, order and the UUID",
        arguments: StoreKind.allCases.filter(\.persists))
    func changingType(kind: StoreKind) throws {
        for target in StoreKind.allCases.filter(\.persists) where target != kind {
            let source = url(kind, "source-\(target.rawValue)")
            let (coordinator, store) = try coordinator(kind, at: source)
            try populate(context(coordinator), count: 5)
            let uuid = store.identifier
            let destination = url(target, "converted-from-\(kind.rawValue)")
            let migrated = try coordinator.migratePersistentStore(
                store, to: destination, options: nil, withType: target.type)
            #expect(migrated.identifier == uuid)
            let reader = context(try self.coordinator(target, at: destination).0)
            #expect(reader.persistentStoreCoordinator?.persistentStores.first?.identifier == uuid)
            let things = try fetch(reader, "Thing", sort: "i16")
            #expect(things.compactMap { $0.value(forKey: "code") as? String } == (1...5).map { "T\($0)" })
            #expect(things.last?.value(forKey: "link") as? URL == URL(string: "https://example.com/5?a=b&c=d"))
            let labels = things.first?.value(forKey: "labels") as? NSOrderedSet
            #expect(
                labels?.array.compactMap { ($0 as? NSManagedObject)?.value(forKey: "title") as? String } == [
                    "L3", "L2", "L1",
                ])
            #expect((try fetch(reader, "Owner").first?.value(forKey: "things") as? Set<NSManagedObject>)?.count == 5)
        }
    }

    @Test(
        "replacePersistentStore copies a store whole; destroyPersistentStore removes it and nothing else",
        arguments: StoreKind.allCases.filter(\.persists))
    func replacingAndDestroying(kind: StoreKind) throws {
        let source = url(kind, "source")
        let destination = url(kind, "destination")
        let (coordinator, store) = try coordinator(kind, at: source)
        try populate(context(coordinator), count: 3)
        let (other, _) = try self.coordinator(kind, at: destination)
        try populate(context(other), count: 1)
        try coordinator.replacePersistentStore(
            at: destination, destinationOptions: nil, withPersistentStoreFrom: source, sourceOptions: nil,
            ofType: kind.type)
        let (reader, replaced) = try self.coordinator(kind, at: destination)
        #expect(replaced.identifier == store.identifier)
        #expect(try fetch(context(reader), "Thing").count == 3)
        try reader.destroyPersistentStore(at: destination, ofType: kind.type, options: nil)
        #expect(!FileManager.default.fileExists(atPath: destination.path) || kind == .sqlite)
        if kind == .postgres {
            #expect(throws: (any Error).self) {
                try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: kind.type, at: destination)
            }
        }
        let stranger = directory.file("not-a-store.\(kind.rawValue)")
        try Data("plain text, not a store".utf8).write(to: stranger)
        #expect(throws: (any Error).self) {
            try reader.destroyPersistentStore(at: stranger, ofType: kind.type, options: nil)
        }
        #expect(FileManager.default.fileExists(atPath: stranger.path))
    }

    @Test(
        "A save in one context merges into another of the coordinator (mergeChanges(fromContextDidSave:))",
        arguments: StoreKind.allCases)
    func merging(kind: StoreKind) throws {
        let (coordinator, _) = try coordinator(kind, at: url(kind))
        let writer = context(coordinator)
        try populate(writer, count: 2)
        let reader = context(coordinator)
        let thing = try #require(try fetch(reader, "Thing", "code == 'T1'").first)
        #expect(thing.value(forKey: "str") as? String == ConformanceModel.values(1)["str"] as? String)
        let changed = try #require(try fetch(writer, "Thing", "code == 'T1'").first)
        changed.setValue("merged", forKey: "str")
        let added = NSEntityDescription.insertNewObject(forEntityName: "Label", into: writer)
        added.setValue("new", forKey: "title")
        let observer = NotificationCenter.default.addObserver(
            forName: .NSManagedObjectContextDidSave, object: writer, queue: nil
        ) { note in reader.mergeChanges(fromContextDidSave: note) }
        try writer.save()
        NotificationCenter.default.removeObserver(observer)
        #expect(thing.value(forKey: "str") as? String == "merged")
        #expect(try fetch(reader, "Label", "title == 'new'").count == 1)
    }
}
