import Foundation
import Testing

@testable import OpenCoreData

/// Compiled models (`.momd`/`.mom`, Apple's NSKeyedArchiver format, the same as a store's
/// `Z_MODELCACHE`), checked against the Apple-compiled fixtures and their VersionInfo.plist.
@Suite("Compiled models")
struct CompiledModelTests {
    static let bundles = [
        "stores/coredataplus-samplemodel/SampleModel/Fixtures/SampleModel.momd",
        "stores/coredataplus-samplemodel/SampleModel3/Fixtures/SampleModel3.momd",
    ]

    @Test("every compiled version reproduces the entity hashes Apple recorded in VersionInfo.plist", arguments: bundles)
    func versionInfoHashes(bundle: String) throws {
        guard let root = Fixtures.root() else { return }
        let momd = root.appendingPathComponent(bundle)
        let info = try #require(
            PropertyListSerialization.propertyList(
                from: Data(contentsOf: momd.appendingPathComponent("VersionInfo.plist")), format: nil) as? [String: Any]
        )
        let versions = try #require(info["NSManagedObjectModel_VersionHashes"] as? [String: [String: Data]])
        #expect(!versions.isEmpty)
        for (version, hashes) in versions {
            let model = try NSManagedObjectModel(validatingContentsOf: momd.appendingPathComponent(version + ".mom"))
            #expect(model.entityVersionHashesByName == hashes, "\(version)")
        }
        let current = try NSManagedObjectModel(validatingContentsOf: momd)
        let currentName = try #require(info["NSManagedObjectModel_CurrentVersionName"] as? String)
        #expect(current.entityVersionHashesByName == versions[currentName])
    }

    @Test("a compiled model has the structure of its source model")
    func structureMatchesSource() throws {
        guard let root = Fixtures.root() else { return }
        let compiled = try NSManagedObjectModel(
            validatingContentsOf: root.appendingPathComponent(Fixtures.sampleModelCompiled))
        let source = try NSManagedObjectModel(
            validatingContentsOf: root.appendingPathComponent(Fixtures.sampleModelSource))
        #expect(compiled.entityVersionHashesByName == source.entityVersionHashesByName)
        for entity in source.entities {
            let other = try #require(compiled.entitiesByName[entity.name ?? ""])
            #expect(other.superentity?.name == entity.superentity?.name)
            #expect(other.isAbstract == entity.isAbstract)
            #expect(other.managedObjectClassName == entity.managedObjectClassName)
            #expect(Set(other.propertiesByName.keys) == Set(entity.propertiesByName.keys))
            for (name, relationship) in entity.relationshipsByName {
                let decoded = try #require(other.relationshipsByName[name])
                #expect(decoded.destinationEntity?.name == relationship.destinationEntity?.name)
                #expect(decoded.inverseRelationship?.name == relationship.inverseRelationship?.name)
                #expect(decoded.deleteRule == relationship.deleteRule)
                #expect(decoded.isToMany == relationship.isToMany)
            }
            for (name, attribute) in entity.attributesByName {
                let decoded = try #require(other.attributesByName[name])
                #expect(decoded.attributeType == attribute.attributeType, "\(name)")
                #expect(decoded.isTransient == attribute.isTransient)
                #expect(decoded.valueTransformerName == attribute.valueTransformerName)
            }
        }
        let car = try #require(compiled.entitiesByName["Car"])
        #expect(car.attributesByName["currentDrivingSpeed"]?.defaultValue as? Int == 0)
    }

    @Test(
        "a damaged compiled model is a Cocoa error, never a crash",
        arguments: [
            Data(), Data("not a plist".utf8), Data("bplist00".utf8) + Data(repeating: 0xff, count: 64),
            try! PropertyListSerialization.data(
                fromPropertyList: ["$archiver": "NSKeyedArchiver"], format: .binary, options: 0),
            try! PropertyListSerialization.data(
                fromPropertyList: [
                    "$archiver": "NSKeyedArchiver", "$objects": ["$null"], "$top": ["root": ["CF$UID": 7]],
                ],
                format: .xml, options: 0),
        ])
    func damaged(data: Data) throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-\(UUID().uuidString).mom")
        try data.write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        do {
            _ = try NSManagedObjectModel(validatingContentsOf: url)
            Issue.record("a damaged model loaded")
        } catch let error as NSError {
            #expect(error.domain == NSCocoaErrorDomain)
            #expect(error.code == CocoaError.Code.fileReadCorruptFile.rawValue)
            #expect(error.userInfo[NSFilePathErrorKey] as? String == url.path)
        }
    }

    /// `NSEntityDescription.indexes`: "the indexes for the entity" — archived in a compiled model
    /// as `NSFetchIndexDescriptions`, and read back from Apple's and from this module's archives.
    @Test("a compiled model keeps its fetch indexes: Apple's SampleModel2.mom, and a model archived here")
    func fetchIndexes() throws {
        guard let root = Fixtures.root() else { return }
        let mom = root.appendingPathComponent(
            "stores/coredataplus-samplemodel/SampleModel/Fixtures/SampleModel.momd/SampleModel2.mom")
        let apples = try NSManagedObjectModel(validatingContentsOf: mom)
        for model in [apples, try CompiledModelDecoder.model(from: CompiledModelEncoder.archive(apples))] {
            let index = try #require(model.entitiesByName["Car"]?.indexes.first)
            #expect(index.name == "byMakerAndNumberPlate")
            #expect(index.elements.map { $0.propertyName ?? $0.property?.name } == ["maker", "numberPlate"])
            #expect(index.elements.allSatisfy { $0.isAscending && $0.collationType == .binary })
            #expect(index.entity === model.entitiesByName["Car"])
        }
    }

    @Test("truncating a real compiled model at any point never crashes the decoder")
    func truncation() throws {
        guard let root = Fixtures.root() else { return }
        let data = try Data(
            contentsOf: root.appendingPathComponent(Fixtures.sampleModelCompiled))
        for length in stride(from: 0, to: data.count, by: max(1, data.count / 97)) {
            _ = try? CompiledModelDecoder.model(from: data.prefix(length))
        }
    }
}
