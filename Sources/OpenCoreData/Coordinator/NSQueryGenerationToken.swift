/// A token naming a generation of the store's data, for `setQueryGenerationFrom(_:)`.
/// ``current`` asks for the latest generation; a context's ``NSManagedObjectContext/queryGenerationToken``
/// names the one it is pinned to, and pins another context of the same coordinator to it too.
open class NSQueryGenerationToken: NSObject, NSCopying, @unchecked Sendable {
    /// The generation; `nil` for ``current``.
    let generation: QueryGeneration?

    init(generation: QueryGeneration?) {
        self.generation = generation
        super.init()
    }

    /// The token that pins a context to the generation current when it is set.
    public class var current: NSQueryGenerationToken { currentQueryGenerationToken }

    /// Tokens are immutable: a copy is the token itself.
    public func copy(with zone: NSZone? = nil) -> Any { self }

    /// Two tokens are equal when they name the same generation.
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSQueryGenerationToken else { return false }
        return generation === other.generation
    }

    open override var hash: Int { generation.map { ObjectIdentifier($0).hashValue } ?? 0 }

    open override var description: String {
        generation.map { "<NSQueryGenerationToken: generation \($0.number)>" } ?? "<NSQueryGenerationToken: current>"
    }
}

/// The one `current` token.
private let currentQueryGenerationToken = NSQueryGenerationToken(generation: nil)
