import Foundation

/// Persistent history requests and tokens.
///
/// Related documentation: NSPersistentHistoryChangeRequest, NSPersistentStoreCoordinator
/// `currentPersistentHistoryToken(fromStores:)`; "Consuming Relevant Store Changes".
extension NSPersistentStoreCoordinator {
    /// The token of the latest transaction in the history of `stores` (all stores for `nil`)
    /// that record history; `nil` when none does.
    public func currentPersistentHistoryToken(fromStores stores: [Any]?) -> NSPersistentHistoryToken? {
        let chosen = stores?.compactMap { $0 as? NSPersistentStore } ?? persistentStores
        var numbers: [String: Int64] = [:]
        for store in chosen {
            guard let door = coordinated(store) as? any HistoryStore, door.tracksHistory,
                let number = try? read(door, { try door.lastHistoryNumber() })
            else { continue }
            numbers[store.identifier] = number
        }
        return numbers.isEmpty ? nil : NSPersistentHistoryToken(numbers: numbers)
    }

    /// Runs a history request on the stores that record history.
    ///
    /// - Throws: `NSPersistentStoreUnsupportedRequestTypeError` (134091) when no store records
    ///   history (open the store with `NSPersistentHistoryTrackingKey`);
    ///   `NSPersistentHistoryTokenExpiredError` (134301) for a token past the history kept.
    func executeHistory(_ request: NSPersistentHistoryChangeRequest) throws -> NSPersistentHistoryResult {
        let doors = (request.affectedStores ?? persistentStores).compactMap { store -> (any HistoryStore)? in
            guard let door = coordinated(store) as? any HistoryStore, door.tracksHistory else { return nil }
            return door
        }
        guard !doors.isEmpty else {
            throw CoreDataError.make(
                NSPersistentStoreUnsupportedRequestTypeError,
                "No store records persistent history: add the store with NSPersistentHistoryTrackingKey set to true.")
        }
        if request.deletes {
            var count = 0
            requestLock.lock()
            defer { requestLock.unlock() }
            for door in doors {
                try door.withWriteLock { count += try door.deleteHistory(request.bound) }
            }
            let result: Any = request.resultType == .count ? NSNumber(value: count) : NSNumber(value: true)
            return NSPersistentHistoryResult(result: result, resultType: request.resultType)
        }
        let wantsChanges = request.resultType != .transactionsOnly && request.resultType != .count
        var transactions: [NSPersistentHistoryTransaction] = []
        for door in doors {
            let bound = self.bound(request.bound, for: door.persistentStore)
            let records = try read(door) { try door.historyTransactions(bound, withChanges: wantsChanges) }
            for record in records {
                transactions.append(
                    NSPersistentHistoryTransaction(
                        timestamp: record.timestamp, transactionNumber: record.number,
                        storeID: door.persistentStore.identifier, bundleID: record.bundleID,
                        processID: record.processID, contextName: record.contextName, author: record.author,
                        changes: wantsChanges
                            ? record.changes.map {
                                NSPersistentHistoryChange(
                                    changeID: $0.id, changedObjectID: $0.objectID, changeType: $0.type,
                                    tombstone: $0.tombstone, updatedProperties: $0.updatedProperties,
                                    oldValues: $0.oldValues)
                            } : nil))
            }
        }
        transactions = filtered(transactions, by: request.fetchRequest)
        let changes = transactions.flatMap { $0.changes ?? [] }
        let result: Any =
            switch request.resultType {
            case .statusOnly: NSNumber(value: true)
            case .objectIDs: changes.map(\.changedObjectID)
            case .count: NSNumber(value: transactions.count)
            case .transactionsOnly, .transactionsAndChanges: transactions
            case .changesOnly: changes
            }
        return NSPersistentHistoryResult(result: result, resultType: request.resultType)
    }

    /// A token's bound as it applies to one store: its number for that store.
    private func bound(_ bound: NSPersistentHistoryChangeRequest.Bound, for store: NSPersistentStore)
        -> NSPersistentHistoryChangeRequest.Bound
    {
        switch bound {
        case .afterToken(let token?) where token.numbers[store.identifier] == nil: .afterToken(nil)
        default: bound
        }
    }

    /// The transactions (or, for a request on the change entity, the changes within them) the
    /// fetch request's predicate accepts, in its sort order and window.
    private func filtered(
        _ transactions: [NSPersistentHistoryTransaction], by fetch: NSFetchRequest<NSFetchRequestResult>?
    ) -> [NSPersistentHistoryTransaction] {
        guard let fetch else { return transactions }
        var kept = transactions
        if fetch.entity?.name == "Change" {
            if let predicate = fetch.predicate {
                for transaction in kept {
                    transaction.changes = transaction.changes?.filter { predicate.evaluate(with: $0) }
                }
                kept = kept.filter { !($0.changes ?? []).isEmpty }
            }
            return kept
        }
        if let predicate = fetch.predicate { kept = kept.filter { predicate.evaluate(with: $0) } }
        if let descriptors = fetch.sortDescriptors, !descriptors.isEmpty { kept = kept.sorted(using: descriptors) }
        if fetch.fetchOffset > 0 { kept = Array(kept.dropFirst(fetch.fetchOffset)) }
        if fetch.fetchLimit > 0 { kept = Array(kept.prefix(fetch.fetchLimit)) }
        return kept
    }
}
