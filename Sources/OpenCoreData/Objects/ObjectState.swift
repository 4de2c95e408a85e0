/// The one owner of an object's fault, snapshot and awake states, as `ObjectLifecycle.swift` is of
/// its change state: whether the object is a fault (``NSManagedObject/isFaultFlag``), the values it
/// last fetched or saved (``NSManagedObject/committed``), the slots changed since
/// (``NSManagedObject/changedSlots``), and whether `awakeFromFetch` is still owed
/// (``NSManagedObject/owesAwakeFromFetch``). Every change of them is a named transition in this
/// file, so the invariants below hold after each; debug builds check them
/// (``NSManagedObject/checkObjectState()``), and a source-layout test keeps every write here.
///
/// The invariants (NSManagedObject reference, `isFault`, `awakeFromFetch()`, `changedValues()`):
/// a fault holds no values, and no change since its last save (its changes were discarded or
/// saved when it became one); an object that is not a fault holds a value for every slot; an
/// object owes `awakeFromFetch` only while it has not been realized since it was fetched or
/// refreshed.
extension NSManagedObject {
    // MARK: Faults

    /// Registered as a fault of a fetched row: no values until first needed, and
    /// `awakeFromFetch` owed when they are loaded.
    func becomeFetchedFault() {
        values = SlotValues()
        changeState.isFault = true
        changeState.owesAwakeFromFetch = true
        checkObjectState()
    }

    /// Becomes a fault: values and everything derived from them are dropped until the next
    /// access, which reads the row again (`willTurnIntoFault`/`didTurnIntoFault` around it).
    /// `awakeFromFetch` is owed again when `refreshed`.
    func turnIntoFault(refreshed: Bool = false) {
        willTurnIntoFault()
        values = []
        resolvedDestination = nil
        changedSlots = SlotSet()
        eventOldValues = [:]
        fetchedValues = [:]
        changeState.isFault = true
        if refreshed { changeState.owesAwakeFromFetch = true }
        didTurnIntoFault()
        checkObjectState()
    }

    /// An inserted object refreshed without merging: Apple makes it a fault; here it keeps its
    /// unsaved values (DEVIATIONS.md), which its next access finds again (``realizeKeptValues()``).
    func keepUnsavedValuesAsFault() {
        willTurnIntoFault()
        changeState.isFault = true
        didTurnIntoFault()
    }

    /// The next access of an inserted object refreshed into a fault: its kept values are its
    /// values again.
    func realizeKeptValues() {
        changeState.isFault = false
        checkObjectState()
    }

    // MARK: Realizing

    /// Takes `snapshot`'s values as the object's committed and current values, and stops being a
    /// fault.
    func adopt(_ snapshot: consuming Snapshot) {
        // Taken by value: the caller's reference becomes the committed one, and only the current
        // values count one more.
        values = snapshot.values
        committed = snapshot
        // New values drop what the old ones resolved, as they dropped the objects in their cells.
        forgetResolvedDestination()
        // Transient values are not in the store: a fetched object's transients start from their
        // default values, as an inserted object's do (NSAttributeDescription, `defaultValue`).
        for (slot, value) in layout.transientDefaults { values[slot] = value }
        changeState.isFault = false
        checkObjectState()
    }

    /// Calls `awakeFromFetch()` when it is owed (the first realization after a fetch or refresh).
    func payAwakeFromFetch() {
        guard changeState.owesAwakeFromFetch else { return }
        changeState.owesAwakeFromFetch = false
        awakeFromFetch()
    }

    /// An object whose row can no longer be read — its context is gone, or its row was deleted
    /// and `shouldDeleteInaccessibleFaults` — answers nil for every persistent property instead
    /// of raising (Apple's behaviour); with `transientDefaults`, its transient properties answer
    /// their defaults.
    func becomeInaccessible(transientDefaults: Bool) {
        values = SlotValues(shape: layout.slotShape)
        if transientDefaults { for (slot, value) in layout.transientDefaults { values[slot] = value } }
        changeState.isFault = false
        checkObjectState()
    }

    /// An object its context forgot (a discarded insert, or a row a save deleted), inserted again
    /// by an undo: it is saved as a new row, with no committed values.
    func forgetCommitted() { committed = nil }

    /// An object inserted into its context: a new one, or one brought back by undo (its row deleted
    /// since), which starts from its last known values, or none; the undo then restores what the
    /// event changed.
    func realizeForInsertion() {
        if values.count != layout.count {
            values = committed?.values ?? SlotValues(shape: layout.slotShape)
            for (slot, value) in layout.transientDefaults where committed == nil { values[slot] = value }
        }
        changeState.isFault = false
        checkObjectState()
    }

    /// The to-one or to-many in `slot` was resolved to `value`: the committed values take it too
    /// when they held the relationship's marker, so a later comparison sees no change.
    func resolveCommitted(slot: Int, to value: Any?) {
        guard var snapshot = committed, UnresolvedRelationship.isMarker(snapshot.values[slot]) else { return }
        snapshot.values[slot] = value
        committed = snapshot
    }

    // MARK: Changes and saves

    /// `slot` changed with no observer told: a primitive change in `willSave()` of an object the
    /// save writes.
    func noteChangeUntold(of slot: Int) { changedSlots.insert(slot) }

    /// The object's changes were saved as `snapshot` (or, without one, its committed values
    /// stand): no slot has changed since.
    func commitSave(_ snapshot: Snapshot?) {
        committed = snapshot ?? committed
        changedSlots = SlotSet()
        checkObjectState()
    }

    /// A rollback: the committed values are the object's values again, or — never saved — it
    /// becomes a fault; the event's changes and fetched values are dropped.
    func rollBackToCommitted() {
        if let committed {
            values = committed.values
        } else {
            turnIntoFault()
        }
        changedSlots = SlotSet()
        eventOldValues = [:]
        fetchedValues = [:]
        checkObjectState()
    }

    /// A merge policy chose the store's row `persisted` over this object's: it is the committed
    /// state now, and the object's changes are the slots that differ from it.
    func rebase(on persisted: Snapshot) {
        committed = persisted
        changedSlots = slots(differingFrom: persisted)
        checkObjectState()
    }

    /// After an undo: the changes are the slots that differ from the committed values.
    func settleChanges() {
        guard let committed else { return }
        changedSlots = slots(differingFrom: committed)
        checkObjectState()
    }

    /// Checks the invariants above in debug builds; does nothing in release builds.
    @inline(__always)
    func checkObjectState() {
        #if DEBUG
            if changeState.isFault {
                assert(changedSlots.isEmpty || isInsertedFlag, "a fault with changes: \(objectID)")
            } else {
                assert(
                    values.isEmpty || values.count == layout.count,
                    "an object that is not a fault lacks values: \(objectID)")
            }
        #endif
    }
}
