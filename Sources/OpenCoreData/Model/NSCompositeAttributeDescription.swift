/// An attribute whose value is composed of other attributes: a dictionary in memory, keyed by the
/// elements' names, whose elements may themselves be composites.
///
/// The store keeps each leaf element in a column of its own, so elements can be queried, sorted
/// and constrained with namespaced key paths (`magnitude.richter > 4.5`).
///
/// Related documentation: NSCompositeAttributeDescription class reference.
open class NSCompositeAttributeDescription: NSAttributeDescription, @unchecked Sendable {
    /// The composed attribute descriptions.
    ///
    /// An element may be of any attribute type except undefined, object ID and binary data stored
    /// outside the store; a composite may nest. Setting an element of another type traps, as
    /// Apple's raises: a model in code is a programmer's declaration (a model read from a file
    /// is checked first, and a bad one is an error).
    open var elements: [NSAttributeDescription] = [] {
        willSet {
            entity?.checkEditable("NSCompositeAttributeDescription.elements")
            for element in newValue {
                if let problem = Self.problem(with: element) { preconditionFailure(problem) }
            }
        }
    }

    /// Creates a composite attribute without elements.
    override public init() {
        super.init()
    }

    /// The type is always ``NSAttributeType/compositeAttributeType``.
    override open var attributeType: NSAttributeType {
        get { .compositeAttributeType }
        set {
            precondition(
                newValue == .compositeAttributeType,
                "The attribute type of a composite cannot be changed from NSCompositeAttributeType.")
        }
    }

    /// The leaf elements, depth first, each with the names that lead to it from this composite
    /// (`["magnitude", "richter"]` is `["richter"]` here).
    package var leaves: [(path: [String], attribute: NSAttributeDescription)] {
        elements.flatMap { element -> [(path: [String], attribute: NSAttributeDescription)] in
            guard let nested = element as? NSCompositeAttributeDescription else { return [([element.name], element)] }
            return nested.leaves.map { ([element.name] + $0.path, $0.attribute) }
        }
    }

    /// Why `element` cannot be an element of a composite, or `nil` when it can.
    package static func problem(with element: NSAttributeDescription) -> String? {
        if element is NSCompositeAttributeDescription { return nil }
        switch element.attributeType {
        case .undefinedAttributeType, .objectIDAttributeType, .compositeAttributeType:
            return "A composite attribute does not support elements of type \(element.attributeType) (\(element.name))."
        case .binaryDataAttributeType where element.allowsExternalBinaryDataStorage:
            return "A composite attribute does not support binary elements stored outside the store (\(element.name))."
        default:
            return nil
        }
    }
}

extension NSCompositeAttributeDescription {
    /// The value at `path` inside a composite's value (a dictionary of dictionaries), or `nil`.
    package static func leafValue(_ value: Any?, path: [String]) -> Any? {
        var current = value
        for name in path {
            guard let unwrapped = DynamicValue.unwrap(current) else { return nil }
            let lookup = DynamicValue.dictionaryLookup(unwrapped, key: name)
            guard lookup.isDictionary else { return nil }
            current = lookup.value
        }
        return DynamicValue.unwrap(current)
    }

    /// The composite value made of `leaves` (each a path and the value there), or `nil` when no
    /// leaf has a value: a composite whose every column is empty was stored without a value.
    package static func value(leaves: [(path: [String], value: Any?)]) -> [String: Any]? {
        var result: [String: Any] = [:]
        var any = false
        for leaf in leaves {
            guard let value = leaf.value else { continue }
            any = true
            insert(value, at: leaf.path[...], into: &result)
        }
        return any ? result : nil
    }

    /// `composite` (a composite's value, or `nil`) with the element at `path` set to `value`
    /// (removed when `value` is `nil`).
    package static func replacing(_ value: Any?, at path: [String], in composite: Any?) -> [String: Any] {
        var dictionary = DynamicValue.unwrap(composite) as? [String: Any] ?? [:]
        insert(value, at: path[...], into: &dictionary)
        return dictionary
    }

    private static func insert(_ value: Any?, at path: ArraySlice<String>, into dictionary: inout [String: Any]) {
        guard let first = path.first else { return }
        if path.count == 1 {
            dictionary[first] = DynamicValue.unwrap(value)
            return
        }
        var nested = dictionary[first] as? [String: Any] ?? [:]
        insert(value, at: path.dropFirst(), into: &nested)
        dictionary[first] = nested
    }
}
