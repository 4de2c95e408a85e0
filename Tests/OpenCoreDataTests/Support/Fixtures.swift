import Foundation
import Testing

/// The real Core Data material in `../shared/fixtures` (beside the repository).
///
/// Tests that need it call ``root()``: when the fixtures are missing it records a failure if `CI`
/// is set (fixture tests must never be skipped in CI) and otherwise returns `nil`, so the test can
/// skip with a message.
enum Fixtures {
    static let directory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("shared/fixtures")

    /// CoreDataPlus's SampleModel, the fixture with inheritance, constraints and a compiled `.momd`.
    static let sampleModelSource =
        "stores/coredataplus-samplemodel/SampleModel/SampleModel.xcdatamodeld/SampleModel.xcdatamodel"
    static let sampleModelCompiled =
        "stores/coredataplus-samplemodel/SampleModel/Fixtures/SampleModel.momd/SampleModel.mom"

    static func root(sourceLocation: SourceLocation = #_sourceLocation) -> URL? {
        if FileManager.default.fileExists(atPath: directory.appendingPathComponent("version-hashes.json").path) {
            return directory
        }
        if ProcessInfo.processInfo.environment["CI"] != nil {
            Issue.record("CI is set but the fixtures are missing at \(directory.path)", sourceLocation: sourceLocation)
        } else {
            print("Skipping: fixtures not found at \(directory.path)")
        }
        return nil
    }
}
