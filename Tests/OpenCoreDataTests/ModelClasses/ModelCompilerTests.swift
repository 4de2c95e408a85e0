import CoreDataModelGeneratorKit
import Foundation
import OpenCoreData
import Testing

/// Xcode compiles an app's `.xcdatamodeld` into a `.momd` folder and each `.xcmappingmodel` into a
/// `.cdm` in the app's bundle, and apps look them up there (`Bundle.url(forResource:withExtension:
/// "momd")`; `NSMappingModel(from:forSourceModel:destinationModel:)` searches the bundles for a
/// mapping model whose entity version hashes match — Apple's NSMappingModel reference). The
/// `CoreDataModelGenerator` plugin compiles them for SwiftPM with ``ModelCompiler``; what it writes
/// must be what Xcode writes: checked against CoreDataPlus's SampleModel, whose sources and
/// Xcode-compiled files are both in the fixtures.
@Suite("Model compiler (.xcdatamodeld → .momd, .xcmappingmodel → .cdm)")
struct ModelCompilerTests {
    private static let sampleModel = "stores/coredataplus-samplemodel/SampleModel/"

    private func plist(_ url: URL) throws -> NSDictionary {
        try #require(PropertyListSerialization.propertyList(from: Data(contentsOf: url), format: nil) as? NSDictionary)
    }

    @Test("a compiled .momd has Xcode's VersionInfo.plist and a .mom per version, equal to Xcode's")
    func versionedModel() throws {
        guard let root = Fixtures.root() else { return }
        let directory = TemporaryDirectory()
        let output = directory.file("SampleModel.momd")
        try ModelCompiler.compile(
            root.appendingPathComponent(Self.sampleModel + "SampleModel.xcdatamodeld"), to: output)
        let xcode = root.appendingPathComponent(Self.sampleModel + "Fixtures/SampleModel.momd")
        // The current version's name and every version's entity version hashes, as Xcode writes them.
        #expect(
            try plist(output.appendingPathComponent("VersionInfo.plist"))
                == plist(xcode.appendingPathComponent("VersionInfo.plist")))
        let files = try FileManager.default.contentsOfDirectory(atPath: output.path).sorted()
        #expect(files == ["SampleModel.mom", "SampleModel2.mom", "SampleModel3.mom", "VersionInfo.plist"])
        for version in ["SampleModel", "SampleModel2", "SampleModel3"] {
            let ours = try NSManagedObjectModel(validatingContentsOf: output.appendingPathComponent(version + ".mom"))
            let theirs = try NSManagedObjectModel(validatingContentsOf: xcode.appendingPathComponent(version + ".mom"))
            #expect(ours == theirs, "\(version).mom")
            #expect(ours.entityVersionHashesByName == theirs.entityVersionHashesByName)
        }
        // Loading the folder loads the version VersionInfo.plist names current.
        let current = try NSManagedObjectModel(validatingContentsOf: output)
        #expect(current == (try NSManagedObjectModel(validatingContentsOf: xcode)))
        // Compiling again over the old output replaces it.
        try ModelCompiler.compile(
            root.appendingPathComponent(Self.sampleModel + "SampleModel.xcdatamodeld"), to: output)
        #expect(try FileManager.default.contentsOfDirectory(atPath: output.path).sorted() == files)
    }

    @Test("a compiled .cdm loads equal to Xcode's, and a bundle holding it finds it for the two models")
    func mappingModel() throws {
        guard let root = Fixtures.root() else { return }
        let bundle = TemporaryDirectory()
        try ModelCompiler.compile(
            root.appendingPathComponent(Self.sampleModel + "MappingModels/V2toV3.xcmappingmodel"),
            to: bundle.file("V2toV3.cdm"))
        try ModelCompiler.compile(
            root.appendingPathComponent(Self.sampleModel + "SampleModel.xcdatamodeld"),
            to: bundle.file("SampleModel.momd"))
        let ours = try #require(NSMappingModel(contentsOf: bundle.file("V2toV3.cdm")))
        let xcode = try #require(
            NSMappingModel(contentsOf: root.appendingPathComponent(Self.sampleModel + "Fixtures/V2toV3.cdm")))
        #expect(ours == xcode)
        #expect(ours.entityMappings.map(\.name) == xcode.entityMappings.map(\.name))
        // What an app does: find the mapping model for its store's model and the current one.
        let models = bundle.file("SampleModel.momd")
        let source = try NSManagedObjectModel(validatingContentsOf: models.appendingPathComponent("SampleModel2.mom"))
        let destination = try NSManagedObjectModel(
            validatingContentsOf: models.appendingPathComponent("SampleModel3.mom"))
        let resources = try #require(Bundle(url: bundle.url))
        let found = try #require(
            NSMappingModel(from: [resources], forSourceModel: source, destinationModel: destination))
        #expect(found == xcode)
    }

    @Test("a mapping model whose models cannot be found fails to compile, saying so")
    func mappingWithoutModels() throws {
        guard let root = Fixtures.root() else { return }
        let directory = TemporaryDirectory()
        let copy = directory.file("V2toV3.xcmappingmodel")
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: root.appendingPathComponent(Self.sampleModel + "MappingModels/V2toV3.xcmappingmodel/xcmapping.xml"),
            to: copy.appendingPathComponent("xcmapping.xml"))
        let output = directory.file("V2toV3.cdm")
        #expect {
            try ModelCompiler.compile(copy, to: output)
        } throws: { error in
            let error = error as NSError
            return error.domain == NSCocoaErrorDomain && error.code == CocoaError.fileReadCorruptFile.rawValue
                && error.localizedDescription.contains("were not found")
        }
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    @Test("a bundle holding a model's source beside its compiled .momd merges one model, not two")
    func sourceBesideCompiled() throws {
        guard let root = Fixtures.root() else { return }
        let bundle = TemporaryDirectory()
        let source = root.appendingPathComponent(Self.sampleModel + "SampleModel.xcdatamodeld")
        try FileManager.default.copyItem(at: source, to: bundle.file("SampleModel.xcdatamodeld"))
        try ModelCompiler.compile(source, to: bundle.file("SampleModel.momd"))
        let resources = try #require(Bundle(url: bundle.url))
        let merged = try #require(NSManagedObjectModel.mergedModel(from: [resources]))
        let current = try NSManagedObjectModel(validatingContentsOf: bundle.file("SampleModel.momd"))
        #expect(merged.entityVersionHashesByName == current.entityVersionHashesByName)
    }

    @Test("what a compiled model cannot carry yet is a build warning naming it, never a silent loss")
    func omissionsAreWarned() throws {
        guard let root = Fixtures.root() else { return }
        let directory = TemporaryDirectory()
        let warnings = try ModelCompiler.compile(
            root.appendingPathComponent("models/corestore/Classic.ColorsDemo.xcdatamodeld"),
            to: directory.file("ColorsDemo.momd"))
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("the fetch request of the fetched property") == true)
        #expect(warnings.first?.hasPrefix("ColorsDemo.xcdatamodel: ") == true)
        // SampleModel has nothing the compiled form leaves out.
        let clean = try ModelCompiler.compile(
            root.appendingPathComponent(Self.sampleModel + "SampleModel.xcdatamodeld"),
            to: directory.file("SampleModel.momd"))
        #expect(clean.isEmpty)
    }
}
