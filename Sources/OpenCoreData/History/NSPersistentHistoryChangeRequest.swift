import Foundation

/// What an ``NSPersistentHistoryChangeRequest`` returns in its ``NSPersistentHistoryResult``,
/// with Apple's raw values.
public enum NSPersistentHistoryResultType: Int, Sendable {
    /// Only whether the request succeeded: `true`.
    case statusOnly = 0
    /// The IDs of the objects the transactions changed.
    case objectIDs = 1
    /// The number of transactions (fetched or deleted).
    case count = 2
    /// The transactions, without their changes.
    case transactionsOnly = 3
    /// The changes, without their transactions.
    case changesOnly = 4
    /// The transactions, each with its changes.
    case transactionsAndChanges = 5
}

/// A request that fetches or deletes persistent history, run by `NSManagedObjectContext.execute(_:)`
/// on the stores opened with `NSPersistentHistoryTrackingKey`.
///
/// Related documentation: NSPersistentHistoryChangeRequest ("A request to fetch or delete
/// persistent history"), `fetchHistory(after:)`, `deleteHistory(before:)`.
open class NSPersistentHistoryChangeRequest: NSPersistentStoreRequest, @unchecked Sendable {
    /// Which transactions a request selects.
    package enum Bound {
        /// Fetch: all; delete: none.
        case everything
        case afterToken(NSPersistentHistoryToken?)
        case afterDate(Date)
        case beforeToken(NSPersistentHistoryToken?)
        case beforeDate(Date)
    }

    package private(set) var bound: Bound = .everything
    package private(set) var deletes = false

    /// What the result holds; ``NSPersistentHistoryResultType/transactionsAndChanges`` by default.
    open var resultType: NSPersistentHistoryResultType = .transactionsAndChanges
    /// The token the request was made with, if any.
    open private(set) var token: NSPersistentHistoryToken?
    /// A fetch request on ``NSPersistentHistoryTransaction/entityDescription`` or
    /// ``NSPersistentHistoryChange/entityDescription`` narrowing the transactions (its predicate
    /// is evaluated on each transaction, or on each change).
    open var fetchRequest: NSFetchRequest<NSFetchRequestResult>?

    /// A request for all history.
    public required override init() {
        super.init()
    }

    /// A request for the transactions committed after `date`.
    open class func fetchHistory(after date: Date) -> Self {
        let request = self.init()
        request.bound = .afterDate(date)
        return request
    }

    /// A request for the transactions after `token`; all of them for `nil`.
    open class func fetchHistory(after token: NSPersistentHistoryToken?) -> Self {
        let request = self.init()
        request.bound = .afterToken(token)
        request.token = token
        return request
    }

    /// A request for the transactions after `transaction`; all of them for `nil`.
    open class func fetchHistory(after transaction: NSPersistentHistoryTransaction?) -> Self {
        fetchHistory(after: transaction?.token)
    }

    /// A request for the transactions (or changes) `fetchRequest` selects.
    open class func fetchHistory(withFetch fetchRequest: NSFetchRequest<NSFetchRequestResult>) -> Self {
        let request = self.init()
        request.fetchRequest = fetchRequest
        return request
    }

    /// A request for the transactions (or changes) a typed fetch request selects.
    ///
    /// > Note: Differs from Apple Core Data: an addition, so that a typed request needs no
    /// > `as! NSFetchRequest<NSFetchRequestResult>`, which traps in Swift on Linux.
    public class func fetchHistory<ResultType: NSFetchRequestResult>(
        withFetch fetchRequest: NSFetchRequest<ResultType>
    ) -> Self {
        fetchHistory(withFetch: fetchRequest.converted(to: NSFetchRequestResult.self))
    }

    /// A request deleting the transactions committed before `date`.
    open class func deleteHistory(before date: Date) -> Self {
        let request = self.init()
        request.bound = .beforeDate(date)
        request.deletes = true
        request.resultType = .statusOnly
        return request
    }

    /// A request deleting the transactions `token` covers (up to and including its transaction);
    /// none for `nil`.
    open class func deleteHistory(before token: NSPersistentHistoryToken?) -> Self {
        let request = self.init()
        request.bound = .beforeToken(token)
        request.token = token
        request.deletes = true
        request.resultType = .statusOnly
        return request
    }

    /// A request deleting the transactions before `transaction`, which stays; none for `nil`.
    /// Apple: "deletes all history transactions before the given transaction" — strictly before,
    /// whereas the token form deletes up to and including the token's transaction.
    open class func deleteHistory(before transaction: NSPersistentHistoryTransaction?) -> Self {
        deleteHistory(
            before: transaction.map {
                NSPersistentHistoryToken(numbers: [$0.storeID: $0.transactionNumber - 1])
            })
    }

    /// ``NSPersistentStoreRequestType/fetchRequestType``'s neighbour: history requests are their
    /// own kind on Apple platforms (raw value 8 is not public); they report the fetch type here.
    override open var requestType: NSPersistentStoreRequestType { .fetchRequestType }

    /// A copy of the request.
    override open func copy(with zone: NSZone? = nil) -> Any {
        let copy = Self.init()
        copy.bound = bound
        copy.deletes = deletes
        copy.token = token
        copy.resultType = resultType
        copy.fetchRequest = fetchRequest
        copy.affectedStores = affectedStores
        return copy
    }
}
