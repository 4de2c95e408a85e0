/// The changes of one save, as a context hands them to its stores.
open class NSSaveChangesRequest: NSPersistentStoreRequest {
    /// Objects to insert.
    open private(set) var insertedObjects: Set<NSManagedObject>?
    /// Objects whose values changed.
    open private(set) var updatedObjects: Set<NSManagedObject>?
    /// Objects to delete.
    open private(set) var deletedObjects: Set<NSManagedObject>?
    /// Unchanged objects whose versions must still be checked (optimistic locking).
    open private(set) var lockedObjects: Set<NSManagedObject>?

    /// Creates a save request for the given changes.
    public init(
        inserted insertedObjects: Set<NSManagedObject>?, updated updatedObjects: Set<NSManagedObject>?,
        deleted deletedObjects: Set<NSManagedObject>?, locked lockedObjects: Set<NSManagedObject>?
    ) {
        self.insertedObjects = insertedObjects
        self.updatedObjects = updatedObjects
        self.deletedObjects = deletedObjects
        self.lockedObjects = lockedObjects
        super.init()
    }

    override open var requestType: NSPersistentStoreRequestType { .saveRequestType }

    override open func copy(with zone: NSZone? = nil) -> Any {
        let copy = NSSaveChangesRequest(
            inserted: insertedObjects, updated: updatedObjects, deleted: deletedObjects, locked: lockedObjects)
        copy.affectedStores = affectedStores
        return copy
    }
}
