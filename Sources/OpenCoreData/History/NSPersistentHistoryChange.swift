import Foundation

/// What a change in the persistent history did to its object, with Apple's raw values.
public enum NSPersistentHistoryChangeType: Int, Sendable {
    /// The object was inserted.
    case insert = 0
    /// Attributes or relationships of the object were updated.
    case update = 1
    /// The object was deleted.
    case delete = 2
}

/// One object's change within a transaction of the persistent history.
///
/// Related documentation: NSPersistentHistoryChange ("A change representation that describes an
/// insert, update, or delete of a managed object"), `tombstone` ("the values of attributes
/// marked `preservesValueInHistoryOnDeletion`").
open class NSPersistentHistoryChange: NSObject, KeyValueCoding, @unchecked Sendable {
    /// The change's number in the store's history.
    public let changeID: Int64
    /// The ID of the object changed.
    public let changedObjectID: NSManagedObjectID
    /// Whether the object was inserted, updated or deleted.
    public let changeType: NSPersistentHistoryChangeType
    /// For a delete, the values of the attributes the model marks
    /// `preservesValueInHistoryOnDeletion`, by name; `nil` otherwise.
    public let tombstone: [AnyHashable: Any]?
    /// For an update, the properties changed; `nil` otherwise.
    public let updatedProperties: Set<NSPropertyDescription>?
    /// An addition of this library, recorded when the store was added with
    /// ``PersistentHistoryOldValuesKey``: the values the object's attributes had before the
    /// change — for an update the changed attributes, for a delete every attribute — by name,
    /// `NSNull` for no value; `nil` for inserts and when not recorded.
    public let oldValues: [String: Any]?
    /// The transaction the change belongs to.
    open internal(set) weak var transaction: NSPersistentHistoryTransaction?

    package init(
        changeID: Int64, changedObjectID: NSManagedObjectID, changeType: NSPersistentHistoryChangeType,
        tombstone: [AnyHashable: Any]?, updatedProperties: Set<NSPropertyDescription>?, oldValues: [String: Any]? = nil
    ) {
        self.oldValues = oldValues
        self.changeID = changeID
        self.changedObjectID = changedObjectID
        self.changeType = changeType
        self.tombstone = tombstone
        self.updatedProperties = updatedProperties
        super.init()
    }

    /// The entity describing changes, for fetch requests on the history
    /// (`NSPersistentHistoryChangeRequest.fetchHistory(withFetch:)`).
    open class func entityDescription(with context: NSManagedObjectContext) -> NSEntityDescription? {
        HistoryEntities.change
    }

    /// The entity describing changes.
    open class var entityDescription: NSEntityDescription? { HistoryEntities.change }

    /// A fetch request for changes.
    open class var fetchRequest: NSFetchRequest<NSFetchRequestResult>? {
        let request = NSFetchRequest<NSFetchRequestResult>()
        request.entity = HistoryEntities.change
        return request
    }

    /// The change's values by key, for predicates and sort descriptors.
    public func value(forKey key: String) -> Any? {
        switch key {
        case "changeID": changeID
        case "changedObjectID", "changedObject": changedObjectID
        case "changeType": changeType.rawValue
        // Apple's predicates compare it with an entity description (`changedEntity == %@`,
        // `Employee.entity()`).
        case "changedEntity": changedObjectID.entity
        case "entity": changedObjectID.entity.name
        case "tombstone": tombstone
        case "oldValues": oldValues
        case "transaction": transaction
        default: nil
        }
    }
}
