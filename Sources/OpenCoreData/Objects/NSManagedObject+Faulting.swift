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
        guard let row = heldRow, let (successor, snapshot) = holder.snapshot(of: row, maxAge: maxAge) else {
            return false
        }
        if let successor { heldRow = successor }
        adopt(snapshot)
        payAwakeFromFetch()
        return true
    }

    /// ``fire(fromHeldRowIn:maxAge:)`` from the object's own link, when the link fires faults
    /// from their rows. The link, its holder and the held row are read unretained: the object
    /// keeps its link and row, the link its holder, and none of the three is used after the
    /// row's snapshot is taken (the object's `awakeFromFetch`, which could change what the object
    /// keeps, runs after), so no fault fired this way counts and uncounts a reference to any of
    /// them: atomic operations on objects every fault of the context shares.
    @inline(__always)
    private func fireFromHeldRowThroughLink() -> Bool {
        guard let link = currentLink.map(Unmanaged.passUnretained), let row = heldRow.map(Unmanaged.passUnretained)
        else { return false }
        let answer = link._withUnsafeGuaranteedRef { link -> (successor: CachedRow?, snapshot: Snapshot)? in
            guard link.firesFromRows, let holder = link.rowHolder.map(Unmanaged.passUnretained) else { return nil }
            return holder._withUnsafeGuaranteedRef { holder in
                row._withUnsafeGuaranteedRef { holder.snapshot(of: $0, maxAge: link.maxAge) }
            }
        }
        guard let (successor, snapshot) = answer else { return false }
        if let successor { heldRow = successor }
        adopt(consume snapshot)
        payAwakeFromFetch()
        return true
    }
}
