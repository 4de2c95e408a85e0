import Foundation
import Logging

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
