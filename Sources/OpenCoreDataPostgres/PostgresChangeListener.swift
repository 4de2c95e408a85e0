import Foundation
import OpenCoreData

/// Tells a PostgreSQL store's coordinator when another coordinator — in this process, another
/// process or another machine — commits to the store, for
/// `NSPersistentStoreRemoteChangeNotificationPostOptionKey`.
///
/// Every save sends PostgreSQL's `NOTIFY` on the store's channel inside its transaction, so the
/// server delivers it when, and only if, the save commits; its payload is the writing store's
/// origin and, when the store tracks history, the number of the save's history transaction — a
/// cursor, never data. The listener holds a connection of its own in `LISTEN` on that channel and
/// posts `NSPersistentStoreRemoteChange` for each notification of another origin, with that
/// number as the `NSPersistentHistoryTokenKey` token. When its connection drops it connects again
/// (after 0.1 s, doubling to 5 s) and then posts once, with the token of the last transaction in
/// the history, since saves made meanwhile were not heard: observers fetch again, or pull the
/// history after their last token, and miss nothing.
final class PostgresChangeListener: @unchecked Sendable {
    private let lock = NSLock()
    private let location: PostgresLocation
    private let channel: String
    private let origin: String
    private weak var store: PostgreSQLStore?
    private var link: PostgresLink?
    private var stopped = false
    private let posting = DispatchQueue(label: "OpenCoreData PostgreSQL remote changes")

    init(store: PostgreSQLStore, location: PostgresLocation, channel: String, origin: String) throws {
        self.store = store
        self.location = location
        self.channel = channel
        self.origin = origin
        try connect()
    }

    deinit { link?.close() }

    /// Stops listening and closes the connection.
    func stop() {
        lock.lock()
        stopped = true
        let link = self.link
        self.link = nil
        lock.unlock()
        link?.close()
    }

    private func connect() throws {
        let link = try PostgresLink.connect(location)
        try link.listen(channel) { [weak self] payload in self?.heard(payload) }
        lock.lock()
        if stopped {
            lock.unlock()
            link.close()
            return
        }
        self.link = link
        lock.unlock()
        link.whenClosed { [weak self] in self?.lost() }
    }

    private func heard(_ payload: String) {
        let fields = payload.split(separator: " ")
        guard fields.first.map(String.init) != origin else { return }
        post(historyNumber: fields.count > 1 ? Int64(fields[1]) : nil)
    }

    /// Posts on the listener's queue, in the order notifications came. `historyNumber` is the
    /// history transaction the notification named; after a reconnection (`nil`), the last one
    /// in the store's history is read.
    private func post(historyNumber: Int64?) {
        posting.async { [weak self] in
            guard let self, let store = self.store, let coordinator = store.persistentStoreCoordinator else { return }
            self.lock.lock()
            let stopped = self.stopped
            self.lock.unlock()
            guard !stopped else { return }
            var token: NSPersistentHistoryToken?
            if store.tracksHistory, let number = historyNumber ?? (try? store.lastHistoryNumber()) {
                token = NSPersistentHistoryToken(numbers: [store.identifier: number])
            }
            coordinator.postRemoteChange(for: store, token: token)
        }
    }

    /// The connection closed: unless stopped, connect again on a thread of its own and tell the
    /// coordinator once, for what was not heard meanwhile.
    private func lost() {
        lock.lock()
        let stopped = self.stopped
        link = nil
        lock.unlock()
        guard !stopped else { return }
        let thread = Thread { [weak self] in
            var delay = 0.1
            while let self {
                self.lock.lock()
                let stopped = self.stopped
                self.lock.unlock()
                if stopped { return }
                Thread.sleep(forTimeInterval: delay)
                if (try? self.connect()) != nil {
                    self.post(historyNumber: nil)
                    return
                }
                delay = min(delay * 2, 5)
            }
        }
        thread.name = "OpenCoreData PostgreSQL reconnect"
        thread.start()
    }

    /// The channel of the store in `schema`: a name of PostgreSQL's length limit, the same in
    /// every process (FNV-1a of the schema's name).
    static func channel(schema: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in ("OpenCoreData " + schema).utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return "opencoredata_" + String(hash, radix: 16)
    }
}
