/// What a fetch answers inside the library: managed objects kept as such, or any other results.
///
/// A fetch of objects went through `[Any]` from the store to `fetch(_:)` (32 bytes an object) and
/// was cast back element by element; objects now stay an `[NSManagedObject]` until the caller asks
/// for another type (resident memory did not change, the array being large enough for a
/// mapping of its own).
///
/// ``typed(as:)`` traps, as the cast it replaces did, only when `T` is not the class the request's
/// entity makes (`fetch(_:)` registers `T` for the entity first) or a store hands back results of
/// another type: programmer errors, never input.
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
            // The same type: the array as it is. `as? [T]` checked every element with the
            // runtime's general cast, which on Linux also asks each object whether it is a boxed
            // Swift value.
            if T.self == NSManagedObject.self { return unsafeBitCast(objects, to: [T].self) }
            // A model class (`NSFetchRequest<Person>`): the objects of a fetch are mostly of one
            // class, so each class met is checked once, with the first object of it, and the
            // array is then the same one, not cast object by object. An object not of `T` traps
            // as `as!` did.
            if T.self is NSManagedObject.Type {
                var checked: ObjectIdentifier?
                for object in objects where ObjectIdentifier(Swift.type(of: object)) != checked {
                    _ = object as! T
                    checked = ObjectIdentifier(Swift.type(of: object))
                }
                return unsafeBitCast(objects, to: [T].self)
            }
            return objects.map { $0 as! T }
        case .values(let values):
            return values.map { $0 as! T }
        }
    }
}
