/// The coordinator's entry point for a context's request. It is written with the context, not
/// the coordinator, because its answers are the context's objects: the coordinator below it
/// takes values and a ``StoreRequester`` and answers with values.
///
/// Related documentation: NSPersistentStoreCoordinator reference, `execute(_:with:)`.
extension NSPersistentStoreCoordinator {
    /// Runs a store request for `context`: a fetch returns its array, a save an empty array, a
    /// batch or history request its result (`NSBatchInsertResult`, …, `NSPersistentHistoryResult`).
    ///
    /// - Throws: `NSPersistentStoreUnsupportedRequestTypeError` (134091) for a request no store
    ///   can run; the store's error.
    public func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext) throws -> Any {
        switch request {
        case let history as NSPersistentHistoryChangeRequest:
            return try executeHistory(history)
        case is NSBatchInsertRequest, is NSBatchUpdateRequest, is NSBatchDeleteRequest:
            return try executeBatch(request, requester: context)
        case let save as NSSaveChangesRequest:
            // The saved rows reach the row cache once the stores committed them.
            _ = try withSaveLocks([]) { try context.writeSave(save, to: self) }
            return [Any]()
        case let fetch as NSFetchRequest<NSFetchRequestResult>:
            if fetch.entity == nil, let name = fetch.entityName {
                fetch.entity = managedObjectModel.entitiesByName[name]
            }
            return try context.storeResults(fetch).values
        default:
            throw CoreDataError.make(
                NSPersistentStoreUnsupportedRequestTypeError, "Unsupported request type \(request.requestType).")
        }
    }
}
