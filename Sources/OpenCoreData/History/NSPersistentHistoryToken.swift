import Foundation

/// A position in the persistent history of a coordinator's stores: for each store (by its
/// identifier, the store UUID), the number of the last transaction the token covers.
/// `fetchHistory(after:)` answers the transactions after it; `deleteHistory(before:)` deletes the
/// ones it covers.
///
/// Tokens archive with `NSKeyedArchiver` (apps keep the last one they processed on disk) and, on
/// one store, order as their transactions do.
///
/// Related documentation: NSPersistentHistoryToken ("An object that represents a position in the
/// persistent history").
open class NSPersistentHistoryToken: NSObject, NSCopying, NSSecureCoding, @unchecked Sendable {
    /// The last transaction number covered, by store identifier.
    package let numbers: [String: Int64]

    package init(numbers: [String: Int64]) {
        self.numbers = numbers
        super.init()
    }

    /// Whether tokens decode securely: they do.
    public static var supportsSecureCoding: Bool { true }

    /// Archives the token's store identifiers and transaction numbers.
    open func encode(with coder: NSCoder) {
        let stores = numbers.keys.sorted()
        coder.encode(stores.count, forKey: "count")
        for (index, store) in stores.enumerated() {
            coder.encode(store as NSString, forKey: "store\(index)")
            coder.encode(numbers[store] ?? 0, forKey: "number\(index)")
        }
    }

    /// Unarchives a token; `nil` when the archive is not one.
    public required init?(coder: NSCoder) {
        let count = coder.decodeInteger(forKey: "count")
        guard (0...10_000).contains(count) else { return nil }
        var numbers: [String: Int64] = [:]
        for index in 0..<count {
            guard let store = coder.decodeObject(of: NSString.self, forKey: "store\(index)") else { return nil }
            numbers[store as String] = coder.decodeInt64(forKey: "number\(index)")
        }
        self.numbers = numbers
        super.init()
    }

    /// The token itself: tokens are immutable.
    open func copy(with zone: NSZone? = nil) -> Any { self }

    /// Whether `object` is a token at the same position.
    override open func isEqual(_ object: Any?) -> Bool {
        (object as? NSPersistentHistoryToken)?.numbers == numbers
    }

    override open var hash: Int { numbers.hashValue }

    override open var description: String {
        "<NSPersistentHistoryToken - "
            + numbers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
            .joined(separator: ", ") + ">"
    }
}

extension NSPersistentHistoryToken: Comparable {
    /// Whether `lhs` comes before `rhs`: no store of `lhs` is past `rhs`'s position in it, and
    /// one is before it.
    public static func < (lhs: NSPersistentHistoryToken, rhs: NSPersistentHistoryToken) -> Bool {
        var before = false
        for (store, number) in lhs.numbers {
            let other = rhs.numbers[store] ?? 0
            if number > other { return false }
            if number < other { before = true }
        }
        for (store, number) in rhs.numbers where lhs.numbers[store] == nil && number > 0 { before = true }
        return before
    }
}

/// Tokens order in predicates, so that a fetch request on the history can ask for `token > %@`
/// (Apple: "Consuming Relevant Store Changes"). A transaction's token names its one store: it is
/// compared with the other token's position in that store, whatever other stores that token holds
/// (the coordinator's current token of several stores); two tokens of several stores order as in
/// Swift.
extension NSPersistentHistoryToken: PredicateOrdered {
    func predicateOrder(to other: Any) -> ComparisonResult? {
        guard let other = other as? NSPersistentHistoryToken else { return nil }
        for (single, against, flipped) in [(self, other, false), (other, self, true)] where single.numbers.count == 1 {
            guard let (store, number) = single.numbers.first, let position = against.numbers[store] else { continue }
            return flipped ? DynamicValue.order(position, number) : DynamicValue.order(number, position)
        }
        if self == other { return .orderedSame }
        if self < other { return .orderedAscending }
        if other < self { return .orderedDescending }
        return nil
    }
}
