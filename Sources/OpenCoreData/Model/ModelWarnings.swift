internal import Logging

/// Warnings about model files that load but are not quite what they should be — accepted as
/// Apple's tools accept them, and said once through `swift-log` (label `OpenCoreData.Model`, level
/// `warning`), to standard error unless the program bootstraps its own logging backend.
enum ModelWarnings {
    private static let state = LoggerBox(Logger(label: "OpenCoreData.Model"))

    /// Replaces the logger (tests capture the warnings through their own handler).
    static func configure(logger: Logger) { state.logger = logger }

    /// Logs one warning about the model file at `path`.
    static func warn(_ message: String, path: String?) {
        state.logger.warning("\(path.map { "\($0): " } ?? "")\(message)")
    }
}

/// A logger behind a lock, replaceable while other threads log.
final class LoggerBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Logger

    init(_ logger: Logger) { stored = logger }

    var logger: Logger {
        get {
            lock.lock()
            defer { lock.unlock() }
            return stored
        }
        set {
            lock.lock()
            defer { lock.unlock() }
            stored = newValue
        }
    }
}
