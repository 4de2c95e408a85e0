/// A fetch that runs on its context's queue after ``NSManagedObjectContext/execute(_:)`` returns,
/// then hands its result to a completion block on that queue.
///
/// ```swift
/// let request = NSAsynchronousFetchRequest(fetchRequest: NSFetchRequest<Employee>(entityName: "Employee")) {
///     result in print(result.finalResult?.count ?? 0)
/// }
/// try context.execute(request)
/// ```
///
/// Related documentation: NSAsynchronousFetchRequest, NSAsynchronousFetchResult,
/// NSPersistentStoreAsynchronousResult.
open class NSAsynchronousFetchRequest<ResultType>: NSPersistentStoreRequest, @unchecked Sendable {
    /// The fetch to run.
    public let fetchRequest: NSFetchRequest<ResultType>
    /// Called on the context's queue with the result, also when the fetch failed or was cancelled.
    public let completionBlock: ((NSAsynchronousFetchResult<ResultType>) -> Void)?
    /// How many objects the fetch is expected to return (a hint for progress reporting).
    open var estimatedResultCount: Int = 0

    /// Creates an asynchronous request for `request`, calling `blk` with its result.
    public init(
        fetchRequest request: NSFetchRequest<ResultType>,
        completionBlock blk: ((NSAsynchronousFetchResult<ResultType>) -> Void)?
    ) {
        fetchRequest = request
        completionBlock = blk
        super.init()
    }

    override open var requestType: NSPersistentStoreRequestType { .fetchRequestType }

    override open func copy(with zone: NSZone? = nil) -> Any {
        let copy = NSAsynchronousFetchRequest(fetchRequest: fetchRequest, completionBlock: completionBlock)
        copy.estimatedResultCount = estimatedResultCount
        copy.affectedStores = affectedStores
        return copy
    }
}

/// A request the context can run on its queue, whatever its result type.
protocol AsynchronousContextRequest {
    func start(in context: NSManagedObjectContext) -> NSPersistentStoreResult
}

extension NSAsynchronousFetchRequest: AsynchronousContextRequest {
    func start(in context: NSManagedObjectContext) -> NSPersistentStoreResult {
        // Counted in objects, as Apple's: the estimate until the fetch has run, then its count.
        let progress = Progress(totalUnitCount: Int64(max(estimatedResultCount, 0)))
        let result = NSAsynchronousFetchResult(fetchRequest: self, context: context, progress: progress)
        let request = fetchRequest
        let completion = completionBlock
        context.perform {
            if result.isCancelled {
                result.fail(CocoaError(.userCancelled))
            } else {
                do {
                    let objects = try context.fetch(request)
                    result.finalResult = objects
                    progress.totalUnitCount = Int64(objects.count)
                    progress.completedUnitCount = Int64(objects.count)
                } catch {
                    result.fail(error)
                }
            }
            completion?(result)
        }
        return result
    }
}

extension NSManagedObjectContext {
    /// Runs a request that does not change the context's objects, returning its result. An
    /// ``NSAsynchronousFetchRequest`` returns its ``NSAsynchronousFetchResult`` at once and fetches
    /// on the context's queue, then calls its completion block there. A batch insert, update or
    /// delete request runs in the store at once and returns its ``NSBatchInsertResult``,
    /// ``NSBatchUpdateResult`` or ``NSBatchDeleteResult``; the context's objects are not changed
    /// until the app merges the result's IDs.
    ///
    /// - Throws: `NSPersistentStoreUnsupportedRequestTypeError` (134091) for a request of another
    ///   kind, or a batch request no store holding its entity can run (only the SQLite store can);
    ///   the batch request's error.
    @discardableResult
    public func execute(_ request: NSPersistentStoreRequest) throws -> NSPersistentStoreResult {
        if let asynchronous = request as? AsynchronousContextRequest {
            guard concurrencyType != .confinementConcurrencyType else {
                throw CoreDataError.make(
                    NSPersistentStoreUnsupportedRequestTypeError,
                    "An asynchronous fetch needs a context with a queue (private or main queue concurrency).")
            }
            return asynchronous.start(in: self)
        }
        if let history = request as? NSPersistentHistoryChangeRequest {
            guard let coordinator = persistentStoreCoordinator else {
                throw CoreDataError.make(
                    NSPersistentStoreUnsupportedRequestTypeError, "The context has no persistent store coordinator.")
            }
            return try coordinator.executeHistory(history)
        }
        if request is NSBatchInsertRequest || request is NSBatchUpdateRequest || request is NSBatchDeleteRequest {
            guard let coordinator = persistentStoreCoordinator else {
                throw CoreDataError.make(
                    NSPersistentStoreUnsupportedRequestTypeError, "The context has no persistent store coordinator.")
            }
            return try coordinator.executeBatch(request, requester: self)
        }
        throw CoreDataError.make(
            NSPersistentStoreUnsupportedRequestTypeError,
            "The context cannot execute a request of type \(type(of: request)) yet.")
    }
}
