#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whole-file reads and writes for the atomic stores: a save writes a new file beside the old,
/// syncs it, renames it over the old one and syncs the folder, so a crash at any moment leaves
/// either the old file or the new one, never a mix; a lock on the file keeps two writers — other
/// coordinators or processes — from interleaving.
enum AtomicFile {
    /// What identifies one version of a file: each save makes a new file (a new inode), and the
    /// size and modification time tell apart a file rewritten in place by something else.
    struct Identity: Equatable {
        let device: UInt64
        let inode: UInt64
        let size: Int64
        let seconds: Int
        let nanoseconds: Int
    }

    /// The identity of the file at `path`, or `nil` when there is none.
    static func identity(at path: String) -> Identity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Identity(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            seconds: Int(info.st_mtim.tv_sec), nanoseconds: Int(info.st_mtim.tv_nsec))
    }

    /// The contents of the file at `url`, refusing anything but a regular file and anything
    /// larger than `limit` bytes.
    ///
    /// - Throws: `NSFileReadNoSuchFileError` (260) when it cannot be read,
    ///   `NSFileReadTooLargeError` (263) past the limit, `NSPersistentStoreOpenError` (134080)
    ///   for a device, FIFO, socket or directory.
    static func read(_ url: URL, limit: Int = 1 << 32) throws -> Data {
        try StoreFile.refuseNonRegularFile(at: url, code: NSPersistentStoreOpenError, "read a store at")
        if case .regular(let size) = StoreFile.kind(at: url.path), size > limit {
            throw CoreDataError.make(
                CocoaError.Code.fileReadTooLarge.rawValue, "The store at \(url.path) is larger than \(limit) bytes.",
                [NSURLErrorKey: url, NSFilePathErrorKey: url.path])
        }
        do {
            return try Data(contentsOf: url)
        } catch {
            throw CoreDataError.make(
                CocoaError.Code.fileReadNoSuchFile.rawValue, "Cannot read the store at \(url.path).",
                [NSURLErrorKey: url, NSFilePathErrorKey: url.path, NSUnderlyingErrorKey: error])
        }
    }

    /// Writes `data` to `url` atomically and durably: a new file in the same folder, synced,
    /// renamed over `url`, then the folder synced. The folder is created when missing.
    ///
    /// - Throws: `NSFileWriteUnknownError` (512) naming the step that failed; the file at `url`
    ///   is then as it was.
    static func write(_ data: Data, to url: URL) throws {
        try StoreFile.refuseNonRegularFile(at: url, code: NSPersistentStoreSaveError, "write a store at")
        let folder = url.deletingLastPathComponent()
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var template = Array(folder.appendingPathComponent(".\(url.lastPathComponent).XXXXXX").path.utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw failure("create a new file beside", url) }
        let temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var renamed = false
        defer {
            if !renamed { unlink(temporary) }
        }
        var ok = data.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += written
            }
            return true
        }
        ok = ok && fchmod(descriptor, 0o644) == 0 && fsync(descriptor) == 0
        ok = close(descriptor) == 0 && ok
        guard ok else { throw failure("write the new file beside", url) }
        guard rename(temporary, url.path) == 0 else { throw failure("rename the new file over", url) }
        renamed = true
        let directory = open(folder.path, O_RDONLY | O_DIRECTORY)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
    }

    private static func failure(_ step: String, _ url: URL) -> NSError {
        let reason = String(cString: strerror(errno))
        return CoreDataError.make(
            CocoaError.Code.fileWriteUnknown.rawValue, "Cannot \(step) \(url.path): \(reason).",
            [
                NSURLErrorKey: url, NSFilePathErrorKey: url.path,
                NSUnderlyingErrorKey: NSError(
                    domain: NSPOSIXErrorDomain, code: Int(errno)),
            ])
    }

    /// Runs `body` holding an exclusive lock on the file at `path` — the file as it is when the
    /// lock is granted, since a writer may have renamed a new file over the one first opened.
    /// With no file at `path`, `body` runs without a lock (the first save creates the file).
    static func withExclusiveLock<T>(_ path: String, _ body: () throws -> T) throws -> T {
        while true {
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return try body() }
            defer { close(descriptor) }
            while flock(descriptor, LOCK_EX) != 0 {
                guard errno == EINTR else { return try body() }
            }
            var locked = stat()
            var current = stat()
            guard fstat(descriptor, &locked) == 0, stat(path, &current) == 0 else { return try body() }
            if locked.st_ino == current.st_ino && locked.st_dev == current.st_dev {
                return try body()
            }
            // Replaced while we waited: lock the new file.
        }
    }
}
