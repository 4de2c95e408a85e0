// swift-tools-version: 6.1
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "OpenCoreData",
    products: [
        .library(name: "CoreData", targets: ["CoreData"]),
        .library(name: "OpenCoreData", targets: ["OpenCoreData", "OpenCoreDataSQLite"]),
        // The PostgreSQL store (`NSPostgreSQLStoreType`), a product of its own so that the core
        // never depends on SwiftNIO (the PostgreSQL article).
        .library(name: "OpenCoreDataPostgres", targets: ["OpenCoreDataPostgres"]),
        // SwiftData's API over the same stack: `@Model` classes written for Apple platforms
        // compile with `import SwiftData` (the SwiftData catalog).
        .library(name: "SwiftData", targets: ["SwiftData"]),
        .executable(name: "coredata", targets: ["CoreDataTool"]),
        // The same tool with the PostgreSQL store, for `postgres://` URLs: a product of its own, so
        // that `swift run coredata` never compiles SwiftNIO and BoringSSL (README, "Start").
        .executable(name: "coredata-postgres", targets: ["CoreDataPostgresTool"]),
        // Supplies the accessors of `@NSManaged` declarations on Linux (the "Sharing model code" article).
        .plugin(name: "CoreDataModelGenerator", targets: ["CoreDataModelGenerator"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/swiftlang/swift-syntax", from: "603.0.1"),
        // `swift package generate-documentation`: the DocC catalog of the `CoreData` module.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    // `Examples/CompanyModel` is a package of its own that uses this one as an app's model
    // package would (the "Sharing model code" article).
    targets: [
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        // Cache prefetch hints for the core's hash tables (a header; nothing to link).
        .systemLibrary(name: "CPrefetch"),
        // The core: predicates, model, objects, contexts, the coordinator, the store protocol and
        // the in-memory store. It names no other store.
        .target(name: "OpenCoreData", dependencies: ["CPrefetch", .product(name: "Logging", package: "swift-log")]),
        // The SQL layer every SQL store shares: Apple's layout, the statement tree, the fetch
        // translator and the dialect protocol. It names no database.
        .target(name: "OpenCoreDataSQL", dependencies: ["OpenCoreData"]),
        // The SQLite store: a leaf, reaching the core and the SQL layer only through `package` API.
        .target(
            name: "OpenCoreDataSQLite",
            dependencies: [
                "OpenCoreData", "OpenCoreDataSQL", "CSQLite", "CZlib", .product(name: "Logging", package: "swift-log"),
            ]),
        // The PostgreSQL store: a leaf like the SQLite store, on the same SQL layer with its own
        // dialect, talking to the server through postgres-nio.
        .target(
            name: "OpenCoreDataPostgres",
            dependencies: [
                "OpenCoreData", "OpenCoreDataSQL", .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .target(name: "CoreData", dependencies: ["OpenCoreData", "OpenCoreDataSQLite"]),
        // SwiftData: the macros (`@Model`, `@Transient`) as a compiler plugin, and the API over the
        // core and the SQLite store.
        .macro(
            name: "SwiftDataMacros",
            dependencies: [
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ]),
        .target(name: "SwiftData", dependencies: ["OpenCoreData", "OpenCoreDataSQLite", "SwiftDataMacros"]),
        // The `coredata` command-line tool: its commands, and two executables — `coredata`
        // (SQLite, XML and binary stores) and `coredata-postgres` (PostgreSQL too). The modules are
        // not named `coredata`: on a case-insensitive file system their build products would
        // collide with `CoreData`'s.
        .target(
            name: "CoreDataToolKit",
            dependencies: [
                "CoreData", "OpenCoreDataSQLite", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        .executableTarget(name: "CoreDataTool", dependencies: ["CoreDataToolKit"], path: "Sources/coredata"),
        .executableTarget(
            name: "CoreDataPostgresTool", dependencies: ["CoreDataToolKit", "CoreData", "OpenCoreDataPostgres"],
            path: "Sources/coredata-postgres"),
        // The model-class generator: reads a target's sources and writes the accessors of its
        // `@NSManaged` declarations; the build plugin runs it.
        .target(name: "CoreDataModelGeneratorKit", dependencies: ["OpenCoreData"]),
        .executableTarget(name: "CoreDataModelGeneratorTool", dependencies: ["CoreDataModelGeneratorKit"]),
        .plugin(name: "CoreDataModelGenerator", capability: .buildTool(), dependencies: ["CoreDataModelGeneratorTool"]),
        // The second process of the two-process conflict test.
        .executableTarget(
            name: "ConflictWriter", dependencies: ["CoreData", "OpenCoreDataPostgres"], path: "Tests/ConflictWriter"),
        .testTarget(
            name: "OpenCoreDataTests",
            dependencies: [
                // CSQLite: the I/O-fault test's SQLite VFS shim (Support/FaultyVFS.swift).
                "OpenCoreData", "OpenCoreDataSQL", "OpenCoreDataSQLite", "OpenCoreDataPostgres", "CoreData",
                "CoreDataTool", "CoreDataPostgresTool",
                "ConflictWriter",
                "CSQLite", "CoreDataModelGeneratorKit", "SwiftData",
                .product(name: "Logging", package: "swift-log"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
