// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "OpenCoreData",
    products: [
        .library(name: "CoreData", targets: ["CoreData"]),
        .library(name: "OpenCoreData", targets: ["OpenCoreData"]),
    ],
    targets: [
        .target(name: "OpenCoreData"),
        .target(name: "CoreData", dependencies: ["OpenCoreData"]),
        .testTarget(name: "OpenCoreDataTests", dependencies: ["OpenCoreData", "CoreData"]),
    ],
    swiftLanguageModes: [.v6]
)
