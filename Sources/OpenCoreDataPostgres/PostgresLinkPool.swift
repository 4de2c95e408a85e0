import Foundation
import OpenCoreData

/// The PostgreSQL store's reading connections: at most `capacity`, opened when needed, each
/// checked out for one read; a read beyond the capacity waits for one to come back.
final class PostgresLinkPool: @unchecked Sendable {
    private let condition = NSCondition()
    private var idle: [PostgresLink] = []
    private var open = 0
    private let capacity: Int
    private var closed = false
    /// Opens a new connection (set by the store once it knows where the server is).
    var connect: (() throws -> PostgresLink)?

    init(capacity: Int) { self.capacity = capacity }

    /// An idle connection, a new one, or — at capacity — the next one checked in.
    ///
    /// - Throws: the connection's error when a new one cannot be opened, and
    ///   `NSPersistentStoreOperationError` after the store was removed.
    func checkout() throws -> PostgresLink {
        condition.lock()
        while true {
            if closed {
                condition.unlock()
                throw CoreDataError.make(NSPersistentStoreOperationError, "The PostgreSQL store was removed.")
            }
            if let link = idle.popLast() {
                condition.unlock()
                return link
            }
            if open < capacity { break }
            condition.wait()
        }
        open += 1
        condition.unlock()
        do {
            guard let connect else { throw CoreDataError.make(NSPersistentStoreOperationError, "Not connected.") }
            return try connect()
        } catch {
            condition.lock()
            open -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    /// Returns a connection for the next read.
    func checkin(_ link: PostgresLink) {
        condition.lock()
        if closed {
            open -= 1
            condition.unlock()
            link.close()
            return
        }
        idle.append(link)
        condition.signal()
        condition.unlock()
    }

    /// Closes the idle connections; those checked out close when they come back.
    func closeAll() {
        condition.lock()
        closed = true
        let links = idle
        open -= idle.count
        idle = []
        condition.broadcast()
        condition.unlock()
        for link in links { link.close() }
    }
}
