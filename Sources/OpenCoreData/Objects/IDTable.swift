internal import CPrefetch

/// How far ahead the bulk loops over rows and objects ask for what an entry's turn will read
/// (ARCHITECTURE.md, "Misses overlapped").
enum Prefetching {
    /// Entries ahead: far enough for a miss to arrive in time, near enough that what arrived is
    /// not pushed out again before its turn.
    static let distance = 8
}

/// An object an ``IDTable`` files under its own ID, held inline as an ``IDValue``.
protocol IDTableEntry: AnyObject {
    /// The ID the entry is filed under. It must not change while the entry is in a table: to give
    /// an entry a new ID, take it out, change it, and file it again.
    var tableKey: IDValue { get }
}

/// A hash table of objects that carry their own IDs — a context's registered objects, the row
/// cache's rows — keyed by those IDs (ARCHITECTURE.md, "IDs as keys").
///
/// A `Dictionary` keyed by ID stores the key beside each value and keeps its buckets at most
/// three-quarters full, so 100,000 rows took 262,144 buckets of 16 bytes: 4 MiB a table, 42 bytes
/// a row, in each of a context's registry and the coordinator's row cache. Here a bucket
/// is the entry alone (8 bytes) and a control byte. A full bucket's control byte keeps seven bits
/// of its entry's hash, so a probe passes other entries without reaching them: only a matching
/// control byte (one in 128 of the others) costs a look at an entry's ID, which is what made
/// lookups in the `Dictionary` miss the processor's caches. Buckets are at most seven-eighths full
/// (linear probing), so 100,000 rows take 131,072 buckets: 1.1 MiB.
///
/// A reference type, not copy-on-write: its owner (a context's registry, the row cache) keeps the
/// only reference. ``entries`` copies the entries out, so an owner may change the table while it
/// goes through them.
///
/// - Complexity: lookups, insertions and removals are O(1) on average; growing and
///   ``removeAll(where:)`` are O(capacity).
final class IDTable<Entry: IDTableEntry> {
    /// A bucket's control byte: never used (ends a probe), used before (a probe goes on), or full
    /// with the high bit set and seven bits of the entry's hash.
    private static var empty: UInt8 { 0 }
    private static var deleted: UInt8 { 1 }

    /// `capacity` control bytes, then `capacity` entries (`nil` where not full).
    private var control: UnsafeMutablePointer<UInt8>
    private var buckets: UnsafeMutablePointer<Entry?>
    /// `capacity - 1`; the capacity is a power of two.
    private var mask: Int
    /// How many entries the table holds.
    private(set) var count = 0
    /// Buckets whose entry was removed and which still lengthen probes.
    private var deletedCount = 0

    private static var minimumCapacity: Int { 8 }

    init() {
        (control, buckets) = Self.allocate(Self.minimumCapacity)
        mask = Self.minimumCapacity - 1
    }

    deinit {
        buckets.deinitialize(count: mask + 1)
        Self.deallocate(control, buckets)
    }

    private var capacity: Int { mask + 1 }

    /// How many buckets the table has now.
    var bucketCount: Int { capacity }

    /// How many entries and deleted buckets `capacity` buckets take before growing: seven-eighths.
    private static func limit(_ capacity: Int) -> Int { capacity - capacity / 8 }

    private static func allocate(_ capacity: Int) -> (UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<Entry?>) {
        let control = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        control.initialize(repeating: empty, count: capacity)
        let buckets = UnsafeMutablePointer<Entry?>.allocate(capacity: capacity)
        buckets.initialize(repeating: nil, count: capacity)
        return (control, buckets)
    }

    private static func deallocate(_ control: UnsafeMutablePointer<UInt8>, _ buckets: UnsafeMutablePointer<Entry?>) {
        control.deallocate()
        buckets.deallocate()
    }

    /// The ID's hash, mixed as ``IDKey`` mixes it.
    @inline(__always)
    private static func mixedHash(_ id: IDValue) -> UInt64 { IDKey.mix(id.cachedHash) }

    /// The control byte of a full bucket holding an entry of hash `hash`.
    @inline(__always)
    private static func tag(_ hash: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: hash >> 57) | 0x80 }

    /// The bucket holding `id`'s entry, if any.
    @inline(__always)
    private func index(of id: IDValue) -> Int? {
        let hash = Self.mixedHash(id)
        let tag = Self.tag(hash)
        var index = Int(truncatingIfNeeded: hash) & mask
        while true {
            let byte = control[index]
            if byte == Self.empty { return nil }
            if byte == tag, let entry = buckets[index], entry.tableKey.isSame(as: id) { return index }
            index = (index + 1) & mask
        }
    }

    /// Asks the processor to bring in what a probe for `id` reads first — its home bucket's
    /// control byte and entry — so that a loop filing or finding many IDs can ask a few IDs ahead
    /// and the cache misses of those probes overlap (each probe of a table of 100,000
    /// rows missed the processor's caches, a sixth of a fetch). A hint: it changes nothing.
    @inline(__always)
    func prefetch(_ id: IDValue) {
        let index = Int(truncatingIfNeeded: Self.mixedHash(id)) & mask
        ocd_prefetch_for_write(control + index)
        ocd_prefetch_for_write(buckets + index)
    }

    /// Asks the processor for the first two cache lines of the entry in `bucket`, if any (an
    /// entry's ID may lie past its first line), reading the bucket as the address it holds: no
    /// reference is counted, so the entry itself is not touched.
    @inline(__always)
    private static func prefetchEntry(at bucket: UnsafeMutablePointer<Entry?>) {
        // An optional class reference is one word, zero for `nil`.
        guard let address = UnsafeRawPointer(bucket).load(as: UnsafeRawPointer?.self) else { return }
        ocd_prefetch_for_read(address)
        ocd_prefetch_for_read(address + 64)
    }

    /// The entry filed under `id`.
    subscript(id: IDValue) -> Entry? {
        guard let index = index(of: id) else { return nil }
        return buckets[index]
    }

    /// The entry filed under `id`.
    subscript(id: NSManagedObjectID) -> Entry? { self[id.value] }

    /// Files `entry` under its ID, in place of an entry already filed there; answers that entry.
    @discardableResult
    func insert(_ entry: Entry) -> Entry? {
        let id = entry.tableKey
        var replaced: Entry?
        _ = self.entry(
            for: id,
            keeping: { old in
                replaced = old
                return false
            }, make: { entry })
        return replaced
    }

    /// The entry filed under `id` if `keep` accepts it; otherwise (none filed, or `keep` refuses
    /// it) a new one from `make`, filed in its place. One probe either way. `make`'s entry must
    /// answer `id`.
    @inline(__always)
    func entry(for id: IDValue, keeping keep: (Entry) -> Bool, make: () -> Entry) -> Entry {
        reserveCapacity(count + 1)
        let hash = Self.mixedHash(id)
        let tag = Self.tag(hash)
        var index = Int(truncatingIfNeeded: hash) & mask
        var firstDeleted: Int?
        while true {
            let byte = control[index]
            if byte == Self.empty { break }
            if byte == Self.deleted {
                if firstDeleted == nil { firstDeleted = index }
            } else if byte == tag, let old = buckets[index], old.tableKey.isSame(as: id) {
                if keep(old) { return old }
                let new = make()
                buckets[index] = new
                return new
            }
            index = (index + 1) & mask
        }
        let new = make()
        if let firstDeleted {
            index = firstDeleted
            deletedCount -= 1
        }
        control[index] = tag
        buckets[index] = new
        count += 1
        return new
    }

    /// Takes `id`'s entry out of the table, answering it.
    @discardableResult
    func remove(_ id: IDValue) -> Entry? {
        guard let index = index(of: id) else { return nil }
        return remove(at: index)
    }

    /// Calls `decide` with `id`'s entry, if any, and takes the entry out when `decide` says so;
    /// one probe either way. Answers the entry found.
    @discardableResult
    func remove(_ id: IDValue, if decide: (Entry) -> Bool) -> Entry? {
        guard let index = index(of: id), let entry = buckets[index] else { return nil }
        if decide(entry) { _ = remove(at: index) }
        return entry
    }

    /// Takes `entry` itself out, not another entry filed under its ID; answers whether it was in
    /// the table. One probe, comparing entries by identity.
    @discardableResult
    func remove(_ entry: Entry) -> Bool {
        let hash = Self.mixedHash(entry.tableKey)
        let tag = Self.tag(hash)
        var index = Int(truncatingIfNeeded: hash) & mask
        while true {
            let byte = control[index]
            if byte == Self.empty { return false }
            if byte == tag, buckets[index] === entry {
                _ = remove(at: index)
                return true
            }
            index = (index + 1) & mask
        }
    }

    /// Rebuilds the table for the entries it holds once removals have left it at most a sixteenth
    /// full, giving the memory back. Rebuilding reads every entry left (its ID, for its hash), a
    /// cache miss each when the entries are scattered: rebuilding whenever deleted buckets
    /// outnumbered entries read a context's remaining rows again and again as it went away, about
    /// as many reads as rows; at a sixteenth, about one row in fifteen. Deleted buckets
    /// do not lengthen the probes of entries still filed, and an insertion that needs them back
    /// rebuilds the table anyway. O(capacity), paid for by the removals that made it due.
    func shrinkIfSparse() {
        guard deletedCount > 64, count <= capacity / 16 else { return }
        rehash(capacity: Self.capacity(for: count))
    }

    private func remove(at index: Int) -> Entry? {
        let entry = buckets[index]
        buckets[index] = nil
        count -= 1
        // A bucket before an empty one ends no probe that another entry needs: it can be empty too.
        if control[(index + 1) & mask] == Self.empty {
            control[index] = Self.empty
        } else {
            control[index] = Self.deleted
            deletedCount += 1
        }
        return entry
    }

    /// Takes out every entry `shouldRemove` picks, answering them. The closure gets each entry as
    /// the table holds it (`isKnownUniquelyReferenced` tells whether only the table references
    /// it) and must not change the table.
    @discardableResult
    func removeAll(where shouldRemove: (inout Entry) -> Bool) -> [Entry] {
        var removed: [Entry] = []
        for index in 0..<capacity where control[index] >= 0x80 {
            guard var entry = (buckets + index).move() else { continue }
            let remove = shouldRemove(&entry)
            (buckets + index).initialize(to: entry)
            if remove, let entry = self.remove(at: index) { removed.append(entry) }
        }
        if deletedCount > 0 { rehash(capacity: Self.capacity(for: count)) }
        Self.sortInMemoryOrder(&removed)
        return removed
    }

    /// Makes room for `minimumCount` entries without growing again.
    func reserveCapacity(_ minimumCount: Int) {
        guard minimumCount + deletedCount > Self.limit(capacity) else { return }
        rehash(capacity: Swift.max(capacity, Self.capacity(for: minimumCount)))
    }

    /// The smallest capacity holding `count` entries.
    private static func capacity(for count: Int) -> Int {
        var capacity = minimumCapacity
        while limit(capacity) < count { capacity *= 2 }
        return capacity
    }

    /// Moves every entry into new buckets of `newCapacity`, dropping deleted buckets.
    private func rehash(capacity newCapacity: Int) {
        let (oldControl, oldBuckets, oldCapacity) = (control, buckets, capacity)
        (control, buckets) = Self.allocate(newCapacity)
        mask = newCapacity - 1
        deletedCount = 0
        for old in 0..<oldCapacity where oldControl[old] >= 0x80 {
            // Each entry is read for its ID, in bucket order (hash order): the entry a few
            // buckets ahead is asked for first, so those misses overlap (a to-many walk grows its
            // tables a doubling at a time).
            if old + Prefetching.distance < oldCapacity {
                Self.prefetchEntry(at: oldBuckets + old + Prefetching.distance)
            }
            guard let entry = (oldBuckets + old).move() else { continue }
            var index = Int(truncatingIfNeeded: Self.mixedHash(entry.tableKey)) & mask
            while control[index] != Self.empty { index = (index + 1) & mask }
            control[index] = oldControl[old]
            buckets[index] = entry
        }
        // Every full bucket was moved out; the others hold `nil`, nothing to release.
        Self.deallocate(oldControl, oldBuckets)
    }

    /// The entries, copied out: the table may change while a caller goes through them.
    var entries: [Entry] {
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        forEach { entries.append($0) }
        return entries
    }

    /// Calls `body` with each entry; `body` must not change the table.
    func forEach(_ body: (Entry) throws -> Void) rethrows {
        for index in 0..<capacity where control[index] >= 0x80 {
            if let entry = buckets[index] { try body(entry) }
        }
    }

    /// Takes every entry out in the order of their addresses in memory and hands them to `body` a
    /// chunk of at most `chunkSize` at a time, letting go of each chunk's entries when `body`
    /// returns: what `body` touches of a chunk and what the entries free (when nothing else holds
    /// them) are still in the processor's caches, where a pass over every entry, then a release of
    /// every entry, touched each entry twice from memory (a context of 100,000 objects
    /// going away). The table is empty before `body` is first called; `body` may use it.
    func drainInMemoryOrder(chunkSize: Int, _ body: (UnsafeBufferPointer<Entry>) -> Void) {
        Self.drainInMemoryOrder([self], chunkSize: chunkSize, body)
    }

    /// ``drainInMemoryOrder(chunkSize:_:)`` for several tables at once: every table is empty
    /// before `body` is first called, and the entries of all go in one order of addresses.
    static func drainInMemoryOrder(
        _ tables: [IDTable], chunkSize: Int, _ body: (UnsafeBufferPointer<Entry>) -> Void
    ) {
        let count = tables.reduce(0) { $0 + $1.count }
        guard count > 0 else {
            for table in tables { table.removeAll() }
            return
        }
        let entries = UnsafeMutablePointer<Entry>.allocate(capacity: count)
        defer { entries.deallocate() }
        var moved = 0
        for table in tables { moved += table.moveAllOut(to: entries + moved) }
        entries.withMemoryRebound(to: UInt.self, capacity: moved) {
            Self.sortAddresses(UnsafeMutableBufferPointer(start: $0, count: moved))
        }
        var start = 0
        while start < moved {
            let end = Swift.min(start + chunkSize, moved)
            body(UnsafeBufferPointer(start: entries + start, count: end - start))
            (entries + start).deinitialize(count: end - start)
            start = end
        }
    }

    /// Moves every entry into `destination` (room for ``count``), emptying the table without a
    /// retain or release of any entry; answers how many were moved.
    private func moveAllOut(to destination: UnsafeMutablePointer<Entry>) -> Int {
        var moved = 0
        for index in 0..<capacity where control[index] >= 0x80 {
            // A full bucket's entry; moved out, the bucket is left uninitialized, and the old
            // buckets are freed below without deinitializing them.
            guard let entry = (buckets + index).move() else { continue }
            (destination + moved).initialize(to: entry)
            moved += 1
        }
        let (oldControl, oldBuckets) = (control, buckets)
        (control, buckets) = Self.allocate(Self.minimumCapacity)
        mask = Self.minimumCapacity - 1
        count = 0
        deletedCount = 0
        // Buckets not full hold `nil`; full ones were moved out: nothing is left to release.
        Self.deallocate(oldControl, oldBuckets)
        return moved
    }

    /// Sorts `entries` by address. Buckets are in hash order, which scatters an owner's last
    /// references over the heap; let go of in address order instead, the entries (and the blocks
    /// each owns, made with it) are freed as they were allocated, so each free finds its block
    /// and its neighbours in the processor's caches.
    ///
    /// Sorted as the words they are: an entry is a class reference, one word, so the buffer is
    /// rebound to `UInt` and radix-sorted (``sortAddresses(_:)``). The sort only permutes the
    /// words, so each reference, and the count it owns, is in the array once, as before. The
    /// standard library's comparison sort cost many times more, twice for a context going away
    /// (its objects, then the row cache's rows).
    private static func sortInMemoryOrder(_ entries: inout [Entry]) {
        entries.withUnsafeMutableBufferPointer { buffer in
            buffer.withMemoryRebound(to: UInt.self) { sortAddresses($0) }
        }
    }

    /// Sorts `words` ascending: a least-significant-digit radix sort, 11 bits a pass, over only
    /// the bits in which the words differ (addresses of one heap share their high bits, and
    /// allocations are 16-byte aligned), so 100,000 addresses take two or three passes.
    static func sortAddresses(_ words: UnsafeMutableBufferPointer<UInt>) {
        guard words.count > 256 else {
            var words = words
            words.sort()
            return
        }
        var low = UInt.max
        var high: UInt = 0
        for word in words {
            low = Swift.min(low, word)
            high = Swift.max(high, word)
        }
        var differing: UInt = 0
        for word in words { differing |= word &- low }
        guard differing != 0 else { return }
        let end = UInt.bitWidth - (high &- low).leadingZeroBitCount
        let digitBits = 11
        let mask = UInt(1 << digitBits - 1)
        let scratch = UnsafeMutableBufferPointer<UInt>.allocate(capacity: words.count)
        defer { scratch.deallocate() }
        let counts = UnsafeMutableBufferPointer<Int>.allocate(capacity: 1 << digitBits)
        defer { counts.deallocate() }
        var source = words
        var destination = scratch
        var shift = differing.trailingZeroBitCount
        while shift < end {
            counts.initialize(repeating: 0)
            for word in source { counts[Int(((word &- low) &>> UInt(shift)) & mask)] += 1 }
            var total = 0
            for digit in counts.indices {
                let count = counts[digit]
                counts[digit] = total
                total += count
            }
            for word in source {
                let digit = Int(((word &- low) &>> UInt(shift)) & mask)
                destination[counts[digit]] = word
                counts[digit] += 1
            }
            swap(&source, &destination)
            shift += digitBits
        }
        if source.baseAddress != words.baseAddress {
            _ = words.update(fromContentsOf: source)
        }
    }

    /// Takes every entry out, keeping no buckets beyond the smallest table.
    func removeAll() {
        let (oldControl, oldBuckets, oldCapacity) = (control, buckets, capacity)
        (control, buckets) = Self.allocate(Self.minimumCapacity)
        mask = Self.minimumCapacity - 1
        count = 0
        deletedCount = 0
        oldBuckets.deinitialize(count: oldCapacity)
        Self.deallocate(oldControl, oldBuckets)
    }
}
