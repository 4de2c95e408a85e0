import Foundation
import OpenCoreData

/// Xcode's model and mapping compilers for SwiftPM: an `.xcdatamodeld` becomes a `.momd` folder
/// (each version's `.mom` and a `VersionInfo.plist` naming the current one), an `.xcdatamodel` a
/// `.mom`, an `.xcmappingmodel` a `.cdm` — the files Apple's Core Data finds in an app's bundle,
/// in the formats it reads (STORE-FORMAT.md, "Compiled models and mapping models").
public enum ModelCompiler {
    /// Compiles `source` into `output` (a `.momd` folder, a `.mom` or a `.cdm` file), replacing
    /// what is there. A mapping model's source and destination models are found as Xcode finds
    /// them, by the paths the mapping file records, beside it or in a folder above it.
    ///
    /// - Throws: the loading error of a model version that does not load (with its reason), or of
    ///   a mapping model whose file does not read; `NSFileReadCorruptFileError` (259) when a
    ///   mapping model's source or destination model cannot be found (a compiled mapping model
    ///   without its models' version hashes matches no store), or an expression cannot be
    ///   compiled; the file system's error when `output` cannot be written.
    /// - Returns: warnings, one per part of a model that the compiled file leaves out (fetch
    ///   request templates, validation predicates, fetched properties' requests, partial-index
    ///   predicates: archived predicates, whose format is not known), for the build to show.
    @discardableResult
    public static func compile(_ source: URL, to output: URL) throws -> [String] {
        try FileManager.default.createDirectory(
            at: output.deletingLastPathComponent(), withIntermediateDirectories: true)
        switch source.pathExtension {
        case "xcdatamodeld":
            return try compileVersioned(source, to: output)
        case "xcdatamodel":
            let model = try NSManagedObjectModel(validatingContentsOf: source)
            try replace(output, with: CompiledModelEncoder.archive(model))
            return omissions(model, version: source.lastPathComponent)
        case "xcmappingmodel":
            try replace(output, with: compiledMapping(source))
            return []
        default:
            throw failure(
                source, "\(source.lastPathComponent) is not an .xcdatamodeld, .xcdatamodel or .xcmappingmodel")
        }
    }

    private static func compileVersioned(_ source: URL, to output: URL) throws -> [String] {
        let current = try ModelFileLoader.currentVersion(of: source).deletingPathExtension().lastPathComponent
        let versions = try FileManager.default.contentsOfDirectory(at: source, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "xcdatamodel" }.sorted { $0.lastPathComponent < $1.lastPathComponent }
        var files: [(String, Data)] = []
        var hashes: [String: [String: Data]] = [:]
        var warnings: [String] = []
        for version in versions {
            let name = version.deletingPathExtension().lastPathComponent
            let model = try NSManagedObjectModel(validatingContentsOf: version)
            warnings += omissions(model, version: version.lastPathComponent)
            files.append((name + ".mom", CompiledModelEncoder.archive(model)))
            hashes[name] = model.entityVersionHashesByName
        }
        files.append(("VersionInfo.plist", CompiledModelEncoder.versionInfo(current: current, versionHashes: hashes)))
        // Built beside the output and moved into place, so a failed compile never leaves half a
        // folder where the bundle expects a model.
        let staging = output.deletingLastPathComponent().appendingPathComponent(
            ".\(output.lastPathComponent)-\(UUID())")
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: staging) }
        for (name, data) in files { try data.write(to: staging.appendingPathComponent(name)) }
        if FileManager.default.fileExists(atPath: output.path) { try FileManager.default.removeItem(at: output) }
        try FileManager.default.moveItem(at: staging, to: output)
        return warnings
    }

    /// What of `model` its compiled form does not carry.
    static func omissions(_ model: NSManagedObjectModel, version: String) -> [String] {
        var left: [String] = model.fetchRequestTemplatesByName.keys.sorted().map { "the fetch request template \($0)" }
        for entity in model.entities.sorted(by: { ($0.name ?? "") < ($1.name ?? "") }) {
            let entityName = entity.name ?? ""
            for property in entity.properties.sorted(by: { $0.name < $1.name }) {
                if !property.validationPredicates.isEmpty {
                    left.append("the validation predicates of \(entityName).\(property.name)")
                }
                if property is NSFetchedPropertyDescription {
                    left.append("the fetch request of the fetched property \(entityName).\(property.name)")
                }
            }
            for index in entity.indexes where index.partialIndexPredicate != nil {
                left.append("the predicate of the partial index \(entityName).\(index.name)")
            }
        }
        return left.map {
            "\(version): \($0) is not compiled into the .mom (archived predicates are not written yet); "
                + "on Linux, load the .xcdatamodeld source where it is needed"
        }
    }

    private static func compiledMapping(_ source: URL) throws -> Data {
        let mapping = try NSMappingModel.mappingModel(contentsOf: source)
        if let unmatched = mapping.entityMappings.first(where: { entityMapping in
            (entityMapping.sourceEntityName != nil && entityMapping.sourceEntityVersionHash == nil)
                || (entityMapping.destinationEntityName != nil && entityMapping.destinationEntityVersionHash == nil)
        }) {
            throw failure(
                source,
                "the models \(source.lastPathComponent) maps between were not found (looked beside it and in the folders above, by the paths it records), so its entity mapping \(unmatched.name ?? "") has no version hashes"
            )
        }
        do {
            return try CompiledModelEncoder.archive(mapping)
        } catch let problem as ModelProblem {
            throw failure(source, "\(source.lastPathComponent) \(problem.message)")
        }
    }

    /// `NSFileReadCorruptFileError` (259) for `source`, saying why.
    private static func failure(_ source: URL, _ message: String) -> CocoaError {
        CocoaError(
            .fileReadCorruptFile, userInfo: [NSFilePathErrorKey: source.path, NSLocalizedDescriptionKey: message])
    }

    /// Writes `data` to `url` unless it already holds it (an unchanged file keeps its date).
    private static func replace(_ url: URL, with data: Data) throws {
        if (try? Data(contentsOf: url)) == data { return }
        try data.write(to: url, options: .atomic)
    }
}
