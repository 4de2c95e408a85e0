/// Faulting: a fault fires when its values are first needed — from the row it holds when it can,
/// else through its context — and an object becomes a fault again when refreshed.
extension NSManagedObject {
    /// Loads the object's values if it is a fault.
    @inline(__always)
    func realize() {
        if isFaultFlag { fireFault() }
    }

    private func fireFault() {
        // A fault that holds its row fires from it through the link, as its context would fire
        // it, without loading the context (``ContextLink``).
        if heldRow != nil, values.isEmpty, fireFromHeldRowThroughLink() { return }
        guard let context else {
            // Objects do not retain their context (Apple's do not either). An object whose context
            // was reset or has gone away is invalidated: as Apple's, it answers nil for its
            // persistent properties (and defaults for transient ones) instead of raising.
            becomeInaccessible(transientDefaults: true)
            return
        }
        if isInsertedFlag && !values.isEmpty {
            // An inserted object refreshed into a fault kept its unsaved values.
            realizeKeptValues()
            return
        }
        context.fulfillFault(self)
    }

    /// Fires the fault from the row the object holds (a fetch made it, or it fired before), as
    /// the context finds the row in `holder` (its row cache): takes the row's snapshot, or that of
    /// the row that superseded it (held instead), and is woken as fetched. Answers false, having
    /// done nothing, when the object holds no row or `holder` no longer answers it (invalidated,
    /// or older than `maxAge` seconds; any age when negative): the context then reads the row again.
    func fire(fromHeldRowIn holder: SnapshotHolder, maxAge: TimeInterval) -> Bool {
        fire(from: heldSnapshot(in: holder, maxAge: maxAge))
    }

    /// ``fire(fromHeldRowIn:maxAge:)`` from the object's own link, when the link fires faults
    /// from their rows. The link and its holder are read unretained, as the held row is: the
    /// object keeps its link, the link its holder, and neither is used after the row's snapshot
    /// is taken (the object's `awakeFromFetch`, which could change what the object keeps, runs
    /// after), so no fault fired this way counts and uncounts a reference to either: atomic
    /// operations on objects every fault of the context shares.
    @inline(__always)
    private func fireFromHeldRowThroughLink() -> Bool {
        guard let link = currentLink.map(Unmanaged.passUnretained) else { return false }
        let answer = link._withUnsafeGuaranteedRef { link -> (successor: CachedRow?, snapshot: Snapshot)? in
            guard link.firesFromRows, let holder = link.rowHolder.map(Unmanaged.passUnretained) else { return nil }
            return holder._withUnsafeGuaranteedRef { heldSnapshot(in: $0, maxAge: link.maxAge) }
        }
        return fire(from: answer)
    }

    /// `holder`'s answer for the row the object holds (``SnapshotHolder/snapshot(of:maxAge:)``),
    /// the row read unretained: the object keeps it, and nothing here lets it go.
    @inline(__always)
    private func heldSnapshot(in holder: SnapshotHolder, maxAge: TimeInterval) -> (
        successor: CachedRow?, snapshot: Snapshot
    )? {
        guard let row = heldRow.map(Unmanaged.passUnretained) else { return nil }
        return row._withUnsafeGuaranteedRef { holder.snapshot(of: $0, maxAge: maxAge) }
    }

    /// Takes the snapshot `answer` gives, holding its successor row if there is one, and wakes
    /// the object as fetched; false, having done nothing, without an answer.
    @inline(__always)
    private func fire(from answer: consuming (successor: CachedRow?, snapshot: Snapshot)?) -> Bool {
        guard let (successor, snapshot) = answer else { return false }
        if let successor { heldRow = successor }
        adopt(consume snapshot)
        payAwakeFromFetch()
        return true
    }
}
