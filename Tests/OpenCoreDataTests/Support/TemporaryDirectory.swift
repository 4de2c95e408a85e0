import Foundation

/// A fresh directory under the system's temporary folder, removed when the value is released.
final class TemporaryDirectory: Sendable {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("ocd-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func file(_ name: String) -> URL { url.appendingPathComponent(name) }
}

/// An executable of this package built with the tests: `.build/<configuration>/<name>`, beside the
/// test bundle (the test target depends on it, so it is built first).
func builtExecutable(_ name: String) -> URL {
    let besideTests = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent(name)
    if FileManager.default.isExecutableFile(atPath: besideTests.path) { return besideTests }
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    return root.appendingPathComponent(".build/debug/\(name)")
}

/// Runs `ConflictWriter` with `arguments`, kills it with SIGKILL after `milliseconds` (or lets it
/// finish when `nil`), and answers what it printed on standard output — the kill tests' victim.
func runConflictWriter(_ arguments: [String], killAfter milliseconds: Int?) throws -> String {
    let process = Process()
    process.executableURL = builtExecutable("ConflictWriter")
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    if let milliseconds {
        Thread.sleep(forTimeInterval: Double(milliseconds) / 1000)
        kill(process.processIdentifier, SIGKILL)
    }
    process.waitUntilExit()
    return String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
}
