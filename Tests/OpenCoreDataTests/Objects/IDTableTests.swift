import Foundation
import Testing

@testable import OpenCoreData

/// The table a context's registry and the row cache file objects in by ID. Core Data
/// Programming Guide, "Faulting and Uniquing": a context holds at most one object per ID, and
/// `object(with:)` answers that object; `registeredObject(for:)` answers `nil` for an ID it does
/// not hold. The table must find every entry filed under an ID equal to the one asked for, find
/// nothing for any other ID, and keep that through removals (which leave deleted buckets that
/// probes pass) and growth.
@Suite("ID table")
struct IDTableTests {
    final class Entry: IDTableEntry {
        let tableID: NSManagedObjectID
        var tableKey: IDValue { tableID.value }
        init(_ id: NSManagedObjectID) { tableID = id }
    }

    /// Two entities of one model: `Row` and `Other`.
    static func entities() -> (NSEntityDescription, NSEntityDescription) {
        let row = NSEntityDescription()
        row.name = "Row"
        let other = NSEntityDescription()
        other.name = "Other"
        let model = NSManagedObjectModel()
        model.entities = [row, other]
        return (row, other)
    }

    static func entity() -> NSEntityDescription { entities().0 }

    /// An ID of `layout`'s entity with primary key `key`, as a store makes them: a new object each
    /// time, equal to the others of that key.
    static func id(_ key: Int64, _ layout: EntityLayout) -> NSManagedObjectID {
        NSManagedObjectID(layout: layout, key: .integer(key), space: nil)
    }

    @Test("a random mix of filings, replacements and removals agrees with a dictionary at every step")
    func agreesWithDictionary() {
        let layout = Self.entity().layout
        let table = IDTable<Entry>()
        var model: [Int64: Entry] = [:]
        var generator = SystemRandomNumberGenerator()
        for step in 0..<20_000 {
            // Keys from a range small enough that filings, replacements and removals meet.
            let key = Int64.random(in: 1...3_000, using: &generator)
            switch step % 5 {
            case 0, 1:
                let entry = Entry(Self.id(key, layout))
                let replaced = table.insert(entry)
                #expect(replaced === model[key])
                model[key] = entry
            case 2:
                #expect(table.remove(Self.id(key, layout).value) === model.removeValue(forKey: key))
            default:
                #expect(table[Self.id(key, layout)] === model[key], "key \(key) at step \(step)")
            }
            #expect(table.count == model.count)
        }
        for key in Int64(1)...3_000 {
            #expect(table[Self.id(key, layout)] === model[key], "key \(key)")
        }
        #expect(Set(table.entries.map(ObjectIdentifier.init)) == Set(model.values.map(ObjectIdentifier.init)))
    }

    @Test("IDs of another entity with the same primary key, and temporary IDs, are other keys")
    func otherEntitiesAreOtherKeys() {
        let (first, second) = Self.entities()
        let table = IDTable<Entry>()
        let entry = Entry(Self.id(7, first.layout))
        table.insert(entry)
        #expect(table[Self.id(7, first.layout)] === entry)
        #expect(table[Self.id(7, second.layout)] == nil)
        #expect(table[NSManagedObjectID.temporary(for: first.layout)] == nil)
        let temporary = Entry(NSManagedObjectID.temporary(for: first.layout))
        table.insert(temporary)
        #expect(table[temporary.tableID] === temporary)
        #expect(table.count == 2)
    }

    @Test("IDs of every kind of key are equal exactly when key, store and root entity are, with equal hashes")
    func idKinds() {
        let (row, other) = Self.entities()
        let integer = Self.id(5, row.layout)
        let integerAgain = Self.id(5, row.layout)
        // An integer given as `Int` is kept as given (NSIncrementalStore's `referenceObject(for:)`
        // hands back what the store gave), and names the same object as `Int64(5)`.
        let givenAsInt = NSManagedObjectID(layout: row.layout, key: .integer(5), space: nil, reference: 5)
        let string = NSManagedObjectID(layout: row.layout, key: NSManagedObjectID.permanentKey(for: "five"), space: nil)
        let stringAgain = NSManagedObjectID(
            layout: row.layout, key: NSManagedObjectID.permanentKey(for: "five"), space: nil, reference: "five")
        let temporary = NSManagedObjectID.temporary(for: row.layout)
        #expect(integer.isEqual(integerAgain) && integer.hash == integerAgain.hash)
        #expect(integer.isEqual(givenAsInt) && integer.hash == givenAsInt.hash)
        #expect(givenAsInt.referenceObject as? Int == 5 && integer.referenceObject as? Int64 == 5)
        #expect(string.isEqual(stringAgain) && string.hash == stringAgain.hash)
        #expect(stringAgain.referenceObject as? String == "five")
        #expect(!integer.isEqual(Self.id(6, row.layout)) && !integer.isEqual(Self.id(5, other.layout)))
        #expect(!integer.isEqual(string) && !integer.isEqual(temporary) && !string.isEqual(temporary))
        #expect(temporary.isTemporaryID && !integer.isTemporaryID && !givenAsInt.isTemporaryID && !string.isTemporaryID)
        #expect(temporary.isEqual(temporary.copy()) && !temporary.isEqual(NSManagedObjectID.temporary(for: row.layout)))
        #expect(integer.persistentStore == nil && string.persistentStore == nil)
    }

    @Test("100,000 entries take 131,072 buckets: growth keeps every entry, reserving avoids it")
    func growthKeepsEveryEntry() {
        let layout = Self.entity().layout
        let table = IDTable<Entry>()
        let entries = (1...100_000).map { Entry(Self.id(Int64($0), layout)) }
        for entry in entries { table.insert(entry) }
        #expect(table.count == 100_000)
        #expect(entries.allSatisfy { table[Self.id($0.tableID.integerKey, layout)] === $0 })
        #expect(table[Self.id(100_001, layout)] == nil)
        #expect(table.bucketCount == 131_072)
        let reserved = IDTable<Entry>()
        reserved.reserveCapacity(100_000)
        #expect(reserved.bucketCount == 131_072)
    }

    @Test("removeAll(where:) hands each entry over as the only reference when only the table holds it")
    func removeAllWhereSeesUniqueReferences() {
        let layout = Self.entity().layout
        let table = IDTable<Entry>()
        var kept: [Entry] = []
        for key in Int64(1)...1_000 {
            let entry = Entry(Self.id(key, layout))
            table.insert(entry)
            if key.isMultiple(of: 3) { kept.append(entry) }
        }
        weak var released: Entry?
        do {
            let removed = table.removeAll { isKnownUniquelyReferenced(&$0) }
            #expect(removed.count == 1_000 - kept.count)
            released = removed.first
        }
        // The table held the only reference to what it removed: nothing keeps it now.
        #expect(released == nil)
        #expect(table.count == kept.count)
        #expect(kept.allSatisfy { table[$0.tableID] === $0 })
        #expect(table[Self.id(1, layout)] == nil)
    }

    /// A table of `count` entries with keys 1…`count`, filed in random order, and the entries in
    /// the order they were made.
    static func shuffledTable(_ count: Int, _ layout: EntityLayout) -> (IDTable<Entry>, [Entry]) {
        let table = IDTable<Entry>()
        let entries = (1...count).map { Entry(Self.id(Int64($0), layout)) }
        for entry in entries.shuffled() { table.insert(entry) }
        return (table, entries)
    }

    /// The table's own rule (no Apple API answers an order): what a context or the row
    /// cache lets go of together comes out in address order, so it is freed as it was allocated.
    @Test("drainInMemoryOrder empties a table with deleted buckets and hands out each entry once, in address order")
    func drainAfterRemovals() {
        let layout = Self.entity().layout
        let (table, entries) = Self.shuffledTable(5_000, layout)
        for entry in entries where entry.tableID.integerKey.isMultiple(of: 7) { table.remove(entry.tableID.value) }
        var removed: [Entry] = []
        table.drainInMemoryOrder(chunkSize: 10_000) { removed += $0 }
        let expected = entries.filter { !$0.tableID.integerKey.isMultiple(of: 7) }
        #expect(removed.count == expected.count)
        #expect(Set(removed.map(ObjectIdentifier.init)) == Set(expected.map(ObjectIdentifier.init)))
        #expect(zip(removed, removed.dropFirst()).allSatisfy { ObjectIdentifier($0) < ObjectIdentifier($1) })
        #expect(table.count == 0 && table.bucketCount == 8)
        #expect(table[Self.id(1, layout)] == nil)
        // The emptied table files entries again.
        table.insert(entries[0])
        #expect(table[Self.id(1, layout)] === entries[0])
    }

    /// The address sort under ``IDTable/drainInMemoryOrder(chunkSize:_:)`` agrees with the standard library's on
    /// words spread over any bits: aligned heap-like addresses, duplicates, and the extremes.
    @Test(
        "sortAddresses sorts as the standard library does, for any spread of words",
        arguments: [0, 1, 255, 257, 5_000])
    func sortAddressesAgreesWithSort(count: Int) {
        var generator = SystemRandomNumberGenerator()
        let heapLike = (0..<count).map { _ in 0x7f00_0000_0000 + UInt.random(in: 0..<(1 << 26), using: &generator) * 16
        }
        let anyBits = (0..<count).map { _ in UInt.random(in: 0...UInt.max, using: &generator) }
        let extremes = (0..<count).map { [0, UInt.max, 1 << 63, 42][$0 % 4] }
        for words in [heapLike, anyBits, extremes, heapLike + heapLike.prefix(count / 2)] {
            var sorted = words
            sorted.withUnsafeMutableBufferPointer { IDTable<Entry>.sortAddresses($0) }
            #expect(sorted == words.sorted())
        }
    }

    /// The table's own rule, as a context going away uses it: each entry comes out once, in address order, a chunk at a time, and the
    /// table lets go of a chunk's entries when the chunk's work is done — an entry nothing else
    /// holds is freed then, not before and not at the end.
    @Test("drainInMemoryOrder hands out each entry once, in address order, and lets go of each chunk after its turn")
    func drainInMemoryOrder() {
        let layout = Self.entity().layout
        let table = IDTable<Entry>()
        var weakEntries: [WeakEntry] = []
        var kept: [Entry] = []
        do {
            var entries = (1...2_500).map { Entry(Self.id(Int64($0), layout)) }
            for entry in entries.shuffled() { table.insert(entry) }
            weakEntries = entries.map(WeakEntry.init)
            // The caller keeps every tenth entry; the table's are the only references to the rest.
            kept = entries.filter { $0.tableID.integerKey.isMultiple(of: 10) }
            entries = []
        }
        var seen: [ObjectIdentifier] = []
        var chunkSizes: [Int] = []
        var earlierUnkept = 0
        table.drainInMemoryOrder(chunkSize: 1_000) { chunk in
            #expect(table.count == 0, "the table is empty before the first chunk")
            chunkSizes.append(chunk.count)
            // The earlier chunks' entries are gone unless the caller keeps them; this chunk's are not.
            let freed = weakEntries.filter { $0.entry == nil }.count
            #expect(freed == earlierUnkept, "freed before chunk \(chunkSizes.count)")
            earlierUnkept += chunk.filter { !$0.tableID.integerKey.isMultiple(of: 10) }.count
            seen += chunk.map(ObjectIdentifier.init)
        }
        #expect(chunkSizes == [1_000, 1_000, 500])
        #expect(seen.count == 2_500 && Set(seen).count == 2_500)
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 < $1 }, "address order")
        #expect(weakEntries.filter { $0.entry != nil }.count == kept.count, "only the caller's entries remain")
        #expect(table.count == 0 && table.bucketCount == 8)
        table.insert(kept[0])
        #expect(table[kept[0].tableID] === kept[0], "the drained table files entries again")
    }

    final class WeakEntry {
        weak var entry: Entry?
        init(_ entry: Entry) { self.entry = entry }
    }

    /// Taking an entry out by identity (what the row cache does when a row's last holder lets go):
    /// the entry itself leaves, another entry filed under an equal ID stays; and a table left with
    /// more deleted buckets than entries is rebuilt for what it holds, every entry still found.
    @Test("remove(_ entry:) takes out that entry only; shrinkIfSparse() rebuilds a mostly emptied table")
    func removeEntryAndShrink() {
        let layout = Self.entity().layout
        let (table, entries) = Self.shuffledTable(20_000, layout)
        let stranger = Entry(Self.id(5, layout))
        #expect(!table.remove(stranger), "an entry of an equal ID is not the filed entry")
        #expect(table[Self.id(5, layout)] === entries[4])
        for entry in entries where !entry.tableID.integerKey.isMultiple(of: 100) { #expect(table.remove(entry)) }
        #expect(table.count == 200)
        #expect(table.bucketCount == 32_768, "removals alone do not move the entries")
        table.shrinkIfSparse()
        #expect(table.bucketCount == 256)
        #expect(entries.allSatisfy { (table[$0.tableID] === $0) == $0.tableID.integerKey.isMultiple(of: 100) })
        #expect(!table.remove(entries[0]), "an entry taken out is not found again")
    }

    @Test("removeAll(where:) answers what it took out in address order")
    func removeAllWhereAnswersInAddressOrder() {
        let (table, _) = Self.shuffledTable(5_000, Self.entity().layout)
        let removed = table.removeAll { $0.tableID.integerKey.isMultiple(of: 2) }
        #expect(removed.count == 2_500)
        #expect(removed.allSatisfy { $0.tableID.integerKey.isMultiple(of: 2) })
        #expect(zip(removed, removed.dropFirst()).allSatisfy { ObjectIdentifier($0) < ObjectIdentifier($1) })
        #expect(table.count == 2_500)
    }
}

extension NSManagedObjectID {
    /// The primary key of an integer-keyed ID (tests only).
    fileprivate var integerKey: Int64 {
        if case .integer(let key) = key { return key }
        return -1
    }
}
