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
        if let link = currentLink, link.firesFromRows, let holder = link.rowHolder, values.isEmpty,
            fire(fromHeldRowIn: holder, maxAge: link.maxAge)
        {
            return
        }
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
        guard let row = heldRow, let (current, snapshot) = holder.snapshot(of: row, maxAge: maxAge) else {
            return false
        }
        if current !== row { heldRow = current }
        adopt(snapshot)
        payAwakeFromFetch()
        return true
    }
}
