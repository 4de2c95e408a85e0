import OpenCoreData
import OpenCoreDataSQL

/// Keeping the file small: deleted rows leave free pages behind ("File Size May Not Reduce After
/// Deleting a Record"). Apple creates stores with incremental auto-vacuum and records the level in
/// the metadata (`_NSAutoVacuumLevel`); after a save that deleted rows, free pages past a threshold
/// are handed back (`PRAGMA incremental_vacuum`). `NSSQLiteManualVacuumOption` rebuilds the whole
/// file when the store is added, at the metadata's auto-vacuum level.
///
/// Related documentation: NSSQLiteManualVacuumOption and NSSQLiteAnalyzeOption references; Core Data
/// Programming Guide, "Persistent Store Types and Behaviors"; SQLite, "PRAGMA auto_vacuum",
/// "PRAGMA incremental_vacuum", "VACUUM".
extension SQLiteStore {
    /// SQLite's auto-vacuum level the metadata records: 0 none, 1 full, 2 incremental.
    static func autoVacuumLevel(_ metadata: [String: Any]) -> Int? {
        guard let value = metadata["_NSAutoVacuumLevel"] else { return nil }
        let level = DynamicValue.number(value)?.exactInt.map(Int.init) ?? (value as? String).flatMap { Int($0) }
        return level.flatMap { (0...2).contains($0) ? $0 : nil }
    }

    /// `NSSQLiteManualVacuumOption` and `NSSQLiteAnalyzeOption`, when a store file is opened for writing.
    func maintainOnOpen(_ metadata: [String: Any]) throws {
        if Self.flag(options?[NSSQLiteManualVacuumOption]) {
            // The pragma takes effect with the rebuild: a store whose file lost its level gets it back.
            let level = Self.autoVacuumLevel(metadata) ?? 2
            try writer.execute("PRAGMA auto_vacuum = \(level)")
            try writer.execute("VACUUM")
        }
        if Self.flag(options?[NSSQLiteAnalyzeOption]) { try writer.execute("ANALYZE") }
    }

    /// After a save that deleted rows: with incremental auto-vacuum, hands free pages back to the
    /// file system once they are at least a tenth of the file (and 16 pages). Best effort — a
    /// failure leaves the pages for SQLite to reuse.
    func releaseFreePages() {
        guard let mode = try? writer.rows("PRAGMA auto_vacuum").first?.first, mode == .integer(2),
            case .integer(let free)? = try? writer.rows("PRAGMA freelist_count").first?.first,
            case .integer(let pages)? = try? writer.rows("PRAGMA page_count").first?.first,
            free >= 16, free * 10 >= pages
        else { return }
        try? writer.execute("PRAGMA incremental_vacuum")
    }
}
