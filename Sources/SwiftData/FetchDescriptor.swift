/// What to fetch: the models of one class that a predicate accepts, in an order, a window of them.
///
/// Related documentation: SwiftData, `FetchDescriptor`.
public struct FetchDescriptor<T: PersistentModel>: @unchecked Sendable {
    /// The models to keep; every model of the class when `nil`.
    public var predicate: Predicate<T>?
    /// The order of the results.
    public var sortBy: [SortDescriptor<T>]
    /// At most this many results; no limit when `nil`.
    public var fetchLimit: Int?
    /// How many results to skip first.
    public var fetchOffset: Int?
    /// Whether unsaved inserts, changes and deletions of the context count.
    public var includePendingChanges: Bool = true
    /// The properties the fetch reads at once. Every stored property of a fetched model is read
    /// with its row, so the list does not change what is read.
    public var propertiesToFetch: [PartialKeyPath<T>] = []
    /// The relationships whose models are read with the fetch, in the same round trip to the
    /// store, rather than when first used.
    public var relationshipKeyPathsForPrefetching: [PartialKeyPath<T>] = []

    /// A descriptor of the models `predicate` accepts, in the order `sortBy` gives.
    public init(predicate: Predicate<T>? = nil, sortBy: [SortDescriptor<T>] = []) {
        self.predicate = predicate
        self.sortBy = sortBy
    }
}
