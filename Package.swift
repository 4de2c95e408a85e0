// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "OpenCoreData",
    products: [
        .library(name: "CoreData", targets: ["CoreData"]),
        .library(name: "OpenCoreData", targets: ["OpenCoreData"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        .target(name: "OpenCoreData", dependencies: ["CSQLite", "CZlib"]),
        .target(name: "CoreData", dependencies: ["OpenCoreData"]),
        .testTarget(name: "OpenCoreDataTests", dependencies: ["OpenCoreData", "CoreData"]),
    ],
    swiftLanguageModes: [.v6]
)
