import OpenCoreData
import OpenCoreDataSQL

/// Batch requests on the SQLite store: each runs in one write transaction on rows, never on
/// objects, as Apple's SQLite store runs them.
///
/// Related documentation: NSBatchInsertRequest, NSBatchUpdateRequest, NSBatchDeleteRequest; Core
/// Data Batch Programming Guide ("Batch updates run faster than processing the Core Data entities
/// yourself in code because they operate in the persistent store itself, at the SQL level").
extension SQLiteStore: BatchRequestStore {
    // MARK: Insert

    /// The values of one uniqueness constraint of one element, as they are stored.
    private struct ConstraintKey: Hashable {
        let constraint: Int
        let columns: [String]
    }

    /// One name of a uniqueness constraint as the store keeps it: the slot of the attribute, or of
    /// the composite that holds the named leaf, the leaf's path inside it (empty for an
    /// attribute), and the column.
    private struct ConstraintPart {
        let slot: Int
        let path: [String]
        let column: String
        let type: NSAttributeType
        let attribute: NSAttributeDescription?

        /// The element's value for this part, as the column holds it.
        func column(of row: BatchInsertRow) -> SQLValue {
            let value =
                path.isEmpty
                ? row.values[slot] : NSCompositeAttributeDescription.leafValue(row.values[slot], path: path)
            return SQLValues.column(value, type: type, attribute: attribute)
        }
    }

    /// The part of a constraint that `name` (an attribute, or a composite's leaf as
    /// `composite.leaf`) names, or `nil` when the entity keeps no such column.
    private func constraintPart(_ name: String, _ entity: NSEntityDescription) -> ConstraintPart? {
        let layout = entity.layout
        let path = name.split(separator: ".").map(String.init)
        guard let root = path.first, let slot = layout.slotByName[root] else { return nil }
        switch schema[entity].storage[slot] {
        case .attribute(let column, let type) where path.count == 1:
            return ConstraintPart(
                slot: slot, path: [], column: column, type: type,
                attribute: layout.properties[slot] as? NSAttributeDescription)
        case .composite(let columns):
            let leafPath = Array(path.dropFirst())
            guard let leaf = columns.first(where: { $0.path == leafPath }) else { return nil }
            return ConstraintPart(
                slot: slot, path: leaf.path, column: leaf.column, type: leaf.type, attribute: leaf.attribute)
        default:
            return nil
        }
    }

    package func batchInsert(_ entity: NSEntityDescription, rows: [BatchInsertRow]) throws -> [NSManagedObjectID] {
        let layout = entity.layout
        // A constraint may name a composite's leaf: its value is read inside the composite's
        // dictionary and matched against the leaf's column, as the context's check reads it.
        let constraints = UniquenessConstraint.all(of: entity).compactMap { constraint in
            let parts = constraint.names.compactMap { constraintPart($0, entity) }
            return parts.count == constraint.names.count ? (constraint: constraint, parts: parts) : nil
        }
        var ids: [NSManagedObjectID] = []
        ids.reserveCapacity(rows.count)
        try transaction {
            let fresh = try permanentIDs(for: Array(repeating: entity, count: rows.count))
            var transaction = StoreTransaction()
            transaction.inserted.reserveCapacity(rows.count)
            var claimed: [ConstraintKey: NSManagedObjectID] = [:]
            var inserted: [NSManagedObjectID: Int] = [:]
            var updated: [NSManagedObjectID: Int] = [:]
            for (index, row) in rows.enumerated() {
                var keys: [ConstraintKey] = []
                var target: NSManagedObjectID?
                for (number, constraint) in constraints.enumerated() {
                    let columns = constraint.parts.map { $0.column(of: row) }
                    guard !columns.contains(.null) else { continue }  // no value: nothing to match
                    let key = ConstraintKey(constraint: number, columns: columns.map { "\($0)" })
                    keys.append(key)
                    if target == nil { target = claimed[key] }
                    if target == nil {
                        target = try storedRow(constraint.constraint, constraint.parts.map(\.column), columns)
                    }
                }
                guard let target else {
                    let id = fresh[index]
                    inserted[id] = transaction.inserted.count
                    transaction.inserted.append(
                        StoreTransaction.Row(
                            objectID: id, snapshot: Snapshot(values: row.values, version: 1), modifiedSlots: nil))
                    for key in keys { claimed[key] = id }
                    ids.append(id)
                    continue
                }
                // The object the element matches takes the values the element gives.
                if let position = inserted[target] {
                    transaction.inserted[position] = merging(row, layout, into: transaction.inserted[position])
                } else if let position = updated[target] {
                    transaction.updated[position] = merging(row, layout, into: transaction.updated[position])
                } else {
                    let stored = try read(target, generation: nil, cachedRow: { _ in nil }).snapshot
                    let base = StoreTransaction.Row(
                        objectID: target, snapshot: Snapshot(values: stored.values, version: stored.version + 1),
                        modifiedSlots: SlotSet())
                    updated[target] = transaction.updated.count
                    transaction.updated.append(merging(row, layout, into: base))
                }
                for key in keys { claimed[key] = target }
                ids.append(target)
            }
            try save(transaction)
        }
        return ids
    }

    /// `row` with the element's given values set, by attribute name (the row may be of a
    /// sub-entity of the element's).
    private func merging(_ element: BatchInsertRow, _ layout: EntityLayout, into row: StoreTransaction.Row)
        -> StoreTransaction.Row
    {
        var values = row.snapshot.values
        var modified = row.modifiedSlots
        let target = row.entity.layout
        for slot in element.given {
            guard let targetSlot = target.slotByName[layout.properties[slot].name] else { continue }
            values[targetSlot] = element.values[slot]
            modified?.insert(targetSlot)
        }
        return StoreTransaction.Row(
            objectID: row.objectID, snapshot: Snapshot(values: values, version: row.snapshot.version),
            modifiedSlots: modified)
    }

    /// The stored row of the constraint's entity (or a sub-entity) whose constrained columns
    /// (`names`, one table holds the whole hierarchy) hold `columns`, if there is one.
    private func storedRow(_ constraint: UniquenessConstraint, _ names: [String], _ columns: [SQLValue]) throws
        -> NSManagedObjectID?
    {
        let mapping = schema[constraint.entity]
        var filter: [SQLExpression] = [
            .inList(.column("t0", "Z_ENT"), mapping.numbers.map { _ in .slot })
        ]
        filter += names.map { .compare(.column("t0", $0), .equal, .slot) }
        let select = SQLSelect(
            columns: [.column("t0", "Z_PK"), .column("t0", "Z_ENT")], from: .table(mapping.table.name, alias: "t0"),
            filter: .and(filter))
        let rows = try connection.rows(.select(select), mapping.numbers.map { .integer($0) } + columns)
        guard let row = rows.first, case .integer(let pk) = row[0], case .integer(let number) = row[1],
            let entity = schema.entitiesByNumber[number]?.entity
        else { return nil }
        return objectID(entity, pk)
    }

    // MARK: Update

    package func batchUpdate(_ objectIDs: [NSManagedObjectID], changes: [BatchUpdateChange]) throws {
        var byEntity: [ObjectIdentifier: (entity: NSEntityDescription, keys: [Int64])] = [:]
        for id in objectIDs {
            guard let pk = id.sqlKey else { continue }
            byEntity[ObjectIdentifier(id.entity), default: (id.entity, [])].keys.append(pk)
        }
        try transaction {
            for (entity, keys) in byEntity.values {
                let mapping = schema[entity]
                let layout = entity.layout
                var assignments: [SQLAssignment] = []
                var values: [SQLValue] = []
                // Old values (an opt-in addition) need each row read first: row by row then.
                var inPlace = !recordsOldValues
                for change in changes {
                    guard let slot = layout.slotByName[change.attribute.name],
                        case .attribute(let column, let type) = mapping.storage[slot],
                        change.expression == nil,
                        !(type == .binaryDataAttributeType && change.attribute.allowsExternalBinaryDataStorage)
                    else {
                        inPlace = false
                        break
                    }
                    assignments.append(SQLAssignment(column, .slot))
                    values.append(SQLValues.column(change.constant, type: type, attribute: change.attribute))
                }
                if inPlace {
                    try updateInPlace(mapping.table.name, assignments, values, keys: keys)
                    var slots = SlotSet()
                    for change in changes { layout.slotByName[change.attribute.name].map { slots.insert($0) } }
                    try recordHistory(
                        keys.map { HistoryChange(objectID: objectID(entity, $0), type: .update, slots: slots) },
                        author: nil, contextName: nil, timestamp: Date())
                } else {
                    try updateByRow(entity, keys: keys, changes: changes)
                }
            }
        }
    }

    /// Constants set by `UPDATE … SET …, Z_OPT = Z_OPT + 1 WHERE Z_PK IN (…)`, a list of keys at a time.
    private func updateInPlace(_ table: String, _ assignments: [SQLAssignment], _ values: [SQLValue], keys: [Int64])
        throws
    {
        let version = SQLAssignment("Z_OPT", .plus(.column(table: nil, name: "Z_OPT"), .integer(1)))
        var start = 0
        while start < keys.count {
            let chunk = keys[start..<min(keys.count, start + Self.listSizes.last!)]
            let size = Self.listSizes.first { $0 >= chunk.count } ?? chunk.count
            let statement = SQLStatement.update(
                table: table, set: assignments + [version],
                filter: .inList(.column(table: nil, name: "Z_PK"), Array(repeating: .slot, count: size)))
            // Padded with the last key again: the statement cache keeps a few list lengths.
            let padded = Array(chunk) + Array(repeating: chunk.last!, count: size - chunk.count)
            try connection.run(statement, values + padded.map { .integer($0) })
            start += chunk.count
        }
    }

    /// Expressions (and externally stored data): each row read, its new values computed from its
    /// stored ones, and written as a save writes an update.
    private func updateByRow(_ entity: NSEntityDescription, keys: [Int64], changes: [BatchUpdateChange]) throws {
        let layout = entity.layout
        var transaction = StoreTransaction()
        for pk in keys {
            let id = objectID(entity, pk)
            guard let stored = try? read(id, generation: nil, cachedRow: { _ in nil }).snapshot else { continue }
            var named: [String: Any] = [:]
            for (slot, kind) in layout.kinds.enumerated() where kind == .attribute {
                if let value = stored.values[slot] { named[layout.properties[slot].name] = value }
            }
            var values = stored.values
            var modified = SlotSet()
            for change in changes {
                guard let slot = layout.slotByName[change.attribute.name] else { continue }
                values[slot] = change.value(forRow: named)
                modified.insert(slot)
            }
            transaction.updated.append(
                StoreTransaction.Row(
                    objectID: id, snapshot: Snapshot(values: values, version: stored.version + 1),
                    modifiedSlots: modified))
        }
        try save(transaction)
    }

    // MARK: One statement

    package func batchUpdateInOneStatement(
        _ fetch: NSFetchRequest<NSFetchRequestResult>, changes: [BatchUpdateChange]
    ) throws -> [NSManagedObjectID]? {
        // Old values need each row read first.
        guard !recordsOldValues, let entity = fetch.entity else { return nil }
        let mapping = schema[entity]
        var assignments: [SQLAssignment] = []
        for change in changes {
            guard change.expression == nil, let slot = entity.layout.slotByName[change.attribute.name],
                case .attribute(let column, let type) = mapping.storage[slot],
                !(type == .binaryDataAttributeType && change.attribute.allowsExternalBinaryDataStorage)
            else { return nil }
            let value = SQLValues.column(change.constant, type: type, attribute: change.attribute)
            assignments.append(SQLAssignment(column, .parameter(value)))
        }
        assignments.append(SQLAssignment("Z_OPT", .plus(.column(table: nil, name: "Z_OPT"), .integer(1))))
        guard
            let statement = try oneStatement(
                fetch, mapping: mapping,
                make: { filter in
                    .updateReturning(
                        table: mapping.table.name, alias: "t0", set: assignments, filter: filter,
                        returning: [.column(table: nil, name: "Z_PK"), .column(table: nil, name: "Z_ENT")])
                })
        else { return nil }
        var ids: [NSManagedObjectID] = []
        try transaction {
            ids = try keys(returnedBy: statement, fallback: entity)
            guard tracksHistory else { return }
            try recordHistory(
                ids.map { id in
                    var slots = SlotSet()
                    for change in changes {
                        id.entity.layout.slotByName[change.attribute.name].map { slots.insert($0) }
                    }
                    return HistoryChange(objectID: id, type: .update, slots: slots)
                }, author: nil, contextName: nil, timestamp: Date())
        }
        return ids
    }

    package func batchDeleteInOneStatement(_ fetch: NSFetchRequest<NSFetchRequestResult>) throws -> [NSManagedObjectID]?
    {
        guard let entity = fetch.entity else { return nil }
        var entities = [entity]
        if fetch.includesSubentities {
            var index = 0
            while index < entities.count {
                entities += entities[index].subentities
                index += 1
            }
        }
        // Rows a delete rule, an external file or a history tombstone needs first go row by row.
        for candidate in entities {
            guard candidate.relationshipsByName.isEmpty else { return nil }
            for attribute in candidate.attributesByName.values {
                if attribute.attributeType == .binaryDataAttributeType && attribute.allowsExternalBinaryDataStorage {
                    return nil
                }
                if tracksHistory && attribute.preservesValueInHistoryOnDeletion { return nil }
            }
        }
        guard !recordsOldValues else { return nil }
        let mapping = schema[entity]
        guard
            let statement = try oneStatement(
                fetch, mapping: mapping,
                make: { filter in
                    .deleteReturning(
                        table: mapping.table.name, alias: "t0", filter: filter,
                        returning: [.column(table: nil, name: "Z_PK"), .column(table: nil, name: "Z_ENT")])
                })
        else { return nil }
        var ids: [NSManagedObjectID] = []
        try transaction {
            ids = try keys(returnedBy: statement, fallback: entity)
            try recordHistory(
                ids.map { HistoryChange(objectID: $0, type: .delete) }, author: nil, contextName: nil, timestamp: Date()
            )
        }
        if !ids.isEmpty { releaseFreePages() }
        return ids
    }

    /// The statement `make` builds on the fetch's filter, when the whole predicate is SQL on the
    /// one table (no join).
    private func oneStatement(
        _ fetch: NSFetchRequest<NSFetchRequestResult>, mapping: SQLSchema.Entity,
        make: (SQLExpression?) -> SQLStatement
    ) throws -> SQLStatement? {
        let query = SQLQuery(schema: schema, mapping: mapping, request: fetch, dialect: SQLiteDialect())
        guard query.predicateInSQL, !query.joinsTables else { return nil }
        return make(query.rowFilter)
    }

    /// Runs `statement` and answers the IDs its `RETURNING Z_PK, Z_ENT` gives.
    private func keys(returnedBy statement: SQLStatement, fallback: NSEntityDescription) throws -> [NSManagedObjectID] {
        let (sql, parameters) = SQLWriter.write(statement, dialect: SQLiteDialect())
        return try connection.rows(sql, parameters).compactMap { row in
            guard case .integer(let pk) = row[0] else { return nil }
            var entity = fallback
            if case .integer(let number) = row[1], let exact = schema.entitiesByNumber[number]?.entity {
                entity = exact
            }
            return objectID(entity, pk)
        }
    }

    // MARK: Delete

    package func batchDelete(_ objectIDs: [NSManagedObjectID]) throws -> (
        deleted: [NSManagedObjectID], changed: [NSManagedObjectID]
    ) {
        var deleted: [NSManagedObjectID] = []
        var changed: [NSManagedObjectID] = []
        let files = ExternalDataChanges()
        try transaction {
            // Only rows still stored; then the cascade, breadth first.
            let present = try currentVersions(of: objectIDs)
            var queue = zip(objectIDs, present).compactMap { id, version in version == nil ? nil : id }
            var seen = Set(queue)
            var nullify:
                [(relationship: NSRelationshipDescription, id: NSManagedObjectID, destinations: [NSManagedObjectID])] =
                    []
            var index = 0
            while index < queue.count {
                let id = queue[index]
                index += 1
                for relationship in id.entity.relationshipsByName.values where !relationship.isTransient {
                    guard relationship.deleteRule != .noActionDeleteRule else { continue }
                    let destinations = try destinationIDs(relationship, of: id)
                    if destinations.isEmpty { continue }
                    switch relationship.deleteRule {
                    case .cascadeDeleteRule:
                        for destination in destinations where seen.insert(destination).inserted {
                            queue.append(destination)
                        }
                    case .denyDeleteRule:
                        throw CoreDataError.make(
                            NSValidationRelationshipDeniedDeleteError,
                            "Cannot batch delete \(id): its relationship \(relationship.name) denies deleting it while it has destinations.",
                            [NSValidationKeyErrorKey: relationship.name, NSAffectedObjectsErrorKey: [id]])
                    default:
                        nullify.append((relationship, id, destinations))
                    }
                }
            }
            // Nullify: a destination's to-one back to a deleted row is cleared (join rows go with
            // the deleted row); a required one that would be emptied fails the request.
            for (relationship, id, destinations) in nullify {
                guard let inverse = relationship.inverseRelationship, !inverse.isToMany else { continue }
                let remaining = destinations.filter { !seen.contains($0) }
                if remaining.isEmpty { continue }
                guard inverse.isOptional else {
                    throw CoreDataError.make(
                        NSPersistentStoreSaveError,
                        "Batch delete failed due to mandatory OTO nullify inverse on \(inverse.entity?.name ?? "")/\(inverse.name).",
                        [NSAffectedObjectsErrorKey: [id]])
                }
                try clearToOne(inverse, pointingAt: id, in: remaining)
                changed += remaining
            }
            var history: [HistoryChange] = []
            if tracksHistory {
                for id in queue {
                    history.append(
                        HistoryChange(
                            objectID: id, type: .delete, tombstone: tombstone(of: id),
                            oldValues: oldValues(of: id, slots: nil)))
                }
            }
            for id in queue { try deleteRow(id, files: files) }
            for (relationship, _, destinations) in nullify {
                guard let inverse = relationship.inverseRelationship else { continue }
                for destination in destinations where changed.contains(destination) {
                    var slots = SlotSet()
                    destination.entity.layout.slotByName[inverse.name].map { slots.insert($0) }
                    history.append(HistoryChange(objectID: destination, type: .update, slots: slots))
                }
            }
            try recordHistory(history, author: nil, contextName: nil, timestamp: Date())
            deleted = queue
        }
        for file in files.unreferenced { try? FileManager.default.removeItem(at: file) }
        if !deleted.isEmpty { releaseFreePages() }
        return (deleted, changed)
    }

    /// The stored destinations of one row's relationship.
    private func destinationIDs(_ relationship: NSRelationshipDescription, of id: NSManagedObjectID) throws
        -> [NSManagedObjectID]
    {
        let value = try destinationOnConnection(of: relationship, for: id, cachedRow: { _ in nil })
        if let destination = value as? NSManagedObjectID { return [destination] }
        return (value as? [NSManagedObjectID]) ?? []
    }

    /// Clears `inverse` (a to-one stored as a column of the destinations' table) in the rows of
    /// `destinations` where it points at `id`, incrementing their versions.
    private func clearToOne(
        _ inverse: NSRelationshipDescription, pointingAt id: NSManagedObjectID, in destinations: [NSManagedObjectID]
    ) throws {
        guard let pk = id.sqlKey else { return }
        for destination in destinations {
            let mapping = schema[destination.entity]
            guard let slot = destination.entity.layout.slotByName[inverse.name],
                case .toOne(let column, let entityColumn) = mapping.storage[slot],
                let key = destination.sqlKey
            else { continue }
            var assignments = [SQLAssignment(column, .slot)]
            if let entityColumn { assignments.append(SQLAssignment(entityColumn, .slot)) }
            if let order = mapping.orderColumns[slot] { assignments.append(SQLAssignment(order, .slot)) }
            let nulls = [SQLValue](repeating: .null, count: assignments.count)
            assignments.append(SQLAssignment("Z_OPT", .plus(.column(table: nil, name: "Z_OPT"), .integer(1))))
            try connection.run(
                .update(
                    table: mapping.table.name, set: assignments,
                    filter: .and([
                        .compare(.column(table: nil, name: "Z_PK"), .equal, .slot),
                        .compare(.column(table: nil, name: column), .equal, .slot),
                    ])), nulls + [.integer(key), .integer(pk)])
        }
    }
}
