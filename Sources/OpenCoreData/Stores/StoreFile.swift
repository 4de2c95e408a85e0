/// What is at a store's URL, for every store type: a store file is a regular file (symbolic
/// links followed); a device, FIFO, socket or directory never is, and nothing may be read from,
/// written beside or removed at such a path on a store's behalf.
package enum StoreFile {
    /// `/dev/null`, the URL Apple's in-memory stores use and its SQLite store reads as a private
    /// in-memory database.
    package static let nullDevice = "/dev/null"

    /// What is at a store path (symbolic links followed).
    package enum Kind: Equatable {
        /// Nothing: a store may be created there.
        case missing
        /// A regular file of `size` bytes.
        case regular(size: Int)
        /// A device, FIFO, socket or directory: never a store file.
        case other
    }

    /// What is at `path`, following symbolic links.
    package static func kind(at path: String) -> Kind {
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: resolved) else { return .missing }
        guard attributes[.type] as? FileAttributeType == .typeRegular else { return .other }
        return .regular(size: (attributes[.size] as? Int) ?? 0)
    }

    /// Throws unless `url` names a regular file or nothing (`/dev/null` excepted by callers).
    ///
    /// - Throws: `code` when a device, FIFO, socket or directory is at `url`.
    package static func refuseNonRegularFile(at url: URL, code: Int, _ action: String) throws {
        guard kind(at: url.path) == .other else { return }
        throw CoreDataError.make(
            code, "Cannot \(action) \(url.path): it is not a regular file, so it cannot be a store.",
            [NSURLErrorKey: url, NSFilePathErrorKey: url.path])
    }
}
