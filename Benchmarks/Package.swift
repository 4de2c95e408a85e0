// swift-tools-version: 6.1
import PackageDescription

// Benchmarks live in their own package so peers (GRDB, Fluent) never become dependencies of the
// library. Run: swift run -c release --package-path Benchmarks
let package = Package(
    name: "OpenCoreDataBenchmarks",
    dependencies: [
        .package(name: "OpenCoreData", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/vapor/fluent-kit", from: "1.57.0"),
        .package(url: "https://github.com/vapor/fluent-postgres-driver", from: "2.14.0"),
    ],
    targets: [
        .executableTarget(
            name: "Benchmarks",
            dependencies: [
                .product(name: "CoreData", package: "OpenCoreData"), .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"), "BenchmarkModel",
                .product(name: "OpenCoreDataPostgres", package: "OpenCoreData"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "SwiftData", package: "OpenCoreData"),
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver"),
            ]
        ),
        .executableTarget(
            name: "Profile", dependencies: [.product(name: "CoreData", package: "OpenCoreData"), "BenchmarkModel"]),
        // The Core Data model and relationship walks both executables run, and a model class with
        // `@NSManaged` properties built through the library's plugin (typed accessors).
        .target(
            name: "BenchmarkModel", dependencies: [.product(name: "CoreData", package: "OpenCoreData")],
            plugins: [.plugin(name: "CoreDataModelGenerator", package: "OpenCoreData")]),
    ],
    swiftLanguageModes: [.v6]
)
