/// Taking in changes another context saved.
///
/// Related documentation: NSManagedObjectContext reference, `mergeChanges(fromContextDidSave:)`,
/// `mergeChanges(fromRemoteContextSave:into:)`, `stalenessInterval`; Core Data Programming Guide,
/// "Communicating Changes Between Contexts".
extension NSManagedObjectContext {
    /// Merges the changes a `NSManagedObjectContextDidSave` notification of another context
    /// describes: registered objects that were updated are refreshed (keeping this context's own
    /// unsaved changes on top), inserted objects are faulted in, deleted objects leave the context.
    /// Posts `NSManagedObjectContextObjectsDidChange` with what changed here.
    ///
    /// Call it on this context's queue.
    public func mergeChanges(fromContextDidSave notification: Notification) {
        checkQueue("mergeChanges(fromContextDidSave:)")
        merge(SavedChanges(notification.userInfo ?? [:]))
    }

    /// Merges changes saved by a context of another coordinator — another process, typically —
    /// into `contexts`. `changeNotificationData` holds object IDs or their URIs under
    /// `NSInsertedObjectsKey`, `NSUpdatedObjectsKey` and `NSDeletedObjectsKey`, or under
    /// `NSInsertedObjectIDsKey`, `NSUpdatedObjectIDsKey` and `NSDeletedObjectIDsKey` — the keys of
    /// a did-save-object-IDs notification and of a history transaction's
    /// `objectIDNotification()`. The coordinators' cached rows for updated and deleted objects are
    /// dropped, so refreshed objects read the store.
    public class func mergeChanges(
        fromRemoteContextSave changeNotificationData: [AnyHashable: Any], into contexts: [NSManagedObjectContext]
    ) {
        for context in contexts {
            guard let coordinator = context.persistentStoreCoordinator else { continue }
            func ids(_ keys: String...) -> [NSManagedObjectID] {
                keys.flatMap { DynamicValue.elements(changeNotificationData[$0] as Any) ?? [] }.compactMap { element in
                    let uri: URL? =
                        switch element {
                        case let url as URL: url
                        case let id as NSManagedObjectID: id.uriRepresentation()
                        case let object as NSManagedObject: object.objectID.uriRepresentation()
                        case let text as String: URL(string: text)
                        default: nil
                        }
                    return uri.flatMap(coordinator.managedObjectID(forURIRepresentation:))
                }
            }
            let changes = SavedChanges(
                inserted: ids(NSInsertedObjectsKey, NSInsertedObjectIDsKey),
                updated: ids(NSUpdatedObjectsKey, NSUpdatedObjectIDsKey),
                deleted: ids(NSDeletedObjectsKey, NSDeletedObjectIDsKey))
            let stale = Set(changes.updated + changes.deleted)
            coordinator.forgetCachedRows(of: stale)
            context.performAndWait {
                context.merge(changes)
                context.processPendingChanges()
            }
        }
    }

    /// Applies saved changes to the registered objects and posts what changed.
    func merge(_ changes: SavedChanges) {
        // A pinned context moves to the latest generation, so refreshed objects read the save.
        advanceQueryGeneration()
        var refreshed = Set<NSManagedObject>()
        var insertedHere = Set<NSManagedObject>()
        var deletedHere = Set<NSManagedObject>()
        for id in Set(changes.updated) {
            guard let object = registry[id], !object.isInsertedFlag else { continue }
            if object.isFaultFlag {
                // A fault has no values to keep fresh; it loads the saved row when it fires.
                continue
            }
            refresh(object, mergeChanges: true)
            refreshed.insert(object)
        }
        for id in Set(changes.inserted) where registry[id] == nil {
            insertedHere.insert(object(with: id))
        }
        for id in Set(changes.deleted) {
            guard let object = registry[id] else { continue }
            // The delete was saved elsewhere (its rules ran there): the object leaves this context
            // without becoming a pending delete here.
            forget(object)
            markGone(object)
            deletedHere.insert(object)
        }
        postObjectsDidChange([
            NSRefreshedObjectsKey: refreshed, NSInsertedObjectsKey: insertedHere, NSDeletedObjectsKey: deletedHere,
        ])
        NotificationCenter.default.post(
            name: Self.didMergeChangesObjectIDsNotification, object: self,
            userInfo: [
                NotificationKey.insertedObjectIDs.rawValue: Set(changes.inserted),
                NotificationKey.updatedObjectIDs.rawValue: Set(changes.updated),
                NotificationKey.deletedObjectIDs.rawValue: Set(changes.deleted),
                NotificationKey.refreshedObjectIDs.rawValue: Set(refreshed.map(\.objectID)),
            ])
    }
}
