/// The result of an ``NSAsynchronousFetchRequest``: the objects, once the fetch has run.
open class NSAsynchronousFetchResult<ResultType>: NSPersistentStoreAsynchronousResult, @unchecked Sendable {
    /// The request this is the result of.
    public let fetchRequest: NSAsynchronousFetchRequest<ResultType>

    /// The fetched objects, registered in the context; `nil` until the fetch has run, and when it
    /// failed or was cancelled.
    open internal(set) var finalResult: [ResultType]?

    init(fetchRequest: NSAsynchronousFetchRequest<ResultType>, context: NSManagedObjectContext, progress: Progress?) {
        self.fetchRequest = fetchRequest
        super.init(context: context, progress: progress)
    }
}
