import OpenCoreData

/// The IDs of the to-one destinations one statement's rows name: many rows usually name one
/// destination (every employee of a department), and one ID object for all of them saves an
/// allocation per row, the snapshots' memory, and makes each registry lookup of the
/// destination find the registered ID by identity. When the destinations turn out to be
/// mostly distinct (a one-to-one), it stops remembering them, since remembering then costs
/// more than it saves.
package final class DestinationIDs {
    // Read and written for every row decoded with a to-one, by one reader on one thread, and
    // never held across a call that could reach them again: the run-time exclusivity checks,
    // a cost on every such row, are off.
    @exclusivity(unchecked) private var ids = KeyedIDs()
    @exclusivity(unchecked) private var lookups = 0
    @exclusivity(unchecked) private var remembering = true

    /// A table that remembers nothing yet.
    package init() {}

    /// The ID of row `pk` of `layout`'s entity in `space`: the one made for it before, else a new one.
    package func id(_ layout: EntityLayout, _ pk: Int64, space: ObjectIDSpace) -> NSManagedObjectID {
        guard remembering else { return NSManagedObjectID(layout: layout, integer: pk, space: space) }
        lookups += 1
        if let id = ids.id(layout, pk) { return id }
        let id = NSManagedObjectID(layout: layout, integer: pk, space: space)
        ids.insert(id, layout, pk)
        if ids.count >= 4096, ids.count * 4 > lookups * 3 {
            // Three rows in four name a new destination: remembering costs more than it saves.
            remembering = false
            ids.removeAll()
        }
        return id
    }
}

/// Object IDs filed by entity and primary key, in an open-addressing table: the IDs of the to-one
/// destinations a statement's rows name (``DestinationIDs``) and of a batch's rows
/// (the SQLite store's `IDInterner`). A `[Key: NSManagedObjectID]` keyed by the same pair hashed each
/// key with SipHash, the largest cost of a lookup on the to-one walk.
/// Here a lookup is a multiply and, with the table at most half full, a probe or two.
///
/// Used by one reader on one thread.
package struct KeyedIDs {
    /// One entry; `layout` 0 marks an empty one (a layout is an object, never at address 0).
    private struct Entry {
        var layout: UInt = 0
        var pk: Int64 = 0
        var id: NSManagedObjectID?
    }

    /// Empty until the first insert: a reader of one row files one ID or none.
    private var entries: [Entry] = []
    /// `64 - log2(entries.count)`: the home of a key is the top bits of its mixed value.
    private var shift: UInt64 = 64
    /// The IDs filed.
    package private(set) var count = 0

    /// An empty table, with room for `capacity` IDs before it grows.
    package init(capacity: Int = 0) {
        if capacity > 0 { resize(toHold: capacity) }
    }

    /// The ID filed for row `pk` of `layout`'s entity, if any.
    package func id(_ layout: EntityLayout, _ pk: Int64) -> NSManagedObjectID? {
        guard count > 0 else { return nil }
        let key = UInt(bitPattern: ObjectIdentifier(layout))
        let mask = entries.count - 1
        var index = home(key, pk)
        while entries[index].layout != 0 {
            if entries[index].layout == key, entries[index].pk == pk { return entries[index].id }
            index = (index + 1) & mask
        }
        return nil
    }

    /// Files `id` as row `pk` of `layout`'s entity, in place of an ID filed for it before.
    package mutating func insert(_ id: NSManagedObjectID, _ layout: EntityLayout, _ pk: Int64) {
        if (count + 1) * 2 > entries.count { resize(toHold: count + 1) }
        file(id, UInt(bitPattern: ObjectIdentifier(layout)), pk)
    }

    /// Forgets every ID.
    package mutating func removeAll() { self = KeyedIDs() }

    private mutating func file(_ id: NSManagedObjectID, _ key: UInt, _ pk: Int64) {
        let mask = entries.count - 1
        var index = home(key, pk)
        while entries[index].layout != 0 {
            if entries[index].layout == key, entries[index].pk == pk {
                entries[index].id = id
                return
            }
            index = (index + 1) & mask
        }
        entries[index] = Entry(layout: key, pk: pk, id: id)
        count += 1
    }

    /// Makes the table hold at least `capacity` IDs at most half full, filing the present ones again.
    private mutating func resize(toHold capacity: Int) {
        var bits: UInt64 = 4
        while 1 << bits < capacity * 2 { bits += 1 }
        let old = entries
        entries = Array(repeating: Entry(), count: 1 << bits)
        shift = 64 - bits
        count = 0
        for entry in old where entry.layout != 0 {
            if let id = entry.id { file(id, entry.layout, entry.pk) }
        }
    }

    /// Where a key's probe starts: Fibonacci hashing of the key and the layout's address.
    @inline(__always)
    private func home(_ key: UInt, _ pk: Int64) -> Int {
        let mixed = (UInt64(bitPattern: pk) ^ UInt64(key) >> 4) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: mixed >> shift)
    }
}
