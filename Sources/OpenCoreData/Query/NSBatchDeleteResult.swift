/// The result of an NSBatchDeleteRequest run by `NSManagedObjectContext.execute(_:)`.
open class NSBatchDeleteResult: NSPersistentStoreResult, @unchecked Sendable {
    /// What the request's result type asks for: `true` (as an `NSNumber`) for status only, an
    /// array of `NSManagedObjectID` for object IDs, an `NSNumber` for a count.
    public let result: Any?
    /// The result type of the request.
    public let resultType: NSBatchDeleteRequestResultType

    init(result: Any?, resultType: NSBatchDeleteRequestResultType) {
        self.result = result
        self.resultType = resultType
        super.init()
    }
}
