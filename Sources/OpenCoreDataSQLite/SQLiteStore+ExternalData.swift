import OpenCoreData
import OpenCoreDataSQL

/// Binary attributes with `allowsExternalBinaryDataStorage`: a value from
/// ``externalThreshold`` bytes up is written to a file in `.<Store>_SUPPORT/_EXTERNAL_DATA/` and
/// the column holds a reference to it; a smaller value stays in the column.
///
/// The column starts with one marker byte — 1: the bytes follow; 2: the file's name follows, as
/// ASCII ending in NUL. STORE-FORMAT.md records the marker as unverified (no fixture has such a value);
/// DEVIATIONS.md says so. Files are written before the transaction commits and removed if it
/// rolls back; files no row refers to any more are removed after it commits.
///
/// Related documentation: NSAttributeDescription, `allowsExternalBinaryDataStorage` ("Core Data
/// heuristically decides on a per-value basis if it should save the data directly in the
/// database or store a URI to a separate file that it manages").
extension SQLiteStore {
    /// The smallest value written to a file (Apple engineers describe the cut as about 100 KB).
    static let externalThreshold = 100 * 1024
    private static let inlineMarker: UInt8 = 1
    private static let fileMarker: UInt8 = 2

    /// Files written and files to remove by the save in progress.
    final class ExternalDataChanges {
        var written: [URL] = []
        var unreferenced: [URL] = []
    }

    /// `.<Store>_SUPPORT/_EXTERNAL_DATA` beside the store file.
    var externalDataDirectory: URL? {
        // A private in-memory store (/dev/null) keeps every value in its database.
        guard let url, url.isFileURL, url.path != Self.privateMemoryPath else { return nil }
        return Self.supportDirectory(of: url).appendingPathComponent("_EXTERNAL_DATA")
    }

    /// `.<Store>_SUPPORT` beside the store file at `url`.
    static func supportDirectory(of url: URL) -> URL {
        let name = url.deletingPathExtension().lastPathComponent
        return url.deletingLastPathComponent().appendingPathComponent(".\(name)_SUPPORT")
    }

    /// Copies the external data files of the store at `source` beside the store at
    /// `destination` (the files never change once written, so copying them is safe).
    static func copyExternalData(from source: URL, to destination: URL) throws {
        let manager = FileManager.default
        let from = supportDirectory(of: source).appendingPathComponent("_EXTERNAL_DATA")
        guard let names = try? manager.contentsOfDirectory(atPath: from.path), !names.isEmpty else { return }
        let to = supportDirectory(of: destination).appendingPathComponent("_EXTERNAL_DATA")
        try manager.createDirectory(at: to, withIntermediateDirectories: true)
        for name in names where !manager.fileExists(atPath: to.appendingPathComponent(name).path) {
            try manager.copyItem(at: from.appendingPathComponent(name), to: to.appendingPathComponent(name))
        }
    }

    /// The column value for an external-storage attribute's value, writing a file when the value
    /// is large enough.
    func externalColumn(_ value: Any?, changes: ExternalDataChanges) throws -> SQLiteValue {
        guard case .blob(let bytes) = SQLValues.column(value, type: .binaryDataAttributeType, attribute: nil)
        else { return .null }
        guard bytes.count >= Self.externalThreshold, let directory = externalDataDirectory else {
            return .blob([Self.inlineMarker] + bytes)
        }
        let name = UUID().uuidString
        let file = directory.appendingPathComponent(name)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(bytes).write(to: file, options: .atomic)
        } catch {
            throw CoreDataError.make(
                NSPersistentStoreSaveError, "Cannot write external data to \(file.path).",
                [NSUnderlyingErrorKey: error, NSFilePathErrorKey: file.path])
        }
        changes.written.append(file)
        return .blob([Self.fileMarker] + Array(name.utf8) + [0])
    }

    /// The value of an external-storage column: the inline bytes, or the referenced file's bytes
    /// (`nil` when the file is missing).
    func externalValue(_ statement: SQLiteStatement, _ column: Int32) -> Data? {
        guard !statement.isNull(at: column) else { return nil }
        let bytes = statement.bytes(at: column)
        guard let marker = bytes.first else { return Data() }
        switch marker {
        case Self.inlineMarker: return Data(bytes.dropFirst())
        case Self.fileMarker:
            guard let file = externalFile(bytes) else { return nil }
            return try? Data(contentsOf: file)
        default: return Data(bytes)  // written without a marker: the bytes themselves
        }
    }

    /// The file a column value refers to, if it refers to one.
    func externalFile(_ bytes: [UInt8]) -> URL? {
        guard bytes.first == Self.fileMarker, let directory = externalDataDirectory else { return nil }
        let name = String(decoding: bytes.dropFirst().prefix { $0 != 0 }, as: UTF8.self)
        // A name from a hostile store must not leave the folder.
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else { return nil }
        return directory.appendingPathComponent(name)
    }

    /// The current external-storage column values of a row, by column name.
    func storedExternalColumns(_ columns: [String], table: String, pk: Int64) throws -> [String: SQLiteValue] {
        guard !columns.isEmpty else { return [:] }
        let rows = try connection.rows(.select(schema.columnsSelect(columns, table: table)), [.integer(pk)])
        guard let row = rows.first else { return [:] }
        return Dictionary(uniqueKeysWithValues: zip(columns, row))
    }
}
