/// Apple's entity and property version hashes, as STORE-FORMAT.md reconstructs them from real stores:
///
/// ```
/// base(p)           = H( name ‖ flags(p) ‖ 0x00 ‖ versionHashModifier if set )
/// attribute hash    = H( base ‖ u32le(attributeType) ‖ 0x01 if preservesValueInHistoryOnDeletion )
/// relationship hash = H( base ‖ destination name ‖ inverse name if any ‖ u32le(maxCount)
///                        ‖ u32le(minCount) ‖ 0x01 0x00 if ordered )
/// entity hash       = H( name ‖ abstract ‖ parent's hash if any ‖ hashes of the stored
///                        properties, inherited included, by name ‖ own uniqueness constraints )
/// ```
enum VersionHash {
    static func littleEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value & 0xff), UInt8(value >> 8 & 0xff), UInt8(value >> 16 & 0xff), UInt8(value >> 24 & 0xff)]
    }

    static func property(_ property: NSPropertyDescription) -> [UInt8] {
        var base = Array(property.name.utf8)
        base.append(property.versionHashFlags)
        base.append(0)
        if let modifier = property.versionHashModifier { base += Array(modifier.utf8) }
        return SHA256.hash(SHA256.hash(base) + property.versionHashSuffix())
    }

    static func entity(_ entity: NSEntityDescription) -> [UInt8] {
        var bytes = Array((entity.name ?? "").utf8)
        bytes.append(entity.isAbstract ? 1 : 0)
        if let parent = entity.superentity { bytes += Self.entity(parent) }
        let stored = entity.properties.filter { !$0.isTransient }
            .sorted { Array($0.name.utf8).lexicographicallyPrecedes(Array($1.name.utf8)) }
        for stored in stored { bytes += Self.property(stored) }
        for constraint in entity.uniquenessConstraints {
            let names = constraint.map { ($0 as? NSPropertyDescription)?.name ?? "\($0)" }
            bytes += Array(names.joined(separator: ".").utf8)
        }
        if let modifier = entity.versionHashModifier { bytes += Array(modifier.utf8) }
        return SHA256.hash(bytes)
    }
}

/// The digests of a model's entity version hashes that a store records in its metadata, so a
/// reader can tell quickly whether a model matches.
package enum ModelVersionDigests {
    /// `NSStoreModelVersionChecksumKey`: base64 of SHA-256 over the entity hashes in name order.
    package static func checksum(_ hashes: [String: Data]) -> String {
        var hasher = SHA256()
        for (_, hash) in hashes.sorted(by: { $0.key < $1.key }) { hasher.update([UInt8](hash)) }
        return Data(hasher.finalize()).base64EncodedString()
    }

    /// `NSStoreModelVersionHashesDigest`: base64 of SHA-512 over each entity's name and hash, in
    /// name order.
    package static func digest(_ hashes: [String: Data]) -> String {
        var hasher = SHA512()
        for (name, hash) in hashes.sorted(by: { $0.key < $1.key }) {
            hasher.update(name)
            hasher.update([UInt8](hash))
        }
        return Data(hasher.finalize()).base64EncodedString()
    }
}
