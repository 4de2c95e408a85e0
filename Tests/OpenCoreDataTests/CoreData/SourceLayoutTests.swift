import Foundation
import Testing

/// The repository's layout rule (ARCHITECTURE.md): every public class Apple's Core Data
/// names lives in a file named after it, so a reader finds `NSMergeConflict` in
/// `NSMergeConflict.swift`. Read from the sources themselves.
@Suite("Source layout")
struct SourceLayoutTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Sources/OpenCoreData")

    @Test func everyAppleClassLivesInAFileNamedAfterIt() throws {
        let files = try #require(FileManager.default.enumerator(at: Self.sources, includingPropertiesForKeys: nil))
        var checked = 0
        for case let url as URL in files where url.pathExtension == "swift" {
            let text = try String(contentsOf: url, encoding: .utf8)
            let stem = url.deletingPathExtension().lastPathComponent
            for line in text.split(separator: "\n") where !line.hasPrefix(" ") {
                let words = line.split(separator: " ")
                guard let index = words.firstIndex(of: "class"), index + 1 < words.count,
                    words[..<index].contains(where: { $0 == "open" || $0 == "public" })
                else { continue }
                let name = String(words[index + 1].prefix { $0.isLetter || $0.isNumber })
                guard name.hasPrefix("NS") else { continue }
                checked += 1
                #expect(stem == name, "\(name) is declared in \(url.lastPathComponent)")
            }
        }
        #expect(checked > 30)
    }

    /// The store boundary (ARCHITECTURE.md, "Layers"): stores see values — snapshots, object IDs,
    /// a ``StoreTransaction`` — not objects. A store that read an object's private change state
    /// or took sets of objects to save could not be told a save's author; one that evaluated a
    /// fetch on a context's objects or wrote the coordinator's cache would repeat in every store
    /// what the context does once (`NSManagedObjectContext+StoreResults.swift`).
    @Test func storesSeeValuesNotObjects() throws {
        let stores = [
            Self.sources.appendingPathComponent("Stores"),
            Self.sources.deletingLastPathComponent().appendingPathComponent("OpenCoreDataSQL"),
            Self.sources.deletingLastPathComponent().appendingPathComponent("OpenCoreDataSQLite"),
        ]
        let files = stores.flatMap { directory in
            (FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)?.allObjects ?? [])
                .compactMap { $0 as? URL }
        }
        let forbidden = [
            "changedSlots": "an object's private record of changed properties",
            "Set<NSManagedObject>": "objects handed over to be saved",
            "NSManagedObjectContext(": "a scratch context to evaluate a fetch on objects",
            "readCache": "the coordinator's row cache",
            "object(with:": "a context's objects",
        ]
        var checked = 0
        for url in files where url.pathExtension == "swift" {
            let text = try String(contentsOf: url, encoding: .utf8)
            checked += 1
            for (needle, what) in forbidden {
                #expect(!text.contains(needle), "\(url.lastPathComponent) uses \(what) (\(needle))")
            }
        }
        #expect(checked > 28, "the core's Stores, the SQL layer and the SQLite module")
    }

    /// "Concrete stores are leaves" (ARCHITECTURE.md, "Layers"): outside `Stores/`, code reaches a
    /// store only through ``CoordinatedStore`` and capability protocols such as
    /// ``QueryGenerationStore`` — never by naming a store type, except in the coordinator's registry
    /// of store types. Comments may name them. (For the SQLite store, in its own module, the
    /// compiler enforces this too: the core cannot see it.)
    @Test func onlyTheRegistryNamesConcreteStores() throws {
        let files = try #require(FileManager.default.enumerator(at: Self.sources, includingPropertiesForKeys: nil))
        let names = ["SQLiteStore", "InMemoryStore", "SQLiteConnection", "SQLQuery", "RowStore"]
        var checked = 0
        for case let url as URL in files where url.pathExtension == "swift" && !url.path.contains("/Stores/") {
            checked += 1
            let text = try String(contentsOf: url, encoding: .utf8)
            for line in text.split(separator: "\n") {
                let code = line.trimmingCharacters(in: .whitespaces)
                // The registry: the in-memory store by class, the SQLite store (another module) by name.
                if code.hasPrefix("//") || code.contains("\"OpenCoreDataSQLite.SQLiteStore\"")
                    || code.contains("NSInMemoryStoreType: InMemoryStore.self")
                {
                    continue
                }
                for name in names where Self.containsWord(name, in: code) {
                    Issue.record("\(url.lastPathComponent) names \(name): \(code)")
                }
            }
        }
        #expect(checked > 50)
    }

    /// Store kinds are capabilities, never type names: the core decides what a store can do by
    /// the protocols its class adopts (``InPlaceMigratingStore``, ``StoreFileOperations``…), not
    /// by comparing its type string — a comparison with `NSSQLiteStoreType` sent a PostgreSQL store
    /// down the copy-and-replace path of staged migration though it migrates in place.
    @Test func theCoreComparesNoStoreTypeString() throws {
        let files = try #require(FileManager.default.enumerator(at: Self.sources, includingPropertiesForKeys: nil))
        let types = [
            "NSSQLiteStoreType", "NSInMemoryStoreType", "NSXMLStoreType", "NSBinaryStoreType", "\"PostgreSQL\"",
        ]
        var checked = 0
        for case let url as URL in files where url.pathExtension == "swift" {
            checked += 1
            let text = try String(contentsOf: url, encoding: .utf8)
            for line in text.split(separator: "\n") {
                let code = line.trimmingCharacters(in: .whitespaces)
                guard !code.hasPrefix("//") else { continue }
                for type in types
                where code.contains("== \(type)") || code.contains("\(type) ==")
                    || code.contains("!= \(type)") || code.contains("case \(type)")
                {
                    Issue.record("\(url.lastPathComponent) compares a store type string: \(code)")
                }
            }
        }
        #expect(checked > 50)
    }

    /// The SQL layer (module `OpenCoreDataSQL`) is Apple's layout, one tree and a dialect protocol
    /// for every SQL database: it names no database. SQLite's spellings live in `SQLiteDialect`.
    /// (The module structure keeps the rest: the layer cannot import a store, and the core cannot
    /// import the layer.)
    @Test func theSQLLayerNamesNoDatabase() throws {
        let layer = Self.sources.deletingLastPathComponent().appendingPathComponent("OpenCoreDataSQL")
        let files = try FileManager.default.contentsOfDirectory(at: layer, includingPropertiesForKeys: nil)
        #expect(files.count >= 8)
        for url in files where url.pathExtension == "swift" {
            let text = try String(contentsOf: url, encoding: .utf8)
            for line in text.split(separator: "\n") {
                let code = line.trimmingCharacters(in: .whitespaces)
                if code.hasPrefix("//") { continue }
                #expect(!code.contains("SQLite"), "\(url.lastPathComponent): \(code)")
            }
        }
    }

    /// An object's change state and its context's change sets have one owner,
    /// `Context/ObjectLifecycle.swift`: their fields can be set only there (`fileprivate(set)`,
    /// which the compiler enforces), and no other file replaces them whole.
    @Test func changeStateHasOneOwner() throws {
        let files = try #require(FileManager.default.enumerator(at: Self.sources, includingPropertiesForKeys: nil))
        var owner = 0
        for case let url as URL in files where url.pathExtension == "swift" {
            let text = try String(contentsOf: url, encoding: .utf8)
            if url.lastPathComponent == "ObjectLifecycle.swift" {
                owner += 1
                continue
            }
            // The declarations (`var changeState = …`) are the one exception.
            for line in text.split(separator: "\n") where !line.contains("var ") {
                for needle in ["changeState =", "changeSets ="] where line.contains(needle) {
                    Issue.record("\(url.lastPathComponent) replaces the change state: \(line)")
                }
            }
        }
        #expect(owner == 1)
    }

    /// An object's fault, snapshot and awake states have one owner, `Objects/ObjectState.swift`,
    /// as its change state has `ObjectLifecycle.swift`: no other file writes the fault bit, the
    /// committed values, the changed slots or the owed `awakeFromFetch` — it calls a named
    /// transition. (`NSManagedObject.swift` keeps the storage of the changed slots, the one place
    /// that touches it.)
    @Test func faultSnapshotAndAwakeStatesHaveOneOwner() throws {
        let files = try #require(FileManager.default.enumerator(at: Self.sources, includingPropertiesForKeys: nil))
        var owner = 0
        for case let url as URL in files where url.pathExtension == "swift" {
            if url.lastPathComponent == "ObjectState.swift" {
                owner += 1
                continue
            }
            let text = try String(contentsOf: url, encoding: .utf8)
            for line in text.split(separator: "\n") {
                let code = line.trimmingCharacters(in: .whitespaces)
                if code.hasPrefix("//") || code.hasPrefix("case ") { continue }
                if url.lastPathComponent == "NSManagedObject.swift",
                    code.contains("$0.changedSlots = newValue") || code.contains("box.changedSlots.insert")
                {
                    continue
                }
                for field in ["isFault", "isFaultFlag", "committed", "changedSlots", "owesAwakeFromFetch"]
                where Self.writes(field, in: code) {
                    Issue.record("\(url.lastPathComponent) writes \(field) outside ObjectState.swift: \(code)")
                }
            }
        }
        #expect(owner == 1)
    }

    /// Whether `code` assigns to (or inserts into) the property `field` — not a local of that name
    /// declared with `let`/`var`, and not a comparison.
    private static func writes(_ field: String, in code: String) -> Bool {
        var rest = code[...]
        while let range = rest.range(of: field) {
            defer { rest = code[range.upperBound...] }
            let before = range.lowerBound == code.startIndex ? nil : code[code.index(before: range.lowerBound)]
            if let before, before.isLetter || before.isNumber || before == "_" { continue }
            let prefix = code[..<range.lowerBound]
            if prefix.hasSuffix("let ") || prefix.hasSuffix("var ") { continue }
            let after = code[range.upperBound...].drop { $0 == " " }
            if after.hasPrefix("==") { continue }
            if after.hasPrefix("=") || after.hasPrefix(".insert(") || after.hasPrefix(".remove(")
                || after.hasPrefix(".formUnion(")
            {
                return true
            }
        }
        return false
    }

    /// The SQL stores write rows only through the SQL store core's one row plan (`SQLRowPlan`,
    /// `OpenCoreDataSQL`): no SQLite or PostgreSQL file makes an insert or update of an entity's
    /// row, or a join table's writes, of its own.
    @Test func theSQLStoresWriteRowsOnlyThroughTheCore() throws {
        var checked = 0
        for module in ["OpenCoreDataSQLite", "OpenCoreDataPostgres"] {
            let files = try Self.codeLines(in: Self.sources.deletingLastPathComponent().appendingPathComponent(module))
            checked += files.count
            for (file, lines) in files {
                for code in lines {
                    for call in [".insertRow(", ".updateRow(", "toManyWrites(", "SQLBookkeeping.insertMetadata"]
                    where code.contains(call) {
                        Issue.record("\(module)/\(file) writes rows itself (\(call)): \(code)")
                    }
                }
            }
        }
        #expect(checked > 20)
    }

    /// "Model and Objects hold no coordinator or store state" (ARCHITECTURE.md, "Layers"): an
    /// object keeps its row's snapshot alive through the Objects layer's own `SnapshotHolder`
    /// protocol, not the coordinator's `RowCache`; no model or object code names a coordinator,
    /// its cache or a store protocol.
    @Test func modelAndObjectsHoldNoCoordinatorState() throws {
        var checked = 0
        for layer in ["Model", "Objects"] {
            let files = try Self.codeLines(in: Self.sources.appendingPathComponent(layer))
            checked += files.count
            for (file, lines) in files {
                for code in lines {
                    for name in ["RowCache", "NSPersistentStoreCoordinator", "CoordinatedStore", "RowStore"]
                    where Self.containsWord(name, in: code) {
                        Issue.record("\(layer)/\(file) names \(name): \(code)")
                    }
                }
            }
        }
        #expect(checked > 30)
    }

    /// "Context → Coordinator → Store, one way" (ARCHITECTURE.md, "Layers"), as Apple's stack
    /// stands: a context calls its coordinator (`execute(_:with:)`, NSPersistentStoreCoordinator
    /// reference), never the reverse. The coordinator knows who asks only as a `StoreRequester`
    /// and answers with values; making objects, finishing a fetch in memory and resolving
    /// conflicts with the merge policy (a context's `mergePolicy`, NSManagedObjectContext
    /// reference) are the context's. So no coordinator code names the context class, nor the
    /// context-side functions it once called back.
    @Test func theCoordinatorNeverCallsUpIntoTheContext() throws {
        let files = try Self.codeLines(in: Self.sources.appendingPathComponent("Coordinator"))
        let upward = [
            "NSManagedObjectContext", "registeredObject", "mergePolicy", "processPendingChanges", "holdRows",
        ]
        for (file, lines) in files {
            for code in lines {
                for name in upward where Self.containsWord(name, in: code) {
                    Issue.record("Coordinator/\(file) names \(name): \(code)")
                }
            }
        }
        #expect(files.count > 15, "the Coordinator folder's files")
    }

    /// One writer of the row cache (ARCHITECTURE.md, "Layers"): every context of a coordinator
    /// reads saved rows from its cache, and a row in it must be one a store committed, never
    /// older than one already there (a fetch's `stalenessInterval` and a save's "succeeds or fails
    /// as a whole", NSManagedObjectContext reference). The coordinator alone decides what enters
    /// and leaves it; a context holds and reads rows, and asks the coordinator to cache a chunk
    /// it registers (`cacheRows`) or drop rows a merged save changed (`forgetCachedRows`).
    @Test func onlyTheCoordinatorWritesTheRowCache() throws {
        let root = Self.sources.deletingLastPathComponent()
        let files = ["OpenCoreData", "OpenCoreDataSQL", "OpenCoreDataSQLite", "OpenCoreDataPostgres"].flatMap {
            module in
            (FileManager.default.enumerator(at: root.appendingPathComponent(module), includingPropertiesForKeys: nil)?
                .allObjects ?? []).compactMap { $0 as? URL }
        }
        let writes = [
            "updateIfNewer(", "rowCache.update(", "cache.update(", "rowCache.removeAll", "cache.removeAll",
            "reserveCapacity(adding: objectIDs",
        ]
        var checked = 0
        for url in files where url.pathExtension == "swift" && !url.path.contains("/OpenCoreData/Coordinator/") {
            checked += 1
            let text = try String(contentsOf: url, encoding: .utf8)
            for line in text.split(separator: "\n") {
                let code = line.trimmingCharacters(in: .whitespaces)
                guard !code.hasPrefix("//") else { continue }
                for write in writes where code.contains(write) {
                    Issue.record("\(url.lastPathComponent) writes the row cache (\(write)): \(code)")
                }
                if code.contains("rowCache["), code.contains("] =") {
                    Issue.record("\(url.lastPathComponent) writes the row cache: \(code)")
                }
            }
        }
        #expect(checked > 150, "every module's files outside Coordinator/")
    }

    /// The code of each Swift file directly in `directory`, by file name: its lines trimmed, the
    /// comment lines left out.
    private static func codeLines(in directory: URL) throws -> [(file: String, lines: [String])] {
        try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "swift" }
            .map { url in
                let text = try String(contentsOf: url, encoding: .utf8)
                let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                return (url.lastPathComponent, lines.filter { !$0.hasPrefix("//") })
            }
    }

    private static func containsWord(_ word: String, in line: String) -> Bool {
        var rest = line[...]
        while let range = rest.range(of: word) {
            let before = range.lowerBound == line.startIndex ? nil : line[line.index(before: range.lowerBound)]
            let after = range.upperBound == line.endIndex ? nil : line[range.upperBound]
            func isIdentifier(_ c: Character?) -> Bool { c.map { $0.isLetter || $0.isNumber || $0 == "_" } ?? false }
            if !isIdentifier(before), !isIdentifier(after) { return true }
            rest = line[range.upperBound...]
        }
        return false
    }
}
