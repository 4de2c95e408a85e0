import Foundation
import Logging

@testable import OpenCoreData
@testable import OpenCoreDataSQLite

/// Collects the messages logged through it with the thread that logged each, so a test keeps
/// its own lines while other suites log concurrently.
final class CapturedLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [(thread: pthread_t, text: String)] = []

    func append(_ line: String) {
        lock.lock()
        lines.append((pthread_self(), line))
        lock.unlock()
    }

    func logged(on thread: pthread_t) -> [String] {
        lock.lock()
        defer { lock.unlock() }
        return lines.filter { pthread_equal($0.thread, thread) != 0 }.map(\.text)
    }
}

struct CapturingHandler: LogHandler {
    let lines: CapturedLines
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) { lines.append("\(event.message)") }
}

/// A process-wide logger a test can point at its own capture.
enum CapturedLog {
    /// `SQLDebug` at `level` (0 is off).
    case sqlDebug(level: Int)
    /// `ModelWarnings`, the warnings about model files that load.
    case modelWarnings
    /// `FaultLog`, the faults that could not be loaded.
    case faults

    /// The loggers are process-wide and suites run in parallel, so a test that pointed one at its
    /// handler while another test did the same, or reset it, lost its lines (seen locally:
    /// `aSaveIsOneTransaction` found no `COMMIT`). Tests that capture a log take turns here.
    private static let turn = NSLock()

    /// Runs `body` with this logger writing to a fresh capture, then restores the default logger.
    ///
    /// - Throws: What `body` throws.
    func capture<T>(_ body: (CapturedLines) throws -> T) rethrows -> T {
        Self.turn.lock()
        defer { Self.turn.unlock() }
        let lines = CapturedLines()
        let logger = Logger(label: "test") { _ in CapturingHandler(lines: lines) }
        switch self {
        case .sqlDebug(let level): SQLDebug.configure(level: level, logger: logger)
        case .modelWarnings: ModelWarnings.configure(logger: logger)
        case .faults: FaultLog.configure(logger: logger)
        }
        defer {
            switch self {
            case .sqlDebug: SQLDebug.configure(level: 0)
            case .modelWarnings: ModelWarnings.configure(logger: Logger(label: "OpenCoreData.Model"))
            case .faults: FaultLog.configure(logger: Logger(label: "OpenCoreData.Faults"))
            }
        }
        return try body(lines)
    }
}
