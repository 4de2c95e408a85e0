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
    /// Saves of other coordinators and processes, and batch requests, are followed too when the
    /// store was added with `NSPersistentStoreRemoteChangeNotificationPostOptionKey`: with
    /// `NSPersistentHistoryTrackingKey` the history after the last transaction seen is merged (work
    /// in proportion to the change), without it the request is fetched again.
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
    /// > Note: An addition to Apple's API (DEVIATIONS.md). Unsaved changes are not shown.
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
    private var remoteObserver: (any NSObjectProtocol)?
    private var stopped = false
    /// The last history transaction merged, for stores that record history; read on `context`'s queue.
    private var historyToken: NSPersistentHistoryToken?

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
        let remote = NotificationCenter.default.addObserver(
            forName: .NSPersistentStoreRemoteChange, object: coordinator, queue: nil
        ) { [weak self] _ in
            self?.remoteChange()
        }
        lock.lock()
        observer = token
        remoteObserver = remote
        lock.unlock()
        context.perform { [self] in
            historyToken = coordinator.currentPersistentHistoryToken(fromStores: nil)
            let controller = NSFetchedResultsController(
                fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: sectionNameKeyPath,
                cacheName: nil)
            guard fetch(controller) else { return }
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

    /// Fetches; on an error, ends the sequence with it and stops.
    private func fetch(_ controller: NSFetchedResultsController<NSManagedObject>) -> Bool {
        do {
            try controller.performFetch()
            return true
        } catch {
            continuation.finish(throwing: error)
            stop()
            return false
        }
    }

    /// Another coordinator or process changed the store (or a batch request ran): merges the
    /// history since the last transaction seen, or fetches again when the store keeps none.
    private func remoteChange() {
        lock.lock()
        let active = !stopped
        lock.unlock()
        guard active else { return }
        context.perform { [self] in
            guard let controller else { return }
            if historyToken != nil || coordinator.currentPersistentHistoryToken(fromStores: nil) != nil {
                let request = NSPersistentHistoryChangeRequest.fetchHistory(after: historyToken)
                if let result = try? context.execute(request) as? NSPersistentHistoryResult,
                    let transactions = result.result as? [NSPersistentHistoryTransaction]
                {
                    for transaction in transactions {
                        context.mergeChanges(fromContextDidSave: transaction.objectIDNotification())
                        historyToken = transaction.token
                    }
                    return
                }
            }
            let before = sections(of: controller).flatMap(\.objectIDs)
            // Objects read again and the request fetched again: one value for the two, not one
            // for each object the refresh reports.
            controller.delegate = nil
            defer { controller.delegate = self }
            context.refreshAllObjects()
            context.processPendingChanges()
            guard fetch(controller) else { return }
            let after = sections(of: controller)
            let difference = after.flatMap(\.objectIDs).difference(from: before)
            if !difference.isEmpty {
                continuation.yield(FetchedResultsChange(sections: after, difference: difference))
            }
        }
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
        let tokens = [observer, remoteObserver]
        observer = nil
        remoteObserver = nil
        lock.unlock()
        for token in tokens.compactMap({ $0 }) { NotificationCenter.default.removeObserver(token) }
        context.perform { [self] in controller?.delegate = nil }
    }
}
