/// Describes how to order objects: by a key path, ascending or descending, with a comparison
/// selector or a comparator.
///
/// ```swift
/// let byName = NSSortDescriptor(key: "name", ascending: true, selector: Selector("localizedStandardCompare:"))
/// people.sorted(using: [byName, NSSortDescriptor(key: "age", ascending: false)])
/// ```
///
/// `nil` (and `NSNull`) sorts before every other value in ascending order, as `compare:` in
/// Apple's sort descriptors places it.
open class NSSortDescriptor: NSObject, @unchecked Sendable {
    /// The key path whose values are compared; `nil` compares the objects themselves.
    public let key: String?
    /// Whether smaller values come first.
    public let ascending: Bool
    /// The comparison method: `compare:`, `caseInsensitiveCompare:`, `localizedCompare:`,
    /// `localizedCaseInsensitiveCompare:` or `localizedStandardCompare:`.
    public let selector: Selector?
    private let customComparator: Comparator?
    /// Whether the descriptor orders with a comparator closure.
    package var hasComparator: Bool { customComparator != nil }
    private let path: KeyPathComponents?

    /// Creates a sort descriptor that orders by `key` with `compare:`.
    public convenience init(key: String?, ascending: Bool) {
        self.init(key: key, ascending: ascending, selector: nil)
    }

    /// Creates a sort descriptor that orders by `key` with the named comparison method.
    public init(key: String?, ascending: Bool, selector: Selector?) {
        if let selector {
            precondition(
                Self.knownSelectors.contains(selector.name),
                "NSSortDescriptor: unsupported selector \(selector.name); expected one of \(Self.knownSelectors.sorted())"
            )
        }
        self.key = key
        self.ascending = ascending
        self.selector = selector
        customComparator = nil
        path = key.map(KeyPathComponents.init)
        super.init()
    }

    /// Creates a sort descriptor that orders by `key` with a comparator closure.
    public init(key: String?, ascending: Bool, comparator cmptr: @escaping Comparator) {
        self.key = key
        self.ascending = ascending
        selector = nil
        customComparator = cmptr
        path = key.map(KeyPathComponents.init)
        super.init()
    }

    static let knownSelectors: Set<String> = [
        "compare:", "caseInsensitiveCompare:", "localizedCompare:", "localizedCaseInsensitiveCompare:",
        "localizedStandardCompare:",
    ]

    /// The comparator of a comparator-based descriptor, or one that performs its selector.
    open var comparator: Comparator {
        if let customComparator { return customComparator }
        let selectorName = selector?.name ?? "compare:"
        return { Self.compareValues($0, $1, selector: selectorName) }
    }

    /// A descriptor with the same key and comparison and the opposite order.
    open var reversedSortDescriptor: Any {
        if let customComparator {
            return NSSortDescriptor(key: key, ascending: !ascending, comparator: customComparator)
        }
        return NSSortDescriptor(key: key, ascending: !ascending, selector: selector)
    }

    /// Compares two objects by the descriptor's key, comparison and direction.
    open func compare(_ object1: Any, to object2: Any) -> ComparisonResult {
        let lhs: Any? = path.map { KeyValueCodingAccess.value(of: object1, keyPath: $0) } ?? object1
        let rhs: Any? = path.map { KeyValueCodingAccess.value(of: object2, keyPath: $0) } ?? object2
        let result: ComparisonResult
        if let customComparator {
            result = customComparator(lhs ?? NSNull(), rhs ?? NSNull())
        } else {
            result = Self.compareValues(lhs, rhs, selector: selector?.name ?? "compare:")
        }
        guard !ascending else { return result }
        switch result {
        case .orderedAscending: return .orderedDescending
        case .orderedDescending: return .orderedAscending
        case .orderedSame: return .orderedSame
        }
    }

    /// The value the descriptor compares for `object`: its key path's value, or the object itself.
    func sortValue(of object: Any) -> Any? {
        path.map { KeyValueCodingAccess.value(of: object, keyPath: $0) } ?? object
    }

    /// Kept for source compatibility; sort descriptors made here are always evaluable.
    open func allowEvaluation() {}

    package static func compareValues(_ lhs: Any?, _ rhs: Any?, selector: String) -> ComparisonResult {
        let lhs = DynamicValue.unwrap(lhs)
        let rhs = DynamicValue.unwrap(rhs)
        guard let lhs else { return rhs == nil ? .orderedSame : .orderedAscending }
        guard let rhs else { return .orderedDescending }
        if selector != "compare:", let a = DynamicValue.string(lhs), let b = DynamicValue.string(rhs) {
            switch selector {
            case "caseInsensitiveCompare:": return a.compare(b, options: .caseInsensitive)
            case "localizedCompare:": return a.localizedCompare(b)
            case "localizedCaseInsensitiveCompare:": return a.localizedCaseInsensitiveCompare(b)
            default: return a.localizedStandardCompare(b)
            }
        }
        return DynamicValue.compare(lhs, rhs) ?? .orderedSame
    }

    override open var description: String {
        "(\(key ?? "SELF"), \(ascending ? "ascending" : "descending"), \(selector?.name ?? (customComparator == nil ? "compare:" : "comparator")))"
    }

    override open func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSSortDescriptor else { return false }
        return key == other.key && ascending == other.ascending && selector == other.selector
            && (customComparator == nil) == (other.customComparator == nil)
    }

    override open var hash: Int {
        var hasher = Hasher()
        hasher.combine(key)
        hasher.combine(ascending)
        hasher.combine(selector)
        return hasher.finalize()
    }
}

extension Sequence {
    /// Returns the elements ordered by the sort descriptors: by the first descriptor, ties broken
    /// by the next, and so on. The sort is stable: elements equal under every descriptor keep
    /// their order.
    ///
    /// - Complexity: O(*n* log *n*) comparisons, each reading the keys of two elements.
    public func sorted(using sortDescriptors: [NSSortDescriptor]) -> [Element] {
        let elements = Array(self)
        guard !sortDescriptors.isEmpty, elements.count > 1 else { return elements }
        // Each element's key values are read once, not twice per comparison: key-value coding
        // dominated sorting 100,000 objects. The comparison is `compare(_:to:)`'s.
        let keys = sortDescriptors.map { descriptor in elements.map { descriptor.sortValue(of: $0) } }
        let comparators = sortDescriptors.map(\.comparator)
        let order = elements.indices.sorted { a, b in
            for (index, descriptor) in sortDescriptors.enumerated() {
                let result = comparators[index](keys[index][a] ?? NSNull(), keys[index][b] ?? NSNull())
                switch result {
                case .orderedAscending: return descriptor.ascending
                case .orderedDescending: return !descriptor.ascending
                case .orderedSame: continue
                }
            }
            return a < b
        }
        return order.map { elements[$0] }
    }
}

extension NSArray {
    /// Returns the array's elements ordered by the sort descriptors (stable, as Apple's).
    public func sortedArray(using sortDescriptors: [NSSortDescriptor]) -> [Any] {
        map { $0 }.sorted(using: sortDescriptors)
    }

    /// Returns the elements for which the predicate evaluates to true.
    public func filtered(using predicate: NSPredicate) -> [Any] {
        filter { predicate.evaluate(with: $0) }
    }
}

extension Sequence {
    /// Returns the elements for which the predicate evaluates to true, as
    /// `NSArray.filtered(using:)` does.
    public func filtered(using predicate: NSPredicate) -> [Element] {
        filter { predicate.evaluate(with: $0) }
    }
}
