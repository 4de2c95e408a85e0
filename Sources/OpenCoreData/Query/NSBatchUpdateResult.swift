/// The result of an NSBatchUpdateRequest run by `NSManagedObjectContext.execute(_:)`.
open class NSBatchUpdateResult: NSPersistentStoreResult, @unchecked Sendable {
    /// What the request's result type asks for: `true` (as an `NSNumber`) for status only, an
    /// array of `NSManagedObjectID` for object IDs, an `NSNumber` for a count.
    public let result: Any?
    /// The result type of the request.
    public let resultType: NSBatchUpdateRequestResultType

    init(result: Any?, resultType: NSBatchUpdateRequestResultType) {
        self.result = result
        self.resultType = resultType
        super.init()
    }
}
