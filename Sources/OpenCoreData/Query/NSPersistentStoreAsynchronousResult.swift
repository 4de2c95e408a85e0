/// The result of a request that runs on after `execute(_:)` returns: its progress, its error, and
/// a way to cancel it.
open class NSPersistentStoreAsynchronousResult: NSPersistentStoreResult, @unchecked Sendable {
    private let lock = NSLock()
    private var error: (any Error)?
    private var cancelled = false
    private let context: NSManagedObjectContext

    init(context: NSManagedObjectContext, progress: Progress?) {
        self.context = context
        self.progress = progress
        super.init()
    }

    /// The context that executed the request (the result keeps it, so it is always there).
    open var managedObjectContext: NSManagedObjectContext { context }

    /// The error that ended the request, if any: the fetch's own, or `NSUserCancelledError`
    /// (3072) after ``cancel()``.
    open var operationError: (any Error)? {
        lock.lock()
        defer { lock.unlock() }
        return error
    }

    /// The request's progress: one unit, completed when the result is ready.
    public let progress: Progress?

    /// Cancels the request. A request not finished yet ends with `NSUserCancelledError` and no
    /// result; its completion block still runs.
    open func cancel() {
        lock.lock()
        cancelled = true
        lock.unlock()
        progress?.cancel()
    }

    var isCancelled: Bool {
        lock.lock()
        defer { lock.unlock() }
        return cancelled || (progress?.isCancelled ?? false)
    }

    func fail(_ failure: any Error) {
        lock.lock()
        error = failure
        lock.unlock()
    }
}
