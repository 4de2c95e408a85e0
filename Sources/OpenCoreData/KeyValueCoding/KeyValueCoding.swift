/// A type whose properties can be read by name, the Linux stand-in for Objective-C's informal
/// `NSKeyValueCoding` protocol.
///
/// Predicates, sort descriptors and key-path walks read values through this protocol.
/// `NSManagedObject` adopts it; adopt it in your own types to evaluate predicates against them:
///
/// ```swift
/// struct Person: KeyValueCoding {
///     var name: String
///     func value(forKey key: String) -> Any? { key == "name" ? name : nil }
/// }
/// NSPredicate(format: "name BEGINSWITH 'A'").evaluate(with: Person(name: "Ada"))  // true
/// ```
///
/// > Note: Differs from Apple Core Data: Linux has no Objective-C runtime, so key-value coding is
/// > this explicit protocol. Values that do not adopt it are read by reflection (`Mirror`).
public protocol KeyValueCoding {
    /// Returns the value of the property named `key`, or `nil` when there is none.
    func value(forKey key: String) -> Any?
}

extension KeyValueCoding {
    /// Returns the value reached by following a dot-separated key path, applying collection
    /// operators (`@count`, `@sum`, `@avg`, `@min`, `@max`, `@distinctUnionOfObjects`, …) as
    /// Apple's key-value coding does.
    ///
    /// Related documentation: Key-Value Coding Programming Guide, "Using Collection Operators".
    public func value(forKeyPath keyPath: String) -> Any? {
        KeyValueCodingAccess.value(of: self, keyPath: KeyPathComponents(keyPath))
    }
}

/// A key path split once into its components, so repeated evaluation does no string work.
package struct KeyPathComponents: Hashable, Sendable {
    package let components: [String]

    package init(_ keyPath: String) {
        components = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    init(components: [String]) {
        self.components = components
    }

    var string: String { components.joined(separator: ".") }
}
