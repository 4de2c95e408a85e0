/// A property whose value is the result of a fetch, evaluated lazily; always transient.
open class NSFetchedPropertyDescription: NSPropertyDescription, @unchecked Sendable {
    /// The name of the entity the fetch returns.
    var fetchEntityName: String?
    /// The predicate of the fetch; `$FETCH_SOURCE` and `$FETCHED_PROPERTY` are bound when it runs.
    var fetchPredicate: NSPredicate?

    override public init() {
        super.init()
        isTransient = true
    }

    /// The whole request set through ``fetchRequest`` (sort descriptors, limit and the rest), kept
    /// as a private copy.
    private var storedRequest: NSFetchRequest<NSFetchRequestResult>?

    /// The fetch whose result is the property's value: an entity and a predicate in which
    /// `$FETCH_SOURCE` is the object and `$FETCHED_PROPERTY` this description, with every other
    /// setting of the request it was given (sort descriptors, limit, result type…). Each read
    /// answers a copy, so changing it does not change the property.
    open var fetchRequest: NSFetchRequest<NSFetchRequestResult>? {
        get {
            guard let fetchEntityName else { return nil }
            let request =
                storedRequest.flatMap { $0.copy() as? NSFetchRequest<NSFetchRequestResult> }
                ?? NSFetchRequest<NSFetchRequestResult>(entityName: fetchEntityName)
            request.entity = entity?.managedObjectModel?.entitiesByName[fetchEntityName] ?? request.entity
            request.predicate = fetchPredicate
            return request
        }
        set {
            storedRequest = newValue.flatMap { $0.copy() as? NSFetchRequest<NSFetchRequestResult> }
            fetchEntityName = newValue?.entityName ?? newValue?.entity?.name
            fetchPredicate = newValue?.predicate
        }
    }
}
