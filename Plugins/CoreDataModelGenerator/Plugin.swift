import PackagePlugin

/// Supplies the accessors of a target's `@NSManaged` declarations (README, "Model classes"):
/// add `plugins: [.plugin(name: "CoreDataModelGenerator", package: "OpenCoreData")]` to a target
/// whose classes declare `@NSManaged` properties or to-many methods, and they work on Linux as on
/// Apple platforms. A declaration it cannot support fails the build with its file and line.
@main
struct CoreDataModelGenerator: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let sources = target.sourceFiles(withSuffix: "swift").map(\.url)
        guard !sources.isEmpty else { return [] }
        let output = context.pluginWorkDirectoryURL.appending(path: "\(target.moduleName)+NSManaged.swift")
        return [
            .buildCommand(
                displayName: "Generating @NSManaged accessors for \(target.moduleName)",
                executable: try context.tool(named: "CoreDataModelGeneratorTool").url,
                arguments: [target.moduleName, output.path] + sources.map(\.path),
                inputFiles: sources,
                outputFiles: [output])
        ]
    }
}
