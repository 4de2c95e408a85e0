/// Transformable attributes: through the attribute's named `ValueTransformer`, else the secure
/// unarchiving one, Apple's default. A transformer that unarchives from data
/// (`NSSecureUnarchiveFromDataTransformer` and its subclasses, which the legacy
/// `NSKeyedUnarchiveFromData` name also names here) is used in reverse, as Apple's Core Data
/// does: `reverseTransformedValue` makes the stored `Data`, `transformedValue` reads it. Any other
/// transformer turns the value into `Data` forward and back in reverse.
package enum Transformable {
    package static func transformer(_ attribute: NSAttributeDescription?) -> ValueTransformer? {
        let name = attribute?.valueTransformerName.flatMap { $0.isEmpty ? nil : $0 }
        return ValueTransformer.registered(.init(name ?? "NSSecureUnarchiveFromData"))
    }

    /// The `Data` stored for `value`: the transformer's output, or the value itself when it is
    /// already `Data` and the transformer gives none.
    package static func encode(_ value: Any, attribute: NSAttributeDescription?) -> Data? {
        guard let transformer = transformer(attribute) else { return value as? Data }
        guard transformer is NSSecureUnarchiveFromDataTransformer else {
            return (transformer.transformedValue(value) as? Data) ?? (value as? Data)
        }
        // Property-list values are archived here, deterministically, as Apple's archiver lays them
        // out, when the transformer is Apple's own (a subclass may archive its own way).
        if type(of: transformer) == NSSecureUnarchiveFromDataTransformer.self,
            let archive = CompiledModelEncoder.plainArchive(value)
        {
            return archive
        }
        return (transformer.reverseTransformedValue(value) as? Data) ?? (value as? Data)
    }

    /// The attribute's value for stored `data`: the transformer's output, or the bytes themselves
    /// when the transformer cannot read them (so nothing stored is lost).
    package static func decode(_ data: Data, attribute: NSAttributeDescription?) -> Any? {
        guard let transformer = transformer(attribute) else { return data }
        let output =
            transformer is NSSecureUnarchiveFromDataTransformer
            ? transformer.transformedValue(data) : transformer.reverseTransformedValue(data)
        return DynamicValue.unwrap(output) ?? data
    }
}
