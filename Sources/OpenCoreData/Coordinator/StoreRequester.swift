import Foundation

/// Whoever asks the coordinator for rows or a save, as the coordinator sees it: which state it
/// reads and how old a cached row it accepts.
///
/// A managed object context adopts it. The coordinator knows a request's context only through
/// this protocol, so its calls go one way — the context calls down, the coordinator answers with
/// values (rows, IDs, results), which the context makes into its objects. One narrow call goes
/// back up: ``storeIDs(matching:in:)`` has the requester finish a batch request's fetch in memory
/// when the store cannot evaluate its predicate, which takes objects. A user's `NSIncrementalStore`, whose API Apple wrote with a context in it, gets the
/// context back from the requester in ``IncrementalStoreAdapter``.
package protocol StoreRequester: AnyObject {
    /// The query generation the requester reads at; `nil` for the latest state.
    var readGeneration: QueryGeneration? { get }
    /// How old a cached row the requester accepts, in seconds (negative: any age), as
    /// `NSManagedObjectContext.stalenessInterval` says.
    var stalenessInterval: TimeInterval { get }
    /// Whether the requester's objects hold rows of `coordinator`'s own row cache: it reads the
    /// latest state straight from that coordinator (not through a parent, not pinned), so a
    /// fetch's rows may be cached chunk by chunk as its objects are registered.
    func holdsRows(of coordinator: NSPersistentStoreCoordinator) -> Bool
    /// The IDs of the rows of `store` that `fetch` (a request for IDs) matches, finished as the
    /// requester finishes its fetches where the store leaves work to memory: the rows a batch
    /// request changes.
    ///
    /// - Throws: the store's error.
    func storeIDs(
        matching fetch: NSFetchRequest<NSFetchRequestResult>, in store: NSPersistentStore
    ) throws -> [NSManagedObjectID]
}
