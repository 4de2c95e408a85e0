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
