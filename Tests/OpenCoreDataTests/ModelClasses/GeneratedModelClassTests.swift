import CoreData
import Foundation
import Testing

@testable import CoreDataModelGeneratorKit

/// Xcode's code generation from a model file (Xcode's "Generating code" article; the Codegen
/// setting of an entity): the example package's `Library.xcdatamodeld` has Class Definition,
/// Category/Extension and Manual/None entities, and the generator writes their files as Xcode
/// does (the example package, `Examples/CompanyModel`, builds and runs them); every model in
/// `../shared/fixtures` generates classes whose accessors all link.
@Suite("Model classes generated from .xcdatamodeld")
struct GeneratedModelClassTests {
    /// The example package's model file.
    private static let libraryModel = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../../Examples/CompanyModel/Sources/CompanyModel/Library.xcdatamodeld").standardized

    @Test("each Codegen setting generates Xcode's files: class and properties, properties only, nothing")
    func generatedFiles() throws {
        let files = try ModelCodeGenerator.files(forModelAt: Self.libraryModel)
        #expect(
            files.map(\.name) == [
                "Author+CoreDataProperties.swift", "Book+CoreDataClass.swift", "Book+CoreDataProperties.swift",
                "Chapter+CoreDataClass.swift", "Chapter+CoreDataProperties.swift", "Novel+CoreDataClass.swift",
                "Novel+CoreDataProperties.swift",
            ])
        let text = Dictionary(uniqueKeysWithValues: files.map { ($0.name, $0.text) })
        let book = try #require(text["Book+CoreDataProperties.swift"])
        // Xcode's type mapping: scalars per "Use Scalar Type", object types optional, to-manys as sets.
        for line in [
            "@NSManaged public var pages: Int16", "@NSManaged public var rating: NSNumber?",
            "@NSManaged public var price: NSDecimalNumber?", "@NSManaged public var isbn: UUID?",
            "@NSManaged public var website: URL?", "@NSManaged public var cover: Data?",
            "@NSManaged public var author: Author?", "@NSManaged public var chapters: NSOrderedSet?",
            "@NSManaged public var shelves: NSSet?",
            "@nonobjc public class func fetchRequest() -> NSFetchRequest<Book>",
            "@NSManaged public func replaceChapters(at indexes: NSIndexSet, with values: [Chapter])",
            "@NSManaged public func addToShelves(_ values: NSSet)", "extension Book : Identifiable",
        ] {
            #expect(book.contains(line), "\(line)")
        }
        #expect(book.components(separatedBy: "@NSManaged public func").count - 1 == 14, "10 ordered + 4 unordered")
        #expect(text["Novel+CoreDataClass.swift"]?.contains("public class Novel: Book {") == true)
        #expect(text["Novel+CoreDataProperties.swift"]?.contains("Identifiable") == false, "inherited from Book")
        #expect(text["Novel+CoreDataProperties.swift"]?.contains("@NSManaged public var title") == false)
        #expect(text["Chapter+CoreDataProperties.swift"]?.contains("@NSManaged public var number: Int32") == true)
    }

    @Test("fetched properties get no generated property: they are read with value(forKey:)")
    func fetchedPropertiesAreNotGenerated() throws {
        let directory = TemporaryDirectory()
        let model = directory.file("Shelves.xcdatamodel")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        try """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" sourceLanguage="Swift">
            <entity name="Shelf" representedClassName="Shelf" syncable="YES" codeGenerationType="class">
                <attribute name="label" optional="YES" attributeType="String"/>
                <fetchedProperty name="labelled" optional="YES">
                    <fetchRequest name="fetchedPropertyFetchRequest" entity="Shelf" predicateString="label != nil"/>
                </fetchedProperty>
            </entity>
        </model>
        """.write(to: model.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        let files = try ModelCodeGenerator.files(forModelAt: model)
        let properties = try #require(files.first { $0.name == "Shelf+CoreDataProperties.swift" }?.text)
        #expect(properties.contains("@NSManaged public var label: String?"))
        #expect(!properties.contains("labelled"))
        let loaded = try NSManagedObjectModel(validatingContentsOf: model)
        #expect(loaded.entitiesByName["Shelf"]?.propertiesByName["labelled"] is NSFetchedPropertyDescription)
    }

    @Test("a module's model classes are registered by the first typed use of any of them")
    func registrationByFirstTypedUse() throws {
        // Root classes conform to the registration protocol; sub-entities' classes inherit it (a
        // second conformance would not compile). The example package checks its classes do.
        let generated = try AccessorGenerator.generate(
            module: "App",
            sources: [
                (
                    "Model.swift",
                    """
                    class Base: NSManagedObject { @NSManaged var a: String? }
                    class Middle: Base {}
                    class Leaf: Middle { @NSManaged var b: String? }
                    class Other: NSManagedObject { @NSManaged var c: String? }
                    """
                )
            ]
        ).get()
        #expect(generated.contains("extension Base: _GeneratedModelClass"))
        #expect(generated.contains("extension Other: _GeneratedModelClass"))
        #expect(!generated.contains("extension Leaf: _GeneratedModelClass"), "Leaf inherits it through Middle")
    }

    /// The model sources of `../shared/fixtures`: every `.xcdatamodel` (each version of each
    /// `.xcdatamodeld`). Fails — does not skip — when `CI` is set and they are missing.
    private static func fixtureModels() throws -> [URL] {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "../../../../shared/fixtures"
        ).standardized
        guard FileManager.default.fileExists(atPath: fixtures.path) else {
            if ProcessInfo.processInfo.environment["CI"] != nil {
                Issue.record("../shared/fixtures is missing")
            }
            return []
        }
        let files = FileManager.default.enumerator(at: fixtures, includingPropertiesForKeys: nil)
        var models: [URL] = []
        while let url = files?.nextObject() as? URL {
            if url.pathExtension == "xcdatamodel" {
                models.append(url)
                files?.skipDescendants()
            }
        }
        return models.sorted { $0.path < $1.path }
    }

    @Test("every fixture model generates classes whose @NSManaged accessors all link")
    func everyFixtureModelGeneratesLinkingCode() throws {
        let models = try Self.fixtureModels()
        if ProcessInfo.processInfo.environment["CI"] != nil { #expect(models.count >= 30) }
        guard !models.isEmpty else { return }
        let build = try #require(ModelClassBuild.current, "the build's Modules folder")
        let directory = TemporaryDirectory()
        var compiled = 0
        for (index, url) in models.enumerated() {
            let model = try NSManagedObjectModel(validatingContentsOf: url)
            var files = ModelClassBuild.generatedFiles(for: model)
            guard !files.isEmpty else { continue }
            let module = "FixtureModel\(index)"
            let folder = directory.url.appendingPathComponent(module)
            files.append(.init(name: "Uses.swift", text: Self.uses(of: files)))
            let sources = try ModelClassBuild.write(files, module: module, in: folder)
            // One object per file (no whole-module build): the uses' object refers to the accessors
            // the compiler wants by name, and the accessors' object must define each of them.
            let (status, output) = try ModelClassBuild.run(
                "/usr/bin/env",
                ["swiftc", "-parse-as-library", "-module-name", module, "-c", "-wmo", "-num-threads", "2"]
                    + build.searchPaths + sources, in: folder)
            #expect(status == 0, "\(url.lastPathComponent): \(output)")
            guard status == 0 else { continue }
            let prefix = "$s\(module.utf8.count)\(module)"
            func symbols(_ file: String, undefined: Bool) throws -> Set<Substring> {
                let (_, text) = try ModelClassBuild.run(
                    "/usr/bin/env", ["nm", folder.appendingPathComponent(file).path], in: folder)
                var names: Set<Substring> = []
                for line in text.split(separator: "\n") {
                    let parts = line.split(separator: " ")
                    guard let name = parts.last, name.hasPrefix(prefix) else { continue }
                    if (parts.count == 2 && parts[0] == "U") == undefined { names.insert(name) }
                }
                return names
            }
            let wanted = try symbols("Uses.o", undefined: true).filter {
                $0.hasSuffix("vg") || $0.hasSuffix("vs") || $0.hasSuffix("F")
            }
            let supplied = try symbols("Accessors.o", undefined: false)
            #expect(!wanted.isEmpty, "\(url.lastPathComponent): the uses refer to accessors")
            #expect(wanted.subtracting(supplied).isEmpty, "\(url.lastPathComponent): \(wanted.subtracting(supplied))")
            compiled += 1
        }
        #expect(compiled > 0)
    }

    /// A function per `@NSManaged` declaration that reads and writes the property or calls the
    /// method, so the object refers to every accessor the compiler expects.
    private static func uses(of files: [ModelCodeGenerator.File]) -> String {
        var declarations = ManagedDeclarations()
        for file in files { declarations.read(file.text, file: file.name) }
        var text = "import CoreData\nimport Foundation\n\n"
        for (index, declaration) in declarations.declarations.enumerated() {
            switch declaration.kind {
            case .property(let name, _):
                text += "func use\(index)(_ o: \(declaration.owner)) { o.\(name) = o.\(name) }\n"
            case .method(let name, let parameters):
                let list = parameters.enumerated().map { "_ a\($0.offset): \($0.element.type)" }
                let call = parameters.enumerated().map { ($0.element.label.map { $0 + ": " } ?? "") + "a\($0.offset)" }
                text +=
                    "func use\(index)(_ o: \(declaration.owner), \(list.joined(separator: ", "))) { "
                    + "o.\(name)(\(call.joined(separator: ", "))) }\n"
            }
        }
        return text
    }
}
