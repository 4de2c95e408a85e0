/// One state of an observed fetch (``NSManagedObjectContext/changes(for:sectionNameKeyPath:)``):
/// the matching objects' IDs in order, by section, and how they changed from the previous state.
public struct FetchedResultsChange: Sendable {
    /// One section: its name (the section key path's value; `""` without a key path) and its
    /// objects' IDs in order.
    public struct Section: Sendable, Equatable {
        /// The section's name.
        public let name: String
        /// The IDs of the section's objects, in order.
        public let objectIDs: [NSManagedObjectID]
    }

    /// The sections, in order.
    public let sections: [Section]
    /// How the IDs (in section order) changed from the previous value; `nil` for the first.
    public let difference: CollectionDifference<NSManagedObjectID>?

    /// The IDs of every matching object, in section order.
    public var objectIDs: [NSManagedObjectID] { sections.flatMap(\.objectIDs) }
}

extension NSManagedObjectContext {
    /// The results of `request` as an asynchronous sequence: first the current results, then a
    /// new value each time a save — of this context or any other context of its coordinator —
    /// changes them, with the difference from the previous value. Cancelling the task that
    /// iterates it stops the observation.
    ///
    /// The fetch runs in a private context of the same coordinator, so values carry object IDs
    /// (which are `Sendable`), not objects: read the objects with `object(with:)` in the context
    /// you use them in.
    ///
    /// ```swift
    /// let request = NSFetchRequest<NSManagedObject>(entityName: "Order")
    /// request.predicate = NSPredicate(format: "status == 'open'")
    /// request.sortDescriptors = [NSSortDescriptor(key: "created", ascending: true)]
    /// for try await change in context.changes(for: request) {
    ///     send(change.objectIDs, change.difference)
    /// }
    /// ```
    ///
    /// > Note: An addition to Apple's API (DEVIATIONS.md). Saves of other processes are not seen
    /// > yet (remote-change notifications come with persistent history, issue 24); unsaved changes
    /// > are not shown.
    ///
    /// - Throws: (through the sequence) the fetch's error, or `NSCoreDataError` (134060) when the
    ///   request has no sort descriptors.
    public func changes(
        for request: NSFetchRequest<NSManagedObject>, sectionNameKeyPath: String? = nil
    ) -> AsyncThrowingStream<FetchedResultsChange, any Error> {
        AsyncThrowingStream { continuation in
            guard let coordinator = persistentStoreCoordinator else {
                continuation.finish(
                    throwing: CoreDataError.make(
                        NSPersistentStoreSaveError, "The context has no persistent store coordinator."))
                return
            }
            let observation = FetchObservation(
                coordinator: coordinator, request: request, sectionNameKeyPath: sectionNameKeyPath,
                continuation: continuation)
            continuation.onTermination = { _ in observation.stop() }
            observation.start()
        }
    }
}

/// The work behind ``NSManagedObjectContext/changes(for:sectionNameKeyPath:)``: a fetched results
/// controller in a private context that merges every save of the coordinator's top-level contexts.
private final class FetchObservation: NSFetchedResultsControllerDelegate, @unchecked Sendable {
    private let coordinator: NSPersistentStoreCoordinator
    private let request: NSFetchRequest<NSManagedObject>
    private let sectionNameKeyPath: String?
    private let continuation: AsyncThrowingStream<FetchedResultsChange, any Error>.Continuation
    private let context: NSManagedObjectContext
    private var controller: NSFetchedResultsController<NSManagedObject>?
    private let lock = NSLock()
    private var observer: (any NSObjectProtocol)?
    private var stopped = false

    init(
        coordinator: NSPersistentStoreCoordinator, request: NSFetchRequest<NSManagedObject>,
        sectionNameKeyPath: String?, continuation: AsyncThrowingStream<FetchedResultsChange, any Error>.Continuation
    ) {
        self.coordinator = coordinator
        self.request = request
        self.sectionNameKeyPath = sectionNameKeyPath
        self.continuation = continuation
        context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
    }

    func start() {
        let token = NotificationCenter.default.addObserver(
            forName: .NSManagedObjectContextDidSave, object: nil, queue: nil
        ) { [weak self] notification in
            self?.saved(UncheckedSendable(notification))
        }
        lock.lock()
        observer = token
        lock.unlock()
        context.perform { [self] in
            let controller = NSFetchedResultsController(
                fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: sectionNameKeyPath,
                cacheName: nil)
            do {
                try controller.performFetch()
            } catch {
                continuation.finish(throwing: error)
                stop()
                return
            }
            self.controller = controller
            controller.delegate = self
            continuation.yield(FetchedResultsChange(sections: sections(of: controller), difference: nil))
        }
    }

    /// Merges a save of another top-level context of the coordinator; the controller reports.
    private func saved(_ box: UncheckedSendable<Notification>) {
        guard let sender = box.value.object as? NSManagedObjectContext, sender !== context, sender.parent == nil,
            sender.persistentStoreCoordinator === coordinator
        else { return }
        lock.lock()
        let active = !stopped
        lock.unlock()
        guard active else { return }
        context.perform { [self] in context.mergeChanges(fromContextDidSave: box.value) }
    }

    func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        didChangeContentWith diff: CollectionDifference<NSManagedObjectID>
    ) {
        guard let current = self.controller else { return }
        continuation.yield(FetchedResultsChange(sections: sections(of: current), difference: diff))
    }

    private func sections(of controller: NSFetchedResultsController<NSManagedObject>) -> [FetchedResultsChange.Section]
    {
        (controller.sections ?? []).map { section in
            FetchedResultsChange.Section(
                name: section.name, objectIDs: (section.objects ?? []).compactMap { ($0 as? NSManagedObject)?.objectID }
            )
        }
    }

    /// Ends the observation: no more merges, no more values.
    func stop() {
        lock.lock()
        stopped = true
        let token = observer
        observer = nil
        lock.unlock()
        if let token { NotificationCenter.default.removeObserver(token) }
        context.perform { [self] in controller?.delegate = nil }
    }
}
