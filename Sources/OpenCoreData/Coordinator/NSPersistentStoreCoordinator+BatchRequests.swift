import Foundation

/// Running batch requests: checked against the model here, run by the store on its rows
/// (``BatchRequestStore``) inside its write lock, the coordinator's row cache then forgetting the
/// rows changed. Contexts are not told, as on Apple platforms: an app merges the returned IDs.
///
/// Related documentation: NSBatchInsertRequest, NSBatchUpdateRequest, NSBatchDeleteRequest;
/// Core Data Batch Programming Guide.
extension NSPersistentStoreCoordinator {
    /// Runs a batch insert, update or delete request for `requester`.
    ///
    /// - Throws: `NSPersistentStoreUnsupportedRequestTypeError` (134091) when no store holding
    ///   the entity can run batch requests (only the SQLite store can, as on Apple platforms);
    ///   a validation error for a value of the wrong type or a key that is not an attribute; the
    ///   store's error, in which case nothing was changed.
    func executeBatch(_ request: NSPersistentStoreRequest, requester: any StoreRequester) throws
        -> NSPersistentStoreResult
    {
        let result: NSPersistentStoreResult
        switch request {
        case let insert as NSBatchInsertRequest: result = try executeBatchInsert(insert)
        case let update as NSBatchUpdateRequest: result = try executeBatchUpdate(update, requester: requester)
        case let delete as NSBatchDeleteRequest: result = try executeBatchDelete(delete, requester: requester)
        default:
            throw CoreDataError.make(
                NSPersistentStoreUnsupportedRequestTypeError, "Unsupported request type \(request.requestType).")
        }
        // A batch request changes the store behind the contexts' backs: observers of remote
        // changes are told, as on Apple platforms.
        for store in request.affectedStores ?? persistentStores where Self.postsRemoteChanges(store) {
            postOwnRemoteChange(for: store, token: currentPersistentHistoryToken(fromStores: [store]))
        }
        return result
    }

    // MARK: Insert

    private func executeBatchInsert(_ request: NSBatchInsertRequest) throws -> NSBatchInsertResult {
        let entity = try batchEntity(request.entity ?? managedObjectModel.entitiesByName[request.entityName], request)
        request.entity = entity
        guard !entity.isAbstract else {
            throw CoreDataError.make(
                NSPersistentStoreOperationError,
                "Cannot batch insert objects of the abstract entity \(request.entityName).")
        }
        let rows = try batchInsertRows(request, entity: entity)
        let door = try batchStores(holding: entity, request, kind: "insert")[0]
        var ids: [NSManagedObjectID] = []
        requestLock.lock()
        defer { requestLock.unlock() }
        if !rows.isEmpty {
            try door.withWriteLock { ids = try door.batchInsert(entity, rows: rows) }
        }
        // Rows a uniqueness constraint matched were rewritten.
        rowCache.update([:], removing: ids)
        var seen = Set<NSManagedObjectID>()
        let unique = ids.filter { seen.insert($0).inserted }
        let result: Any =
            switch request.resultType {
            case .statusOnly: NSNumber(value: true)
            case .objectIDs: unique
            case .count: NSNumber(value: unique.count)
            }
        return NSBatchInsertResult(result: result, resultType: request.resultType)
    }

    /// The rows a batch insert writes, in the entity's slots: the model's default for every
    /// attribute a dictionary leaves out.
    private func batchInsertRows(_ request: NSBatchInsertRequest, entity: NSEntityDescription) throws
        -> [BatchInsertRow]
    {
        let layout = entity.layout
        var defaults = SlotValues(shape: layout.slotShape)
        for (slot, kind) in layout.kinds.enumerated() where kind == .attribute {
            defaults[slot] = (layout.properties[slot] as? NSAttributeDescription)?.defaultValue
        }
        var rows: [BatchInsertRow] = []
        func add(_ pairs: some Sequence<(key: String, value: Any)>) throws {
            var row = BatchInsertRow(values: defaults, given: [])
            for (key, raw) in pairs {
                guard let slot = layout.slotByName[key], layout.kinds[slot] == .attribute,
                    let attribute = layout.properties[slot] as? NSAttributeDescription
                else {
                    throw CoreDataError.make(
                        NSManagedObjectValidationError,
                        "A batch insert sets \(key), which is not an attribute of \(request.entityName) (batch inserts cannot set relationships).",
                        [NSValidationKeyErrorKey: key])
                }
                let value = DynamicValue.unwrap(raw)
                if let value { try checkType(attribute, value) }
                row.values[slot] = value
                row.given.append(slot)
            }
            rows.append(row)
        }
        if let objects = request.objectsToInsert {
            rows.reserveCapacity(objects.count)
            for dictionary in objects { try add(dictionary.lazy.map { ($0.key, $0.value) }) }
        } else if let handler = request.dictionaryHandler {
            while true {
                let dictionary = NSMutableDictionary()
                if handler(dictionary) { break }
                try add(dictionary.compactMap { key, value in (key as? String).map { ($0, value) } })
            }
        } else if let handler = request.managedObjectHandler {
            let attributes = entity.attributesByName.filter { !$0.value.isTransient }
            // The entity's class, so the handler can cast (`object as! Item`) and set typed
            // properties, as on Apple platforms.
            let objectClass = ManagedObjectClasses.objectClass(for: entity)
            while true {
                let object = objectClass.init(entity: entity, insertInto: nil)
                if handler(object) { break }
                try add(attributes.keys.compactMap { name in object.value(forKey: name).map { (name, $0) } })
            }
        }
        return rows
    }

    private func checkType(_ attribute: NSAttributeDescription, _ value: Any) throws {
        let error = NSManagedObject.typeError(attribute, value) { code, text, _ in
            CoreDataError.make(code, text, [NSValidationKeyErrorKey: attribute.name, NSValidationValueErrorKey: value])
        }
        if let error { throw error }
    }

    // MARK: Update

    private func executeBatchUpdate(_ request: NSBatchUpdateRequest, requester: any StoreRequester) throws
        -> NSBatchUpdateResult
    {
        let entity = try batchEntity(request.entity(in: managedObjectModel), request)
        var changes: [BatchUpdateChange] = []
        for (key, value) in request.propertiesToUpdate ?? [:] {
            let name = (key.base as? String) ?? (key.base as? NSPropertyDescription)?.name ?? ""
            guard let attribute = entity.attributesByName[name], !attribute.isTransient else {
                throw CoreDataError.make(
                    NSManagedObjectValidationError,
                    "A batch update sets \(name), which is not a stored attribute of \(entity.name ?? "").",
                    [NSValidationKeyErrorKey: name])
            }
            if let expression = value as? NSExpression, expression.expressionType != .constantValue {
                changes.append(BatchUpdateChange(attribute: attribute, constant: nil, expression: expression))
                continue
            }
            let constant = DynamicValue.unwrap((value as? NSExpression)?.constantValue ?? value)
            if let constant { try checkType(attribute, constant) }
            changes.append(BatchUpdateChange(attribute: attribute, constant: constant, expression: nil))
        }
        var updated: [NSManagedObjectID] = []
        requestLock.lock()
        defer { requestLock.unlock() }
        for door in try batchStores(holding: entity, request, kind: "update") {
            let fetch = NSFetchRequest<NSFetchRequestResult>()
            fetch.entity = entity
            fetch.predicate = request.predicate
            fetch.includesSubentities = request.includesSubentities
            try door.withWriteLock {
                if !changes.isEmpty, let ids = try door.batchUpdateInOneStatement(fetch, changes: changes) {
                    updated += ids
                    return
                }
                let ids = try matchingIDs(fetch, in: door, requester: requester)
                if !changes.isEmpty, !ids.isEmpty { try door.batchUpdate(ids, changes: changes) }
                updated += ids
            }
        }
        rowCache.update([:], removing: updated)
        let result: Any =
            switch request.resultType {
            case .statusOnlyResultType: NSNumber(value: true)
            case .updatedObjectIDsResultType: updated
            case .updatedObjectsCountResultType: NSNumber(value: updated.count)
            }
        return NSBatchUpdateResult(result: result, resultType: request.resultType)
    }

    // MARK: Delete

    private func executeBatchDelete(_ request: NSBatchDeleteRequest, requester: any StoreRequester) throws
        -> NSBatchDeleteResult
    {
        let fetch = request.fetchRequest
        let entity = try batchEntity(
            fetch.entity ?? fetch.entityName.flatMap { managedObjectModel.entitiesByName[$0] }, request)
        fetch.entity = entity
        if let ids = request.objectIDs, let first = ids.first, ids.contains(where: { $0.entity !== first.entity }) {
            throw CoreDataError.make(
                NSPersistentStoreOperationError,
                "A batch delete's object IDs must all be of one entity; they are of \(Set(ids.compactMap(\.entity.name)).sorted().joined(separator: ", "))."
            )
        }
        var deleted: [NSManagedObjectID] = []
        var changed: [NSManagedObjectID] = []
        requestLock.lock()
        defer { requestLock.unlock() }
        for door in try batchStores(holding: entity, request, kind: "delete") {
            try door.withWriteLock {
                let ids: [NSManagedObjectID]
                if let given = request.objectIDs {
                    ids = given.filter { $0.persistentStore === door.persistentStore && !$0.isTemporaryID }
                } else if fetch.fetchLimit == 0, fetch.fetchOffset == 0,
                    let gone = try door.batchDeleteInOneStatement(fetch)
                {
                    deleted += gone
                    return
                } else {
                    ids = try matchingIDs(fetch, in: door, requester: requester)
                }
                if !ids.isEmpty {
                    let outcome = try door.batchDelete(ids)
                    deleted += outcome.deleted
                    changed += outcome.changed
                }
            }
        }
        rowCache.update([:], removing: deleted + changed)
        let result: Any =
            switch request.resultType {
            case .resultTypeStatusOnly: NSNumber(value: true)
            case .resultTypeObjectIDs: deleted
            case .resultTypeCount: NSNumber(value: deleted.count)
            }
        return NSBatchDeleteResult(result: result, resultType: request.resultType)
    }

    // MARK: Shared

    private func batchEntity(_ entity: NSEntityDescription?, _ request: NSPersistentStoreRequest) throws
        -> NSEntityDescription
    {
        guard let entity, let name = entity.name, managedObjectModel.entitiesByName[name] === entity else {
            throw CoreDataError.make(
                NSPersistentStoreOperationError,
                "The batch request names an entity (\(entity?.name ?? "none")) the coordinator's model does not have.")
        }
        return entity
    }

    /// The stores a batch request on `entity` runs in: those of `affectedStores` (or all) that
    /// hold the entity, each able to run batch requests.
    private func batchStores(holding entity: NSEntityDescription, _ request: NSPersistentStoreRequest, kind: String)
        throws -> [any BatchRequestStore]
    {
        let stores = (request.affectedStores ?? persistentStores).filter { $0.holds(entity) }
        guard !stores.isEmpty else {
            throw CoreDataError.make(
                NSPersistentStoreUnsupportedRequestTypeError,
                "No persistent store holds \(entity.name ?? "the entity") for the batch \(kind).")
        }
        return try stores.map { store in
            guard let door = coordinated(store) as? any BatchRequestStore else {
                throw CoreDataError.make(
                    NSPersistentStoreUnsupportedRequestTypeError,
                    "A store of type \(store.type) cannot run batch \(kind) requests; only the SQLite store can, as on Apple platforms.",
                    [NSAffectedStoresErrorKey: [store]])
            }
            guard !store.isReadOnly else {
                throw CoreDataError.make(
                    NSPersistentStoreSaveError, "Cannot run a batch \(kind) on a read-only store.",
                    [NSAffectedStoresErrorKey: [store]])
            }
            return door
        }
    }

    /// The IDs of the stored rows `fetch` matches in one store, unsaved changes left out.
    private func matchingIDs(
        _ fetch: NSFetchRequest<NSFetchRequestResult>, in door: any BatchRequestStore, requester: any StoreRequester
    ) throws -> [NSManagedObjectID] {
        fetch.resultType = .managedObjectIDResultType
        fetch.includesPendingChanges = false
        fetch.includesPropertyValues = false
        return try requester.storeIDs(matching: fetch, in: door.persistentStore)
    }
}
