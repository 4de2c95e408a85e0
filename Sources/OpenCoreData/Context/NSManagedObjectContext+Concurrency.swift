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
        if concurrencyType == .privateQueueConcurrencyType, MainQueue.isCurrent {
            // On the main thread, a private queue: Apple runs the block on the calling thread, so
            // what it posts reaches the main thread's observers there. The main thread takes the
            // queue — a block parked on it holds it until the main thread is done — and while it
            // waits for the queue it serves main-queue requests, as a block ahead of it may need
            // a main-queue context (a child merging from its main-queue parent): blocking them
            // would deadlock.
            let acquired = PendingResult<Bool>()
            let release = DispatchSemaphore(value: 0)
            queue.async {
                MainThreadInbox.shared.finish { acquired.outcome = true }
                release.wait()
            }
            MainThreadInbox.shared.serve(until: { acquired.outcome != nil })
            defer { release.signal() }
            return try MainThreadBorrow.holding(self) { try runAsCurrent(block) }
        }
        return try withoutActuallyEscaping(block) { escapable in
            let context = UncheckedSendable(self)
            if concurrencyType == .mainQueueConcurrencyType {
                // From another thread: hand the block to the main queue through the inbox, which
                // a main queue waiting on this thread's context also serves. The block runs on
                // the main thread, which lets go of it before this one returns (the closure must
                // not outlive `withoutActuallyEscaping`).
                let box = ClosureBox(escapable)
                let run = UncheckedSendable { Result { try context.value.runAsCurrent { try box.take() } } }
                return try MainThreadInbox.shared.run(run.value).get()
            }
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
        if schedule == .immediate, isOnQueue { return try runAsCurrent(block) }
        let context = UncheckedSendable(self)
        let work = UncheckedSendable(block)
        let result: UncheckedSendable<Result<T, E>> = await withCheckedContinuation { continuation in
            queue.async {
                let outcome = Result { () throws(E) -> T in try context.value.runAsCurrent(work.value) }
                context.value.processPendingChanges()
                continuation.resume(returning: UncheckedSendable(outcome))
            }
        }
        return try result.value.get()
    }

    /// Whether the caller runs on the context's queue.
    var isOnQueue: Bool {
        switch concurrencyType {
        case .mainQueueConcurrencyType: return MainQueue.isCurrent
        case .privateQueueConcurrencyType:
            return DispatchQueue.getSpecific(key: queueKey) == ObjectIdentifier(self) || MainThreadBorrow.holds(self)
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

    /// Runs `block` as the current context's block: typed throws, so a block that throws nothing
    /// needs no `try` and one that throws any error rethrows it.
    private func runAsCurrent<T, E: Error>(_ block: () throws(E) -> T) throws(E) -> T {
        let dictionary = Thread.current.threadDictionary
        let previous = dictionary[Self.currentContextKey]
        dictionary[Self.currentContextKey] = WeakContext(context: self)
        blockDepth += 1
        defer {
            dictionary[Self.currentContextKey] = previous
            endBlock()
        }
        return try block()
    }

    /// The end of a queue block: the outermost one ends the event's hold on what it fetched.
    private func endBlock() {
        blockDepth -= 1
        if blockDepth == 0 { releaseEventHeld() }
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

/// Whether the caller runs on the main queue: on the main thread, or in a block of the main
/// queue (which Dispatch may drain on another thread when the main thread has called
/// `dispatchMain()`, as test runners on Linux do).
enum MainQueue {
    private static let key = DispatchSpecificKey<Bool>()
    private static let marked: Void = DispatchQueue.main.setSpecific(key: key, value: true)

    static var isCurrent: Bool {
        _ = marked
        return Thread.isMainThread || DispatchQueue.getSpecific(key: key) == true
    }
}

/// Work handed to the main thread by `performAndWait` on a main-queue context from another
/// thread. The main thread runs it from its queue — or, when it is itself blocked in
/// `performAndWait` on a private-queue context, while it waits — so a private queue that needs a
/// main-queue context while the main thread waits on it does not deadlock (a child context with
/// `automaticallyMergesChangesFromParent` reading from its main-queue parent).
final class MainThreadInbox: @unchecked Sendable {
    static let shared = MainThreadInbox()
    private let condition = NSCondition()
    private var items: [() -> Void] = []

    /// Runs `work` on the main thread and returns its value; called off the main thread.
    func run<T>(_ work: @escaping () -> T) -> T {
        let pending = PendingResult<T>()
        condition.lock()
        items.append {
            let value = work()
            self.finish { pending.outcome = value }
        }
        condition.broadcast()
        condition.unlock()
        DispatchQueue.main.async { self.serve(until: { true }) }
        condition.lock()
        while pending.outcome == nil { condition.wait() }
        condition.unlock()
        return pending.outcome!
    }

    /// Records a result under the inbox's lock and wakes every waiter.
    func finish(_ record: () -> Void) {
        condition.lock()
        record()
        condition.broadcast()
        condition.unlock()
    }

    /// On the main thread: runs handed-over work until `done()` holds (checked under the lock),
    /// waiting for more when there is none. `{ true }` runs what is there and returns.
    func serve(until done: () -> Bool) {
        condition.lock()
        while true {
            if !items.isEmpty {
                let item = items.removeFirst()
                condition.unlock()
                item()
                condition.lock()
                continue
            }
            if done() { break }
            condition.wait()
        }
        condition.unlock()
    }
}

/// The private-queue contexts whose queues the main queue holds while it runs their
/// `performAndWait` blocks itself: those blocks are on their context's queue. Read and written
/// only by main-queue work, which runs one block at a time (on the main thread, or on the thread
/// that drains the main queue after `dispatchMain()`).
enum MainThreadBorrow {
    nonisolated(unsafe) private static var held: [ObjectIdentifier] = []

    /// Whether the caller is main-queue work running a block of `context`'s.
    static func holds(_ context: NSManagedObjectContext) -> Bool {
        MainQueue.isCurrent && held.contains(ObjectIdentifier(context))
    }

    /// Runs `body` on the main thread as a block of `context`'s queue, which the caller holds.
    static func holding<T>(_ context: NSManagedObjectContext, _ body: () throws -> T) rethrows -> T {
        held.append(ObjectIdentifier(context))
        defer { held.removeLast() }
        return try body()
    }
}

/// A value one thread sets and another waits for, guarded by ``MainThreadInbox``'s lock.
final class PendingResult<T>: @unchecked Sendable {
    var outcome: T?
}

/// A closure another thread takes out before calling it, so that the only reference left after
/// the call is gone (what `withoutActuallyEscaping` checks).
final class ClosureBox<T>: @unchecked Sendable {
    private var body: (() throws -> T)?

    init(_ body: @escaping () throws -> T) { self.body = body }

    func take() throws -> T {
        let body = self.body
        self.body = nil
        return try body!()
    }
}

/// How long an unchanged object the app does not hold stays registered. Apple's contexts hold
/// such objects weakly, but what a fetch or `object(with:)` returns is autoreleased, so it stays
/// in `registeredObjects` until the event ends — the `perform` or `performAndWait` block, or the
/// main run loop's pass — and code relies on it (Core Data Programming Guide, "Managed Objects and
/// References"). A context here keeps the fetch results and looked-up objects of the current
/// event alive until then: inside a queue block until the outermost one returns, on a main-queue
/// context used from the main thread until the main queue's current work is done. A confinement
/// context, which has no events, and a context used outside its queue's blocks keep nothing
/// (DEVIATIONS.md).
extension NSManagedObjectContext {
    /// Keeps `value` (a fetch's `count` results, a looked-up object) alive until the event ends.
    func holdForEvent(_ value: Any, count: Int = 1) {
        if blockDepth > 0 {
            eventHeld.append(value)
            eventHeldCount += count
        } else if concurrencyType == .mainQueueConcurrencyType, MainQueue.isCurrent {
            eventHeld.append(value)
            eventHeldCount += count
            guard !eventReleaseScheduled else { return }
            eventReleaseScheduled = true
            let context = UncheckedSendable(WeakReference(self))
            DispatchQueue.main.async {
                guard let context = context.value.object else { return }
                context.eventReleaseScheduled = false
                if context.blockDepth == 0 { context.releaseEventHeld() }
            }
        }
    }

    /// The event is over: what it held goes, and with it the objects nothing else references.
    /// Those the app still holds stay candidates for the next sweep, which lets them go once the
    /// app drops them.
    func releaseEventHeld() {
        guard !eventHeld.isEmpty else { return }
        let count = eventHeldCount
        eventHeld.removeAll()
        eventHeldCount = 0
        registry.noteCandidates(count)
        if registry.wantsSweep { sweepRegistry() }
        registry.noteCandidates(count)
    }
}
