import Foundation
import Testing

@testable import OpenCoreData

/// Apple-written stores in `../shared/fixtures/stores`, each opened from a temporary copy (with
/// its `-wal` and `-shm`, STORE-FORMAT.md) and read back completely, checked against what the `sqlite3`
/// tool reads from the same file.
enum FixtureStores {
    /// A store file and the model sources beside it.
    struct Case: CustomTestStringConvertible, Sendable {
        let store: String
        let models: String?
        var testDescription: String { (store as NSString).lastPathComponent }
    }

    static let cases: [Case] =
        [
            Case(
                store: "coredataplus-samplemodel/SampleModel/Fixtures/SampleModel_V1.sqlite",
                models: "coredataplus-samplemodel/SampleModel/SampleModel.xcdatamodeld"),
            Case(
                store: "coredataplus-samplemodel/SampleModel/Fixtures/SampleModel_V2.sqlite",
                models: "coredataplus-samplemodel/SampleModel/SampleModel.xcdatamodeld"),
            Case(
                store: "coredataplus-samplemodel/SampleModel3/Fixtures/SampleModel3_V1.sqlite",
                models: "coredataplus-samplemodel/SampleModel3/SampleModel3.xcdatamodeld"),
            Case(store: "coredataplus-samplemodel/SampleModel2/Fixtures/SampleModel2_V1.sqlite", models: nil),
            Case(store: "coredataplus-samplemodel/SampleModel2/Fixtures/SampleModel2_V2.sqlite", models: nil),
        ]
        + (1...5).map {
            Case(store: "ddg-bookmarks/Bookmarks_V\($0).sqlite", models: "ddg-bookmarks/BookmarksModel.xcdatamodeld")
        } + [
            Case(store: "ddg-syncmetadata/SyncMetadata_V3.sqlite", models: "ddg-syncmetadata/SyncMetadata.xcdatamodeld")
        ]
        + ["Moody", "Moody 2", "Moody 3", "Moody 4", "Moody 5"].map {
            Case(
                store: "objcio-moody-migrations/stores/\($0).moody",
                models: "objcio-moody-migrations/Moody.xcdatamodeld")
        }
        + (1...3).map {
            Case(
                store: "wibosco-migration/CoreDataMigration_Example_\($0).sqlite",
                models: "wibosco-migration/CoreDataMigration_Example.xcdatamodeld")
        }

    /// Copies the store and its `-wal`/`-shm` into `directory`.
    static func copy(_ path: String, root: URL, to directory: TemporaryDirectory) throws -> URL {
        let source = root.appendingPathComponent("stores").appendingPathComponent(path)
        let target = directory.file(source.lastPathComponent)
        for suffix in ["", "-wal", "-shm"] {
            let file = URL(fileURLWithPath: source.path + suffix)
            guard FileManager.default.fileExists(atPath: file.path) else { continue }
            let destination = URL(fileURLWithPath: target.path + suffix)
            try FileManager.default.copyItem(at: file, to: destination)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: destination.path)
        }
        return target
    }

    /// The model version (of the `.xcdatamodeld`) whose entity hashes are the store's.
    static func matchingModel(for store: URL, models: URL) throws -> NSManagedObjectModel? {
        try matchingVersion(for: store, models: models).flatMap { NSManagedObjectModel(contentsOf: $0) }
    }

    /// The model version's file (`.xcdatamodel` of the `.xcdatamodeld`) whose entity hashes are
    /// the store's.
    static func matchingVersion(for store: URL, models: URL) throws -> URL? {
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: store, options: nil)
        let hashes = metadata["NSStoreModelVersionHashes"] as? [String: Data] ?? [:]
        let versions = try FileManager.default.contentsOfDirectory(at: models, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "xcdatamodel" }
        return versions.first { NSManagedObjectModel(contentsOf: $0)?.entityVersionHashesByName == hashes }
    }
}

/// Opening Apple's stores. Related documentation: Core Data Programming Guide, "Persistent Store
/// Types and Behaviors"; STORE-FORMAT.md (how the layout was established from these very files).
@Suite("SQLite store: Apple-written fixture stores")
struct FixtureStoreTests {
    /// Every fixture store opens with the model version that wrote it — found by Apple's version
    /// hashes — and every row reads back: attribute values, to-one destinations, to-many
    /// membership and `Z_FOK_` order, each compared with the row as `sqlite3` reads it.
    @Test(arguments: FixtureStores.cases.filter { $0.models != nil })
    func opensWithItsModelAndReadsEveryRow(_ fixture: FixtureStores.Case) throws {
        guard let root = Fixtures.root() else { return }
        let directory = TemporaryDirectory()
        let url = try FixtureStores.copy(fixture.store, root: root, to: directory)
        let model = try #require(
            try FixtureStores.matchingModel(
                for: url, models: root.appendingPathComponent("stores").appendingPathComponent(fixture.models!)),
            "no model version of \(fixture.models!) has the store's version hashes")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        #expect(store.identifier == (try sqlite3(url, "SELECT Z_UUID FROM Z_METADATA")).first)
        try RowComparison(url: url, context: context, model: model).compareEverything()
    }

    /// A new store made from the model version that wrote an Apple store has the same
    /// single-column indexes Apple made: one per to-one and one per attribute marked Indexed,
    /// named `Z<TABLE>_Z<COLUMN>_INDEX` (the objc.io Moody stores: `ZMOOD_ZREMOTEID_INDEX` for
    /// `remoteID indexed="YES"`). Without them a lookup by an indexed attribute scanned the table
    /// (it was once far slower than hand-written SQLite; BENCHMARKS-JOURNAL.md).
    @Test(arguments: ["Moody", "Moody 2", "Moody 3", "Moody 4", "Moody 5"])
    func indexedAttributesGetApplesIndexes(_ name: String) throws {
        guard let root = Fixtures.root() else { return }
        let directory = TemporaryDirectory()
        let apple = try FixtureStores.copy("objcio-moody-migrations/stores/\(name).moody", root: root, to: directory)
        let models = root.appendingPathComponent("stores/objcio-moody-migrations/Moody.xcdatamodeld")
        let model = try #require(try FixtureStores.matchingModel(for: apple, models: models))
        let url = directory.file("New.sqlite")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        let query =
            "SELECT name || ' ' || sql FROM sqlite_master WHERE type = 'index' AND name LIKE '%^_INDEX' ESCAPE '^' ORDER BY name"
        let ours = try sqlite3(url, query)
        #expect(ours == (try sqlite3(apple, query)))
        #expect(ours.contains { $0.hasPrefix("ZMOOD_ZMARKEDFORDELETIONDATE_INDEX ") })
    }

    /// Every fixture store also opens with no model file, from the model Apple cached in
    /// `Z_MODELCACHE` (raw deflate of a keyed archive, STORE-FORMAT.md) — the only copy of SampleModel2's
    /// model — and reads back the same rows.
    @Test(arguments: FixtureStores.cases)
    func opensWithItsCachedModelAndReadsEveryRow(_ fixture: FixtureStores.Case) throws {
        guard let root = Fixtures.root() else { return }
        let directory = TemporaryDirectory()
        let url = try FixtureStores.copy(fixture.store, root: root, to: directory)
        let model = try NSManagedObjectModel(contentsOfStoreAt: url)
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: url, options: nil)
        let stored = metadata["NSStoreModelVersionHashes"] as? [String: Data] ?? [:]
        #expect(Set(model.entitiesByName.keys) == Set(stored.keys))
        // Apple's version hashes come back from the cached model too, except where STORE-FORMAT.md
        // cannot recompute them (derived attributes).
        let derived = model.entities.contains { $0.properties.contains { $0 is NSDerivedAttributeDescription } }
        if !derived { #expect(model.entityVersionHashesByName == stored) }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try RowComparison(url: url, context: context, model: model).compareEverything()
    }
}

/// Compares what the store returns with what `sqlite3` reads, entity by entity.
struct RowComparison {
    let url: URL
    let context: NSManagedObjectContext
    let model: NSManagedObjectModel

    /// `Z_ENT` by entity name, from the file.
    func entityNumbers() throws -> [String: Int] {
        var numbers: [String: Int] = [:]
        for line in try sqlite3(url, "SELECT Z_ENT || '|' || Z_NAME FROM Z_PRIMARYKEY") {
            let parts = line.split(separator: "|", maxSplits: 1)
            if parts.count == 2, let number = Int(parts[0]) { numbers[String(parts[1])] = number }
        }
        return numbers
    }

    /// Rows of `sql` as JSON objects (sqlite3 `-json`), blobs selected as hex.
    func json(_ sql: String) throws -> [[String: Any]] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = ["-readonly", "-json", url.path, sql]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard !data.isEmpty else { return [] }
        return (try JSONSerialization.jsonObject(with: data) as? [[String: Any]]) ?? []
    }

    static func primaryKey(_ object: NSManagedObject) -> Int {
        Int(object.objectID.uriRepresentation().lastPathComponent.dropFirst()) ?? -1
    }

    func compareEverything() throws {
        let numbers = try entityNumbers()
        for entity in model.entities where entity.superentity == nil {
            var root = entity
            while let parent = root.superentity { root = parent }
            let table = "Z" + (entity.name ?? "").uppercased()
            let request = NSFetchRequest<NSManagedObject>(entityName: entity.name!)
            let objects = try context.fetch(request)
            let count = try sqlite3(url, "SELECT COUNT(*) FROM \(table)").first.flatMap { Int($0) }
            #expect(objects.count == count, "row count of \(entity.name!)")
            let byKey = Dictionary(objects.map { (Self.primaryKey($0), $0) }, uniquingKeysWith: { a, _ in a })
            for object in objects {
                let names = [object.entity.name, object.entity.renamingIdentifier].compactMap { $0 }
                #expect(names.contains { numbers[$0] != nil }, "entity \(object.entity.name ?? "") is in Z_PRIMARYKEY")
            }
            try compareColumns(of: entity, table: table, objects: byKey)
        }
    }

    /// The entity's `Z_ENT` in the file: by name, or by its renaming identifier.
    private func number(of entity: NSEntityDescription) throws -> Int {
        let numbers = try entityNumbers()
        return numbers[entity.name ?? ""] ?? entity.renamingIdentifier.flatMap { numbers[$0] } ?? -1
    }

    private func compareColumns(of root: NSEntityDescription, table: String, objects: [Int: NSManagedObject]) throws {
        for entity in [root] + root.subentities.flatMap({ [$0] + $0.subentities }) {
            for property in entity.properties where !property.isTransient {
                let column = "Z" + property.name.uppercased()
                switch property {
                case let attribute as NSAttributeDescription:
                    let rows = try json(
                        "SELECT Z_PK AS pk, CASE WHEN typeof(\(column)) = 'blob' THEN hex(\(column)) ELSE \(column) END AS v"
                            + " FROM \(table) WHERE Z_ENT = \(number(of: entity))")
                    for row in rows {
                        guard let pk = row["pk"] as? Int, let object = objects[pk] else {
                            Issue.record("row \(row) of \(table) was not fetched")
                            continue
                        }
                        let value = object.value(forKey: attribute.name)
                        #expect(
                            Self.same(value, row["v"], attribute.attributeType),
                            "\(entity.name!).\(attribute.name) of row \(pk): \(String(describing: value)) vs \(String(describing: row["v"]))"
                        )
                    }
                case let relationship as NSRelationshipDescription where !relationship.isToMany:
                    let rows = try json(
                        "SELECT Z_PK AS pk, \(column) AS v FROM \(table) WHERE Z_ENT = \(number(of: entity))")
                    for row in rows {
                        guard let pk = row["pk"] as? Int, let object = objects[pk] else { continue }
                        let destination = object.value(forKey: relationship.name) as? NSManagedObject
                        #expect(
                            destination.map(Self.primaryKey) == row["v"] as? Int, "\(entity.name!).\(relationship.name)"
                        )
                        // The inverse to-many holds the object, in Z_FOK_ order when ordered.
                        guard let destination, let inverse = relationship.inverseRelationship else { continue }
                        if inverse.isOrdered {
                            let members = (destination.value(forKey: inverse.name) as? NSOrderedSet)?.array ?? []
                            let expected = try sqlite3(
                                url,
                                "SELECT Z_PK FROM \(table) WHERE \(column) = \(Self.primaryKey(destination)) ORDER BY Z_FOK_\(relationship.name.uppercased())"
                            )
                            #expect(
                                members.map { String(Self.primaryKey($0 as! NSManagedObject)) } == expected,
                                "order of \(inverse.name)")
                        } else {
                            let members = destination.value(forKey: inverse.name) as? Set<NSManagedObject> ?? []
                            #expect(members.contains(object), "\(inverse.name) holds its member")
                        }
                    }
                case let relationship as NSRelationshipDescription:
                    guard let inverse = relationship.inverseRelationship, inverse.isToMany else { continue }
                    // Many-to-many: compare with the join table's pairs.
                    for object in objects.values where object.entity === entity {
                        let members = DynamicValue.elements(object.value(forKey: relationship.name) as Any) ?? []
                        #expect(
                            members.allSatisfy {
                                (($0 as? NSManagedObject)?.value(forKey: inverse.name)).map {
                                    DynamicValue.elements($0)?.contains { ($0 as AnyObject) === object } ?? false
                                } ?? false
                            })
                    }
                    let joins = try sqlite3(
                        url,
                        "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'Z^_%' ESCAPE '^' AND name GLOB 'Z_[0-9]*'")
                    #expect(joins.first != "0", "a join table exists for \(relationship.name)")
                default:
                    continue
                }
            }
        }
    }

    static func same(_ value: Any?, _ stored: Any?, _ type: NSAttributeType) -> Bool {
        guard let stored, !(stored is NSNull) else { return value == nil }
        guard let value else { return false }
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            return (value as? Int) == (stored as? NSNumber)?.intValue
        case .booleanAttributeType:
            return (value as? Bool) == ((stored as? NSNumber)?.intValue ?? 0 != 0)
        case .doubleAttributeType, .floatAttributeType:
            guard let number = stored as? NSNumber else { return false }
            let double = (value as? Double) ?? (value as? Float).map(Double.init) ?? .nan
            return abs(double - number.doubleValue) <= 1e-6 * max(1, abs(number.doubleValue))
        case .dateAttributeType:
            guard let number = stored as? NSNumber, let date = value as? Date else { return false }
            return abs(date.timeIntervalSinceReferenceDate - number.doubleValue) < 1e-6
        case .stringAttributeType:
            return (value as? String) == (stored as? String)
        case .UUIDAttributeType:
            guard let uuid = value as? UUID, let hex = stored as? String else { return false }
            return uuid.uuidString.replacingOccurrences(of: "-", with: "") == hex
        case .URIAttributeType:
            return (value as? URL)?.absoluteString == (stored as? String)
        case .decimalAttributeType:
            guard let decimal = value as? Decimal, let number = stored as? NSNumber else { return false }
            return abs(NSDecimalNumber(decimal: decimal).doubleValue - number.doubleValue) < 1e-9
        default:
            // Binary and transformable: the stored bytes, or a value decoded from them.
            if let data = value as? Data, let hex = stored as? String {
                return data.map { String(format: "%02X", $0) }.joined() == hex
            }
            return true
        }
    }
}
