/// The end of an event: delete propagation by delete rule and the `ObjectsDidChange` notification.
///
/// Related documentation: NSManagedObjectContext reference, `processPendingChanges()`; Core Data
/// Programming Guide, "Relationship Delete Rules".
extension NSManagedObjectContext {
    /// Ends the current event: runs the delete rules of objects deleted in it (when
    /// `propagatesDeletesAtEndOfEvent`), forgets objects inserted and deleted before a save,
    /// registers the event's changes with the undo manager, and posts
    /// `NSManagedObjectContextObjectsDidChange` with what changed.
    public func processPendingChanges() {
        guard !isProcessingChanges else { return }
        isProcessingChanges = true
        defer { isProcessingChanges = false }
        if propagatesDeletesAtEndOfEvent { propagateDeletes() }
        registerUndoForEvent()
        postObjectsDidChange()
        checkChangeState()
        // The end of the event: where Apple's autorelease pool lets go of objects only the
        // context still references.
        if registry.wantsSweep { sweepRegistry() }
    }

    /// Runs the delete rules of every object deleted since the last propagation.
    func propagateDeletes() {
        var discarded: [NSManagedObject] = []
        while let object = pendingDeletes.popFirst() {
            object.realize()
            object.prepareForDeletion()
            for slot in object.layout.relationshipSlots {
                let relationship = object.layout.relationship(at: slot)
                let destinations = object.toManyOrOne(slot: slot)
                guard !destinations.isEmpty else { continue }
                switch relationship.deleteRule {
                case .noActionDeleteRule, .denyDeleteRule:
                    continue
                case .nullifyDeleteRule:
                    nullify(relationship, of: object, destinations: destinations)
                case .cascadeDeleteRule:
                    nullify(relationship, of: object, destinations: destinations)
                    for destination in destinations { delete(destination) }
                }
            }
            if object.isDiscardedInsert { discarded.append(object) }
        }
        for object in discarded where object.isDiscardedInsert { forget(object) }
    }

    /// Removes `object` from the inverse relationship of each destination.
    private func nullify(
        _ relationship: NSRelationshipDescription, of object: NSManagedObject, destinations: [NSManagedObject]
    ) {
        guard let inverse = relationship.inverseRelationship?.name else { return }
        for destination in destinations where !destination.isDiscardedInsert {
            destination.unlink(object, inverseName: inverse)
        }
    }

    private func postObjectsDidChange() {
        // An event that changed nothing (a save's second end of event) has nothing to gather.
        guard
            eventInserted.hasCandidates || eventUpdated.hasCandidates || eventDeleted.hasCandidates
                || !eventChanged.isEmpty
        else { return }
        let insertedNow = eventInserted.set
        // Objects changed in this event, including ones inserted or updated in an earlier event.
        var updatedNow = Set<NSManagedObject>()
        for object in eventChanged {
            object.isInEventChanged = false
            object.eventOldValues = [:]
            if !object.isDiscardedInsert, object.context === self, !eventInserted.contains(object),
                !eventDeleted.contains(object)
            {
                updatedNow.insert(object)
            }
        }
        for object in eventUpdated.members where !eventDeleted.contains(object) && object.context === self {
            updatedNow.insert(object)
        }
        let deletedNow = eventDeleted.set
        eventInserted.removeAll()
        eventUpdated.removeAll()
        eventDeleted.removeAll()
        eventChanged = []
        postObjectsDidChange([
            NSInsertedObjectsKey: insertedNow, NSUpdatedObjectsKey: updatedNow, NSDeletedObjectsKey: deletedNow,
        ])
    }

    /// Posts `NSManagedObjectContextObjectsDidChange` with the non-empty sets, or nothing when all are empty.
    ///
    /// The userInfo is made with the non-empty sets only (an event's usually one), not filtered
    /// and cast from a dictionary of all of them, a cost every event of every save paid.
    func postObjectsDidChange(_ sets: KeyValuePairs<String, Set<NSManagedObject>>) {
        var userInfo: [AnyHashable: Any] = [:]
        for (key, objects) in sets where !objects.isEmpty { userInfo[key] = objects }
        guard !userInfo.isEmpty else { return }
        NotificationCenter.default.post(name: .NSManagedObjectContextObjectsDidChange, object: self, userInfo: userInfo)
    }
}
