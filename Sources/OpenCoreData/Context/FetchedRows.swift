/// What a fetch answers inside the library: managed objects kept as such, or any other results.
///
/// A fetch of objects went through `[Any]` from the store to `fetch(_:)`: 32 bytes an object in a
/// transient array, freed only after the objects were made, so its pages stayed resident in the
/// fetching process (issue 21: 24 bytes a realized object of 100,000). Objects now stay an
/// `[NSManagedObject]` until the caller asks for another type.
enum FetchedRows {
    case objects([NSManagedObject])
    case values([Any])

    /// The results as the untyped array the store API hands out.
    var values: [Any] {
        switch self {
        case .objects(let objects): return objects
        case .values(let values): return values
        }
    }

    /// The results as `fetch(_:)` returns them for a request of `T`.
    func typed<T>(as type: T.Type) -> [T] {
        switch self {
        case .objects(let objects):
            if T.self == NSManagedObject.self, let same = objects as? [T] { return same }
            return objects.map { $0 as! T }
        case .values(let values):
            return values.map { $0 as! T }
        }
    }
}
