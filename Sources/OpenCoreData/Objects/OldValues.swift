/// The values an object's slots had before their first change in the current event, for
/// ``NSManagedObject/changedValuesForCurrentEvent()`` and undo. An event changes a few slots of
/// an object, so a short array does what a dictionary did without hashing or a table per object.
///
/// Which slots are recorded is a ``SlotSet`` beside the array. Searching the entries instead
/// copied each one's value out and destroyed it: an object inserted with eight attributes set paid
/// that 28 times, with the array grown four times.
struct OldValues: Sequence, ExpressibleByDictionaryLiteral {
    private var recorded = SlotSet()
    private var entries: ContiguousArray<(slot: Int, value: Any?)> = []

    init(dictionaryLiteral elements: (Int, Any?)...) {
        for (slot, value) in elements { record(slot, value) }
    }

    var isEmpty: Bool { entries.isEmpty }

    /// Keeps `value` as the slot's old value unless the event already changed the slot; `value`
    /// is not read then.
    @inline(__always)
    mutating func record(_ slot: Int, _ value: @autoclosure () -> Any?) {
        guard !recorded.contains(slot) else { return }
        recorded.insert(slot)
        // Room for the slots an event usually changes, grown once rather than from one.
        if entries.isEmpty { entries.reserveCapacity(8) }
        entries.append((slot, value()))
    }

    func makeIterator() -> IndexingIterator<ContiguousArray<(slot: Int, value: Any?)>> { entries.makeIterator() }
}
