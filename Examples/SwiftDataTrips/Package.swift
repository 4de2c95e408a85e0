// swift-tools-version: 6.1
import PackageDescription

// An app's SwiftData model code, as written for an Apple platform, built and run on Linux with
// `import SwiftData`: models with relationships, enums and unique attributes, a model actor that
// imports in the background, `#Predicate` queries, and the store reopened by a second container.
// Run: swift run --package-path Examples/SwiftDataTrips
let package = Package(
    name: "SwiftDataTrips",
    dependencies: [.package(name: "OpenCoreData", path: "../..")],
    targets: [
        .executableTarget(
            name: "SwiftDataTrips", dependencies: [.product(name: "SwiftData", package: "OpenCoreData")])
    ],
    swiftLanguageModes: [.v6]
)
