/// A context's registered objects, filed in one ``IDTable`` per key space: the objects of one
/// root entity and its sub-entities (whose IDs share keys), and all temporary IDs together
/// (``IDValue/keySpace``).
///
/// One table for every object put the few objects apps look up most — the destinations of the
/// to-ones of a large fetch, the departments of 100,000 employees — among all the others: each
/// lookup read a control byte and a bucket of a table sized for all of them, spread over
/// megabytes, and missed the processor's caches. Filed apart, the 1,000 departments' table fits
/// in them.
///
/// A reference type, as ``IDTable`` is: the registry and the context's ``ContextLink`` share it
/// for the context's life. Used on the context's queue.
///
/// - Complexity: a lookup finds its table among the key spaces seen (a scan while there are few,
///   a dictionary beyond), then is the table's O(1).
final class ObjectTables {
    /// The key spaces seen, and each one's table, in the order they were first filed into. Read
    /// on every lookup, so unchecked for exclusivity (only this class's methods, on the context's
    /// queue, change them) and the tables reached unretained through ``unretained``: checked and
    /// retained, a lookup would cost what filing apart saves.
    @exclusivity(unchecked) private var spaces: [Int] = []
    @exclusivity(unchecked) private var tables: [IDTable<NSManagedObject>] = []
    @exclusivity(unchecked) private var unretained: [Unmanaged<IDTable<NSManagedObject>>] = []
    /// Each key space's index in ``tables``, once there are more than a scan is worth.
    @exclusivity(unchecked) private var indexBySpace: [Int: Int] = [:]
    private static var scanned: Int { 8 }

    /// The table of `id`'s key space, when one was made.
    @inline(__always)
    func table(for id: IDValue) -> IDTable<NSManagedObject>? {
        index(of: id.keySpace).map { tables[$0] }
    }

    /// The table of `id`'s key space, made when there is none yet.
    func filingTable(for id: IDValue) -> IDTable<NSManagedObject> {
        let space = id.keySpace
        if let index = index(of: space) { return tables[index] }
        let table = IDTable<NSManagedObject>()
        spaces.append(space)
        tables.append(table)
        unretained.append(Unmanaged.passUnretained(table))
        if spaces.count > Self.scanned {
            if indexBySpace.isEmpty {
                for (index, space) in spaces.enumerated() { indexBySpace[space] = index }
            } else {
                indexBySpace[space] = spaces.count - 1
            }
        }
        return table
    }

    @inline(__always)
    private func index(of space: Int) -> Int? {
        guard spaces.count > Self.scanned else { return spaces.firstIndex(of: space) }
        return indexBySpace[space]
    }

    /// The object filed under the ID `id` holds.
    subscript(id: IDValue) -> NSManagedObject? {
        @inline(__always) get {
            guard let index = index(of: id.keySpace) else { return nil }
            return unretained[index]._withUnsafeGuaranteedRef { $0[id] }
        }
    }

    /// The object filed under `id`.
    subscript(id: NSManagedObjectID) -> NSManagedObject? { withExtendedLifetime(id) { self[id.value] } }

    /// Files `object` under its own ID, answering the object it replaced.
    @discardableResult
    func insert(_ object: NSManagedObject) -> NSManagedObject? {
        filingTable(for: object.tableKey).insert(object)
    }

    /// Takes out the object filed under the ID `id` holds.
    @discardableResult
    func remove(_ id: IDValue) -> NSManagedObject? {
        table(for: id)?.remove(id)
    }

    /// Asks the processor for the lines a probe for `id` reads first (``IDTable/prefetch(_:)``).
    @inline(__always)
    func prefetch(_ id: IDValue) {
        guard let index = index(of: id.keySpace) else { return }
        unretained[index]._withUnsafeGuaranteedRef { $0.prefetch(id) }
    }

    /// Makes room for `count` objects in the table of `id`'s key space.
    func reserveCapacity(_ count: Int, for id: IDValue) {
        let table = filingTable(for: id)
        if table.count < count { table.reserveCapacity(count) }
    }

    /// Makes room for one more object under each of `ids` (objects about to be filed under new
    /// IDs: an insert's permanent IDs), in each one's key space's table.
    func reserveCapacity(adding ids: [NSManagedObjectID]) {
        // How many of `ids` each key space gets: runs of one space are the common case.
        var counts: [(space: Int, id: IDValue, count: Int)] = []
        for id in ids {
            let value = id.value
            let space = value.keySpace
            if let last = counts.indices.last, counts[last].space == space {
                counts[last].count += 1
            } else if let index = counts.firstIndex(where: { $0.space == space }) {
                counts[index].count += 1
                counts.swapAt(index, counts.count - 1)
            } else {
                counts.append((space, value, 1))
            }
        }
        for (_, id, count) in counts {
            let table = filingTable(for: id)
            table.reserveCapacity(table.count + count)
        }
    }

    /// How many objects are filed.
    var count: Int { tables.reduce(0) { $0 + $1.count } }

    /// The objects, copied out.
    var entries: [NSManagedObject] { tables.flatMap(\.entries) }

    /// ``IDTable/removeAll(where:)`` on each table, the removed objects of all together.
    func removeAll(where shouldRemove: (inout NSManagedObject) -> Bool) -> [NSManagedObject] {
        tables.flatMap { $0.removeAll(where: shouldRemove) }
    }

    /// Empties every table.
    func removeAll() {
        for table in tables { table.removeAll() }
    }

    /// ``IDTable/drainInMemoryOrder(_:chunkSize:_:)`` on every table together: all are empty
    /// before `body` is first called, and the objects go in one order of addresses.
    func drainInMemoryOrder(chunkSize: Int, _ body: (UnsafeBufferPointer<NSManagedObject>) -> Void) {
        IDTable.drainInMemoryOrder(tables, chunkSize: chunkSize, body)
    }
}
