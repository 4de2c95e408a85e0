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
/// It is asked a moment after a large release, once no other has followed: pages given back and
/// then written again cost a page fault each, and a process that lets go of a context and
/// fetches the same objects again at once (a loop over requests) would pay that every round.
enum FreedMemory {
    /// How many objects a context lets go of in one step before the allocator is asked to give
    /// the free memory back: at this size the objects and rows freed are several megabytes.
    static let trimThreshold = 10_000

    /// How long after the last large release the allocator is asked.
    static let quietPeriod = DispatchTimeInterval.milliseconds(500)

    /// Tells the allocator, once releases have been quiet for ``quietPeriod``, that `count`
    /// objects (and the rows only they held) were just freed together; does nothing for a small
    /// release.
    static func released(objects count: Int) {
        guard count >= trimThreshold, let trim = allocatorTrim else { return }
        let release = releases.add(1, ordering: .relaxed).newValue
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + quietPeriod) {
            guard releases.load(ordering: .relaxed) == release else { return }
            _ = trim(0)
            trims.add(1, ordering: .relaxed)
        }
    }

    /// How many times the allocator was asked to give memory back.
    static var trimCount: Int { trims.load(ordering: .relaxed) }

    /// Large releases so far; a scheduled trim runs only if no later one came.
    private static let releases = Atomic<Int>(0)
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
