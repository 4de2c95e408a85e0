/// Apple's entity and property version hashes (STORE-FORMAT.md, "Version hashes"). `H` is
/// SHA-256, strings are UTF-8 without terminator:
///
/// ```
/// property base     = H( name ‖ u16le(1 optional | 2 transient | 4 read-only) ‖ versionHashModifier )
/// attribute hash    = H( base ‖ u32le(attributeType) ‖ 0x01 if external binary storage allowed
///                        ‖ 0x01 if preservesValueInHistoryOnDeletion )
/// derived attribute = H( derivation expression's format, `count:(pages)` for `pages.@count` )
/// composite         = H( hashes of its non-transient leaf elements, nested composites flattened,
///                        by name ) — its own name and flags are not part of it
/// relationship hash = H( base ‖ destination name ‖ inverse name unless it is its own inverse
///                        ‖ u32le(maxCount) ‖ u32le(minCount) ‖ 0x01 0x00 if ordered )
/// entity hash       = H( name ‖ abstract ‖ parent's hash ‖ hashes of the stored attributes and
///                        relationships, inherited included, by name ‖ versionHashModifier
///                        ‖ uniqueness constraints, each joined by ".", sorted )
/// ```
enum VersionHash {
    static func littleEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value & 0xff), UInt8(value >> 8 & 0xff), UInt8(value >> 16 & 0xff), UInt8(value >> 24 & 0xff)]
    }

    static func property(_ property: NSPropertyDescription) -> [UInt8] {
        var base = Array(property.name.utf8)
        // Read-only is no public setting of a property; a derived attribute is read-only.
        let readOnly = property is NSDerivedAttributeDescription || property is NSFetchedPropertyDescription
        base += [(property.isOptional ? 1 : 0) | (property.isTransient ? 2 : 0) | (readOnly ? 4 : 0), 0]
        if let modifier = property.versionHashModifier { base += Array(modifier.utf8) }
        let common = SHA256.hash(base)
        switch property {
        case let relationship as NSRelationshipDescription: return Self.relationship(relationship, common)
        case let attribute as NSAttributeDescription: return Self.attribute(attribute, common)
        default: return common
        }
    }

    private static func attribute(_ attribute: NSAttributeDescription, _ common: [UInt8]) -> [UInt8] {
        if let composite = attribute as? NSCompositeAttributeDescription {
            // As Apple's Core Data hashes a composite: the leaves' own hashes, in name order.
            let leaves = composite.leaves.map(\.attribute).filter { !$0.isTransient }
                .sorted { Array($0.name.utf8).lexicographicallyPrecedes(Array($1.name.utf8)) }
            var hasher = SHA256()
            for leaf in leaves { hasher.update(property(leaf)) }
            return hasher.finalize()
        }
        var bytes = common + littleEndian(UInt32(attribute.attributeType.rawValue))
        if attribute.allowsExternalBinaryDataStorage { bytes.append(1) }
        if attribute.preservesValueInHistoryOnDeletion { bytes.append(1) }
        let hash = SHA256.hash(bytes)
        guard let derived = attribute as? NSDerivedAttributeDescription else { return hash }
        // Apple's derived-attribute hash starts afresh: the attribute's own hash is not part of it.
        return SHA256.hash(Array((derived.derivationExpression.map(derivationFormat) ?? "").utf8))
    }

    /// A derivation as Apple's `predicateFormat` writes it once Xcode has compiled it: a to-many
    /// aggregate key path (`pages.@count`) is the function `count:(pages)`.
    static func derivationFormat(_ expression: NSExpression) -> String {
        let text = expression.description
        let functions = ["count": "count:", "sum": "sum:", "avg": "average:", "min": "min:", "max": "max:"]
        guard !text.contains(where: { $0 == "(" || $0 == " " }), let at = text.range(of: ".@") else { return text }
        let path = String(text[..<at.lowerBound])
        let rest = text[at.upperBound...].split(separator: ".", maxSplits: 1).map(String.init)
        guard let name = rest.first, let function = functions[name] else { return text }
        return function + "(" + path + (rest.count > 1 ? "." + rest[1] : "") + ")"
    }

    private static func relationship(_ relationship: NSRelationshipDescription, _ common: [UInt8]) -> [UInt8] {
        var bytes =
            common + Array((relationship.destinationEntity?.name ?? relationship.destinationEntityName ?? "").utf8)
        if let inverse = relationship.inverseRelationship?.name ?? relationship.inverseRelationshipName,
            !isOwnInverse(relationship)
        {
            bytes += Array(inverse.utf8)
        }
        bytes += littleEndian(UInt32(truncatingIfNeeded: relationship.maxCount))
        bytes += littleEndian(UInt32(truncatingIfNeeded: relationship.minCount))
        if relationship.isOrdered { bytes += [1, 0] }
        return SHA256.hash(bytes)
    }

    /// Whether `relationship`, as the topmost entity declaring it has it, is its own inverse
    /// (`friends` ↔ `friends` on one entity): Apple leaves such an inverse's name out of the hash.
    static func isOwnInverse(_ relationship: NSRelationshipDescription) -> Bool {
        var declaring = relationship.entity
        while let parent = declaring?.superentity, parent.relationshipsByName[relationship.name] != nil {
            declaring = parent
        }
        let declared = declaring?.relationshipsByName[relationship.name] ?? relationship
        let inverseName = declared.inverseRelationship?.name ?? declared.inverseRelationshipName
        let destination = declared.destinationEntity?.name ?? declared.destinationEntityName
        return inverseName == declared.name && destination != nil && destination == declaring?.name
    }

    static func entity(_ entity: NSEntityDescription) -> [UInt8] {
        var bytes = Array((entity.name ?? "").utf8)
        bytes.append(entity.isAbstract ? 1 : 0)
        if let parent = entity.superentity { bytes += Self.entity(parent) }
        let stored = entity.properties.filter {
            !$0.isTransient && ($0 is NSAttributeDescription || $0 is NSRelationshipDescription)
        }
        .sorted { Array($0.name.utf8).lexicographicallyPrecedes(Array($1.name.utf8)) }
        for stored in stored { bytes += Self.property(stored) }
        if let modifier = entity.versionHashModifier { bytes += Array(modifier.utf8) }
        let constraints = entity.uniquenessConstraints.map { constraint in
            constraint.map { ($0 as? NSPropertyDescription)?.name ?? "\($0)" }.joined(separator: ".")
        }
        for constraint in constraints.sorted() where !constraint.isEmpty { bytes += Array(constraint.utf8) }
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
