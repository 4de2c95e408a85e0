/// Undo: each event's changes — attribute and relationship values (transient ones included),
/// inserts and deletes with everything their delete rules did — are registered with the context's
/// undo manager as one action when the event ends (`processPendingChanges()`), so several edits of
/// a property within an event undo in one step.
///
/// Related documentation: Core Data Programming Guide, "Undo Management"; NSManagedObjectContext
/// reference, `undoManager`, `undo()`, `redo()`, `processPendingChanges()`.
extension NSManagedObjectContext {
    /// What one event changed, as undoing it restores: each changed object's values before the
    /// event, the objects it inserted and the objects it deleted.
    struct UndoRecord {
        var changes: [(object: NSManagedObject, values: [(slot: Int, value: Any?)])] = []
        var inserted: [NSManagedObject] = []
        var deleted: [NSManagedObject] = []

        var isEmpty: Bool { changes.isEmpty && inserted.isEmpty && deleted.isEmpty }
    }

    /// Registers the ending event's changes with the undo manager (while registration is enabled).
    /// Called by `processPendingChanges()` after delete propagation.
    func registerUndoForEvent() {
        guard let undoManager, undoManager.isUndoRegistrationEnabled else { return }
        var record = UndoRecord()
        for object in eventChanged where !object.eventOldValues.isEmpty {
            record.changes.append((object, object.eventOldValues.map { (slot: $0.slot, value: $0.value) }))
        }
        record.inserted = eventInserted.members
        record.deleted = eventDeleted.members
        guard !record.isEmpty else { return }
        undoManager.registerUndo(withTarget: self) { context in context.revert(record) }
    }

    /// Ends the current event, then asks the undo manager to undo its last group of changes.
    public func undo() {
        checkQueue("undo()")
        processPendingChanges()
        undoManager?.undo()
    }

    /// Ends the current event, then asks the undo manager to redo its last undone group.
    public func redo() {
        checkQueue("redo()")
        processPendingChanges()
        undoManager?.redo()
    }

    /// Restores what `record` describes, as one event whose own undo action (registered by its
    /// `processPendingChanges()`) restores it again — that is how redo works.
    private func revert(_ record: UndoRecord) {
        // Deleted objects come back first, so their changes are tracked again; inserted objects
        // go last, after their relationships were restored, so their delete rules reach nothing.
        for object in record.deleted { reinsert(object) }
        for (object, values) in record.changes {
            // Refreshed into a fault since, its values load first; one whose values are gone (an
            // invalidated fault) has nothing left to restore.
            object.realize()
            guard object.values.count == object.layout.count else { continue }
            for (slot, value) in values {
                object.willMutate(slot)
                object.values[slot] = value
            }
        }
        for object in record.inserted where object.context === self { delete(object) }
        processPendingChanges()
        for (object, _) in record.changes { settleAfterUndo(object) }
        for object in record.deleted { settleAfterUndo(object) }
    }

    /// Brings back an object an event deleted: a deleted object is undeleted; an object whose
    /// insert was discarded, or whose row a save deleted since, is inserted again (keeping its ID).
    private func reinsert(_ object: NSManagedObject) {
        guard object.context == nil || object.context === self, !object.isInsertedFlag else { return }
        // Still in the context and not deleted (a rollback or a later undo brought it back
        // already): there is nothing to bring back, and inserting it would save its row twice.
        if object.context === self, !object.isDeletedFlag { return }
        // Forgotten (a discarded insert, or a row a save deleted): it is saved as a new row.
        if object.context == nil { object.forgetCommitted() }
        register(insertOf: object, awakening: false)
    }

    /// An object undone back to its saved values is no longer updated.
    private func settleAfterUndo(_ object: NSManagedObject) {
        guard object.context === self, object.isUpdatedFlag, !object.isFaultFlag, object.committed != nil else {
            return
        }
        object.settleChanges()
        if !object.hasPersistentChangedValues { leaveUpdated(object) }
    }
}

extension NSManagedObject {
    /// The persistent slots whose values differ from `base`; a slot `base` left unresolved counts
    /// when the object changed it.
    func slots(differingFrom base: Snapshot) -> SlotSet {
        let current = makeSnapshot(version: base.version)
        var changed = SlotSet()
        for slot in 0..<layout.count where layout.isPersistent(slot) {
            let old = base.values[slot]
            if UnresolvedRelationship.isMarker(old) {
                if changedSlots.contains(slot) { changed.insert(slot) }
            } else if !DynamicValue.equal(current.values[slot], old) {
                changed.insert(slot)
            }
        }
        return changed
    }
}
