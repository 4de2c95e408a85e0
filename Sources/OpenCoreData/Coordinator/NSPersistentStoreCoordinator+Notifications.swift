/// The coordinator's store-change notifications, with Apple's names and userInfo keys.
///
/// Related documentation: NSPersistentStoreCoordinator, "Notifications"
/// (`NSPersistentStoreCoordinatorStoresDidChange`: "Posted whenever persistent stores are added to
/// or removed from a persistent store coordinator"; `NSPersistentStoreCoordinatorWillRemoveStore`:
/// "Posted whenever a persistent store is removed", its object the store).
extension Notification.Name {
    /// Posted after stores were added to or removed from a coordinator (the object); the userInfo
    /// holds ``NSAddedPersistentStoresKey`` or ``NSRemovedPersistentStoresKey``.
    public static let NSPersistentStoreCoordinatorStoresDidChange = Notification.Name(
        "NSPersistentStoreCoordinatorStoresDidChangeNotification")
    /// Posted before a coordinator's stores change for an ubiquitous (iCloud) store transition.
    /// No store of this module makes such a transition, so it is never posted here.
    public static let NSPersistentStoreCoordinatorStoresWillChange = Notification.Name(
        "NSPersistentStoreCoordinatorStoresWillChangeNotification")
    /// Posted before a store (the object) is removed from its coordinator.
    public static let NSPersistentStoreCoordinatorWillRemoveStore = Notification.Name(
        "NSPersistentStoreCoordinatorWillRemoveStoreNotification")
    /// Posted, with the coordinator as its object, for every write to a store added with
    /// ``NSPersistentStoreRemoteChangeNotificationPostOptionKey``: another coordinator's or
    /// process's commit, and this coordinator's own saves and batch requests. The userInfo holds
    /// ``NSPersistentStoreURLKey``, ``NSStoreUUIDKey`` and, when the store records history,
    /// ``NSPersistentHistoryTokenKey``. Posted on a background thread.
    public static let NSPersistentStoreRemoteChange = Notification.Name("NSPersistentStoreRemoteChangeNotification")
}

/// The userInfo key of a remote-change notification's store URL.
public let NSPersistentStoreURLKey = "storeURL"
/// The userInfo key of a remote-change notification's history token: the store's latest.
public let NSPersistentHistoryTokenKey = "historyToken"

extension NSPersistentStoreCoordinator {
    /// Posts ``Foundation/NSNotification/Name/NSPersistentStoreRemoteChange`` for `store` when it
    /// was added with ``NSPersistentStoreRemoteChangeNotificationPostOptionKey``.
    package func postRemoteChange(for store: NSPersistentStore, token: NSPersistentHistoryToken?) {
        guard Self.postsRemoteChanges(store) else { return }
        var info: [AnyHashable: Any] = [NSStoreUUIDKey: store.identifier ?? ""]
        if let url = store.url { info[NSPersistentStoreURLKey] = url }
        if let token { info[NSPersistentHistoryTokenKey] = token }
        NotificationCenter.default.post(name: .NSPersistentStoreRemoteChange, object: self, userInfo: info)
    }

    /// Posts the remote-change notification of this coordinator's own write to `store` (a save,
    /// a batch request) on a background queue, as Apple posts it to a private thread: an observer
    /// that waits for the main thread cannot deadlock a save made on it. One serial queue keeps
    /// the notifications in the order of the writes.
    package func postOwnRemoteChange(for store: NSPersistentStore, token: NSPersistentHistoryToken?) {
        guard Self.postsRemoteChanges(store) else { return }
        // The store is only named in the notification: nothing on that queue reads or changes it.
        nonisolated(unsafe) let named = store
        Self.ownRemoteChangeQueue.async { self.postRemoteChange(for: named, token: token) }
    }

    private static let ownRemoteChangeQueue = DispatchQueue(label: "OpenCoreData.ownRemoteChanges")

    /// Whether `store` was added with ``NSPersistentStoreRemoteChangeNotificationPostOptionKey`` set.
    package static func postsRemoteChanges(_ store: NSPersistentStore) -> Bool {
        guard let value = store.options?[NSPersistentStoreRemoteChangeNotificationPostOptionKey] else { return false }
        if let flag = value as? Bool { return flag }
        return (value as? NSNumber)?.boolValue ?? false
    }
}

extension NSPersistentStoreCoordinator {
    /// The typed name of ``Foundation/NSNotification/Name/NSPersistentStoreCoordinatorStoresDidChange``.
    public static let storesDidChangeNotification = Notification.Name.NSPersistentStoreCoordinatorStoresDidChange
    /// The typed name of ``Foundation/NSNotification/Name/NSPersistentStoreCoordinatorStoresWillChange``.
    public static let storesWillChangeNotification = Notification.Name.NSPersistentStoreCoordinatorStoresWillChange
    /// The typed name of ``Foundation/NSNotification/Name/NSPersistentStoreCoordinatorWillRemoveStore``.
    public static let willRemoveStoreNotification = Notification.Name.NSPersistentStoreCoordinatorWillRemoveStore

    /// Posts the did-change notification for `added` and `removed` stores (outside the lock, so
    /// an observer may use the coordinator).
    func postStoresDidChange(added: [NSPersistentStore] = [], removed: [NSPersistentStore] = []) {
        var userInfo: [AnyHashable: Any] = [:]
        if !added.isEmpty { userInfo[NSAddedPersistentStoresKey] = added }
        if !removed.isEmpty { userInfo[NSRemovedPersistentStoresKey] = removed }
        NotificationCenter.default.post(name: Self.storesDidChangeNotification, object: self, userInfo: userInfo)
    }
}

/// The key of the stores added, in a stores-did-change notification.
public let NSAddedPersistentStoresKey = "added"
/// The key of the stores removed, in a stores-did-change notification.
public let NSRemovedPersistentStoresKey = "removed"
/// The key of the stores whose UUID changed (an old and a new store), in a stores-did-change notification.
public let NSUUIDChangedPersistentStoresKey = "changedUUID"
/// The key of the kind of ubiquitous-store transition, in a stores-will/did-change notification.
public let NSPersistentStoreUbiquitousTransitionTypeKey = "NSPersistentStoreUbiquitousTransitionTypeKey"
