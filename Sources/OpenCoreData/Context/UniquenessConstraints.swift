/// Uniqueness constraints: before a save writes, the constrained values of every inserted or
/// changed object are checked against the other objects being saved (a context-level conflict)
/// and against the rows already in the store (a database-level conflict). Conflicts become
/// ``NSConstraintConflict``s for the context's merge policy. The context finds them, as the
/// conflicts are between its objects and the database conflict's object is its own.
///
/// Related documentation: NSConstraintConflict and NSMergePolicy references,
/// `resolve(constraintConflicts:)`; NSEntityDescription reference, `uniquenessConstraints`.
extension NSManagedObjectContext {
    /// The constraint conflicts of a save whose objects already have permanent IDs. A tuple with
    /// a missing value never conflicts (as SQL `UNIQUE` treats `NULL`).
    ///
    /// - Throws: the store's error when a stored row cannot be looked for or read.
    func constraintConflicts(
        inserted: Set<NSManagedObject>, updated: Set<NSManagedObject>, deleted: Set<NSManagedObject>,
        in coordinator: NSPersistentStoreCoordinator
    ) throws -> [NSConstraintConflict] {
        guard coordinator.managedObjectModel.entities.contains(where: { !$0.uniquenessConstraints.isEmpty }) else {
            return []
        }
        var groups: [ConstraintKey: [ConstrainedObject]] = [:]
        var order: [ConstraintKey] = []
        for object in inserted.union(updated) {
            for constraint in UniquenessConstraint.all(of: object.entity) {
                guard let values = constraint.values(of: object) else { continue }
                let key = ConstraintKey(constraint: constraint, values: values)
                let changed =
                    object.isInsertedFlag || constraint.slots(in: object).contains { object.changedSlots.contains($0) }
                if groups[key] == nil { order.append(key) }
                groups[key, default: []].append(ConstrainedObject(object: object, values: values, changed: changed))
            }
        }
        // Rows whose objects are being saved or deleted are judged by their in-memory state.
        var saving = Set<NSManagedObjectID>()
        for object in inserted.union(updated).union(deleted) { saving.insert(object.objectID) }
        var conflicts: [NSConstraintConflict] = []
        for key in order {
            // Hash keys only bucket: members are split again by Core Data's value equality.
            for members in ConstrainedObject.partition(groups[key] ?? []) where members.contains(where: \.changed) {
                let objects = members.map(\.object).sorted(by: ConstrainedObject.saveOrder)
                if let row = try storedRow(
                    matching: key.constraint, values: members[0].values, for: objects[0], excluding: saving,
                    in: coordinator)
                {
                    conflicts.append(try databaseConflict(key.constraint, row: row, objects: objects, in: coordinator))
                } else if objects.count > 1 {
                    conflicts.append(
                        NSConstraintConflict(
                            constraint: key.constraint.names, database: nil, databaseSnapshot: nil,
                            conflicting: objects, conflictingSnapshots: objects.map(\.constraintSnapshot)))
                }
            }
        }
        return conflicts
    }

    /// The ID of a stored row of the constraint's entity (or a sub-entity) holding `values`,
    /// other than rows being saved.
    private func storedRow(
        matching constraint: UniquenessConstraint, values: [Any], for object: NSManagedObject,
        excluding saving: Set<NSManagedObjectID>, in coordinator: NSPersistentStoreCoordinator
    ) throws -> NSManagedObjectID? {
        guard let store = object.objectID.persistentStore, store.holds(constraint.entity),
            coordinator.coordinated(store) != nil
        else { return nil }
        let request = NSFetchRequest<NSFetchRequestResult>()
        request.entity = constraint.entity
        request.resultType = .managedObjectIDResultType
        request.includesPendingChanges = false
        request.affectedStores = [store]
        request.predicate = NSCompoundPredicate(
            andPredicateWithSubpredicates: zip(constraint.names, values).map { name, value in
                NSComparisonPredicate(
                    leftExpression: NSExpression(forKeyPath: name),
                    rightExpression: NSExpression(forConstantValue: value),
                    modifier: .direct, type: .equalTo, options: [])
            })
        return try storeIDs(matching: request, in: store).first { !saving.contains($0) }
    }

    /// A conflict with a stored row: its object in this context, read afresh, and the row's values.
    private func databaseConflict(
        _ constraint: UniquenessConstraint, row: NSManagedObjectID, objects: [NSManagedObject],
        in coordinator: NSPersistentStoreCoordinator
    ) throws -> NSConstraintConflict {
        let database = object(with: row)
        // The row was just read under the write lock; an unchanged object takes its values.
        if !database.isFaultFlag, !database.hasChanges { refresh(database, mergeChanges: false) }
        let snapshot = try coordinator.snapshot(for: row, requester: self).dictionary(layout: row.entity.layout)
        return NSConstraintConflict(
            constraint: constraint.names, database: database, databaseSnapshot: snapshot, conflicting: objects,
            conflictingSnapshots: objects.map(\.constraintSnapshot))
    }
}

/// One uniqueness constraint: the entity that declares it (its sub-entities inherit it) and the
/// attribute names whose values together must be unique.
package struct UniquenessConstraint: Hashable {
    /// The entity declaring the constraint: it holds among that entity's objects and its sub-entities'.
    package let entity: NSEntityDescription
    package let names: [String]

    /// The constraints `entity` declares and inherits, each over attributes only — a composite's
    /// leaf named by its namespaced key path (`magnitude.richter`) included.
    package static func all(of entity: NSEntityDescription) -> [UniquenessConstraint] {
        var result: [UniquenessConstraint] = []
        var current: NSEntityDescription? = entity
        while let declaring = current {
            for tuple in declaring.uniquenessConstraints {
                let names = tuple.compactMap { ($0 as? String) ?? ($0 as? NSPropertyDescription)?.name }
                guard !names.isEmpty, names.count == tuple.count,
                    names.allSatisfy({ Self.isAttribute($0, of: declaring) })
                else { continue }
                result.append(UniquenessConstraint(entity: declaring, names: names))
            }
            current = declaring.superentity
        }
        return result
    }

    /// Whether `name` is an attribute of `entity`, or the key path of a leaf of one of its
    /// composite attributes.
    private static func isAttribute(_ name: String, of entity: NSEntityDescription) -> Bool {
        let path = name.split(separator: ".").map(String.init)
        guard let first = path.first, let attribute = entity.attributesByName[first] else { return false }
        if path.count == 1 { return true }
        let rest = Array(path.dropFirst())
        return (attribute as? NSCompositeAttributeDescription)?.leaves.contains { $0.path == rest } == true
    }

    /// The object's slots of the constrained attributes (a composite leaf's: its composite's).
    func slots(in object: NSManagedObject) -> [Int] {
        names.compactMap { name in
            object.layout.slotByName[name.firstIndex(of: ".").map { String(name[..<$0]) } ?? name]
        }
    }

    /// The object's constrained values; `nil` when one is missing.
    func values(of object: NSManagedObject) -> [Any]? {
        var values: [Any] = []
        for (name, slot) in zip(names, slots(in: object)) {
            var value = DynamicValue.unwrap(object.values[slot])
            if name.contains(".") {
                let path = name.split(separator: ".").dropFirst().map(String.init)
                value = NSCompositeAttributeDescription.leafValue(value, path: path)
            }
            guard let value else { return nil }
            values.append(value)
        }
        return values.count == names.count ? values : nil
    }

    package static func == (lhs: Self, rhs: Self) -> Bool { lhs.entity === rhs.entity && lhs.names == rhs.names }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(entity))
        hasher.combine(names)
    }
}

/// A constraint with values, bucketed by a hash of the values (numbers by value, strings,
/// dates by time); members of a bucket are confirmed equal before they conflict.
struct ConstraintKey: Hashable {
    let constraint: UniquenessConstraint
    let valueHash: [String]

    init(constraint: UniquenessConstraint, values: [Any]) {
        self.constraint = constraint
        valueHash = values.map { value in
            if let string = value as? String { return "s" + string }
            if let number = DynamicValue.number(value) { return "n\(number.doubleValue)" }
            if let date = DynamicValue.date(value) { return "d\(date.timeIntervalSinceReferenceDate)" }
            return "x" + String(describing: value)
        }
    }
}

/// An object being saved with its constrained values.
struct ConstrainedObject {
    let object: NSManagedObject
    let values: [Any]
    /// Whether the object is inserted or changed a constrained value.
    let changed: Bool

    /// The bucket split into runs of equal values.
    static func partition(_ bucket: [ConstrainedObject]) -> [[ConstrainedObject]] {
        var runs: [[ConstrainedObject]] = []
        for member in bucket {
            if let index = runs.firstIndex(where: { run in
                zip(run[0].values, member.values).allSatisfy { DynamicValue.equal($0, $1) }
            }) {
                runs[index].append(member)
            } else {
                runs.append([member])
            }
        }
        return runs
    }

    /// Saved objects before inserted ones, then by primary key: the order a policy meets them in.
    static func saveOrder(_ lhs: NSManagedObject, _ rhs: NSManagedObject) -> Bool {
        if lhs.isInsertedFlag != rhs.isInsertedFlag { return !lhs.isInsertedFlag }
        let left = lhs.objectID.uriRepresentation().absoluteString
        let right = rhs.objectID.uriRepresentation().absoluteString
        if left.count != right.count { return left.count < right.count }
        return left < right
    }
}

extension NSManagedObject {
    /// The object's values as last saved, for `conflictingSnapshots` (empty when never saved).
    fileprivate var constraintSnapshot: [AnyHashable: Any] {
        committed?.dictionary(layout: layout) ?? [:]
    }
}

extension NSConstraintConflict {
    /// Resolves the conflict as a policy of type `type` does. With a stored row:
    ///
    /// * merge by property, object trump — the stored object stays and takes every value the
    ///   conflicting objects set (an upsert); they leave the save;
    /// * merge by property, store trump — the stored object stays and keeps its values, taking
    ///   only values it lacks; the conflicting objects leave the save;
    /// * overwrite — the stored object is deleted (its delete rules run) and the last
    ///   conflicting object is saved in its place;
    /// * rollback — the conflicting objects leave the save; the stored row is untouched.
    ///
    /// Between objects of one save (no stored row) the first saved-before or first inserted object
    /// stays, merged as above; overwrite keeps the last one as it is.
    ///
    /// An inserted object leaves the save by being deleted (after handing its relationships to the
    /// survivor when values are merged); a changed object leaves it by losing its changes.
    func resolve(as type: NSMergePolicyType, in context: NSManagedObjectContext) {
        var members = conflictingObjects
        let survivor: NSManagedObject
        if let databaseObject {
            survivor = databaseObject
        } else {
            guard !members.isEmpty else { return }
            survivor = type == .overwriteMergePolicyType ? members.removeLast() : members.removeFirst()
        }
        switch type {
        case .errorMergePolicyType:
            return
        case .mergeByPropertyObjectTrumpMergePolicyType, .mergeByPropertyStoreTrumpMergePolicyType:
            let objectWins = type == .mergeByPropertyObjectTrumpMergePolicyType
            for member in members {
                Self.merge(member, into: survivor, objectWins: objectWins)
                Self.leaveSave(member, context: context)
            }
        case .overwriteMergePolicyType:
            // The last conflicting object is saved as it is; a stored row it collides with goes.
            if databaseObject != nil, !members.isEmpty {
                members.removeLast()
                context.delete(survivor)
            }
            for member in members { Self.leaveSave(member, context: context) }
        case .rollbackMergePolicyType:
            for member in members { Self.leaveSave(member, context: context) }
        }
    }

    /// Copies the persistent values `source` set onto `target`: every one when `objectWins`,
    /// else only where `target` has no value. To-many members are added, not replaced.
    private static func merge(_ source: NSManagedObject, into target: NSManagedObject, objectWins: Bool) {
        source.realize()
        target.realize()
        let layout = source.layout
        for slot in source.changedSlots.sorted() where layout.isPersistent(slot) {
            let name = layout.properties[slot].name
            guard let targetSlot = target.layout.slotByName[name], target.layout.kinds[targetSlot] == layout.kinds[slot]
            else { continue }
            switch layout.kinds[slot] {
            case .attribute, .toOne:
                if objectWins || DynamicValue.unwrap(target.value(forKey: name)) == nil {
                    target.setValue(source.value(forKey: name), forKey: name)
                }
            case .toMany(let ordered):
                let members = source.toManyOrOne(slot: slot)
                if ordered {
                    target.mutableOrderedSetValue(forKey: name).addObjects(from: members)
                } else {
                    target.mutableSetValue(forKey: name).addObjects(from: members)
                }
            case .fetched:
                continue
            }
        }
    }

    /// Takes `object` out of the save: an inserted object is deleted, a changed one loses its changes.
    private static func leaveSave(_ object: NSManagedObject, context: NSManagedObjectContext) {
        if object.isInsertedFlag {
            context.delete(object)
        } else {
            context.refresh(object, mergeChanges: false)
        }
    }
}
