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

    /// The build directory's module folder, where the test's own modules are.
    private static var modules: URL? {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<3 {
            let candidate = directory.appendingPathComponent("Modules")
            if FileManager.default.fileExists(atPath: candidate.appendingPathComponent("CoreData.swiftmodule").path) {
                return candidate
            }
            directory.deleteLastPathComponent()
        }
        return nil
    }

    @Test("every fixture model generates classes whose @NSManaged accessors all link")
    func everyFixtureModelGeneratesLinkingCode() throws {
        let models = try Self.fixtureModels()
        if ProcessInfo.processInfo.environment["CI"] != nil { #expect(models.count >= 30) }
        guard !models.isEmpty else { return }
        let modules = try #require(Self.modules, "the build's Modules folder")
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../..")
            .standardized
        let directory = TemporaryDirectory()
        var compiled = 0
        for (index, url) in models.enumerated() {
            let model = try NSManagedObjectModel(validatingContentsOf: url)
            var files = ModelCodeGenerator.files(for: model, everyEntity: true)
            guard !files.isEmpty else { continue }
            // A transformable's own class (`customClassName`) is the app's to declare, on Apple
            // platforms as here: declare the ones the model names, as an app would.
            let known = Set(SwiftMangler.libraryTypes.keys).union(["String", "Int", "Double", "Float", "Bool"])
            let custom = Set(
                model.entities.flatMap(\.properties).compactMap { property -> String? in
                    guard let attribute = property as? NSAttributeDescription,
                        attribute.attributeType == .transformableAttributeType,
                        let name = attribute.customClassName, !known.contains(name),
                        name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" })
                    else { return nil }
                    return name
                })
            if !custom.isEmpty {
                let stubs = custom.sorted().map { "public final class \($0): NSObject {}\n" }.joined()
                files.append(.init(name: "AppTypes.swift", text: "import Foundation\n\n" + stubs))
            }
            let module = "FixtureModel\(index)"
            let folder = directory.url.appendingPathComponent(module)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let accessors = try AccessorGenerator.generate(
                module: module, sources: files.map { (folder.appendingPathComponent($0.name).path, $0.text) }
            ).get()
            files.append(.init(name: "Uses.swift", text: Self.uses(of: files)))
            for file in files {
                try file.text.write(to: folder.appendingPathComponent(file.name), atomically: true, encoding: .utf8)
            }
            try accessors.write(to: folder.appendingPathComponent("Accessors.swift"), atomically: true, encoding: .utf8)
            let sources =
                files.map { folder.appendingPathComponent($0.name).path } + [
                    folder.appendingPathComponent("Accessors.swift").path
                ]
            // One object per file (no whole-module build): the uses' object refers to the accessors
            // the compiler wants by name, and the accessors' object must define each of them.
            let (status, output) = try run(
                "/usr/bin/env",
                [
                    "swiftc", "-parse-as-library", "-module-name", module, "-c", "-wmo", "-num-threads", "2", "-I",
                    modules.path, "-I",
                    package.appendingPathComponent("Sources/CSQLite").path, "-I",
                    package.appendingPathComponent("Sources/CZlib").path,
                ] + sources, in: folder)
            #expect(status == 0, "\(url.lastPathComponent): \(output)")
            guard status == 0 else { continue }
            let prefix = "$s\(module.utf8.count)\(module)"
            func symbols(_ file: String, undefined: Bool) throws -> Set<Substring> {
                let (_, text) = try run("/usr/bin/env", ["nm", folder.appendingPathComponent(file).path], in: folder)
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

    private func run(_ executable: String, _ arguments: [String], in directory: URL) throws -> (Int32, String) {
        let process = Process()
        process.currentDirectoryURL = directory
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
