/// A set of slot numbers as a bit set: one bit per property of the entity.
package struct SlotSet: Sequence {
    /// Slots 0 to 63, one bit each: every slot of most entities, with no allocation.
    private var low: UInt64 = 0
    /// Slots from 64 on, 64 to a word.
    private var high: [UInt64] = []

    package init() {}

    var isEmpty: Bool { low == 0 && high.allSatisfy { $0 == 0 } }

    package mutating func insert(_ slot: Int) {
        let bit: UInt64 = 1 << UInt64(slot & 63)
        let word = slot >> 6
        if word == 0 {
            low |= bit
            return
        }
        if word > high.count { high.append(contentsOf: repeatElement(0, count: word - high.count)) }
        high[word - 1] |= bit
    }

    mutating func remove(_ slot: Int) {
        let bit: UInt64 = 1 << UInt64(slot & 63)
        let word = slot >> 6
        if word == 0 {
            low &= ~bit
        } else if word <= high.count {
            high[word - 1] &= ~bit
        }
    }

    func contains(_ slot: Int) -> Bool {
        let bit: UInt64 = 1 << UInt64(slot & 63)
        let word = slot >> 6
        if word == 0 { return low & bit != 0 }
        return word <= high.count && high[word - 1] & bit != 0
    }

    package func makeIterator() -> AnyIterator<Int> {
        var word = 0
        var bits = low
        let high = self.high
        return AnyIterator {
            while true {
                if bits != 0 {
                    let bit = bits.trailingZeroBitCount
                    bits &= bits - 1
                    return word * 64 + bit
                }
                guard word < high.count else { return nil }
                bits = high[word]
                word += 1
            }
        }
    }
}
