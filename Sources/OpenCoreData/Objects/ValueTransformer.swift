/// Foundation's `ValueTransformer`, which Foundation on Linux lacks: converts a transformable
/// attribute's value to the `Data` a store writes, and back.
///
/// Register transformers by name with ``setValueTransformer(_:forName:)``; an attribute's
/// `valueTransformerName` picks one. Without a name, transformable attributes use
/// ``NSSecureUnarchiveFromDataTransformer`` (Apple's default since iOS 12 / macOS 10.14).
///
/// Related documentation: ValueTransformer class reference; NSAttributeDescription,
/// `valueTransformerName`.
open class ValueTransformer: NSObject, @unchecked Sendable {
    /// A transformer's registered name.
    public struct Name: RawRepresentable, Hashable, Sendable {
        /// The name's text.
        public let rawValue: String
        /// Creates a name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Creates a name.
        public init(_ rawValue: String) { self.rawValue = rawValue }

        /// The secure-unarchiving transformer, the default for transformable attributes.
        public static let secureUnarchiveFromDataTransformerName = Name("NSSecureUnarchiveFromData")
        /// The legacy keyed-unarchiving transformer (treated as the secure one here).
        public static let keyedUnarchiveFromDataTransformerName = Name("NSKeyedUnarchiveFromData")
    }

    private static let registry = TransformerRegistry()

    /// Registers `transformer` under `name`; `nil` removes the registration.
    open class func setValueTransformer(_ transformer: ValueTransformer?, forName name: Name) {
        registry.set(transformer, for: name)
    }

    /// The transformer registered under `name`.
    public convenience init?(forName name: Name) {
        guard Self.registry.transformer(for: name) != nil else { return nil }
        self.init()
        forwarding = Self.registry.transformer(for: name)
    }

    /// The names of the registered transformers.
    open class func valueTransformerNames() -> [Name] { registry.names }

    /// The transformer instance registered under `name` (``init(forName:)`` can only hand out a
    /// stand-in that forwards to it).
    package static func registered(_ name: Name) -> ValueTransformer? { registry.transformer(for: name) }

    /// The class of the transformed values.
    open class func transformedValueClass() -> AnyClass { NSData.self }

    /// Whether ``reverseTransformedValue(_:)`` is supported.
    open class func allowsReverseTransformation() -> Bool { true }

    private var forwarding: ValueTransformer?

    /// Transforms `value`. For a transformable attribute with a transformer of your own, Core Data
    /// calls this to turn the attribute's value into the `Data` it stores.
    open func transformedValue(_ value: Any?) -> Any? {
        forwarding?.transformedValue(value) ?? value
    }

    /// Reverses the transformation. For a transformable attribute with a transformer of your own,
    /// Core Data calls this to turn stored `Data` back into the attribute's value.
    open func reverseTransformedValue(_ value: Any?) -> Any? {
        forwarding?.reverseTransformedValue(value) ?? value
    }
}

final class TransformerRegistry: @unchecked Sendable {
    private let lock = NSLock()
    private var transformers: [ValueTransformer.Name: ValueTransformer] = [
        .secureUnarchiveFromDataTransformerName: NSSecureUnarchiveFromDataTransformer(),
        .keyedUnarchiveFromDataTransformerName: NSSecureUnarchiveFromDataTransformer(),
    ]

    func set(_ transformer: ValueTransformer?, for name: ValueTransformer.Name) {
        lock.lock()
        defer { lock.unlock() }
        transformers[name] = transformer
    }

    func transformer(for name: ValueTransformer.Name) -> ValueTransformer? {
        lock.lock()
        defer { lock.unlock() }
        return transformers[name]
    }

    var names: [ValueTransformer.Name] {
        lock.lock()
        defer { lock.unlock() }
        return Array(transformers.keys)
    }
}

/// Apple's name of a value transformer's name type: `NSValueTransformerName` in Swift on Apple
/// platforms (`NSValueTransformerName.secureUnarchiveFromDataTransformerName`).
public typealias NSValueTransformerName = ValueTransformer.Name
