// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "OpenCoreData",
    products: [
        .library(name: "CoreData", targets: ["CoreData"]),
        .library(name: "OpenCoreData", targets: ["OpenCoreData"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2")
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        .target(
            name: "OpenCoreData",
            dependencies: ["CSQLite", "CZlib", .product(name: "Logging", package: "swift-log")]),
        .target(name: "CoreData", dependencies: ["OpenCoreData"]),
        .testTarget(
            name: "OpenCoreDataTests",
            dependencies: ["OpenCoreData", "CoreData", .product(name: "Logging", package: "swift-log")]),
    ],
    swiftLanguageModes: [.v6]
)
