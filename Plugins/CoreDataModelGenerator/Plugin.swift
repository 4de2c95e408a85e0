import Foundation
import PackagePlugin

/// Xcode's model code generation and the accessors of `@NSManaged` declarations, for Linux
/// (README, "Model classes"). Add `plugins: [.plugin(name: "CoreDataModelGenerator", package:
/// "OpenCoreData")]` to a target: each `.xcdatamodeld` (its current version) or `.xcdatamodel` in
/// it generates the classes of the entities whose Codegen is Class Definition or
/// Category/Extension, and every `@NSManaged` declaration — generated or hand-written — gets its
/// accessors. A declaration it cannot support fails the build with its file and line.
///
/// It also compiles the target's models as Xcode does, into the target's resources: each
/// `.xcdatamodeld` into a `.momd`, each lone `.xcdatamodel` into a `.mom`, each `.xcmappingmodel`
/// into a `.cdm`, so `Bundle.module.url(forResource: "Model", withExtension: "momd")` finds it.
@main
struct CoreDataModelGenerator: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let sources = target.sourceFiles(withSuffix: "swift").map(\.url)
        let (models, mappings) = Self.sources(in: target.directoryURL)
        let compiled = try Self.compileCommands(context: context, models: models, mappings: mappings)
        guard !sources.isEmpty || !models.isEmpty else { return compiled }
        let output = context.pluginWorkDirectoryURL
        var arguments = [target.moduleName, output.path, "--check-plan"]
        var inputs = sources
        var outputs = [output.appending(path: "\(target.moduleName)+NSManaged.swift")]
        for model in models {
            arguments += ["--model", model.url.path]
            inputs += model.inputs
            for name in model.generatedFiles {
                arguments += ["--expect", name]
                outputs.append(output.appending(path: name))
            }
        }
        arguments.append("--")
        arguments += sources.map(\.path)
        return [
            .buildCommand(
                displayName: "Generating Core Data model classes and @NSManaged accessors for \(target.moduleName)",
                executable: try context.tool(named: "CoreDataModelGeneratorTool").url,
                arguments: arguments, inputFiles: inputs, outputFiles: outputs)
        ] + compiled
    }

    /// One command per model and mapping model source, compiling it into a resource of the
    /// target. A mapping model depends on every model of the target, whose version hashes it
    /// records.
    static func compileCommands(context: PluginContext, models: [Model], mappings: [URL]) throws -> [Command] {
        let tool = try context.tool(named: "CoreDataModelGeneratorTool").url
        let output = context.pluginWorkDirectoryURL.appending(path: "CompiledModels")
        var commands: [Command] = []
        func command(_ source: URL, compiled name: String, inputs: [URL]) {
            let destination = output.appending(path: name)
            commands.append(
                .buildCommand(
                    displayName: "Compiling \(source.lastPathComponent) into \(name)", executable: tool,
                    arguments: ["--compile", source.path, destination.path], inputFiles: inputs,
                    outputFiles: [destination]))
        }
        for model in models {
            let name = model.url.deletingPathExtension().lastPathComponent
            command(
                model.url, compiled: name + (model.url.pathExtension == "xcdatamodeld" ? ".momd" : ".mom"),
                inputs: model.inputs)
        }
        let modelInputs = models.flatMap(\.inputs)
        for mapping in mappings {
            let name = mapping.deletingPathExtension().lastPathComponent + ".cdm"
            command(mapping, compiled: name, inputs: [mapping.appending(path: "xcmapping.xml")] + modelInputs)
        }
        return commands
    }

    /// A model source in the target: its files (which the command depends on) and the names of
    /// the files its entities generate, read from the current version's `contents`.
    struct Model {
        let url: URL
        let inputs: [URL]
        let generatedFiles: [String]
    }

    /// The target's model sources and its `.xcmappingmodel` folders, in one walk of its folder.
    static func sources(in directory: URL) -> (models: [Model], mappings: [URL]) {
        let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)
        var models: [Model] = []
        var mappings: [URL] = []
        while let url = files?.nextObject() as? URL {
            switch url.pathExtension {
            case "xcdatamodeld":
                files?.skipDescendants()
                let versions =
                    ((try? FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)) ?? [])
                    .filter { $0.pathExtension == "xcdatamodel" }.sorted { $0.path < $1.path }
                let marker = url.appending(path: ".xccurrentversion")
                let current = currentVersion(marker).map { url.appending(path: $0) } ?? versions.last
                let contents = versions.map { $0.appending(path: "contents") }
                models.append(
                    Model(
                        url: url,
                        inputs: contents + [marker].filter { FileManager.default.fileExists(atPath: $0.path) },
                        generatedFiles: current.map { generatedFiles($0.appending(path: "contents")) } ?? []))
            case "xcdatamodel":
                files?.skipDescendants()
                let contents = url.appending(path: "contents")
                models.append(Model(url: url, inputs: [contents], generatedFiles: generatedFiles(contents)))
            case "xcmappingmodel":
                files?.skipDescendants()
                mappings.append(url)
            default:
                continue
            }
        }
        return (models, mappings.sorted { $0.path < $1.path })
    }

    /// `_XCCurrentVersionName` of an `.xccurrentversion` property list.
    static func currentVersion(_ url: URL) -> String? {
        guard let data = try? Data(contentsOf: url),
            let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any]
        else { return nil }
        return plist["_XCCurrentVersionName"] as? String
    }

    /// The file names Xcode's code generation makes for the entities of a `contents` file: a
    /// look at each `<entity …>` tag's `name`, `representedClassName` and `codeGenerationType`
    /// (the generator reads the model fully and checks that it agrees).
    static func generatedFiles(_ contents: URL) -> [String] {
        guard let text = try? String(contentsOf: contents, encoding: .utf8) else { return [] }
        var names: [String] = []
        var rest = text[...]
        while let start = rest.range(of: "<entity ") {
            guard let end = rest[start.upperBound...].firstIndex(of: ">") else { break }
            let tag = rest[start.upperBound..<end]
            rest = rest[end...]
            func attribute(_ name: String) -> String? {
                guard
                    let range = tag.range(of: " \(name)=\"")
                        ?? (tag.hasPrefix("\(name)=\"") ? tag.range(of: "\(name)=\"") : nil),
                    let close = tag[range.upperBound...].firstIndex(of: "\"")
                else { return nil }
                return String(tag[range.upperBound..<close])
            }
            guard let codegen = attribute("codeGenerationType"), codegen == "class" || codegen == "category",
                let entity = attribute("name")
            else { continue }
            var name = attribute("representedClassName") ?? ""
            if let dot = name.lastIndex(of: ".") { name = String(name[name.index(after: dot)...]) }
            if name.isEmpty || name == "NSManagedObject" { name = entity }
            if codegen == "class" { names.append("\(name)+CoreDataClass.swift") }
            names.append("\(name)+CoreDataProperties.swift")
        }
        return names
    }
}
