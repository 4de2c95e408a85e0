extension NSManagedObjectContext {
    /// The token of the generation this context is pinned to; `nil` when it reads the latest state.
    /// A context given ``NSQueryGenerationToken/current`` that has not read yet pins now.
    public var queryGenerationToken: NSQueryGenerationToken? {
        pinPendingGeneration()
        return queryGeneration.map { NSQueryGenerationToken(generation: $0) }
    }

    /// Pins the context to a generation of the store's data: ``NSQueryGenerationToken/current``
    /// for the latest one — taken lazily, as Apple's is, at the context's next read — another
    /// context's ``queryGenerationToken`` to share its generation, or `nil` to read the latest
    /// state again. A pinned context moves to the latest generation when it saves, is reset, or
    /// merges another context's save.
    ///
    /// - Throws: `NSPersistentStoreOperationError` (134070) when the token comes from another
    ///   coordinator or the context has none; an SQLite error when the read cannot begin.
    public func setQueryGenerationFrom(_ generation: NSQueryGenerationToken?) throws {
        checkQueue("setQueryGenerationFrom(_:)")
        pinsAtNextRead = false
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
            // The current generation: the one the context's next read finds.
            queryGeneration = nil
            pinsAtNextRead = true
        }
    }

    /// Takes the generation a context given ``NSQueryGenerationToken/current`` waits for: the
    /// latest, at its first read. A read that cannot begin one reads the latest state, and the
    /// next read tries again.
    private func pinPendingGeneration() {
        guard pinsAtNextRead, let coordinator = persistentStoreCoordinator,
            let generation = try? coordinator.makeGeneration()
        else { return }
        pinsAtNextRead = false
        queryGeneration = generation
    }

    /// The generation reads go through: `nil` when unpinned or when no store can pin reads.
    package var readGeneration: QueryGeneration? {
        if pinsAtNextRead { pinPendingGeneration() }
        guard let queryGeneration, queryGeneration.pinsReads else { return nil }
        return queryGeneration
    }

    /// Moves a pinned context to the latest generation (after a save, a reset or a merge).
    func advanceQueryGeneration() {
        guard queryGeneration != nil, let coordinator = persistentStoreCoordinator else { return }
        queryGeneration = try? coordinator.makeGeneration()
    }
}
