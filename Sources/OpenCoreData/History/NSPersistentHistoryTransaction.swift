import Foundation

/// One save (or batch request) recorded in the persistent history: who made it, when, and the
/// changes.
///
/// Related documentation: NSPersistentHistoryTransaction ("A set of changes made to the store");
/// "Consuming Relevant Store Changes".
open class NSPersistentHistoryTransaction: NSObject, KeyValueCoding, @unchecked Sendable {
    /// When the transaction was committed.
    public let timestamp: Date
    /// The transaction's number in the store's history, increasing.
    public let transactionNumber: Int64
    /// The identifier (UUID) of the store.
    public let storeID: String
    /// The bundle identifier of the program that saved (its process name when it has none).
    public let bundleID: String
    /// The name of the process that saved.
    public let processID: String
    /// The saving context's `name`.
    public let contextName: String?
    /// The saving context's `transactionAuthor`.
    public let author: String?
    /// The changes, when the request asked for them.
    public internal(set) var changes: [NSPersistentHistoryChange]?

    package init(
        timestamp: Date, transactionNumber: Int64, storeID: String, bundleID: String, processID: String,
        contextName: String?, author: String?, changes: [NSPersistentHistoryChange]?
    ) {
        self.timestamp = timestamp
        self.transactionNumber = transactionNumber
        self.storeID = storeID
        self.bundleID = bundleID
        self.processID = processID
        self.contextName = contextName
        self.author = author
        self.changes = changes
        super.init()
        for change in changes ?? [] { change.transaction = self }
    }

    /// The position just after this transaction.
    open var token: NSPersistentHistoryToken { NSPersistentHistoryToken(numbers: [storeID: transactionNumber]) }

    /// A `NSManagedObjectContextDidSave` notification of the transaction's object IDs (under
    /// `inserted_objectIDs`, `updated_objectIDs`, `deleted_objectIDs`), for
    /// `mergeChanges(fromContextDidSave:)`.
    open func objectIDNotification() -> Notification {
        var inserted = Set<NSManagedObjectID>()
        var updated = Set<NSManagedObjectID>()
        var deleted = Set<NSManagedObjectID>()
        for change in changes ?? [] {
            switch change.changeType {
            case .insert: inserted.insert(change.changedObjectID)
            case .update: updated.insert(change.changedObjectID)
            case .delete: deleted.insert(change.changedObjectID)
            }
        }
        return Notification(
            name: .NSManagedObjectContextDidSave, object: nil,
            userInfo: [
                NSManagedObjectContext.NotificationKey.insertedObjectIDs.rawValue: inserted,
                NSManagedObjectContext.NotificationKey.updatedObjectIDs.rawValue: updated,
                NSManagedObjectContext.NotificationKey.deletedObjectIDs.rawValue: deleted,
            ])
    }

    /// The entity describing transactions, for fetch requests on the history
    /// (`NSPersistentHistoryChangeRequest.fetchHistory(withFetch:)`).
    open class func entityDescription(with context: NSManagedObjectContext) -> NSEntityDescription? {
        HistoryEntities.transaction
    }

    /// The entity describing transactions.
    open class var entityDescription: NSEntityDescription? { HistoryEntities.transaction }

    /// A fetch request for transactions.
    open class var fetchRequest: NSFetchRequest<NSFetchRequestResult>? {
        let request = NSFetchRequest<NSFetchRequestResult>()
        request.entity = HistoryEntities.transaction
        return request
    }

    /// The transaction's values by key, for predicates and sort descriptors.
    public func value(forKey key: String) -> Any? {
        switch key {
        case "timestamp": timestamp
        case "transactionNumber": transactionNumber
        case "storeID": storeID
        case "bundleID": bundleID
        case "processID": processID
        case "contextName": contextName
        case "author": author
        case "changes": changes
        case "token": token
        default: nil
        }
    }
}

/// The entities `fetchHistory(withFetch:)` requests name: Apple's `Transaction` and `Change`.
enum HistoryEntities {
    static let transaction: NSEntityDescription = {
        let entity = NSEntityDescription()
        entity.name = "Transaction"
        entity.properties = [
            attribute("timestamp", .dateAttributeType), attribute("transactionNumber", .integer64AttributeType),
            attribute("storeID", .stringAttributeType), attribute("bundleID", .stringAttributeType),
            attribute("processID", .stringAttributeType), attribute("contextName", .stringAttributeType),
            attribute("author", .stringAttributeType),
        ]
        return entity
    }()

    static let change: NSEntityDescription = {
        let entity = NSEntityDescription()
        entity.name = "Change"
        entity.properties = [
            attribute("changeID", .integer64AttributeType), attribute("changeType", .integer64AttributeType),
            attribute("changedObjectID", .objectIDAttributeType), attribute("changedEntity", .objectIDAttributeType),
        ]
        return entity
    }()

    private static func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
        let attribute = NSAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        return attribute
    }
}
