import Foundation
import Testing

@testable import OpenCoreData

/// Entity version hashes, computed as STORE-FORMAT.md describes and checked against the hashes Apple's
/// Core Data recorded in real stores and compiled models (`fixtures/version-hashes.json`).
@Suite("Version hashes")
struct VersionHashTests {
    struct Vector: Decodable {
        let source: String
        let model: String
        let entity: String
        let hash: String
    }

    struct Vectors: Decodable {
        let vectors: [Vector]
    }

    static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    @Test("SHA-256 matches the FIPS 180-4 test vectors")
    func sha256() {
        #expect(
            Self.hex(Data(SHA256.hash(Array("abc".utf8))))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            Self.hex(Data(SHA256.hash([UInt8]()))) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        )
        let long = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        #expect(Self.hex(Data(SHA256.hash(long))) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test("every entity hash in version-hashes.json is reproduced from its model file")
    func fixtureVectors() throws {
        guard let root = Fixtures.root() else { return }
        let data = try Data(contentsOf: root.appendingPathComponent("version-hashes.json"))
        let vectors = try JSONDecoder().decode(Vectors.self, from: data).vectors
        #expect(vectors.count == 55)
        var mismatches: [String] = []
        for vector in vectors {
            let url = root.appendingPathComponent(vector.model)
            let model = try NSManagedObjectModel(validatingContentsOf: url)
            let entity = try #require(model.entitiesByName[vector.entity], "\(vector.entity) in \(vector.model)")
            let computed = Self.hex(entity.versionHash)
            if computed != vector.hash {
                mismatches.append("\(vector.model) \(vector.entity): \(computed) ≠ \(vector.hash)")
            }
        }
        #expect(
            mismatches.isEmpty, "\(mismatches.count) of \(vectors.count) differ:\n\(mismatches.joined(separator: "\n"))"
        )
    }
}

/// Each rule of Apple's version-hash computation (STORE-FORMAT.md, "Version hashes"), pinned on a
/// hand-built model: the fixtures above show the rules hold for real models, these show which facts
/// of a model change a hash and which do not. Apple: "Core Data's perspective on versioning is that
/// it is only interested in features of the model that affect persistence" (Core Data Model
/// Versioning and Data Migration Programming Guide, "Understanding Versions").
@Suite("Version hash rules")
struct VersionHashRuleTests {
    static func entity(_ name: String, _ properties: [NSPropertyDescription]) -> NSEntityDescription {
        let entity = NSEntityDescription()
        entity.name = name
        entity.properties = properties
        return entity
    }

    static func sha(_ bytes: [UInt8]) -> Data { Data(SHA256.hash(bytes)) }

    @Test("an attribute hashes its name, flags, type, then one byte for external storage")
    func externalStorage() {
        let plain = CompanyModel.attribute("imageData", .binaryDataAttributeType)
        let external = CompanyModel.attribute("imageData", .binaryDataAttributeType)
        external.allowsExternalBinaryDataStorage = true
        let base = SHA256.hash(Array("imageData".utf8) + [1, 0])
        #expect(plain.versionHash == Self.sha(base + [0xe8, 0x03, 0, 0]))
        #expect(external.versionHash == Self.sha(base + [0xe8, 0x03, 0, 0, 1]))
        // The entity of a model that allows external storage is a different version for Core Data.
        #expect(Self.entity("User", [plain]).versionHash != Self.entity("User", [external]).versionHash)
    }

    @Test("external storage's byte comes before the history-on-deletion byte")
    func externalThenHistory() {
        let attribute = CompanyModel.attribute("blob", .binaryDataAttributeType)
        attribute.allowsExternalBinaryDataStorage = true
        attribute.preservesValueInHistoryOnDeletion = true
        let base = SHA256.hash(Array("blob".utf8) + [1, 0])
        #expect(attribute.versionHash == Self.sha(base + [0xe8, 0x03, 0, 0, 1, 1]))
    }

    @Test("transient attributes, typed or of no type, take no part in the entity's hash")
    func transientUndefined() {
        let name = CompanyModel.attribute("name", .stringAttributeType)
        let transient = CompanyModel.attribute("remoteIdentifier", .undefinedAttributeType)
        transient.isTransient = true
        let typed = CompanyModel.attribute("cache", .stringAttributeType)
        typed.isTransient = true
        let without = Self.entity("User", [CompanyModel.attribute("name", .stringAttributeType)])
        #expect(Self.entity("User", [name, transient, typed]).versionHash == without.versionHash)
    }

    @Test("a relationship that is its own inverse leaves the inverse's name out")
    func ownInverse() throws {
        let person = NSEntityDescription()
        person.name = "Person"
        let friends = CompanyModel.relationship("friends", to: person, toMany: true, rule: .nullifyDeleteRule)
        friends.inverseRelationship = friends
        person.properties = [friends]
        let base = SHA256.hash(Array("friends".utf8) + [1, 0])
        #expect(friends.versionHash == Self.sha(base + Array("Person".utf8) + [0, 0, 0, 0, 0, 0, 0, 0]))

        let other = NSEntityDescription()
        other.name = "Group"
        let members = CompanyModel.relationship("members", to: person, toMany: true, rule: .nullifyDeleteRule)
        let groups = CompanyModel.relationship("groups", to: other, toMany: true, rule: .nullifyDeleteRule)
        CompanyModel.link(members, groups)
        other.properties = [members]
        let memberBase = SHA256.hash(Array("members".utf8) + [1, 0])
        #expect(
            members.versionHash
                == Self.sha(memberBase + Array("Person".utf8) + Array("groups".utf8) + [0, 0, 0, 0, 0, 0, 0, 0]))
    }

    @Test("the entity's modifier comes before its uniqueness constraints, which are sorted")
    func constraintsAfterModifier() {
        let first = Self.entity("Tag", [CompanyModel.attribute("a", .stringAttributeType)])
        first.uniquenessConstraints = [["b"], ["a"]]
        first.versionHashModifier = "2"
        let attribute = CompanyModel.attribute("a", .stringAttributeType).versionHash
        #expect(first.versionHash == Self.sha(Array("Tag".utf8) + [0] + attribute + Array("2ab".utf8)))
        let reordered = Self.entity("Tag", [CompanyModel.attribute("a", .stringAttributeType)])
        reordered.uniquenessConstraints = [["a"], ["b"]]
        reordered.versionHashModifier = "2"
        #expect(first.versionHash == reordered.versionHash)
    }

    @Test("a derived attribute hashes only its derivation, as Xcode compiles it")
    func derived() {
        let derived = NSDerivedAttributeDescription()
        derived.name = "pagesCount"
        derived.attributeType = .integer64AttributeType
        derived.derivationExpression = NSExpression(format: "pages.@count")
        #expect(derived.versionHash == Self.sha(Array("count:(pages)".utf8)))
        derived.derivationExpression = NSExpression(format: "uppercase:(title)")
        #expect(derived.versionHash == Self.sha(Array("uppercase:(title)".utf8)))
    }

    @Test("SampleModel2's stores: every entity, derived attribute included, hashes as Apple recorded")
    func sampleModel2() throws {
        guard let root = Fixtures.root() else { return }
        for file in ["SampleModel2_V1.sqlite", "SampleModel2_V2.sqlite"] {
            let url = root.appendingPathComponent("stores/coredataplus-samplemodel/SampleModel2/Fixtures/" + file)
            let directory = TemporaryDirectory()
            let copy = directory.url.appendingPathComponent(file)
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: url.path + suffix) {
                try FileManager.default.copyItem(atPath: url.path + suffix, toPath: copy.path + suffix)
            }
            // The model the store keeps is Apple's compiled one; its derivation decodes from the archive.
            let model = try NSManagedObjectModel(contentsOfStoreAt: copy)
            let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(
                ofType: NSSQLiteStoreType, at: copy)
            let stored = try #require(metadata[NSStoreModelVersionHashesKey] as? [String: Data])
            #expect(stored.count == 6)
            for (name, hash) in stored {
                #expect(model.entitiesByName[name]?.versionHash == hash, "\(file) \(name)")
            }
        }
    }
}
