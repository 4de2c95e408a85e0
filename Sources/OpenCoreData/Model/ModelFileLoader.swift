#if canImport(FoundationXML)
    import FoundationXML
#endif

extension NSManagedObjectModel {
    /// Loads a model: an Xcode `.xcdatamodeld` folder (its current version, named by
    /// `.xccurrentversion`) or one `.xcdatamodel`, or a compiled `.momd` / `.mom`. Returns `nil` when the model cannot be read, as
    /// Apple's does; ``init(validatingContentsOf:)`` says why.
    public convenience init?(contentsOf url: URL) {
        guard let loaded = try? ModelFileLoader.load(url) else { return nil }
        self.init()
        adoptModel(loaded)
    }

    /// Loads an Xcode model and throws a Cocoa error that names the file and the problem when it
    /// cannot: `NSFileReadNoSuchFileError` (260) for a missing file, `NSFileReadCorruptFileError`
    /// (259) for a malformed one, with `NSFilePathErrorKey` and `NSDebugDescriptionErrorKey`.
    ///
    /// > Note: Differs from Apple Core Data: an addition; Apple's initializer only returns `nil`.
    public convenience init(validatingContentsOf url: URL) throws {
        let loaded = try ModelFileLoader.load(url)
        self.init()
        adoptModel(loaded)
    }

    package func adoptModel(_ other: NSManagedObjectModel) {
        let entities = other.entities
        other.entities = []
        self.entities = entities
        versionIdentifiers = other.versionIdentifiers
        for name in other.configurations {
            setEntities(other.entities(forConfigurationName: name) ?? [], forConfigurationName: name)
        }
        for (name, template) in other.fetchRequestTemplatesByName {
            setFetchRequestTemplate(template, forName: name)
        }
    }
}

/// Reads the XML of Xcode's `.xcdatamodel/contents` into model objects.
package enum ModelFileLoader {
    static func load(_ url: URL) throws -> NSManagedObjectModel {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw failure(url, "does not exist", code: .fileReadNoSuchFile)
        }
        if let compiled = try compiledModelFile(for: url) {
            let data: Data
            do {
                data = try Data(contentsOf: compiled)
            } catch {
                throw failure(compiled, "cannot be read: \(error.localizedDescription)", code: .fileReadNoSuchFile)
            }
            do {
                return try CompiledModelDecoder.model(from: data)
            } catch let problem as ModelProblem {
                throw failure(compiled, problem.message)
            }
        }
        let contents = try contentsFile(for: url)
        let data: Data
        do {
            data = try Data(contentsOf: contents)
        } catch {
            throw failure(contents, "cannot be read: \(error.localizedDescription)", code: .fileReadNoSuchFile)
        }
        // XMLDocument on Linux recovers from broken XML, and XMLParser can crash on it, so check
        // well-formedness strictly first.
        do {
            try XMLWellFormedness.check(data)
        } catch let problem as PlainXML.Problem {
            throw failure(contents, "is not well-formed XML (line \(problem.line)): it \(problem.message)")
        }
        let document: XMLDocument
        do {
            document = try XMLDocument(data: data, options: [])
        } catch {
            throw failure(contents, "is not well-formed XML: \(error.localizedDescription)")
        }
        guard let root = document.rootElement(), root.name == "model" else {
            throw failure(contents, "has no <model> root element")
        }
        do {
            return try ModelXMLReader(root: root, path: contents.path).model()
        } catch let problem as ModelProblem {
            throw failure(contents, problem.message)
        }
    }

    /// The `contents` file of the model a URL names.
    static func contentsFile(for url: URL) throws -> URL {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw failure(url, "does not exist", code: .fileReadNoSuchFile)
        }
        switch url.pathExtension {
        case "xcdatamodeld":
            return try contentsFile(for: currentVersion(of: url))
        case "xcdatamodel":
            return isDirectory.boolValue ? url.appendingPathComponent("contents") : url
        default:
            if !isDirectory.boolValue, url.lastPathComponent == "contents" { return url }
            throw failure(url, "is not an .xcdatamodeld or .xcdatamodel model")
        }
    }

    /// The `.mom` file a URL names: itself, or the current version of a `.momd` bundle (named by
    /// its `VersionInfo.plist`); `nil` for a model source.
    static func compiledModelFile(for url: URL) throws -> URL? {
        switch url.pathExtension {
        case "mom":
            return url
        case "momd":
            let info = url.appendingPathComponent("VersionInfo.plist")
            if let data = try? Data(contentsOf: info),
                let plist = try? PropertyListReader.propertyList(from: data) as? [String: Any],
                let name = plist["NSManagedObjectModel_CurrentVersionName"] as? String
            {
                return url.appendingPathComponent(name + ".mom")
            }
            return try soleVersion(in: url, withExtension: "mom", marker: "VersionInfo.plist")
        default:
            return nil
        }
    }

    /// The current version of an `.xcdatamodeld`: named by `.xccurrentversion`, or the only one.
    package static func currentVersion(of bundle: URL) throws -> URL {
        let marker = bundle.appendingPathComponent(".xccurrentversion")
        if let data = try? Data(contentsOf: marker) {
            guard
                let plist = try? PropertyListReader.propertyList(from: data) as? [String: Any],
                let name = plist["_XCCurrentVersionName"] as? String
            else { throw failure(marker, "does not name the current version (_XCCurrentVersionName)") }
            return bundle.appendingPathComponent(name)
        }
        return try soleVersion(in: bundle, withExtension: "xcdatamodel", marker: ".xccurrentversion")
    }

    /// A versioned bundle without the file that names its current version is usable only when it
    /// holds exactly one version.
    private static func soleVersion(in bundle: URL, withExtension pathExtension: String, marker: String) throws -> URL {
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: bundle.path)) ?? [])
            .filter { $0.hasSuffix("." + pathExtension) }
        guard versions.count == 1 else {
            throw failure(bundle, "has \(versions.count) model versions and no \(marker) naming the current one")
        }
        return bundle.appendingPathComponent(versions[0])
    }

    static func failure(_ url: URL, _ problem: String, code: CocoaError.Code = .fileReadCorruptFile) -> NSError {
        let message = "The model file \(url.path) \(problem)."
        return NSError(
            domain: NSCocoaErrorDomain, code: code.rawValue,
            userInfo: [
                NSFilePathErrorKey: url.path, NSDebugDescriptionErrorKey: message, NSLocalizedDescriptionKey: message,
            ])
    }
}

/// A problem inside a model file, reported with the file's path by ``ModelFileLoader``.
package struct ModelProblem: Error {
    package let message: String

    /// The most superentities an entity may have above it. Xcode documents no limit and no real
    /// model comes near it; past it every walk up the hierarchy (inherited properties, version
    /// hashes, which are quadratic in the depth) would make a hostile file a slow one.
    static let maximumInheritanceDepth = 100

    /// Throws when the entities' parent links form a cycle (an entity its own ancestor), which
    /// would send every walk up the hierarchy — properties, version hashes — round forever, or a
    /// chain deeper than ``maximumInheritanceDepth``. Linear in the number of entities, however
    /// deep the hierarchy.
    static func checkInheritance(_ entities: [NSEntityDescription]) throws {
        var ancestors: [ObjectIdentifier: Int] = [:]  // -1: on the current walk; else the count above
        for entity in entities {
            var walk: [NSEntityDescription] = []
            var current: NSEntityDescription? = entity
            while let node = current, ancestors[ObjectIdentifier(node)] == nil {
                ancestors[ObjectIdentifier(node)] = -1
                walk.append(node)
                current = node.superentity
            }
            if let node = current, ancestors[ObjectIdentifier(node)] == -1 {
                let cycle = walk.drop { $0 !== node }.map { $0.name ?? "?" } + [node.name ?? "?"]
                throw ModelProblem(
                    message:
                        "gives entity \(node.name ?? "?") itself as an ancestor (\(cycle.joined(separator: " → ")))")
            }
            var count = current.flatMap { ancestors[ObjectIdentifier($0)] }.map { $0 + 1 } ?? 0
            for node in walk.reversed() {
                guard count <= maximumInheritanceDepth else {
                    throw ModelProblem(
                        message:
                            "gives entity \(node.name ?? "?") more than \(maximumInheritanceDepth) superentities above it"
                    )
                }
                ancestors[ObjectIdentifier(node)] = count
                count += 1
            }
        }
    }
}
