import Foundation
import OpenCoreData

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Tells a SQLite store's coordinator when another connection — another coordinator of this
/// process, or another process — commits to the store file, for
/// `NSPersistentStoreRemoteChangeNotificationPostOptionKey`.
///
/// Without busy polling: a thread sleeps in `poll` on an inotify watch of the store's folder
/// (Linux; elsewhere it wakes every half second) and, when a file there changes, asks SQLite's
/// `PRAGMA data_version` on a connection of its own whether the database changed. The store's
/// own commits are told apart because the store calls ``beginOwnWrite()`` once it holds the
/// database's write lock (no other connection can commit until it releases it) and
/// ``endOwnWrite()`` after committing: a change seen at the start of an own write came from
/// someone else; the change an own write makes is absorbed at its end.
///
/// Related documentation: NSPersistentStoreRemoteChangeNotificationPostOptionKey; SQLite's
/// `PRAGMA data_version` ("changes when the database is modified by a different connection").
final class RemoteChangeWatcher: @unchecked Sendable {
    private let lock = NSLock()
    private let connection: SQLiteConnection
    private let tracksHistory: Bool
    private weak var store: SQLiteStore?
    private var lastSeen: Int64 = 0
    private var pendingForeign = false
    private var stopped = false
    private var wake: [Int32] = [-1, -1]
    private var inotify: Int32 = -1

    init(store: SQLiteStore, path: String) throws {
        connection = try SQLiteConnection(path: path, mode: .readWrite(create: false))
        tracksHistory = store.tracksHistory
        self.store = store
        lastSeen = try dataVersion()
        guard pipe(&wake) == 0 else {
            throw CoreDataError.make(NSPersistentStoreOpenError, "Cannot watch the store for remote changes.")
        }
        #if os(Linux)
            inotify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            if inotify >= 0 {
                let folder = (path as NSString).deletingLastPathComponent
                let mask = UInt32(IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE)
                _ = inotify_add_watch(inotify, folder.isEmpty ? "." : folder, mask)
            }
        #endif
        let thread = Thread { [self] in run() }
        thread.name = "OpenCoreData remote changes"
        thread.start()
    }

    deinit {
        if inotify >= 0 { close(inotify) }
        for fd in wake where fd >= 0 { close(fd) }
        connection.close()
    }

    /// Stops watching; the thread ends and the watcher goes with the store.
    func stop() {
        lock.lock()
        stopped = true
        lock.unlock()
        var byte: UInt8 = 0
        _ = write(wake[1], &byte, 1)
    }

    private func dataVersion() throws -> Int64 {
        if case .integer(let version)? = try connection.rows("PRAGMA data_version").first?.first { return version }
        return 0
    }

    // MARK: The store's own writes

    /// Called by the store once it holds the write lock: a change not yet seen is someone else's.
    func beginOwnWrite() {
        lock.lock()
        if let version = try? dataVersion(), version != lastSeen {
            lastSeen = version
            pendingForeign = true
        }
    }

    /// Called by the store after its commit (or rollback): its own change is not news.
    func endOwnWrite() {
        if let version = try? dataVersion() { lastSeen = version }
        let tell = pendingForeign
        lock.unlock()
        if tell {
            var byte: UInt8 = 1
            _ = write(wake[1], &byte, 1)
        }
    }

    // MARK: The thread

    private func run() {
        var descriptors = [pollfd(fd: wake[0], events: Int16(POLLIN), revents: 0)]
        if inotify >= 0 { descriptors.append(pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        // A commit appends to the -wal file (an inotify event) and then publishes itself in the
        // -shm index, which is mapped memory and makes no event: after an event the database is
        // looked at again a little later, so a commit seen half-done is not missed.
        let rechecks: [Int32] = [20, 200]
        var pending: ArraySlice<Int32> = []
        while true {
            let timeout: Int32 = inotify < 0 ? 500 : pending.first ?? -1
            let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
            if ready < 0 && errno != EINTR { return }
            if ready == 0 { pending = pending.dropFirst() }
            if descriptors[0].revents != 0 { _ = read(wake[0], &buffer, buffer.count) }
            if descriptors.count > 1, descriptors[1].revents != 0 {
                while read(inotify, &buffer, buffer.count) > 0 {}
                pending = rechecks[...]
            }
            lock.lock()
            if stopped {
                lock.unlock()
                return
            }
            var tell = pendingForeign
            pendingForeign = false
            if let version = try? dataVersion(), version != lastSeen {
                lastSeen = version
                tell = true
            }
            var token: NSPersistentHistoryToken?
            if tell, tracksHistory, let store,
                case .integer(let number)? = try? connection.rows("SELECT MAX(Z_PK) FROM ATRANSACTION").first?.first
            {
                token = NSPersistentHistoryToken(numbers: [store.identifier: number])
            }
            lock.unlock()
            if tell, let store, let coordinator = store.persistentStoreCoordinator {
                coordinator.postRemoteChange(for: store, token: token)
            }
        }
    }
}
