internal import Logging
import OpenCoreData
import OpenCoreDataSQL
import Synchronization

/// Statement logging, the counterpart of Apple's `-com.apple.CoreData.SQLDebug` launch argument:
/// `COREDATA_SQLDEBUG=1` logs each SQL statement and its time through `swift-log` (label
/// `OpenCoreData.SQLDebug`, level `info`), `=2` adds the bound values. A program that
/// bootstraps its own `LoggingSystem` receives the lines through its handler.
enum SQLDebug {
    private static let state = LoggerBox(Logger(label: "OpenCoreData.SQLDebug"))

    /// 0 (off), 1 (statements and times) or 2 (and bound values). Read once from the environment;
    /// atomic, because every statement step checks it.
    static var level: Int { currentLevel.load(ordering: .relaxed) }
    private static let currentLevel = Atomic<Int>(
        max(0, ProcessInfo.processInfo.environment["COREDATA_SQLDEBUG"].flatMap { Int($0) } ?? 0))

    /// Replaces the level and the logger (tests capture the lines through their own handler).
    static func configure(level: Int, logger: Logger? = nil) {
        if let logger { state.logger = logger }
        currentLevel.store(level, ordering: .relaxed)
    }

    /// Logs one statement that ran: its SQL, the values bound to it (level 2), its rows and time.
    static func log(sql: String, bindings: [SQLiteValue], rows: Int, nanoseconds: UInt64) {
        let level = self.level
        guard level > 0 else { return }
        let logger = state.logger
        logger.info("sql: \(sql)")
        if level > 1 {
            for (index, value) in bindings.enumerated() {
                logger.info("details: SQLite bind[\(index)] = \(describe(value))")
            }
        }
        let seconds = Double(nanoseconds) / 1e9
        logger.info("annotation: sql execution time: \(String(format: "%.4f", seconds))s, rows: \(rows)")
    }

    private static func describe(_ value: SQLiteValue) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let int): return "\(int)"
        case .real(let double): return "\(double)"
        case .text(let text): return "\"\(text)\""
        case .blob(let bytes): return "<\(bytes.count) bytes>"
        }
    }
}
