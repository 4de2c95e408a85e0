/// Keeps the results of a fetch request in step with a context, in sections, and tells its
/// delegate what changed — as a table or a list shows them.
///
/// The request must have sort descriptors; with a `sectionNameKeyPath`, the first sort
/// descriptor must order the objects by that key path (each section's objects come together).
/// Once ``performFetch()`` has run and a ``delegate`` is set, every change of the context — an
/// insert, delete or change, a merge, a child context's save, undo — updates the results where
/// they change, without fetching again, and the delegate hears of it.
///
/// ```swift
/// let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
/// request.sortDescriptors = [NSSortDescriptor(key: "department.name", ascending: true),
///                            NSSortDescriptor(key: "name", ascending: true)]
/// let controller = NSFetchedResultsController(
///     fetchRequest: request, managedObjectContext: context,
///     sectionNameKeyPath: "department.name", cacheName: nil)
/// controller.delegate = self
/// try controller.performFetch()
/// controller.sections?[0].numberOfObjects
/// ```
///
/// Related documentation: NSFetchedResultsController and NSFetchedResultsControllerDelegate references.
open class NSFetchedResultsController<ResultType>: NSObject, @unchecked Sendable {
    let results: FetchedResults
    private let request: NSFetchRequest<ResultType>
    private let cache: String?

    /// A controller of `fetchRequest`'s results in `context`, grouped into sections by
    /// `sectionNameKeyPath` (one section when `nil`).
    ///
    /// > Note: `cacheName` is kept but no cache is written: the results are computed when
    /// > fetched (DEVIATIONS.md).
    public init(
        fetchRequest: NSFetchRequest<ResultType>, managedObjectContext context: NSManagedObjectContext,
        sectionNameKeyPath: String?, cacheName name: String?
    ) {
        request = fetchRequest
        cache = name
        let entity =
            fetchRequest.entity
            ?? fetchRequest.entityName.flatMap {
                context.persistentStoreCoordinator?.managedObjectModel.entitiesByName[$0]
            }
        results = FetchedResults(
            context: context, entity: entity, predicate: fetchRequest.predicate,
            includesSubentities: fetchRequest.includesSubentities, sortDescriptors: fetchRequest.sortDescriptors,
            sectionNameKeyPath: sectionNameKeyPath,
            fetch: { try context.fetch(fetchRequest).compactMap { $0 as? NSManagedObject } })
        super.init()
    }

    /// The face the delegate receives: the same results under `NSFetchRequestResult`.
    init(sharing results: FetchedResults) {
        self.results = results
        let request = NSFetchRequest<ResultType>()
        request.entity = results.entity
        request.predicate = results.predicate
        request.sortDescriptors = results.sortDescriptors
        request.includesSubentities = results.includesSubentities
        self.request = request
        cache = nil
        super.init()
    }

    /// The fetch request.
    open var fetchRequest: NSFetchRequest<ResultType> { request }

    /// The context the results are fetched from and follow.
    open var managedObjectContext: NSManagedObjectContext { results.context }

    /// The key path that names each object's section.
    open var sectionNameKeyPath: String? { results.sectionNameKeyPath }

    /// The name given for the section cache.
    open var cacheName: String? { cache }

    /// The delegate told of changes; setting one starts the tracking of changes.
    open weak var delegate: (any NSFetchedResultsControllerDelegate)? {
        get { results.delegate }
        set { results.delegate = newValue }
    }

    /// Fetches the results and sorts them into sections.
    ///
    /// - Throws: `NSCoreDataError` (134060) when the request's sort descriptors are `nil` (an empty
    ///   array is accepted, as Apple accepts it); the fetch's error.
    open func performFetch() throws {
        try results.performFetch()
    }

    /// Removes the cached section information named `name` (every cache when `nil`). No cache is
    /// kept on disk here, so there is nothing to remove.
    open class func deleteCache(withName name: String?) {}

    /// The fetched objects in section order; `nil` before ``performFetch()``.
    open var fetchedObjects: [ResultType]? {
        guard results.hasFetched else { return nil }
        return results.allObjects.compactMap { $0 as? ResultType }
    }

    /// The object at `indexPath` (section, item). Traps on an index path outside the results, as
    /// Apple's raises.
    open func object(at indexPath: IndexPath) -> ResultType {
        guard let object = results.object(at: indexPath) as? ResultType else {
            preconditionFailure("NSFetchedResultsController: no object at \(indexPath)")
        }
        return object
    }

    /// Where `object` is in the results; `nil` when it is not in them.
    open func indexPath(forObject object: ResultType) -> IndexPath? {
        guard let managed = object as? NSManagedObject else { return nil }
        return results.indexPath(for: managed)
    }

    /// The sections; `nil` before ``performFetch()``.
    open var sections: [any NSFetchedResultsSectionInfo]? {
        results.hasFetched ? results.sections : nil
    }

    /// The index title of the section named `sectionName`: the delegate's, else the name's first
    /// letter, capitalized.
    open func sectionIndexTitle(forSectionName sectionName: String) -> String? {
        if let title = delegate?.controller(results.erasedController(), sectionIndexTitleForSectionName: sectionName) {
            return title
        }
        return sectionName.first.map { String($0).uppercased() }
    }

    /// The sections' index titles, each once, in section order: as Apple documents, made by
    /// calling ``sectionIndexTitle(forSectionName:)`` — a subclass's override included — for
    /// every section.
    open var sectionIndexTitles: [String] {
        var seen = Set<String>()
        return results.sections.compactMap { sectionIndexTitle(forSectionName: $0.name) }
            .filter { seen.insert($0).inserted }
    }

    /// The first section whose index title (``sectionIndexTitle(forSectionName:)``) is `title`;
    /// `sectionIndex` when none is.
    open func section(forSectionIndexTitle title: String, at sectionIndex: Int) -> Int {
        results.sections.firstIndex { sectionIndexTitle(forSectionName: $0.name) == title } ?? sectionIndex
    }

    /// Whether `other` shows the same results — the controller the app made and the one its
    /// delegate receives do.
    public func isSameController<Other>(as other: NSFetchedResultsController<Other>) -> Bool {
        results === other.results
    }
}
