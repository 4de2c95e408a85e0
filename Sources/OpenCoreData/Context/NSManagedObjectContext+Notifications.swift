extension Notification.Name {
    /// Posted by a context at the end of an event that changed its objects (`processPendingChanges`).
    public static let NSManagedObjectContextObjectsDidChange = Notification.Name(
        "NSManagedObjectContextObjectsDidChangeNotification")
    /// Posted by a context at the start of a save.
    public static let NSManagedObjectContextWillSave = Notification.Name("NSManagedObjectContextWillSaveNotification")
    /// Posted by a context after a successful save, with the saved objects.
    public static let NSManagedObjectContextDidSave = Notification.Name("NSManagedObjectContextDidSaveNotification")
    /// Posted after a successful save with the IDs (not the objects) of what was saved, under
    /// `inserted_objectIDs`, `updated_objectIDs` and `deleted_objectIDs` — safe to read on any queue.
    public static let NSManagedObjectContextDidSaveObjectIDs = Notification.Name(
        "NSManagedObjectContextDidSaveObjectIDsNotification")
    /// Posted by a context after it merged changes saved elsewhere, with the IDs of the merged
    /// objects under `inserted_objectIDs`, `updated_objectIDs`, `deleted_objectIDs` and
    /// `refreshed_objectIDs`.
    public static let NSManagedObjectContextDidMergeChangesObjectIDs = Notification.Name(
        "NSManagedObjectContextDidMergeChangesObjectIDsNotification")
}

/// Apple's Objective-C name of the context's concurrency types, which Swift code also uses.
public typealias NSManagedObjectContextConcurrencyType = NSManagedObjectContext.ConcurrencyType

extension NSManagedObjectContext {
    /// The name of the objects-did-change notification.
    public static let didChangeObjectsNotification = Notification.Name.NSManagedObjectContextObjectsDidChange
    /// The name of the will-save notification.
    public static let willSaveObjectsNotification = Notification.Name.NSManagedObjectContextWillSave
    /// The name of the did-save notification.
    public static let didSaveObjectsNotification = Notification.Name.NSManagedObjectContextDidSave
    /// Posted after a save with the IDs (not the objects) of what was saved.
    public static let didSaveObjectIDsNotification = Notification.Name.NSManagedObjectContextDidSaveObjectIDs
    /// Posted after a merge with the IDs of the merged objects.
    public static let didMergeChangesObjectIDsNotification =
        Notification.Name.NSManagedObjectContextDidMergeChangesObjectIDs

    /// The userInfo keys of the context's notifications.
    public struct NotificationKey: RawRepresentable, Hashable, Sendable {
        /// The key's string.
        public let rawValue: String
        /// Creates a key from its string.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Inserted objects.
        public static let insertedObjects = NotificationKey(rawValue: NSInsertedObjectsKey)
        /// Updated objects.
        public static let updatedObjects = NotificationKey(rawValue: NSUpdatedObjectsKey)
        /// Deleted objects.
        public static let deletedObjects = NotificationKey(rawValue: NSDeletedObjectsKey)
        /// Refreshed objects.
        public static let refreshedObjects = NotificationKey(rawValue: NSRefreshedObjectsKey)
        /// Invalidated objects.
        public static let invalidatedObjects = NotificationKey(rawValue: NSInvalidatedObjectsKey)
        /// Every object was invalidated.
        public static let invalidatedAllObjects = NotificationKey(rawValue: NSInvalidatedAllObjectsKey)
        /// IDs of inserted objects.
        public static let insertedObjectIDs = NotificationKey(rawValue: "inserted_objectIDs")
        /// IDs of updated objects.
        public static let updatedObjectIDs = NotificationKey(rawValue: "updated_objectIDs")
        /// IDs of deleted objects.
        public static let deletedObjectIDs = NotificationKey(rawValue: "deleted_objectIDs")
        /// IDs of refreshed objects.
        public static let refreshedObjectIDs = NotificationKey(rawValue: "refreshed_objectIDs")
        /// IDs of invalidated objects.
        public static let invalidatedObjectIDs = NotificationKey(rawValue: "invalidated_objectIDs")
        /// The query generation token (``NSManagedObjectContextQueryGenerationKey``).
        public static let queryGeneration = NotificationKey(rawValue: NSManagedObjectContextQueryGenerationKey)
        /// In a did-save notification of a context whose stores track persistent history: the
        /// ``NSPersistentHistoryToken`` of the transaction the save recorded, for fetching the
        /// history after it.
        public static let newChangeToken = NotificationKey(rawValue: "newChangeToken")
    }
}

/// Key of the inserted objects in a context notification.
public let NSInsertedObjectsKey = "inserted"
/// Key of the updated objects in a context notification.
public let NSUpdatedObjectsKey = "updated"
/// Key of the deleted objects in a context notification.
public let NSDeletedObjectsKey = "deleted"
/// Key of the refreshed objects in a context notification.
public let NSRefreshedObjectsKey = "refreshed"
/// Key of the invalidated objects in a context notification.
public let NSInvalidatedObjectsKey = "invalidated"
/// Key of a query generation token in a context's notifications. Apple does not publish the
/// string; use the constant (DEVIATIONS.md).
public let NSManagedObjectContextQueryGenerationKey = "NSManagedObjectContextQueryGenerationKey"
/// Key present when a context invalidated all of its objects (`reset()`).
public let NSInvalidatedAllObjectsKey = "invalidatedAll"
/// Key of the inserted objects' IDs in a did-save or did-merge notification, and in the dictionary
/// ``NSManagedObjectContext/mergeChanges(fromRemoteContextSave:into:)`` takes.
public let NSInsertedObjectIDsKey = NSManagedObjectContext.NotificationKey.insertedObjectIDs.rawValue
/// Key of the updated objects' IDs in a did-save or did-merge notification.
public let NSUpdatedObjectIDsKey = NSManagedObjectContext.NotificationKey.updatedObjectIDs.rawValue
/// Key of the deleted objects' IDs in a did-save or did-merge notification.
public let NSDeletedObjectIDsKey = NSManagedObjectContext.NotificationKey.deletedObjectIDs.rawValue
/// Key of the refreshed objects' IDs in a did-merge notification.
public let NSRefreshedObjectIDsKey = NSManagedObjectContext.NotificationKey.refreshedObjectIDs.rawValue
/// Key of the invalidated objects' IDs in a notification.
public let NSInvalidatedObjectIDsKey = NSManagedObjectContext.NotificationKey.invalidatedObjectIDs.rawValue

/// The userInfo of a notification with three fixed keys (a save's objects, a save's IDs), made
/// by filling a copy of a dictionary that already holds the keys: the copy keeps the places of
/// the keys, so each value goes in by its place, with no key hashed or compared. A dictionary
/// literal hashes its three `AnyHashable` keys and compares them on collisions, twice a save.
struct ThreeKeyUserInfo: @unchecked Sendable {
    private typealias Place = Dictionary<AnyHashable, Any>.Index
    private let template: [AnyHashable: Any]
    private let places: (Place, Place, Place)

    /// The saved objects' sets, under `inserted`, `updated` and `deleted`.
    static let objects = ThreeKeyUserInfo(NSInsertedObjectsKey, NSUpdatedObjectsKey, NSDeletedObjectsKey)
    /// The saved objects' IDs, under `inserted_objectIDs`, `updated_objectIDs` and `deleted_objectIDs`.
    static let objectIDs = ThreeKeyUserInfo(
        NSManagedObjectContext.NotificationKey.insertedObjectIDs.rawValue,
        NSManagedObjectContext.NotificationKey.updatedObjectIDs.rawValue,
        NSManagedObjectContext.NotificationKey.deletedObjectIDs.rawValue)

    private init(_ first: String, _ second: String, _ third: String) {
        let template: [AnyHashable: Any] = [first: (), second: (), third: ()]
        self.template = template
        // The keys are there: they were just put in.
        places = (template.index(forKey: first)!, template.index(forKey: second)!, template.index(forKey: third)!)
    }

    /// The dictionary with `first`, `second` and `third` under the three keys, in their order.
    func filled(_ first: Any, _ second: Any, _ third: Any) -> [AnyHashable: Any] {
        var result = template
        result.values[places.0] = first
        result.values[places.1] = second
        result.values[places.2] = third
        return result
    }
}
