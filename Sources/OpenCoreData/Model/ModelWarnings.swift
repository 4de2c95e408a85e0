package import Logging

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
package final class LoggerBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Logger

    package init(_ logger: Logger) { stored = logger }

    package var logger: Logger {
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

/// Errors that an accessor cannot throw: a fault that could not be loaded for a reason other than
/// its row being gone. Logged through `swift-log` (label `OpenCoreData.Faults`, level `error`).
enum FaultLog {
    private static let state = LoggerBox(Logger(label: "OpenCoreData.Faults"))

    /// Replaces the logger (tests capture the errors through their own handler).
    static func configure(logger: Logger) { state.logger = logger }

    /// Logs that the fault for `objectID` could not be loaded.
    static func error(_ error: any Error, objectID: NSManagedObjectID) {
        state.logger.error("could not load the fault \(objectID.uriRepresentation().absoluteString): \(error)")
    }
}
