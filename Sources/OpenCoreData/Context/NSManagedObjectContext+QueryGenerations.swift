extension NSManagedObjectContext {
    /// The token of the generation this context is pinned to; `nil` when it reads the latest state.
    public var queryGenerationToken: NSQueryGenerationToken? {
        queryGeneration.map { NSQueryGenerationToken(generation: $0) }
    }

    /// Pins the context to a generation of the store's data: ``NSQueryGenerationToken/current``
    /// for the latest one (taken now), another context's ``queryGenerationToken`` to share its
    /// generation, or `nil` to read the latest state again. A pinned context moves to the latest
    /// generation when it saves, is reset, or merges another context's save.
    ///
    /// - Throws: `NSPersistentStoreOperationError` (134070) when the token comes from another
    ///   coordinator or the context has none; an SQLite error when the read cannot begin.
    public func setQueryGenerationFrom(_ generation: NSQueryGenerationToken?) throws {
        checkQueue("setQueryGenerationFrom(_:)")
        guard let generation else {
            queryGeneration = nil
            return
        }
        guard let coordinator = persistentStoreCoordinator else {
            throw CoreDataError.make(
                NSPersistentStoreOperationError, "The context has no persistent store coordinator.")
        }
        if let pinned = generation.generation {
            guard pinned.coordinator === coordinator else {
                throw CoreDataError.make(
                    NSPersistentStoreOperationError,
                    "The query generation token belongs to another persistent store coordinator.")
            }
            queryGeneration = pinned
        } else {
            queryGeneration = try coordinator.makeGeneration()
        }
    }

    /// The generation reads go through: `nil` when unpinned or when no store can pin reads.
    var readGeneration: QueryGeneration? {
        guard let queryGeneration, queryGeneration.pinsReads else { return nil }
        return queryGeneration
    }

    /// Moves a pinned context to the latest generation (after a save, a reset or a merge).
    func advanceQueryGeneration() {
        guard queryGeneration != nil, let coordinator = persistentStoreCoordinator else { return }
        queryGeneration = try? coordinator.makeGeneration()
    }
}
