import CoreData
import Foundation

@testable import CoreDataModelGeneratorKit

/// Compiling model classes the way the `CoreDataModelGenerator` plugin does, outside SwiftPM:
/// the generated class and properties files and their accessors, with `swiftc` against this
/// build's modules, and linking a program against this build's library objects.
struct ModelClassBuild {
    /// The build's module folder (`.build/debug/Modules`), where `CoreData.swiftmodule` is.
    let modules: URL
    /// The package's root.
    let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../..")
        .standardized

    /// The build the tests run from; nil when its module folder cannot be found.
    static var current: ModelClassBuild? {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<3 {
            let candidate = directory.appendingPathComponent("Modules")
            if FileManager.default.fileExists(atPath: candidate.appendingPathComponent("CoreData.swiftmodule").path) {
                return ModelClassBuild(modules: candidate)
            }
            directory.deleteLastPathComponent()
        }
        return nil
    }

    /// The arguments every compilation against the library needs.
    var searchPaths: [String] {
        [
            "-I", modules.path, "-I", package.appendingPathComponent("Sources/CSQLite").path, "-I",
            package.appendingPathComponent("Sources/CZlib").path, "-I",
            package.appendingPathComponent("Sources/CPrefetch").path,
        ]
    }

    /// The files Xcode's code generation makes for every entity of `model`, with a stub class for
    /// each transformable's own class the model names (an app declares those, on Apple platforms
    /// as here).
    static func generatedFiles(for model: NSManagedObjectModel) -> [ModelCodeGenerator.File] {
        var files = ModelCodeGenerator.files(for: model, everyEntity: true)
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
        return files
    }

    /// Writes `files` and the accessors of their `@NSManaged` declarations into `folder`; answers
    /// the paths of all of them (the accessors last).
    static func write(_ files: [ModelCodeGenerator.File], module: String, in folder: URL) throws -> [String] {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let accessors = try AccessorGenerator.generate(
            module: module, sources: files.map { (folder.appendingPathComponent($0.name).path, $0.text) }
        ).get()
        for file in files {
            try file.text.write(to: folder.appendingPathComponent(file.name), atomically: true, encoding: .utf8)
        }
        let accessorFile = folder.appendingPathComponent("Accessors.swift")
        try accessors.write(to: accessorFile, atomically: true, encoding: .utf8)
        return files.map { folder.appendingPathComponent($0.name).path } + [accessorFile.path]
    }

    /// Compiles `model`'s generated classes, their accessors and a checker (``StoreChecker``) into
    /// module `module`: its interface beside `folder`, its object in it. Answers the object.
    ///
    /// - Throws: when a file cannot be written, or the compiler fails (its output in the error).
    func compileModule(_ module: String, for model: NSManagedObjectModel, in folder: URL) throws -> URL {
        var files = Self.generatedFiles(for: model)
        files.append(.init(name: "Check.swift", text: StoreChecker.source(for: model, files: files, module: module)))
        let sources = try Self.write(files, module: module, in: folder)
        let object = folder.appendingPathComponent("\(module).o")
        let interface = folder.deletingLastPathComponent().appendingPathComponent("\(module).swiftmodule")
        let (status, output) = try Self.run(
            "/usr/bin/env",
            ["swiftc", "-parse-as-library", "-module-name", module, "-wmo", "-c", "-o", object.path]
                + ["-emit-module", "-emit-module-path", interface.path] + searchPaths + sources,
            in: folder)
        guard status == 0 else { throw BuildFailure(output: output) }
        return object
    }

    /// Links `main` with `objects` and this build's library objects into the program `output`:
    /// the library's objects are the ones SwiftPM linked into the test program (its link file
    /// list), so objects of files since moved or removed are not picked up.
    func link(main: URL, objects: [URL], modules extra: URL, to output: URL) throws -> (Int32, String) {
        let build = modules.deletingLastPathComponent()
        let list = try String(
            contentsOf: build.appendingPathComponent("OpenCoreDataPackageTests.product/Objects.LinkFileList"),
            encoding: .utf8)
        let targets = ["OpenCoreData", "OpenCoreDataSQL", "OpenCoreDataSQLite", "CoreData", "Logging"]
        let library = list.split(separator: "\n").map(String.init).filter { path in
            targets.contains { path.hasPrefix(build.appendingPathComponent("\($0).build/").path) }
        }
        return try Self.run(
            "/usr/bin/env",
            ["swiftc", "-module-name", "Checker", "-I", extra.path] + searchPaths + [main.path]
                + objects.map(\.path) + library + ["-lsqlite3", "-lz", "-o", output.path],
            in: main.deletingLastPathComponent())
    }

    /// Runs `executable` with `arguments` in `directory`: its exit status and its output.
    static func run(_ executable: String, _ arguments: [String], in directory: URL) throws -> (Int32, String) {
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

    /// A compilation that failed, with the compiler's output.
    struct BuildFailure: Error, CustomStringConvertible {
        let output: String
        var description: String { output }
    }
}

/// The source of a function that opens a store with a model and reads every object of every
/// entity both through its generated class's typed properties and through `value(forKey:)`,
/// answering how many objects it read and where the two differ.
enum StoreChecker {
    static func source(for model: NSManagedObjectModel, files: [ModelCodeGenerator.File], module: String) -> String {
        var declarations = ManagedDeclarations()
        for file in files { declarations.read(file.text, file: file.name) }
        var text = """
            import CoreData
            import Foundation

            func sameInteger(_ typed: Int64, _ kvc: Any?) -> Bool { typed == ((kvc as? NSNumber)?.int64Value ?? 0) }
            func sameReal(_ typed: Double, _ kvc: Any?) -> Bool {
                let other = (kvc as? NSNumber)?.doubleValue ?? 0
                return typed == other || (typed.isNaN && other.isNaN)
            }
            func sameBool(_ typed: Bool, _ kvc: Any?) -> Bool { typed == ((kvc as? NSNumber)?.boolValue ?? false) }
            func sameDecimal(_ typed: NSDecimalNumber?, _ kvc: Any?) -> Bool {
                typed?.decimalValue == ((kvc as? Decimal) ?? (kvc as? NSDecimalNumber)?.decimalValue)
            }
            func sameObject(_ typed: NSManagedObject?, _ kvc: Any?) -> Bool { typed === (kvc as? NSManagedObject) }
            func identities(_ objects: [Any]) -> Set<ObjectIdentifier> {
                Set(objects.compactMap { ($0 as? NSManagedObject).map(ObjectIdentifier.init) })
            }
            func sameSet(_ typed: NSSet?, _ kvc: Any?) -> Bool {
                let other = (kvc as? Set<NSManagedObject>).map { Array($0) as [Any] } ?? (kvc as? NSSet)?.allObjects ?? []
                return identities(typed?.allObjects ?? []) == identities(other) && (typed?.count ?? 0) == other.count
            }
            func sameOrdered(_ typed: NSOrderedSet?, _ kvc: Any?) -> Bool {
                let mine = (typed?.array ?? []).map { ObjectIdentifier($0 as AnyObject) }
                let other = ((kvc as? NSOrderedSet)?.array ?? []).map { ObjectIdentifier($0 as AnyObject) }
                return mine == other
            }
            func sameValue<T: Equatable>(_ typed: T?, _ kvc: Any?) -> Bool { typed == (kvc as? T) }
            func sameDescribed<T>(_ typed: T?, _ kvc: Any?) -> Bool {
                let other: T? = kvc as? T
                return String(describing: typed) == String(describing: other)
            }

            /// Reads the store at `path` with the model at `modelPath` through this module's classes.
            public func check(storeAt path: String, model modelPath: String) throws -> (objects: Int, problems: [String]) {
                let model = try NSManagedObjectModel(validatingContentsOf: URL(fileURLWithPath: modelPath))

            """
        let entities = model.entities.sorted { ($0.name ?? "") < ($1.name ?? "") }
        let entityClasses = Set(entities.map(ModelCodeGenerator.className))
        for entity in entities {
            let name = entity.name ?? ""
            text +=
                "    model.entitiesByName[\"\(name)\"]?.managedObjectClassName = \"\(module).\(ModelCodeGenerator.className(entity))\"\n"
        }
        text += """
                let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
                try coordinator.addPersistentStore(
                    ofType: NSSQLiteStoreType, configurationName: nil, at: URL(fileURLWithPath: path), options: nil)
                let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
                context.persistentStoreCoordinator = coordinator
                var objects = 0
                var problems: [String] = []

            """
        for entity in entities {
            let name = entity.name ?? ""
            let owner = ModelCodeGenerator.className(entity)
            var lineage: Set<String> = [owner]
            var current = declarations.superclasses[owner]
            while let parent = current, lineage.insert(parent).inserted { current = declarations.superclasses[parent] }
            text += """
                    do {
                        let request = NSFetchRequest<NSManagedObject>(entityName: "\(name)")
                        request.includesSubentities = false
                        for object in try context.fetch(request) {
                            objects += 1
                            guard let o = object as? \(owner) else {
                                problems.append("\(name): an object of class \\(type(of: object))")
                                continue
                            }

                """
            for declaration in declarations.declarations where lineage.contains(declaration.owner) {
                guard case .property(let property, let type) = declaration.kind else { continue }
                let comparison = comparison(property, type, entityClasses: entityClasses)
                text += """
                                if !\(comparison) {
                                    problems.append("\(name).\(property): \\(String(describing: o.\(property))) by type, \\(String(describing: o.value(forKey: "\(property)"))) by key")
                                }

                    """
            }
            text += "        }\n    }\n"
        }
        return text + "    return (objects, problems)\n}\n"
    }

    /// The check of one property: the typed value against the value by key.
    private static func comparison(_ property: String, _ type: TypeSpelling, entityClasses: Set<String>) -> String {
        let byKey = "o.value(forKey: \"\(property)\")"
        let typed = "o.\(property)"
        switch type {
        case .name(let parts, _) where ["Int16", "Int32", "Int64", "Int"].contains(parts.last ?? ""):
            return "sameInteger(Int64(\(typed)), \(byKey))"
        case .name(let parts, _) where ["Double", "Float"].contains(parts.last ?? ""):
            return "sameReal(Double(\(typed)), \(byKey))"
        case .name(let parts, _) where parts.last == "Bool":
            return "sameBool(\(typed), \(byKey))"
        default:
            break
        }
        switch type.unwrapped {
        case .name(let parts, _) where parts.last == "NSDecimalNumber": return "sameDecimal(\(typed), \(byKey))"
        case .name(let parts, _) where parts.last == "NSSet": return "sameSet(\(typed), \(byKey))"
        case .name(let parts, _) where parts.last == "NSOrderedSet": return "sameOrdered(\(typed), \(byKey))"
        case .name(let parts, _) where entityClasses.contains(parts.last ?? ""):
            return "sameObject(\(typed), \(byKey))"
        case .array, .dictionary: return "sameDescribed(\(typed), \(byKey))"
        default: return "sameValue(\(typed), \(byKey))"
        }
    }
}
