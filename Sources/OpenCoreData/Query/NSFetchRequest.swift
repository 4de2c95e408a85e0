/// What a fetch request can return: managed objects, object IDs, dictionaries or a count.
///
/// > Note: Differs from Apple Core Data: `NSFetchRequest`'s `ResultType` is unconstrained, because
/// > a non-`@objc` protocol does not conform to itself on Linux and `NSFetchRequest<NSFetchRequestResult>`
/// > must compile. The protocol remains for source compatibility.
public protocol NSFetchRequestResult {}

extension NSNumber: NSFetchRequestResult {}
extension NSDictionary: NSFetchRequestResult {}

/// The kind of result a fetch request returns, with Apple's raw values.
public struct NSFetchRequestResultType: OptionSet, Sendable {
    /// The raw value.
    public let rawValue: UInt
    /// Creates a result type from its raw value.
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// Managed objects (the default).
    public static let managedObjectResultType = NSFetchRequestResultType([])
    /// Object IDs.
    public static let managedObjectIDResultType = NSFetchRequestResultType(rawValue: 1)
    /// Dictionaries of property values.
    public static let dictionaryResultType = NSFetchRequestResultType(rawValue: 2)
    /// The number of matching objects, as one `NSNumber`.
    public static let countResultType = NSFetchRequestResultType(rawValue: 4)
}

/// A description of the objects to fetch from persistent stores: an entity, a predicate, an
/// order, and limits.
///
/// ```swift
/// let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
/// request.predicate = NSPredicate(format: "salary > %d", 5000)
/// request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
/// let employees = try context.fetch(request)
/// ```
open class NSFetchRequest<ResultType>: NSPersistentStoreRequest, @unchecked Sendable {
    private var entityDescription: NSEntityDescription?
    private var storedEntityName: String?

    /// The entity to fetch. Setting it also sets ``entityName``.
    open var entity: NSEntityDescription? {
        get { entityDescription }
        set {
            entityDescription = newValue
            storedEntityName = newValue?.name
        }
    }
    /// The name of the entity to fetch.
    open var entityName: String? { storedEntityName ?? entityDescription?.name }
    /// The objects must match this predicate; `nil` matches every object.
    open var predicate: NSPredicate?
    /// The order of the results.
    open var sortDescriptors: [NSSortDescriptor]?
    /// The most objects to return; 0 means no limit.
    open var fetchLimit: Int = 0
    /// How many matching objects to skip.
    open var fetchOffset: Int = 0
    /// Batch size for faulting in results; 0 means no batching.
    open var fetchBatchSize: Int = 0
    /// What the fetch returns.
    open var resultType: NSFetchRequestResultType = .managedObjectResultType
    /// Whether objects of sub-entities match too.
    open var includesSubentities: Bool = true
    /// Whether property values are fetched along with the objects.
    open var includesPropertyValues: Bool = true
    /// Whether unsaved changes of the context are taken into account.
    open var includesPendingChanges: Bool = true
    /// Whether objects come back as faults (the default) rather than with their values loaded.
    open var returnsObjectsAsFaults: Bool = true
    /// Relationship key paths to prefetch along with the objects.
    open var relationshipKeyPathsForPrefetching: [String]?
    /// For dictionary results: the properties (names, descriptions or expression descriptions) to fetch.
    open var propertiesToFetch: [Any]?
    /// For dictionary results: the properties to group by.
    open var propertiesToGroupBy: [Any]?
    /// For grouped dictionary results: the predicate groups must match.
    open var havingPredicate: NSPredicate?
    /// For dictionary results: whether duplicate dictionaries are removed.
    open var returnsDistinctResults: Bool = false
    /// Whether refetched objects are refreshed with the store's values.
    open var shouldRefreshRefetchedObjects: Bool = false

    /// Creates a fetch request with no entity.
    override public init() {
        super.init()
    }

    /// Creates a fetch request for the entity named `entityName`.
    public convenience init(entityName: String) {
        self.init()
        storedEntityName = entityName
    }

    override open var requestType: NSPersistentStoreRequestType { .fetchRequestType }

    /// Runs the request in the context whose `perform` or `performAndWait` block is running.
    ///
    /// Traps when no context block is running, as Apple's does.
    open func execute() throws -> [ResultType] {
        guard let context = NSManagedObjectContext.current else {
            preconditionFailure("NSFetchRequest.execute(): call it inside a context's perform or performAndWait block")
        }
        return try context.fetch(self)
    }

    /// Returns a copy of this request with another result type, sharing every setting.
    func converted<Other>(to: Other.Type) -> NSFetchRequest<Other> {
        let copy = NSFetchRequest<Other>()
        copy.entityDescription = entityDescription
        copy.storedEntityName = storedEntityName
        copy.predicate = predicate
        copy.sortDescriptors = sortDescriptors
        copy.fetchLimit = fetchLimit
        copy.fetchOffset = fetchOffset
        copy.fetchBatchSize = fetchBatchSize
        copy.resultType = resultType
        copy.includesSubentities = includesSubentities
        copy.includesPropertyValues = includesPropertyValues
        copy.includesPendingChanges = includesPendingChanges
        copy.returnsObjectsAsFaults = returnsObjectsAsFaults
        copy.relationshipKeyPathsForPrefetching = relationshipKeyPathsForPrefetching
        copy.propertiesToFetch = propertiesToFetch
        copy.propertiesToGroupBy = propertiesToGroupBy
        copy.havingPredicate = havingPredicate
        copy.returnsDistinctResults = returnsDistinctResults
        copy.shouldRefreshRefetchedObjects = shouldRefreshRefetchedObjects
        copy.affectedStores = affectedStores
        return copy
    }

    override open func copy(with zone: NSZone? = nil) -> Any { converted(to: ResultType.self) }

    override open var description: String {
        "<NSFetchRequest> entity: \(entityName ?? "nil"); predicate: (\(predicate?.predicateFormat ?? "nil"))"
    }
}

extension NSFetchRequest {
    /// `items` past `fetchOffset`, at most `fetchLimit` of them (0: no limit): the window every
    /// store and context applies when SQL did not.
    package func window<T>(_ items: [T]) -> [T] {
        var result = items[...]
        if fetchOffset > 0 { result = result.dropFirst(fetchOffset) }
        if fetchLimit > 0 { result = result.prefix(fetchLimit) }
        return Array(result)
    }
}
