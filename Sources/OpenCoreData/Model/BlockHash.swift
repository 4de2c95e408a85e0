/// The framing SHA-256 and SHA-512 share (FIPS 180-4, "Preprocessing"): bytes are buffered into
/// blocks for `compress`, and the message is padded with `0x80`, zeros and its length in bits —
/// big-endian in the last eighth of the final block (8 bytes for SHA-256, 16 for SHA-512).
protocol BlockHash {
    /// Bytes per block: 64 or 128.
    static var blockSize: Int { get }
    init()
    var buffer: [UInt8] { get set }
    /// Bytes hashed so far.
    var length: UInt64 { get set }
    /// Processes one full block.
    mutating func compress(_ block: [UInt8])
    /// The state words as big-endian bytes.
    var digest: [UInt8] { get }
}

extension BlockHash {
    package mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        for byte in bytes {
            buffer.append(byte)
            length &+= 1
            if buffer.count == Self.blockSize {
                compress(buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }
    }

    package mutating func update(_ string: String) { update(string.utf8) }

    package mutating func finalize() -> [UInt8] {
        let bitLength = length &* 8
        let lengthField = Self.blockSize / 8
        update([0x80])
        while buffer.count != Self.blockSize - lengthField { update([0]) }
        // Messages here are far below 2^64 bits: the length's bytes above the low eight are zero.
        update([UInt8](repeating: 0, count: lengthField - 8))
        update((0..<8).map { UInt8(truncatingIfNeeded: bitLength >> (56 - 8 * UInt64($0))) })
        return digest
    }

    static func hash<Bytes: Sequence>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        var hasher = Self()
        hasher.update(bytes)
        return hasher.finalize()
    }
}
