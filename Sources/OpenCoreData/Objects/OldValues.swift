/// The values an object's slots had before their first change in the current event, for
/// ``NSManagedObject/changedValuesForCurrentEvent()`` and undo. An event changes a few slots of
/// an object, so a short array searched from the front does what a dictionary did without
/// hashing or a table per object.
struct OldValues: Sequence, ExpressibleByDictionaryLiteral {
    private var entries: ContiguousArray<(slot: Int, value: Any?)> = []

    init(dictionaryLiteral elements: (Int, Any?)...) {
        for (slot, value) in elements { record(slot, value) }
    }

    var isEmpty: Bool { entries.isEmpty }

    /// Keeps `value` as the slot's old value unless the event already changed the slot.
    @inline(__always)
    mutating func record(_ slot: Int, _ value: Any?) {
        for entry in entries where entry.slot == slot { return }
        entries.append((slot, value))
    }

    func makeIterator() -> IndexingIterator<ContiguousArray<(slot: Int, value: Any?)>> { entries.makeIterator() }
}
