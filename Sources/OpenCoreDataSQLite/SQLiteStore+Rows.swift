import OpenCoreData
import OpenCoreDataSQL

/// Reading the SQLite store's rows into object IDs and snapshots: per entity, how its table's
/// columns fill its slots (``RowReader``), and per statement, one decoder for all its rows.
extension SQLiteStore {
    /// The IDs of the rows of a statement that selects `Z_PK, Z_ENT`: each row's entity is the one
    /// its `Z_ENT` names when that is `fallback`'s or a sub-entity's, else `fallback` (a damaged or
    /// foreign file). A statement that selects `Z_PK` alone reads rows of `fallback` (one without
    /// sub-entities; ``SQLSchema/memberKeysSelect(_:destination:)``). The layouts and the store's
    /// ID space are found once, not for each row.
    func objectIDs(_ statement: SQLiteStatement, fallback: SQLSchema.Entity) throws -> [NSManagedObjectID] {
        try objectValues(statement, fallback: fallback).map(NSManagedObjectID.init(value:))
    }

    /// ``objectIDs(_:fallback:)`` as values (``IDValue``), no ID instance made: the store's ID
    /// space and the model's layouts, which the store keeps, keep them valid.
    func objectValues(_ statement: SQLiteStatement, fallback: SQLSchema.Entity) throws -> [IDValue] {
        let space = objectIDSpace
        let fallbackLayout = fallback.entity.layout
        let readsEntity = statement.columnCount > 1
        var layouts: [Int64: EntityLayout] = [:]
        var ids: [IDValue] = []
        while try statement.step() {
            ids.append(
                objectValue(
                    statement, fallback: fallback, fallbackLayout: fallbackLayout, readsEntity: readsEntity,
                    space: space, layouts: &layouts))
        }
        return ids
    }

    /// The ID, as a value, of the row `statement` is on: its key in column 0 and, when the
    /// statement has more columns, its entity number in column 1. `layouts` keeps the layouts of
    /// other entities found so far.
    @inline(__always)
    func objectValue(
        _ statement: SQLiteStatement, fallback: SQLSchema.Entity, fallbackLayout: EntityLayout, readsEntity: Bool,
        space: ObjectIDSpace, layouts: inout [Int64: EntityLayout]
    ) -> IDValue {
        let number = readsEntity ? statement.int64(at: 1) : fallback.number
        var layout = fallbackLayout
        // Rows of the entity asked for, the common case, need no lookup (a dictionary probe
        // would hash each row's entity number).
        if number != fallback.number {
            if let known = layouts[number] {
                layout = known
            } else {
                if let exact = schema.entitiesByNumber[number], exact.entity.isKindOf(entity: fallback.entity) {
                    layout = exact.entity.layout
                }
                layouts[number] = layout
            }
        }
        return IDValue(layout: layout, integer: statement.int64(at: 0), space: space)
    }

    /// How to read one entity's rows: the select list of its table and, per slot, where its
    /// value is in a row.
    final class RowReader {
        /// How one slot is read. Trivial values only: the attribute and the destination layout
        /// are unretained references, which the reader keeps alive (``RowReader/referenced``).
        /// Each read of a row copied its case out of ``RowReader/reads``, and a strong payload
        /// would make that copy a retain and a release per slot and row.
        enum Read {
            case attribute(slot: Int, column: Int32, type: NSAttributeType, Unmanaged<NSAttributeDescription>?)
            /// A binary attribute with external storage allowed (``SQLiteStore/externalValue(_:_:)``).
            case external(slot: Int, column: Int32)
            case toOne(slot: Int, column: Int32, entityColumn: Int32?, destination: Unmanaged<EntityLayout>)
            case unresolved(slot: Int)
            /// A composite attribute: its leaves' columns, assembled into one dictionary.
            case composite(slot: Int, [(column: Int32, leaf: SQLSchema.CompositeColumn)])
        }
        let entity: NSEntityDescription
        /// The entity's layout, which the IDs of its rows hold.
        let layout: EntityLayout
        /// The layout's slot shape, unretained (the layout keeps it): each row's storage is made
        /// in its shape without a retain and a release of it around the call.
        let shape: Unmanaged<SlotShape>
        let reads: [Read]
        /// The objects ``reads`` refer to without retaining them.
        private let referenced: [AnyObject]
        /// The statement reading one row of the entity's table by key.
        let keySQL: String
        /// The statements reading rows of the table by `IN` lists of keys, by list size
        /// (``SQLiteStore/listSizes``).
        let listSQL: [Int: String]
        /// The statement reading the rows of the table with keys in a range.
        let rangeSQL: String
        /// For each to-many slot: the statements reading one owner's members, their keys
        /// (``SQLSchema/memberKeysSelect(_:destination:)``) and their rows
        /// (``SQLSchema/memberRowsSelect(_:destination:owners:)``), the owner's key bound. Written
        /// once here, not each time a to-many fault fires.
        let memberSQL: [Int: (keys: String, rows: String)]

        init(mapping: SQLSchema.Entity, columnIndex: [String: Int32], schema: SQLSchema) {
            entity = mapping.entity
            keySQL = SQLiteDialect.text(.select(schema.rowSelect(mapping.table, keys: 1)))
            rangeSQL = SQLiteDialect.text(.select(schema.rowRangeSelect(mapping.table)))
            var lists: [Int: String] = [:]
            for size in SQLiteStore.listSizes {
                lists[size] = SQLiteDialect.text(.select(schema.rowSelect(mapping.table, keys: size)))
            }
            listSQL = lists
            let layout = mapping.entity.layout
            self.layout = layout
            shape = Unmanaged.passUnretained(layout.slotShape)
            var members: [Int: (keys: String, rows: String)] = [:]
            var reads: [Read] = []
            var referenced: [AnyObject] = []
            // The columns and the storage come from one mapping, so every column is in the
            // index; a slot whose column were missing would be left unread (no value), not trap.
            for (slot, storage) in mapping.storage.enumerated() {
                switch storage {
                case .attribute(let column, let type):
                    guard let index = columnIndex[column] else { continue }
                    let attribute = layout.properties[slot] as? NSAttributeDescription
                    if type == .binaryDataAttributeType, attribute?.allowsExternalBinaryDataStorage == true {
                        reads.append(.external(slot: slot, column: index))
                    } else {
                        if let attribute { referenced.append(attribute) }
                        reads.append(
                            .attribute(
                                slot: slot, column: index, type: type, attribute.map { Unmanaged.passUnretained($0) }))
                    }
                case .composite(let leaves):
                    reads.append(
                        .composite(
                            slot: slot, leaves.compactMap { leaf in columnIndex[leaf.column].map { ($0, leaf) } }))
                case .toOne(let column, let entityColumn):
                    guard let index = columnIndex[column],
                        let destination = layout.relationship(at: slot).destinationEntity
                    else {
                        reads.append(.unresolved(slot: slot))
                        continue
                    }
                    let destinationLayout = destination.layout
                    referenced.append(destinationLayout)
                    reads.append(
                        .toOne(
                            slot: slot, column: index, entityColumn: entityColumn.flatMap { columnIndex[$0] },
                            destination: .passUnretained(destinationLayout)))
                case .toManyByInverse, .join:
                    reads.append(.unresolved(slot: slot))
                    if let entity = layout.relationship(at: slot).destinationEntity,
                        let keys = schema.memberKeysSelect(storage, destination: schema[entity]),
                        let rows = schema.memberRowsSelect(storage, destination: schema[entity], owners: 1)
                    {
                        members[slot] = (SQLiteDialect.text(.select(keys)), SQLiteDialect.text(.select(rows)))
                    }
                case .none:
                    if layout.kinds[slot] == .fetched { reads.append(.unresolved(slot: slot)) }
                }
            }
            self.reads = reads
            self.referenced = referenced
            memberSQL = members
        }
    }

    func reader(for mapping: SQLSchema.Entity) -> RowReader {
        stateLock.lock()
        defer { stateLock.unlock() }
        if let reader = readers[ObjectIdentifier(mapping)] { return reader }
        var index: [String: Int32] = [:]
        for (offset, column) in mapping.table.columns.enumerated() { index[column.name] = Int32(offset + 3) }
        let reader = RowReader(mapping: mapping, columnIndex: index, schema: schema)
        readers[ObjectIdentifier(mapping)] = reader
        return reader
    }

    /// The ID and snapshot of the statement's current row, whose first columns are
    /// `Z_PK, Z_ENT, Z_OPT` followed by the table's columns. For many rows of one statement, make
    /// one ``RowDecoder`` and call it for each.
    ///
    /// - Throws: `NSCoreDataError` (134060) for a row whose `Z_ENT` leaves it no entity that can
    ///   have objects (``RowDecoder/read(_:)``).
    func readRow(
        _ statement: SQLiteStatement, fallback: SQLSchema.Entity, interner: IDInterner? = nil
    ) throws -> (NSManagedObjectID, Snapshot) {
        try RowDecoder(store: self, fallback: fallback, interner: interner).read(statement)
    }

    /// Reads the rows of one statement into object IDs and snapshots. What every row needs — the
    /// reader of the table's entity, the store's ID space — is found once, when the decoder is
    /// made, rather than under the store's locks for each row.
    struct RowDecoder {
        let store: SQLiteStore
        let fallback: SQLSchema.Entity
        private let schema: SQLSchema
        private let fallbackReader: RowReader
        private let space: ObjectIDSpace
        /// With an interner, each (entity, key) of the rows read together gets one ID object
        /// (``IDInterner``).
        private let interner: IDInterner?
        /// The IDs of the to-one destinations the rows name, one per destination row.
        private let destinations = DestinationIDs()

        init(store: SQLiteStore, fallback: SQLSchema.Entity, interner: IDInterner? = nil) {
            self.store = store
            self.fallback = fallback
            schema = store.schema
            fallbackReader = store.reader(for: fallback)
            space = store.objectIDSpace
            self.interner = interner
        }

        /// The ID of `layout`'s entity's row `pk`.
        @inline(__always)
        private func id(_ layout: EntityLayout, _ pk: Int64) -> NSManagedObjectID {
            if let interner { return interner.id(layout, pk, space: space) }
            return NSManagedObjectID(layout: layout, integer: pk, space: space)
        }

        /// The ID and snapshot of the statement's current row.
        ///
        /// - Throws: `NSCoreDataError` (134060) for a row whose `Z_ENT` leaves it no entity that
        ///   can have objects: an abstract one, or one outside the hierarchy read (a damaged file).
        func read(_ statement: SQLiteStatement) throws -> (NSManagedObjectID, Snapshot) {
            let (layout, pk, snapshot) = try readRow(statement)
            return (layout._withUnsafeGuaranteedRef { id($0, pk) }, snapshot)
        }

        /// ``read(_:)`` with the row's ID as a value (``IDValue``), no ID instance made: a fetch
        /// whose rows all become objects.
        ///
        /// - Throws: as ``read(_:)``.
        @inline(__always)
        func readValue(_ statement: SQLiteStatement) throws -> (IDValue, Snapshot) {
            let (layout, pk, snapshot) = try readRow(statement)
            return (layout._withUnsafeGuaranteedRef { IDValue(layout: $0, integer: pk, space: space) }, snapshot)
        }

        /// The entity, primary key and snapshot of the statement's current row. The layout is given
        /// unretained: the store's reader of the entity keeps it (returned retained, it would be
        /// retained and released for every row).
        @inline(__always)
        private func readRow(_ statement: SQLiteStatement) throws -> (Unmanaged<EntityLayout>, Int64, Snapshot) {
            let pk = statement.int64(at: 0)
            let number = statement.int64(at: 1)
            // The common case, a row of the entity fetched, reads with the decoder's own reader:
            // no lookup, and no copy of the reader or the mapping (each a retain and a release).
            if number == fallback.number, !fallbackReader.layout.isAbstract {
                return decode(statement, pk, fallbackReader)
            }
            var mapping = fallback
            var reader = fallbackReader
            if number != fallback.number, let exact = schema.entitiesByNumber[number],
                exact.entity.isKindOf(entity: fallback.entity)
            {
                mapping = exact
                reader = store.reader(for: exact)
            }
            guard !reader.layout.isAbstract else {
                throw CoreDataError.make(
                    NSCoreDataError,
                    "The row \(pk) of \(mapping.table.name) has Z_ENT \(number), which leaves it the abstract entity \(mapping.entity.name ?? "") (a damaged store)."
                )
            }
            return decode(statement, pk, reader)
        }

        /// The entity, key and snapshot of the current row, row `pk` of `reader`'s entity.
        @inline(__always)
        private func decode(
            _ statement: SQLiteStatement, _ pk: Int64, _ reader: RowReader
        ) -> (Unmanaged<EntityLayout>, Int64, Snapshot) {
            let values = SlotFiller(shape: reader.shape)
            for read in reader.reads {
                switch read {
                case .attribute(let slot, let column, let type, let attribute):
                    SQLiteValues.store(
                        statement, column, type: type, attribute: attribute, in: values,
                        at: slot)
                case .external(let slot, let column):
                    values.set(store.externalValue(statement, column), at: slot)
                case .toOne(let slot, let column, let entityColumn, let unretainedDestination):
                    guard !statement.isNull(at: column) else { continue }
                    // The destination's layout stays unretained: the model keeps every layout.
                    var destination = unretainedDestination
                    // An entity number the destination cannot be (a damaged or foreign file) is
                    // ignored: the object ID must name the destination's table.
                    if let entityColumn, let exact = schema.entitiesByNumber[statement.int64(at: entityColumn)] {
                        let entity = destination._withUnsafeGuaranteedRef(\.entity)
                        if exact.entity !== entity, exact.entity.isKindOf(entity: entity) {
                            destination = .passUnretained(exact.entity.layout)
                        }
                    }
                    let key = statement.int64(at: column)
                    values.setReference(
                        destination._withUnsafeGuaranteedRef { layout in
                            interner?.id(layout, key, space: space) ?? destinations.id(layout, key, space: space)
                        }, at: slot)
                case .unresolved(let slot):
                    values.setReference(UnresolvedRelationship.marker, at: slot)
                case .composite(let slot, let leaves):
                    let value = NSCompositeAttributeDescription.value(
                        leaves: leaves.map { column, leaf in
                            (
                                leaf.path,
                                SQLiteValues.value(statement, column, type: leaf.type, attribute: leaf.attribute)
                            )
                        })
                    if let value { values.set(value, at: slot) }
                }
            }
            let version = UInt64(max(0, statement.int64(at: 2)))
            return (
                Unmanaged.passUnretained(reader.layout), pk, Snapshot(values: (consume values).take(), version: version)
            )
        }
    }
}
