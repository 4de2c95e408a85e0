import ArgumentParser
@_spi(Tools) import OpenCoreData
@_spi(Tools) import OpenCoreDataSQLite

/// `coredata check STORE`: is the store sound?
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check a store: SQLite integrity, bookkeeping, dangling references, version hashes.",
        discussion: """
            Checks SQLite's integrity (of a SQLite file), that Z_MAX in Z_PRIMARYKEY is at least every Z_PK and every \
            Z_ENT is a known entity, that no to-one or join-table row refers to a missing object, \
            and — with --model — that the model's version hashes are the store's. An XML or binary \
            store (--model required) is read whole: every value's type, every reference and the \
            version hashes. Prints each finding on its own line and exits with status 1 when there \
            is any.
            """)

    @Argument(help: "The store: a SQLite, XML or binary file, or a postgres:// URL.") var store: String
    @Option(help: "The model to check against; default: the model cached in the store.") var model: String?

    func run() throws {
        let url = try OpenedStore.existingFile(store)
        let type = OpenedStore.storeType(of: url)
        if type != NSSQLiteStoreType && type != PostgreSQLSupport.storeType { return try checkAtomicStore(url) }
        let metadata = try OpenedStore.readMetadata(url)
        // Not through a coordinator: a model that does not match is a finding here, not a refusal.
        let checked: NSManagedObjectModel
        if let model {
            checked = try OpenedStore.loadModel(model, matching: metadata)
        } else {
            checked = try OpenedStore.cachedModel(url, path: store)
        }
        let findings: [String]
        do {
            findings =
                type == PostgreSQLSupport.storeType
                ? try PostgreSQLSupport.required(for: store).check(url, checked, model != nil)
                : try SQLiteStoreCheck.findings(storeAt: url, model: checked, compareVersionHashes: model != nil)
        } catch {
            throw ToolError.data("\(store): \(ToolError.describe(error))")
        }
        guard findings.isEmpty else {
            for finding in findings { print(finding) }
            throw ExitCode(ToolError.Status.data.rawValue)
        }
        print("\(store): no problems found")
    }

    /// An XML or binary store is checked by reading it whole with the model, which refuses a
    /// wrong type, a missing or repeated object, and other version hashes.
    private func checkAtomicStore(_ url: URL) throws {
        guard let model else { throw ToolError.usage("\(store): an XML or binary store holds no model; pass --model") }
        do {
            _ = try OpenedStore.open(store, modelPath: model)
        } catch let error as ToolError where error.status == .data {
            print(error.message)
            throw ExitCode(ToolError.Status.data.rawValue)
        }
        print("\(store): no problems found")
    }
}
