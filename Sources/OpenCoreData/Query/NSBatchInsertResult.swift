/// The result of an NSBatchInsertRequest run by `NSManagedObjectContext.execute(_:)`.
open class NSBatchInsertResult: NSPersistentStoreResult, @unchecked Sendable {
    /// What the request's result type asks for: `true` (as an `NSNumber`) for status only, an
    /// array of `NSManagedObjectID` for object IDs, an `NSNumber` for a count.
    public let result: Any?
    /// The result type of the request.
    public let resultType: NSBatchInsertRequestResultType

    init(result: Any?, resultType: NSBatchInsertRequestResultType) {
        self.result = result
        self.resultType = resultType
        super.init()
    }
}
