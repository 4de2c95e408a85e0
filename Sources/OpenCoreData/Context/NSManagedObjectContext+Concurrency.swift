/// The doors to a context's queue: `perform`, `performAndWait` and `perform(schedule:_:)`.
///
/// Related documentation: NSManagedObjectContext reference, "Concurrency"; Core Data
/// Programming Guide, "Using Core Data in the Background".
extension NSManagedObjectContext {
    /// When an `async` `perform` runs its block.
    public enum ScheduledTaskType: Sendable {
        /// Run at once when already on the context's queue, else enqueue.
        case immediate
        /// Always enqueue behind the blocks already scheduled.
        case enqueued
    }

    /// Runs `block` asynchronously on the context's queue, then ends the event
    /// (`processPendingChanges()`), as Apple's `perform` does.
    public func perform(_ block: @escaping () -> Void) {
        let context = UncheckedSendable(self)
        let work = UncheckedSendable(block)
        queue.async {
            context.value.runAsCurrent(work.value)
            context.value.processPendingChanges()
        }
    }

    /// Runs `block` on the context's queue and waits for it. Re-entrant: called from the
    /// context's own queue, it runs the block at once.
    public func performAndWait(_ block: () -> Void) {
        runOnQueueAndWait(block)
    }

    /// Runs `block` on the context's queue, waits, and returns its value or rethrows its error.
    /// Re-entrant: called from the context's own queue, it runs the block at once.
    public func performAndWait<T>(_ block: () throws -> T) rethrows -> T {
        try runOnQueueAndWait(block)
    }

    private func runOnQueueAndWait<T>(_ block: () throws -> T) rethrows -> T {
        if isOnQueue { return try runAsCurrent(block) }
        return try withoutActuallyEscaping(block) { escapable in
            let context = UncheckedSendable(self)
            let work = UncheckedSendable(escapable)
            return try queue.sync {
                try context.value.runAsCurrent(work.value)
            }
        }
    }

    /// Runs `block` on the context's queue and returns its value; `schedule` decides whether it
    /// may run at once when already on the queue.
    ///
    /// > Note: Differs from Apple Core Data: declared with typed throws rather than `rethrows`, with
    /// > the same effect for callers (a non-throwing block needs no `try`).
    public func perform<T, E: Error>(
        schedule: ScheduledTaskType = .immediate, _ block: @escaping () throws(E) -> T
    ) async throws(E) -> T {
        if schedule == .immediate, isOnQueue { return try runAsCurrentTyped(block) }
        let context = UncheckedSendable(self)
        let work = UncheckedSendable(block)
        let result: UncheckedSendable<Result<T, E>> = await withCheckedContinuation { continuation in
            queue.async {
                let outcome = Result { () throws(E) -> T in try context.value.runAsCurrentTyped(work.value) }
                context.value.processPendingChanges()
                continuation.resume(returning: UncheckedSendable(outcome))
            }
        }
        return try result.value.get()
    }

    /// Whether the caller runs on the context's queue.
    var isOnQueue: Bool {
        switch concurrencyType {
        case .mainQueueConcurrencyType: return Thread.isMainThread
        case .privateQueueConcurrencyType: return DispatchQueue.getSpecific(key: queueKey) == ObjectIdentifier(self)
        case .confinementConcurrencyType: return true
        }
    }

    /// With the concurrency debug switch on, traps when the caller is not on the context's queue.
    @inline(__always)
    func checkQueue(_ api: @autoclosure () -> String) {
        if ConcurrencyDebug.isEnabled, !isOnQueue { ConcurrencyDebug.violation(api(), context: self) }
    }

    /// The context whose block runs on the current thread, for `NSFetchRequest.execute()`.
    static var current: NSManagedObjectContext? {
        (Thread.current.threadDictionary[currentContextKey] as? WeakContext)?.context
    }

    private static let currentContextKey = "OpenCoreData.currentContext"

    private func runAsCurrent<T>(_ block: () throws -> T) rethrows -> T {
        let dictionary = Thread.current.threadDictionary
        let previous = dictionary[Self.currentContextKey]
        dictionary[Self.currentContextKey] = WeakContext(context: self)
        defer { dictionary[Self.currentContextKey] = previous }
        return try block()
    }

    private func runAsCurrentTyped<T, E: Error>(_ block: () throws(E) -> T) throws(E) -> T {
        let dictionary = Thread.current.threadDictionary
        let previous = dictionary[Self.currentContextKey]
        dictionary[Self.currentContextKey] = WeakContext(context: self)
        defer { dictionary[Self.currentContextKey] = previous }
        return try block()
    }
}

private final class WeakContext {
    weak var context: NSManagedObjectContext?
    init(context: NSManagedObjectContext) { self.context = context }
}

/// The counterpart of Apple's `-com.apple.CoreData.ConcurrencyDebug 1`: with the environment
/// variable `COREDATA_CONCURRENCY_DEBUG=1` set when the process starts, touching a context or one of
/// its managed objects off the context's queue traps with the API that was called. Reading an
/// object's `objectID` is allowed from any thread, as Apple's is.
enum ConcurrencyDebug {
    static let isEnabled = ProcessInfo.processInfo.environment["COREDATA_CONCURRENCY_DEBUG"] == "1"

    static func violation(_ api: String, context: NSManagedObjectContext) -> Never {
        fatalError(
            "CoreData concurrency violation: \(api) called off the queue of context \(context.name ?? "\(ObjectIdentifier(context))") "
                + "(\(context.concurrencyType)); use perform or performAndWait")
    }
}
