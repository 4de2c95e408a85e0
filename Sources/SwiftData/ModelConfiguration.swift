import OpenCoreData

/// Where and how a container stores its models: a file (by default `default.store` in the
/// application-support folder), or memory only.
///
/// On Linux the application-support folder is `$XDG_DATA_HOME`, else `~/.local/share`
/// (Foundation's `.applicationSupportDirectory`).
///
/// Related documentation: SwiftData, `ModelConfiguration`.
public struct ModelConfiguration: Hashable, Sendable {
    /// The configuration's name; `"default"` unless given.
    public let name: String
    /// The store file.
    public let url: URL
    /// Whether the store lives in memory only.
    public let isStoredInMemoryOnly: Bool
    /// Whether contexts may save to the store.
    public let allowsSave: Bool

    /// A configuration named `name` storing in `default.store` (or `<name>.store`) in the
    /// application-support folder, or in memory only.
    public init(_ name: String? = nil, isStoredInMemoryOnly: Bool = false, allowsSave: Bool = true) {
        let name = name ?? "default"
        let folder =
            FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? URL(fileURLWithPath: NSTemporaryDirectory())
        self.init(
            name: name, url: folder.appendingPathComponent("\(name).store"), isStoredInMemoryOnly: isStoredInMemoryOnly,
            allowsSave: allowsSave)
    }

    /// A configuration storing in the file at `url` — or, beyond Apple, in the PostgreSQL
    /// database a `postgres://` (or `postgresql://`) URL names, shared by every program that opens
    /// it; the program links the `OpenCoreDataPostgres` product for that.
    public init(_ name: String? = nil, url: URL, allowsSave: Bool = true) {
        self.init(name: name ?? "default", url: url, isStoredInMemoryOnly: false, allowsSave: allowsSave)
    }

    /// Whether the configuration names a PostgreSQL database.
    var isPostgreSQL: Bool { ["postgres", "postgresql"].contains(url.scheme?.lowercased() ?? "") }

    /// The store type of the PostgreSQL store (`NSPostgreSQLStoreType` of `OpenCoreDataPostgres`),
    /// which the coordinator finds when the program links that product.
    static let postgreSQLStoreType = "PostgreSQL"

    private init(name: String, url: URL, isStoredInMemoryOnly: Bool, allowsSave: Bool) {
        self.name = name
        self.url = url
        self.isStoredInMemoryOnly = isStoredInMemoryOnly
        self.allowsSave = allowsSave
    }
}
