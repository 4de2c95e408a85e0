package import Logging

/// Warnings about model files that load but are not quite what they should be — accepted as
/// Apple's tools accept them, and said once through `swift-log` (label `OpenCoreData.Model`, level
/// `warning`), to standard error unless the program bootstraps its own logging backend.
///
/// Each warning is said once a process: a program that loads a model twice, or every version of a
/// versioned model (a real app's 90 versions share one odd default), hears it once.
enum ModelWarnings {
    private static let state = LoggerBox(Logger(label: "OpenCoreData.Model"))
    private static let lock = NSLock()
    nonisolated(unsafe) private static var said: Set<String> = []

    /// Replaces the logger (tests capture the warnings through their own handler), and forgets
    /// which warnings were said.
    static func configure(logger: Logger) {
        lock.lock()
        said = []
        lock.unlock()
        state.logger = logger
    }

    /// Logs one warning about the model file at `path`, unless it was said before about that
    /// file or another version of the same versioned model.
    static func warn(_ message: String, path: String?) {
        let bundle = path.flatMap(versionedModel(containing:))
        let key = (bundle ?? path ?? "") + "\u{0}" + message
        lock.lock()
        let first = said.insert(key).inserted
        lock.unlock()
        guard first else { return }
        let scope = bundle.map { " (said once for every version of \(($0 as NSString).lastPathComponent))" } ?? ""
        state.logger.warning("\(path.map { "\($0): " } ?? "")\(message)\(scope)")
    }

    /// The `.xcdatamodeld` or `.momd` folder `path` lies in, if any.
    private static func versionedModel(containing path: String) -> String? {
        let components = (path as NSString).pathComponents
        guard let index = components.lastIndex(where: { $0.hasSuffix(".xcdatamodeld") || $0.hasSuffix(".momd") })
        else { return nil }
        return NSString.path(withComponents: Array(components[...index]))
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
