import Foundation
import Testing

@testable import OpenCoreData
@testable import OpenCoreDataSQLite

/// The model a store caches (`Z_MODELCACHE`) and the digests in its metadata, written as Apple's
/// Core Data writes them. Related documentation: STORE-FORMAT.md, "Bookkeeping tables" and "Store
/// digests" (recovered from the fixtures); Core Data Model Versioning and Data Migration
/// Programming Guide (Core Data keeps the source model with the store so a store can be migrated).
@Suite("SQLite store: the cached model and the metadata digests")
struct ModelCacheTests {
    let directory = TemporaryDirectory()

    /// What a model says, property by property, for comparing two models.
    static func shape(_ model: NSManagedObjectModel) -> [String] {
        model.entities.sorted { ($0.name ?? "") < ($1.name ?? "") }.flatMap { entity -> [String] in
            let head =
                "\(entity.name ?? "") : \(entity.superentity?.name ?? "-") abstract=\(entity.isAbstract) "
                + "unique=\(entity.uniquenessConstraints.map { $0.map { "\($0)" } })"
            let properties = entity.propertiesByName.values.sorted { $0.name < $1.name }.map { property -> String in
                var line = "  \(property.name) optional=\(property.isOptional) transient=\(property.isTransient)"
                if let attribute = property as? NSAttributeDescription {
                    line +=
                        " type=\(attribute.attributeType.rawValue) default=\(String(describing: attribute.defaultValue))"
                }
                if let relationship = property as? NSRelationshipDescription {
                    line +=
                        " -> \(relationship.destinationEntity?.name ?? "?") inverse=\(relationship.inverseRelationship?.name ?? "-")"
                        + " rule=\(relationship.deleteRule.rawValue) \(relationship.minCount)...\(relationship.maxCount)"
                        + " ordered=\(relationship.isOrdered)"
                }
                return line
            }
            return [head] + properties
        }
    }

    /// The lines one shape has and the other lacks, marked `+` and `-`.
    static func difference(_ new: [String], _ old: [String]) -> [String] {
        let added = new.filter { !old.contains($0) }.map { "+ \($0)" }
        let removed = old.filter { !new.contains($0) }.map { "- \($0)" }
        return added + removed
    }

    /// SHA-512 (FIPS 180-4) answers the standard's own test vector and a two-block message.
    @Test func sha512KnownAnswers() {
        #expect(
            SHA512.hash(Array("abc".utf8)).map { String(format: "%02x", $0) }.joined()
                == "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
                + "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f")
        #expect(
            SHA512.hash([UInt8](repeating: 0x61, count: 200)).map { String(format: "%02x", $0) }.joined()
                == "4b11459c33f52a22ee8236782714c150a3b2c60994e9acee17fe68947a3e6789"
                + "f31e7668394592da7bef827cddca88c4e6f86e4df7ed1ae6cba71f3e98faee9f")
    }

    /// `NSStoreModelVersionHashesDigest` and `NSStoreModelVersionChecksumKey`, computed from the
    /// matching model version, equal what Apple wrote in every fixture that has them.
    @Test(arguments: FixtureStores.cases.filter { $0.models != nil })
    func digestsMatchApples(_ fixture: FixtureStores.Case) throws {
        guard let root = Fixtures.root() else { return }
        let url = try FixtureStores.copy(fixture.store, root: root, to: directory)
        let model = try #require(
            try FixtureStores.matchingModel(
                for: url, models: root.appendingPathComponent("stores").appendingPathComponent(fixture.models!)))
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        if let digest = metadata["NSStoreModelVersionHashesDigest"] as? String {
            #expect(ModelVersionDigests.digest(model.entityVersionHashesByName) == digest)
        }
        if let checksum = metadata["NSStoreModelVersionChecksumKey"] as? String {
            #expect(ModelVersionDigests.checksum(model.entityVersionHashesByName) == checksum)
        }
    }

    /// Apple's cached model, decoded, written again by the encoder and decoded once more, says
    /// the same thing: every entity, property, type, default, relationship, inverse, delete rule
    /// and order — the encoder writes what the decoder (and Apple's format) reads.
    @Test(arguments: FixtureStores.cases)
    func applesCachedModelsSurviveReencoding(_ fixture: FixtureStores.Case) throws {
        guard let root = Fixtures.root() else { return }
        let url = try FixtureStores.copy(fixture.store, root: root, to: directory)
        let apples = try NSManagedObjectModel(contentsOfStoreAt: url)
        let archive = CompiledModelEncoder.archive(apples)
        let again = try CompiledModelDecoder.model(from: archive)
        #expect(Self.difference(Self.shape(again), Self.shape(apples)).isEmpty)
        #expect(again.entityVersionHashesByName == apples.entityVersionHashesByName)
    }

    /// A store created here caches its model in one `Z_MODELCACHE` row, in Apple's archive
    /// (root `NSManagedObjectModel`, entities in an `NSKnownKeysDictionary1`, `_P` flags); the
    /// cache reopens the store with no model and has the model's version hashes. The metadata
    /// carries both digests.
    @Test func newStoresCacheTheirModel() throws {
        let url = directory.file("Company.sqlite")
        let model = CompanyModel.make()
        do {
            let context = try sqliteStack(url, model: model)
            context.employee("Ada", salary: 3)
            try context.save()
        }
        #expect(try sqlite3(url, "SELECT COUNT(*) FROM Z_MODELCACHE") == ["1"])
        let cached = try NSManagedObjectModel(contentsOfStoreAt: url)
        #expect(cached.entityVersionHashesByName == model.entityVersionHashesByName)
        #expect(Self.difference(Self.shape(cached), Self.shape(model)).isEmpty)

        let archive = try KeyedArchive(data: CompiledModelEncoder.archive(model))
        let rootObject = try #require(archive.objects[archive.root] as? [String: Any])
        #expect(archive.className(rootObject) == "NSManagedObjectModel")
        let entities = try #require(archive.dictionary(rootObject["NSEntities"]))
        #expect(archive.className(entities) == "NSKnownKeysDictionary1")
        let employee = try #require(
            archive.pairs(rootObject["NSEntities"]).first { $0.key == "Employee" }.flatMap {
                archive.dictionary($0.value)
            })
        let name = try #require(
            archive.pairs(employee["NSProperties"]).first { $0.key == "name" }.flatMap { archive.dictionary($0.value) })
        #expect(archive.className(name) == "NSAttributeDescription")
        #expect(name["_P"] as? Int == 0xF1)  // required, no version-hash modifier: as in the fixtures
        let salary = try #require(
            archive.pairs(employee["NSProperties"]).first { $0.key == "salary" }.flatMap {
                archive.dictionary($0.value)
            })
        #expect(salary["_P"] as? Int == 0xF3)  // optional

        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(
            metadata["NSStoreModelVersionHashesDigest"] as? String
                == ModelVersionDigests.digest(model.entityVersionHashesByName))
    }
}
