import Foundation
import Testing

/// The SwiftData macros as the compiler expands them: a source file is type-checked by `swiftc`
/// with this build's `SwiftData` module and macro plugin, as an app's code is. Rules from Apple's
/// SwiftData documentation: `Model()` applies to classes, `ModelActor()` to actors, `Unique(_:)`
/// and `Index(_:)` are written in a model class (their key paths rooted in it); a model using every
/// macro compiles without a diagnostic.
@Suite("SwiftData macros, expanded by the compiler")
struct SwiftDataMacroDiagnosticTests {
    /// The errors and warnings `swiftc -typecheck` reports for `source`.
    static func diagnostics(_ source: String) throws -> [String] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let build = root.appendingPathComponent(".build/debug")
        let plugin = build.appendingPathComponent("SwiftDataMacros-tool")
        try #require(FileManager.default.fileExists(atPath: plugin.path), "the macro plugin is built with the tests")
        let directory = TemporaryDirectory()
        let file = directory.file("Models.swift")
        try Data(source.utf8).write(to: file)
        var arguments = [
            "swiftc", "-typecheck", "-swift-version", "6", "-I", build.appendingPathComponent("Modules").path,
            "-load-plugin-executable", plugin.path + "#SwiftDataMacros",
        ]
        for library in ["CPrefetch", "CSQLite", "CZlib"] {
            arguments += [
                "-Xcc", "-fmodule-map-file=" + root.appendingPathComponent("Sources/\(library)/module.modulemap").path,
            ]
        }
        arguments.append(file.path)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let output = Pipe()
        process.standardError = output
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text.split(separator: "\n").map(String.init).filter {
            ($0.contains(": error: ") || $0.contains(": warning: ")) && $0.hasPrefix(file.path)
        }
    }

    @Test func aModelWithEveryMacroCompilesCleanly() throws {
        let diagnostics = try Self.diagnostics(
            """
            import SwiftData

            enum Mood: String, Codable { case calm, busy }

            @Model final class Venue {
                #Unique<Venue>([\\.name])
                #Index<Venue>([\\.name], [\\.capacity])
                @Attribute(.unique, originalName: "title") var name: String
                var capacity: Int
                var mood: Mood?
                @Relationship(deleteRule: .cascade, inverse: \\Show.venue) var shows: [Show] = []
                @Transient var visits = 0
                init(name: String, capacity: Int) { self.name = name; self.capacity = capacity }
            }

            @Model final class Show {
                #Unique([\\Show.title])
                var title: String
                var venue: Venue?
                init(title: String) { self.title = title }
            }

            @ModelActor actor Booker {
                func count() throws -> Int { try modelContext.fetchCount(FetchDescriptor<Show>()) }
            }
            """)
        #expect(diagnostics == [])
    }

    /// A stored property `@Model` persists needs its type written out (the accessors that keep
    /// it in the backing data make it a computed property, which Swift types only by annotation):
    /// one error naming it, never a property silently left unsaved.
    @Test func aPersistedPropertyWithoutAWrittenTypeIsAnError() throws {
        let diagnostics = try Self.diagnostics(
            """
            import SwiftData

            @Model final class Stop {
                var city: String
                var nights = 1
                @Transient var visits = 0
                init(city: String) { self.city = city }
            }
            """)
        #expect(diagnostics.count == 1)
        #expect(diagnostics.first?.contains("@Model saves 'nights' only with its type written out") == true)
    }

    @Test func modelOnAStructIsOneErrorThatSaysSo() throws {
        let diagnostics = try Self.diagnostics(
            """
            import SwiftData
            @Model struct Point { var x: Int }
            """)
        #expect(diagnostics.count == 1)
        #expect(diagnostics.first?.contains("@Model can only be applied to a class") == true)
    }

    @Test func modelActorOnAClassIsAnError() throws {
        let diagnostics = try Self.diagnostics(
            """
            import SwiftData
            @ModelActor final class Loader {}
            """)
        #expect(diagnostics.count == 1)
        #expect(diagnostics.first?.contains("@ModelActor can only be applied to an actor") == true)
    }

    /// `#Unique` constrains its key paths' root to a model class, so one outside a model is the
    /// compiler's error that the root must be one.
    @Test func uniqueOutsideAModelIsAnError() throws {
        let diagnostics = try Self.diagnostics(
            """
            import SwiftData
            struct Holder { #Unique([\\Holder.x]); var x = 0 }
            """)
        #expect(diagnostics.count == 1)
        #expect(diagnostics.first?.contains("requires that 'Holder' conform to 'PersistentModel'") == true)
    }
}
