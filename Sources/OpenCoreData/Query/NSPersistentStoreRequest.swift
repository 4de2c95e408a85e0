/// The kinds of request a persistent store answers, with Apple's raw values.
public enum NSPersistentStoreRequestType: UInt, Sendable {
    /// A fetch request.
    case fetchRequestType = 1
    /// A save request.
    case saveRequestType = 2
    /// A batch insert request.
    case batchInsertRequestType = 5
    /// A batch update request.
    case batchUpdateRequestType = 6
    /// A batch delete request.
    case batchDeleteRequestType = 7
}

/// A request to persistent stores: the base of fetch, save and batch requests.
open class NSPersistentStoreRequest: NSObject, NSCopying {
    /// The stores the request is limited to; `nil` means every store of the coordinator.
    open var affectedStores: [NSPersistentStore]?

    /// Creates a request.
    override public init() {
        super.init()
    }

    /// The kind of request. Subclasses answer their own kind.
    open var requestType: NSPersistentStoreRequestType { .fetchRequestType }

    /// Returns a copy of the request.
    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = NSPersistentStoreRequest()
        copy.affectedStores = affectedStores
        return copy
    }
}
