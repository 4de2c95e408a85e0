/// An entity's property names by their UTF-8 bytes: the slot of a key spelled exactly as the
/// model spells it, found with a cheap hash of its length and three of its bytes and one byte
/// comparison, where a `[String: Int]` lookup hashes the whole string, in every
/// `value(forKey:)` and `setValue(_:forKey:)`.
///
/// It answers only exact byte matches; `nil` means "ask ``EntityLayout/slotByName``", which also
/// finds a key spelled with other but canonically equivalent Unicode, so the two together answer
/// exactly what the dictionary alone would.
struct SlotNames: Sendable {
    /// Every name's UTF-8 bytes, one after the other.
    private let bytes: [UInt8]
    /// Per slot, where its name starts in ``bytes``; one more entry marks the end of the last.
    private let starts: [Int]
    /// Open addressing: a slot plus one, or 0 for an empty bucket.
    private let buckets: [Int32]

    /// - Parameter winners: per name, the slot the dictionary answers for it (a later property
    ///   with the same name wins there), so both answer the same slot.
    init(names: [String], winners: [String: Int]) {
        var bytes: [UInt8] = []
        var starts: [Int] = []
        for name in names {
            starts.append(bytes.count)
            bytes.append(contentsOf: name.utf8)
        }
        starts.append(bytes.count)
        var size = 8
        while size < names.count * 2 { size *= 2 }
        var buckets = [Int32](repeating: 0, count: size)
        for (slot, name) in names.enumerated() where winners[name] == slot {
            let word = bytes[starts[slot]..<starts[slot + 1]].withContiguousStorageIfAvailable { Self.hash($0) } ?? 0
            var bucket = word & (size - 1)
            while buckets[bucket] != 0 { bucket = (bucket + 1) & (size - 1) }
            buckets[bucket] = Int32(slot + 1)
        }
        self.bytes = bytes
        self.starts = starts
        self.buckets = buckets
    }

    /// The slot whose name has exactly `key`'s UTF-8 bytes, or `nil`.
    @inline(__always)
    func slot(of key: String) -> Int? {
        key.utf8.withContiguousStorageIfAvailable { slot(ofBytes: $0) } ?? nil
    }

    private func slot(ofBytes key: UnsafeBufferPointer<UInt8>) -> Int? {
        let mask = buckets.count - 1
        var bucket = Self.hash(key) & mask
        return bytes.withUnsafeBufferPointer { names in
            while true {
                let entry = Int(buckets[bucket])
                if entry == 0 { return nil }
                let start = starts[entry - 1]
                let count = starts[entry] - start
                if count == key.count
                    && (count == 0
                        || memcmp(names.baseAddress! + start, key.baseAddress!, count) == 0)
                {
                    return entry - 1
                }
                bucket = (bucket + 1) & mask
            }
        }
    }

    /// The length and the first, middle and last bytes, mixed: property names of one entity
    /// rarely agree on all four.
    @inline(__always)
    private static func hash(_ name: UnsafeBufferPointer<UInt8>) -> Int {
        let count = name.count
        guard count > 0 else { return 0 }
        let mixed =
            count &* 0x9E37_79B1 ^ Int(name[0]) &* 0x85EB_CA77 ^ Int(name[count / 2]) &* 0xC2B2_AE3D
            ^ Int(name[count - 1]) &* 0x27D4_EB2F
        return mixed ^ (mixed >> 15)
    }
}
