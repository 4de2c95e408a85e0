import Foundation

/// What an ``NSBatchDeleteRequest`` returns in its ``NSBatchDeleteResult``, with Apple's raw values.
public enum NSBatchDeleteRequestResultType: UInt, Sendable {
    /// Only whether the delete succeeded: `true`.
    case resultTypeStatusOnly = 0
    /// The IDs of the objects deleted, those deleted by cascade delete rules included.
    case resultTypeObjectIDs = 1
    /// The number of objects the fetch request matched and that were deleted.
    case resultTypeCount = 2
}

/// A request that deletes the objects a fetch request matches (or the objects of given IDs)
/// in the SQLite store, without loading them into a context.
///
/// As Apple documents it: contexts are not told (merge the deleted IDs with
/// ``NSManagedObjectContext/mergeChanges(fromRemoteContextSave:into:)``) and validation does not
/// run. Relationships' delete rules are applied in the store: *cascade* deletes the destinations
/// too, *nullify* clears the inverse (an error, as on Apple platforms, when that inverse is a
/// required to-one), *deny* fails the request when there are destinations, *no action* leaves
/// them. IDs of several entities in one request are an error when it runs.
///
/// Related documentation: NSBatchDeleteRequest ("A request that deletes objects in the SQLite
/// persistent store without loading them into memory"); Core Data Batch Programming Guide,
/// "Implementing Batch Deletes".
open class NSBatchDeleteRequest: NSPersistentStoreRequest, @unchecked Sendable {
    private let request: NSFetchRequest<NSFetchRequestResult>
    /// The IDs the request was made with, if it was.
    let objectIDs: [NSManagedObjectID]?

    /// What the result holds; ``NSBatchDeleteRequestResultType/resultTypeStatusOnly`` by default.
    open var resultType: NSBatchDeleteRequestResultType = .resultTypeStatusOnly

    /// The fetch request naming the objects to delete (a copy). For a request made with object
    /// IDs, a fetch of their entity with the predicate `self IN` the IDs.
    open var fetchRequest: NSFetchRequest<NSFetchRequestResult> {
        request.converted(to: NSFetchRequestResult.self)
    }

    /// A request deleting the objects `fetch` matches.
    public init(fetchRequest fetch: NSFetchRequest<NSFetchRequestResult>) {
        request = fetch.converted(to: NSFetchRequestResult.self)
        objectIDs = nil
        super.init()
    }

    /// A request deleting the objects a typed fetch request matches, such as an Xcode-generated
    /// `Car.fetchRequest()`.
    ///
    /// > Note: Differs from Apple Core Data: an addition. Apple's code writes
    /// > `Car.fetchRequest() as! NSFetchRequest<NSFetchRequestResult>`, a cast that always
    /// > succeeds there (Objective-C generics are erased) and always traps in Swift on Linux;
    /// > drop the cast and pass the typed request.
    public convenience init<ResultType: NSFetchRequestResult>(fetchRequest fetch: NSFetchRequest<ResultType>) {
        self.init(fetchRequest: fetch.converted(to: NSFetchRequestResult.self))
    }

    /// A request deleting the objects of `objectIDs`, which must all be of one entity.
    public init(objectIDs: [NSManagedObjectID]) {
        let fetch = NSFetchRequest<NSFetchRequestResult>()
        fetch.entity = objectIDs.first?.entity
        fetch.predicate = NSPredicate(format: "self IN %@", objectIDs)
        request = fetch
        self.objectIDs = objectIDs
        super.init()
    }

    /// ``NSPersistentStoreRequestType/batchDeleteRequestType``.
    override open var requestType: NSPersistentStoreRequestType { .batchDeleteRequestType }

    /// A copy of the request.
    override open func copy(with zone: NSZone? = nil) -> Any {
        let copy =
            objectIDs.map { NSBatchDeleteRequest(objectIDs: $0) } ?? NSBatchDeleteRequest(fetchRequest: request)
        copy.resultType = resultType
        copy.affectedStores = affectedStores
        return copy
    }
}
