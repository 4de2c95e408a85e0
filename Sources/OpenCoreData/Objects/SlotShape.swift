import Foundation

/// How a ``SlotStorage`` lays out its cells: where each slot's cell starts, how large it is
/// (16 bytes, or 8 for a slot whose values fit in a word), and where the tags start. Shared by every
/// storage of an entity (``EntityLayout/slotShape``).
///
/// Shapes are interned (``interned(wide:)``): one instance per pattern of cell sizes, kept for the
/// life of the process, so a storage refers to its shape without counting the reference. Each row
/// a store decoded retained its entity's one shape, an atomic increment right after the stores
/// that set up the new storage, which the increment waited for. The patterns are few (one per distinct
/// sequence of attribute kinds in the models a process loads), each a few dozen bytes.
package final class SlotShape: @unchecked Sendable {
    /// The number of slots.
    let count: Int
    /// Per slot, and once more for the end, the byte offset of its cell; the tags follow the last.
    private let offsets: UnsafeMutablePointer<Int>
    /// Words a storage of this shape takes: the cells, then a tag byte a slot.
    let words: Int

    /// The shape of `wide.count` slots, each 16 bytes when `wide` says so, else 8: the one
    /// instance of that pattern, made the first time it is asked for.
    package static func interned(wide: [Bool]) -> SlotShape {
        internedLock.lock()
        defer { internedLock.unlock() }
        if let shape = internedShapes[wide] { return shape }
        let shape = SlotShape(wide: wide)
        internedShapes[wide] = shape
        return shape
    }

    /// Every shape made, by pattern; never emptied (``SlotHeader/shape`` is unowned). Guarded by
    /// ``internedLock``: a pthread mutex, whose hand-over ThreadSanitizer sees, so a shape made on
    /// one thread and read on another is not reported (`Mutex` waits on a futex it does not see).
    nonisolated(unsafe) private static var internedShapes: [[Bool]: SlotShape] = [:]
    private static let internedLock = NSLock()

    /// A shape of `count` slots, each 16 bytes when `wide` says so, else 8.
    private init(wide: [Bool]) {
        count = wide.count
        offsets = .allocate(capacity: count + 1)
        var offset = 0
        for (slot, isWide) in wide.enumerated() {
            offsets[slot] = offset
            offset += isWide ? 16 : 8
        }
        offsets[count] = offset
        words = (offset + count + 7) / 8
    }

    /// The byte offset of `slot`'s cell (of the tags, for `count`).
    @inline(__always)
    func offset(_ slot: Int) -> Int { offsets[slot] }

    /// Whether `slot`'s cell holds 16 bytes.
    @inline(__always)
    func isWide(_ slot: Int) -> Bool { offsets[slot + 1] - offsets[slot] == 16 }

    /// The shape of `count` slots of 16 bytes, for values of no entity; one per count up to 64.
    static func wide(count: Int) -> SlotShape {
        count < wideShapes.count ? wideShapes[count] : interned(wide: Array(repeating: true, count: count))
    }

    private static let wideShapes = (0..<65).map { interned(wide: Array(repeating: true, count: $0)) }
}
