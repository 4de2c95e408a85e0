import OpenCoreData

/// How one entity's rows are written and read in an SQL store: the insert and update statements
/// with where each of their values comes from, and where each column stands in a row read with
/// ``SQLSchema/rowColumns(_:alias:)``. Made once per entity (``SQLRowPlans``).
///
/// Derived attributes (`NSDerivedAttributeDescription`) are the store's to compute: an insert
/// writes the value the object holds (nil until the store derived one), and an update never
/// writes it, so a value the store derived is not overwritten by the one the object read before.
package final class SQLRowPlan {
    /// Where one value of an insert or update comes from.
    package enum Write {
        /// An attribute's value, converted to its column.
        case attribute(slot: Int, type: NSAttributeType, NSAttributeDescription?)
        /// A binary attribute allowing external storage, in a store that keeps such values in
        /// files (``SQLRowPlans`` `externalStorage`); the store writes the column.
        case external(slot: Int, column: String)
        /// A to-one's destination key and, when the destination has sub-entities, its entity number.
        case toOne(slot: Int, hasEntityColumn: Bool)
        /// A composite attribute's leaf element: the value at `path` in the slot's dictionary.
        case compositeLeaf(slot: Int, SQLSchema.CompositeColumn)
    }

    /// The values of an insert after `Z_PK, Z_ENT, Z_OPT`, in order.
    package let writes: [Write]
    /// The values of an update after `Z_OPT`: ``writes`` without derived attributes.
    package let updateWrites: [Write]
    /// The columns of `external` writes.
    package let externalColumns: [String]
    /// `INSERT` of `Z_PK, Z_ENT, Z_OPT` and the written columns.
    package let insertSQL: String
    /// `UPDATE … SET Z_OPT, <columns> WHERE Z_PK = ? AND Z_OPT = ?`.
    package let updateSQL: String
    /// The statement reading one row by key.
    package let keySQL: String
    /// Each column's position in a row read with ``SQLSchema/rowColumns(_:alias:)``.
    package let columnIndex: [String: Int]
    /// For each slot stored in a column of its own (an attribute), that column's position in a
    /// row read with ``SQLSchema/rowColumns(_:alias:)`` and the attribute; `nil` for other slots.
    /// Found once, so reading a row looks up no column by name.
    package let attributeColumns: [(position: Int, type: NSAttributeType, attribute: NSAttributeDescription?)?]
    /// For each to-one slot, its key column's position, its entity column's when the destination
    /// has sub-entities, and the destination with its layout; `nil` for other slots (and for a
    /// to-one whose column or destination is missing). Found once: a row's to-one then reads no
    /// column by name and no weak reference to its destination.
    package let toOneColumns:
        [(position: Int, entityPosition: Int?, destination: NSEntityDescription, layout: EntityLayout)?]
    /// For each to-many slot, the statement reading one owner's members' rows, the owner's key
    /// bound (``SQLSchema/memberRowsSelect(_:destination:owners:)``): written once here, not each
    /// time a to-many fault fires.
    package let memberRowsSQL: [Int: String]

    init(mapping: SQLSchema.Entity, schema: SQLSchema, dialect: any SQLDialect, externalStorage: Bool) {
        var writes: [Write] = []
        var columns: [String] = []
        var updateWrites: [Write] = []
        var updateColumns: [String] = []
        let layout = mapping.entity.layout
        for (slot, storage) in mapping.storage.enumerated() {
            switch storage {
            case .attribute(let column, let type):
                let attribute = layout.properties[slot] as? NSAttributeDescription
                let write: Write =
                    externalStorage && type == .binaryDataAttributeType
                        && attribute?.allowsExternalBinaryDataStorage == true
                    ? .external(slot: slot, column: column) : .attribute(slot: slot, type: type, attribute)
                writes.append(write)
                columns.append(column)
                if !(attribute is NSDerivedAttributeDescription) {
                    updateWrites.append(write)
                    updateColumns.append(column)
                }
            case .composite(let leaves):
                for leaf in leaves {
                    writes.append(.compositeLeaf(slot: slot, leaf))
                    updateWrites.append(.compositeLeaf(slot: slot, leaf))
                    columns.append(leaf.column)
                    updateColumns.append(leaf.column)
                }
            case .toOne(let column, let entityColumn):
                let write = Write.toOne(slot: slot, hasEntityColumn: entityColumn != nil)
                writes.append(write)
                updateWrites.append(write)
                let written = [column] + (entityColumn.map { [$0] } ?? [])
                columns += written
                updateColumns += written
            default:
                continue
            }
        }
        self.writes = writes
        self.updateWrites = updateWrites
        externalColumns = writes.compactMap {
            if case .external(_, let column) = $0 { return column }
            return nil
        }
        insertSQL = SQLWriter.write(schema.insertRow(mapping.table, columns: columns), dialect: dialect).sql
        updateSQL = SQLWriter.write(schema.updateRow(mapping.table, columns: updateColumns), dialect: dialect).sql
        keySQL = SQLWriter.write(.select(schema.rowSelect(mapping.table, keys: 1)), dialect: dialect).sql
        var index: [String: Int] = [:]
        for (offset, column) in mapping.table.columns.enumerated() { index[column.name] = offset + 3 }
        columnIndex = index
        attributeColumns = mapping.storage.enumerated().map { slot, storage in
            guard case .attribute(let column, let type) = storage, let position = index[column] else { return nil }
            return (position, type, layout.properties[slot] as? NSAttributeDescription)
        }
        toOneColumns = mapping.storage.enumerated().map { slot, storage in
            guard case .toOne(let column, let entityColumn) = storage, let position = index[column],
                let destination = layout.relationship(at: slot).destinationEntity
            else { return nil }
            return (position, entityColumn.flatMap { index[$0] }, destination, destination.layout)
        }
        var members: [Int: String] = [:]
        for (slot, storage) in mapping.storage.enumerated() {
            guard let destination = (layout.properties[slot] as? NSRelationshipDescription)?.destinationEntity,
                let select = schema.memberRowsSelect(storage, destination: schema[destination], owners: 1)
            else { continue }
            members[slot] = SQLWriter.write(.select(select), dialect: dialect).sql
        }
        memberRowsSQL = members
    }

    /// Gives `bind` each value of `row`'s insert (`insert`) or update statement, in order: for an
    /// insert `Z_PK, Z_ENT, Z_OPT` and the columns, for an update `Z_OPT`, the columns, and the
    /// `Z_PK` and old `Z_OPT` of its `WHERE`. `external` gives the value of an `external` write.
    ///
    /// - Throws: what `bind` or `external` throws.
    @inline(__always)
    package func forEachValue(
        of row: StoreTransaction.Row, pk: Int64, entityNumber: Int64, insert: Bool, schema: SQLSchema,
        external: (_ slot: Int, _ column: String) throws -> SQLValue, _ bind: (SQLValue) throws -> Void
    ) throws {
        let snapshot = row.snapshot
        if insert {
            try bind(.integer(pk))
            try bind(.integer(entityNumber))
        }
        try bind(.integer(Int64(snapshot.version)))
        for write in insert ? writes : updateWrites {
            switch write {
            case .attribute(let slot, let type, let attribute):
                try bind(SQLValues.column(snapshot.values, slot: slot, type: type, attribute: attribute))
            case .external(let slot, let column):
                try bind(try external(slot, column))
            case .compositeLeaf(let slot, let leaf):
                let value = NSCompositeAttributeDescription.leafValue(snapshot.values[slot], path: leaf.path)
                try bind(SQLValues.column(value, type: leaf.type, attribute: leaf.attribute))
            case .toOne(let slot, let hasEntityColumn):
                let destination = snapshot.values[slot] as? NSManagedObjectID
                try bind(destination?.sqlKey.map(SQLValue.integer) ?? .null)
                if hasEntityColumn { try bind(destination.map { .integer(schema[$0.entity].number) } ?? .null) }
            }
        }
        if !insert {
            try bind(.integer(pk))
            try bind(.integer(Int64(snapshot.version) - 1))
        }
    }

    /// The error of an update that changed no row: the row's version is no longer the one read.
    package static func lockingFailure(_ id: NSManagedObjectID) -> NSError {
        CoreDataError.make(
            NSManagedObjectMergeError, "Optimistic locking failure: \(id) changed in the store since it was fetched.",
            ["conflictList": [id], NSAffectedObjectsErrorKey: [id]])
    }

    /// The error of a row to write whose object has no permanent ID.
    package static func missingKey(_ id: NSManagedObjectID) -> NSError {
        CoreDataError.make(
            NSPersistentStoreSaveError, "The object \(id) has no permanent ID.", [NSAffectedObjectsErrorKey: [id]])
    }
}
