// swift-tools-version: 6.1
import PackageDescription

// Benchmarks live in their own package so peers (GRDB, later) never become dependencies of the
// library. Run: swift run -c release --package-path Benchmarks
let package = Package(
    name: "OpenCoreDataBenchmarks",
    dependencies: [.package(path: "..")],
    targets: [
        .executableTarget(
            name: "Benchmarks",
            dependencies: [.product(name: "CoreData", package: "main")]
        ),
        .executableTarget(name: "Profile", dependencies: [.product(name: "CoreData", package: "main")]),
    ],
    swiftLanguageModes: [.v6]
)
