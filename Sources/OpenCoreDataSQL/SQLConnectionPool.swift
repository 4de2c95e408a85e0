import Foundation
import OpenCoreData

/// A connection a pool can close.
package protocol SQLPooledConnection: AnyObject {
    /// Closes the connection; it is not used again.
    func close()
}

/// A store's reading connections: at most ``limit``, opened when needed, each checked out for one
/// read; a read beyond the limit waits for one to come back.
package final class SQLConnectionPool<Connection: SQLPooledConnection>: @unchecked Sendable {
    private let condition = NSCondition()
    private var idle: [Connection] = []
    private var open = 0
    private var inUse = 0
    private var isClosed = false
    /// The most connections open at once.
    package let limit: Int
    /// The most connections ever checked out at once (tests read it to see reads overlap).
    package private(set) var mostInUse = 0

    package init(limit: Int = 8) { self.limit = limit }

    /// Opens the pool's first connection, so reads have one even when no more can be opened
    /// later (the store's file was moved or unlinked while open).
    ///
    /// - Throws: `make`'s error.
    package func prime(_ make: () throws -> Connection) throws {
        let connection = try make()
        condition.lock()
        open += 1
        idle.append(connection)
        condition.unlock()
    }

    /// An idle connection, a new one from `make` while fewer than ``limit`` are open, or the next
    /// one checked in — also when `make` fails while others are open.
    ///
    /// - Throws: `make`'s error when no other connection is open; `NSPersistentStoreOperationError`
    ///   (134070) once the pool is closed (the store was removed).
    package func checkout(_ make: () throws -> Connection) throws -> Connection {
        condition.lock()
        defer { condition.unlock() }
        var canOpen = true
        while true {
            while !isClosed, idle.isEmpty, open >= limit || !canOpen { condition.wait() }
            if isClosed { throw CoreDataError.make(NSPersistentStoreOperationError, "The store was removed.") }
            if let connection = idle.popLast() {
                inUse += 1
                mostInUse = max(mostInUse, inUse)
                return connection
            }
            open += 1
            condition.unlock()
            do {
                let connection = try make()
                condition.lock()
                inUse += 1
                mostInUse = max(mostInUse, inUse)
                return connection
            } catch {
                condition.lock()
                open -= 1
                guard open > 0 else { throw error }
                canOpen = false
            }
        }
    }

    /// Returns a connection for the next read (closed instead once the pool is closed).
    package func checkin(_ connection: Connection) {
        condition.lock()
        inUse -= 1
        let keep = !isClosed
        if keep { idle.append(connection) } else { open -= 1 }
        condition.signal()
        condition.unlock()
        if !keep { connection.close() }
    }

    /// Closes the idle connections; the ones in use are closed as they come back.
    package func closeAll() {
        condition.lock()
        let closing = idle
        idle = []
        open -= closing.count
        isClosed = true
        condition.broadcast()
        condition.unlock()
        for connection in closing { connection.close() }
    }
}
