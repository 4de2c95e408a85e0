import CSQLite
import Foundation

/// An SQLite VFS shim that fails chosen writes and syncs of chosen files, to test what a save
/// does when the disk fails under it. Registered once as the process's default VFS; it passes
/// every call through to the real one (`unix`) except, while armed, the write or sync numbered
/// `failAt` among those of files whose path contains `pathFragment`: that one returns
/// `SQLITE_IOERR_WRITE` or `SQLITE_IOERR_FSYNC` — a sync "fails" after its writes were made, as
/// `fdatasync` failing with EIO does.
enum FaultyVFS {
    /// What is armed, read by the C callbacks; guarded by `lock`.
    private struct State {
        var pathFragment: String?
        var counted = 0
        var failAt: Int?
        var failures: [String] = []
    }

    nonisolated(unsafe) private static var state = State()
    private static let lock = NSLock()
    nonisolated(unsafe) private static var real: UnsafeMutablePointer<sqlite3_vfs>!
    nonisolated(unsafe) private static var vfs = sqlite3_vfs()
    nonisolated(unsafe) private static var methods = sqlite3_io_methods()
    nonisolated(unsafe) private static let name = strdup("opencoredata-faulty")!
    private static let registration: Void = register()

    /// Watches files whose path contains `fragment` when they are opened from now on.
    static func watch(pathFragment fragment: String) {
        _ = registration
        lock.lock()
        state = State(pathFragment: fragment)
        lock.unlock()
    }

    /// Counts the watched files' writes and syncs from zero, failing the one numbered `failAt`
    /// (nil: count only).
    static func fail(at failAt: Int?) {
        lock.lock()
        state.counted = 0
        state.failAt = failAt
        state.failures = []
        lock.unlock()
    }

    /// Stops failing and counting; answers how many operations were counted and which failed.
    @discardableResult
    static func disarm() -> (counted: Int, failures: [String]) {
        lock.lock()
        defer { lock.unlock() }
        let result = (state.counted, state.failures)
        state = State()
        return result
    }

    /// Whether this write or sync of a file opened with `tracked` should fail (and counts it).
    fileprivate static func shouldFail(_ operation: String, tracked: Bool) -> Bool {
        guard tracked else { return false }
        lock.lock()
        defer { lock.unlock() }
        guard state.pathFragment != nil else { return false }
        let number = state.counted
        state.counted += 1
        guard number == state.failAt else { return false }
        state.failures.append("\(operation) #\(number)")
        return true
    }

    fileprivate static func tracks(_ path: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return state.pathFragment.map { path.contains($0) } ?? false
    }

    // MARK: The shim

    /// Layout of our file object: the `sqlite3_file` header (methods), a pointer to the real
    /// file, a tracked flag, then the real file's storage.
    private static let realOffset = 24

    fileprivate static func realFile(_ file: UnsafeMutablePointer<sqlite3_file>?) -> UnsafeMutablePointer<sqlite3_file>
    {
        UnsafeMutableRawPointer(file!).load(fromByteOffset: 8, as: UnsafeMutablePointer<sqlite3_file>.self)
    }

    fileprivate static func isTracked(_ file: UnsafeMutablePointer<sqlite3_file>?) -> Bool {
        UnsafeMutableRawPointer(file!).load(fromByteOffset: 16, as: Int.self) != 0
    }

    private static func register() {
        real = sqlite3_vfs_find("unix")
        vfs = real.pointee
        vfs.pNext = nil
        vfs.zName = UnsafePointer(name)
        vfs.szOsFile = Int32(realOffset) + real.pointee.szOsFile
        vfs.xOpen = { _, path, file, flags, outFlags in
            let raw = UnsafeMutableRawPointer(file!)
            let inner = (raw + FaultyVFS.realOffset).assumingMemoryBound(to: sqlite3_file.self)
            let code = FaultyVFS.real.pointee.xOpen(FaultyVFS.real, path, inner, flags, outFlags)
            guard code == SQLITE_OK, inner.pointee.pMethods != nil else {
                file!.pointee.pMethods = nil
                return code
            }
            raw.storeBytes(of: inner, toByteOffset: 8, as: UnsafeMutablePointer<sqlite3_file>.self)
            let tracked = path.map { FaultyVFS.tracks(String(cString: $0)) } ?? false
            raw.storeBytes(of: tracked ? 1 : 0, toByteOffset: 16, as: Int.self)
            if FaultyVFS.methods.iVersion == 0 { FaultyVFS.makeMethods(like: inner.pointee.pMethods.pointee) }
            file!.pointee.pMethods = withUnsafePointer(to: &FaultyVFS.methods) { $0 }
            return code
        }
        sqlite3_vfs_register(&vfs, 1)
    }

    private static func makeMethods(like base: sqlite3_io_methods) {
        var m = sqlite3_io_methods()
        m.iVersion = base.iVersion
        m.xClose = { file in
            let inner = FaultyVFS.realFile(file)
            return inner.pointee.pMethods.pointee.xClose(inner)
        }
        m.xRead = { file, buffer, amount, offset in
            let inner = FaultyVFS.realFile(file)
            return inner.pointee.pMethods.pointee.xRead(inner, buffer, amount, offset)
        }
        m.xWrite = { file, buffer, amount, offset in
            // SQLITE_IOERR_WRITE
            if FaultyVFS.shouldFail("write", tracked: FaultyVFS.isTracked(file)) { return SQLITE_IOERR | (3 << 8) }
            let inner = FaultyVFS.realFile(file)
            return inner.pointee.pMethods.pointee.xWrite(inner, buffer, amount, offset)
        }
        m.xTruncate = { file, size in
            let inner = FaultyVFS.realFile(file)
            return inner.pointee.pMethods.pointee.xTruncate(inner, size)
        }
        m.xSync = { file, flags in
            let inner = FaultyVFS.realFile(file)
            // SQLITE_IOERR_FSYNC
            if FaultyVFS.shouldFail("sync", tracked: FaultyVFS.isTracked(file)) { return SQLITE_IOERR | (4 << 8) }
            return inner.pointee.pMethods.pointee.xSync(inner, flags)
        }
        m.xFileSize = { file, size in
            let inner = FaultyVFS.realFile(file)
            return inner.pointee.pMethods.pointee.xFileSize(inner, size)
        }
        m.xLock = { file, level in
            let inner = FaultyVFS.realFile(file)
            return inner.pointee.pMethods.pointee.xLock(inner, level)
        }
        m.xUnlock = { file, level in
            let inner = FaultyVFS.realFile(file)
            return inner.pointee.pMethods.pointee.xUnlock(inner, level)
        }
        m.xCheckReservedLock = { file, result in
            let inner = FaultyVFS.realFile(file)
            return inner.pointee.pMethods.pointee.xCheckReservedLock(inner, result)
        }
        m.xFileControl = { file, operation, argument in
            let inner = FaultyVFS.realFile(file)
            return inner.pointee.pMethods.pointee.xFileControl(inner, operation, argument)
        }
        m.xSectorSize = { file in
            let inner = FaultyVFS.realFile(file)
            return inner.pointee.pMethods.pointee.xSectorSize(inner)
        }
        m.xDeviceCharacteristics = { file in
            let inner = FaultyVFS.realFile(file)
            return inner.pointee.pMethods.pointee.xDeviceCharacteristics(inner)
        }
        m.xShmMap = { file, region, size, extend, pointer in
            let inner = FaultyVFS.realFile(file)
            return inner.pointee.pMethods.pointee.xShmMap(inner, region, size, extend, pointer)
        }
        m.xShmLock = { file, offset, count, flags in
            let inner = FaultyVFS.realFile(file)
            return inner.pointee.pMethods.pointee.xShmLock(inner, offset, count, flags)
        }
        m.xShmBarrier = { file in
            let inner = FaultyVFS.realFile(file)
            inner.pointee.pMethods.pointee.xShmBarrier(inner)
        }
        m.xShmUnmap = { file, delete in
            let inner = FaultyVFS.realFile(file)
            return inner.pointee.pMethods.pointee.xShmUnmap(inner, delete)
        }
        m.xFetch = { file, offset, amount, pointer in
            let inner = FaultyVFS.realFile(file)
            return inner.pointee.pMethods.pointee.xFetch(inner, offset, amount, pointer)
        }
        m.xUnfetch = { file, offset, pointer in
            let inner = FaultyVFS.realFile(file)
            return inner.pointee.pMethods.pointee.xUnfetch(inner, offset, pointer)
        }
        methods = m
    }
}
