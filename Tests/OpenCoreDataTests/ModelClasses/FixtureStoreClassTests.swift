import CoreData
import Foundation
import Testing

@testable import CoreDataModelGeneratorKit

/// Apple-written stores read through the classes Xcode's code generation makes from the models
/// that wrote them (Xcode's "Generating code" article; NSManagedObject reference, "Subclassing
/// Notes": the generated accessors are the properties "defined in the entity of a managed
/// object's corresponding managed object model"). For every fixture store with its model, the
/// test generates the model's classes and their accessors, compiles them with a checker into a
/// program linked against this build's library, and runs it on a copy of the store: each object
/// must be fetched as its entity's class, and every typed property must read what
/// `value(forKey:)` reads.
@Suite("Fixture stores read through generated model classes")
struct FixtureStoreClassTests {
    @Test("every fixture store reads the same through typed properties as through value(forKey:)")
    func fixtureStoresReadTheSameThroughTypedProperties() throws {
        guard let root = Fixtures.root() else { return }
        let build = try #require(ModelClassBuild.current, "the build's Modules folder and objects")
        let directory = TemporaryDirectory()
        // The model version that wrote each store, by Apple's version hashes.
        var jobs: [(store: URL, model: URL)] = []
        for fixture in FixtureStores.cases {
            guard let models = fixture.models else { continue }
            let store = try FixtureStores.copy(fixture.store, root: root, to: directory)
            let folder = root.appendingPathComponent("stores").appendingPathComponent(models)
            guard let version = try FixtureStores.matchingVersion(for: store, models: folder) else { continue }
            jobs.append((store, version))
        }
        #expect(jobs.count >= 15, "the fixture stores with their models")
        let versions = Array(Set(jobs.map(\.model))).sorted { $0.path < $1.path }
        var objects: [URL] = []
        var calls: [String] = []
        for (index, version) in versions.enumerated() {
            let module = "FixtureClasses\(index)"
            let folder = directory.url.appendingPathComponent(module)
            let model = try NSManagedObjectModel(validatingContentsOf: version)
            objects.append(try build.compileModule(module, for: model, in: folder))
            for job in jobs where job.model == version {
                calls.append(
                    "report(\(literal(job.store.path)), try \(module).check(storeAt: \(literal(job.store.path)), model: \(literal(version.path))))"
                )
            }
        }
        let main = folder(directory, "Checker").appendingPathComponent("main.swift")
        let imports = versions.indices.map { "import FixtureClasses\($0)\n" }.joined()
        try """
        import Foundation
        \(imports)
        func report(_ store: String, _ result: @autoclosure () throws -> (objects: Int, problems: [String])) {
            do {
                let (objects, problems) = try result()
                print("STORE\\t\\(store)\\t\\(objects)\\t\\(problems.count)")
                for problem in problems { print("PROBLEM\\t\\(store)\\t\\(problem)") }
            } catch {
                print("ERROR\\t\\(store)\\t\\(error)")
            }
        }
        \(calls.joined(separator: "\n"))

        """.write(to: main, atomically: true, encoding: .utf8)
        let checker = main.deletingLastPathComponent().appendingPathComponent("checker")
        let (status, output) = try build.link(main: main, objects: objects, modules: directory.url, to: checker)
        try #require(status == 0, "linking the checker: \(output)")
        let (exit, report) = try ModelClassBuild.run(checker.path, [], in: directory.url)
        #expect(exit == 0, "\(report)")
        let lines = report.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false) }
        let stores = lines.filter { $0.first == "STORE" }
        #expect(stores.count == jobs.count, "\(report)")
        #expect(stores.allSatisfy { $0[3] == "0" }, "\(report)")
        #expect(stores.reduce(0) { $0 + (Int($1[2]) ?? 0) } > 400, "objects read through their classes")
        for line in lines where line.first != "STORE" {
            Issue.record("\(line.joined(separator: " "))")
        }
    }

    private func folder(_ directory: TemporaryDirectory, _ name: String) -> URL {
        let url = directory.url.appendingPathComponent(name)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    private func literal(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
