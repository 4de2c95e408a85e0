/// The result of an ``NSPersistentHistoryChangeRequest``.
open class NSPersistentHistoryResult: NSPersistentStoreResult, @unchecked Sendable {
    /// What the request's result type asks for: `true` (an `NSNumber`), object IDs, a count,
    /// `[NSPersistentHistoryTransaction]` or `[NSPersistentHistoryChange]`.
    public let result: Any?
    /// The result type of the request.
    public let resultType: NSPersistentHistoryResultType

    init(result: Any?, resultType: NSPersistentHistoryResultType) {
        self.result = result
        self.resultType = resultType
        super.init()
    }
}
