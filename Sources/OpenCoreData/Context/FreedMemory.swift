import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Giving back to the system the memory a context let go of all at once — its objects and their
/// rows, when it goes away, is reset, or sweeps away many objects the app no longer holds.
///
/// Core Data Programming Guide, "Reducing Memory Overhead": resetting a context (or letting it
/// go) disposes of its objects so their memory can be reclaimed. On Apple's platforms the
/// allocator returns free pages to the system by itself. glibc's returns only the top of its
/// heap, and a context's objects and rows are interleaved there with blocks that outlive them
/// (SQLite's page cache, growing as the same fetch read): after a context of many objects went
/// away, nearly all the memory they took stayed resident, free but never given back.
/// `malloc_trim` hands each whole free page back.
///
/// It is asked once large releases have been quiet for a while: pages given back and then written
/// again cost a page fault each, and a process that lets go of a context and fetches as many
/// objects again soon after (a loop over requests, a batch job) needs the same memory back; each
/// trim also left such a process's later work a few per cent slower on this project's VMs
/// (BENCHMARKS-JOURNAL.md). A process quiet for two seconds is done with that memory for now.
enum FreedMemory {
    /// How many objects a context lets go of in one step before the allocator is asked to give
    /// the free memory back: at this size the objects and rows freed are several megabytes.
    static let trimThreshold = 10_000

    /// How long after the last large release the allocator is asked, in nanoseconds.
    static let quietPeriod: UInt64 = 2_000_000_000

    /// Tells the allocator, once releases have been quiet for ``quietPeriod`` nanoseconds, that
    /// `count` objects (and the rows only they held) were just freed together; does nothing for
    /// a small release. One request waits at a time: a release while one waits only moves the
    /// time it is measured from.
    static func released(objects count: Int) {
        guard count >= trimThreshold, let trim = allocatorTrim else { return }
        lastRelease.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
        guard waiting.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        trimWhenQuiet(after: quietPeriod, trim)
    }

    /// Asks the allocator `delay` nanoseconds from now if no large release came in between, else
    /// waits again for the rest of the quiet period after the latest one.
    private static func trimWhenQuiet(after delay: UInt64, _ trim: @escaping @convention(c) (Int) -> Int32) {
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: DispatchTime.now() + .nanoseconds(Int(delay))) {
            let quiet = DispatchTime.now().uptimeNanoseconds &- lastRelease.load(ordering: .relaxed)
            if quiet < quietPeriod {
                trimWhenQuiet(after: quietPeriod - quiet, trim)
                return
            }
            // A release from here on waits for a request of its own.
            waiting.store(false, ordering: .relaxed)
            _ = trim(0)
            trims.add(1, ordering: .relaxed)
        }
    }

    /// How many times the allocator was asked to give memory back.
    static var trimCount: Int { trims.load(ordering: .relaxed) }

    /// When the last large release was (``DispatchTime/uptimeNanoseconds``).
    private static let lastRelease = Atomic<UInt64>(0)
    /// Whether a request to the allocator is waiting for releases to be quiet.
    private static let waiting = Atomic<Bool>(false)
    private static let trims = Atomic<Int>(0)

    /// glibc's `malloc_trim`, looked up at run time: other C libraries (musl) have no such call,
    /// and Darwin's allocator needs none.
    private static let allocatorTrim: (@convention(c) (Int) -> Int32)? = {
        #if os(Linux)
            guard let symbol = dlsym(nil, "malloc_trim") else { return nil }
            return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
        #else
            return nil
        #endif
    }()
}
