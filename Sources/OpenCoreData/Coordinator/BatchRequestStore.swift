import Foundation

/// A store that runs batch requests itself, on its rows, without objects: the SQLite store, as on
/// Apple platforms. The coordinator checks the request against the model, finds the rows a
/// predicate matches (with ``CoordinatedStore/fetch(_:)``, inside the store's write lock) and
/// hands the store values.
package protocol BatchRequestStore: CoordinatedStore {
    /// Inserts one row per element of `rows`; where a uniqueness constraint of `entity` matches a
    /// stored row (or an earlier element), that row takes the element's given values instead.
    /// Returns the ID of each element's row, in order.
    func batchInsert(_ entity: NSEntityDescription, rows: [BatchInsertRow]) throws -> [NSManagedObjectID]
    /// Sets `changes` on the rows of `objectIDs`, incrementing each row's version. A change's
    /// expression is evaluated against the row's stored values by attribute name.
    func batchUpdate(_ objectIDs: [NSManagedObjectID], changes: [BatchUpdateChange]) throws
    /// The whole batch update in one statement, when the store can (constants, a predicate it
    /// says in SQL on one table): the IDs updated; `nil` when it cannot, and nothing was done.
    func batchUpdateInOneStatement(_ fetch: NSFetchRequest<NSFetchRequestResult>, changes: [BatchUpdateChange]) throws
        -> [NSManagedObjectID]?
    /// The whole batch delete in one statement, when no delete rule, external file or history
    /// tombstone needs the rows first: the IDs deleted; `nil` when it cannot, and nothing was done.
    func batchDeleteInOneStatement(_ fetch: NSFetchRequest<NSFetchRequestResult>) throws -> [NSManagedObjectID]?
    /// Deletes the stored rows of `objectIDs`, applying each relationship's delete rule in the
    /// store; returns every ID deleted (the cascade's included) and the IDs of rows whose
    /// relationship to a deleted row was nullified.
    ///
    /// - Throws: `NSValidationRelationshipDeniedDeleteError` (1600) for a deny rule with
    ///   destinations; `NSPersistentStoreSaveError` (134030) when nullifying would empty a
    ///   required to-one.
    func batchDelete(_ objectIDs: [NSManagedObjectID]) throws -> (
        deleted: [NSManagedObjectID], changed: [NSManagedObjectID]
    )
}

/// One object a batch insert writes.
package struct BatchInsertRow {
    /// A value for every slot of the entity's layout: the attributes given, the model's defaults
    /// for the others; relationships empty.
    package var values: SlotValues
    /// The attribute slots the request gave values for.
    package var given: [Int]
}

/// One attribute a batch update sets: a constant, or an expression evaluated for each row.
package struct BatchUpdateChange {
    package let attribute: NSAttributeDescription
    package let constant: Any?
    package let expression: NSExpression?

    /// The value for one row, given its stored values by attribute name.
    package func value(forRow values: [String: Any]) -> Any? {
        guard let expression else { return constant }
        return DynamicValue.unwrap(expression.expressionValue(with: values as NSDictionary, context: nil))
    }
}
