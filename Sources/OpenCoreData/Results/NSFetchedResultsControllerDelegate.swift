/// The kinds of change a fetched results controller reports.
public enum NSFetchedResultsChangeType: UInt, Sendable {
    /// An object or section was inserted (at the new index path or index).
    case insert = 1
    /// An object or section was deleted (from the old index path or index).
    case delete = 2
    /// An object moved from its old index path to a new one.
    case move = 3
    /// An object changed where it is.
    case update = 4
}

/// What a fetched results controller tells about changes to its results, in Apple's order:
/// `controllerWillChangeContent`, then each section change and object change, then
/// `controllerDidChangeContent`, then the whole change as one collection difference. Applying the
/// reported changes to the old sections — deletions from old index paths (descending), then
/// sections deleted and inserted, then insertions at new index paths (ascending), a move being a
/// deletion and an insertion, an update leaving the structure as it is — gives the new sections.
///
/// Every method has a default implementation that does nothing.
///
/// > Note: Differs from Apple Core Data: the controller handed to these methods is typed
/// > `NSFetchedResultsController<NSFetchRequestResult>`, as Apple's Swift signatures say; on Linux
/// > that is a second controller object sharing the first one's results (Swift cannot treat a
/// > `NSFetchedResultsController<Person>` as that type), so compare controllers with
/// > `isSameController(as:)`, not `===`. Every method is called, the difference form included.
public protocol NSFetchedResultsControllerDelegate: AnyObject {
    /// The results are about to change.
    func controllerWillChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>)
    /// An object was inserted, deleted, moved or updated.
    func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any,
        at indexPath: IndexPath?,
        for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?)
    /// A section was inserted or deleted.
    func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        didChange sectionInfo: any NSFetchedResultsSectionInfo, atSectionIndex sectionIndex: Int,
        for type: NSFetchedResultsChangeType)
    /// The results changed.
    func controllerDidChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>)
    /// The whole change as a difference between the old and new object IDs, in section order.
    func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        didChangeContentWith diff: CollectionDifference<NSManagedObjectID>)
    /// The index title of the section named `sectionName`; `nil` for the default (its first
    /// letter, capitalized).
    func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        sectionIndexTitleForSectionName sectionName: String
    ) -> String?
}

extension NSFetchedResultsControllerDelegate {
    public func controllerWillChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {}
    public func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any,
        at indexPath: IndexPath?,
        for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?
    ) {}
    public func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        didChange sectionInfo: any NSFetchedResultsSectionInfo, atSectionIndex sectionIndex: Int,
        for type: NSFetchedResultsChangeType
    ) {}
    public func controllerDidChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {}
    public func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        didChangeContentWith diff: CollectionDifference<NSManagedObjectID>
    ) {}
    public func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        sectionIndexTitleForSectionName sectionName: String
    ) -> String? { nil }
}
