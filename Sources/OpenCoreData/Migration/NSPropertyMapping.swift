import Foundation

/// How one destination property gets its value during a migration.
open class NSPropertyMapping: NSObject {
    /// The destination property's name.
    open var name: String?
    /// The value, evaluated with `$source` (the source instance) and `$manager` (the migration
    /// manager); nil for a property the source does not have (it takes its default).
    open var valueExpression: NSExpression?
    /// Information for the migration policy.
    open var userInfo: [AnyHashable: Any]?

    override open var description: String {
        "<NSPropertyMapping: \(name ?? "") = \(valueExpression.map { String(describing: $0) } ?? "nil")>"
    }

    /// Whether `object` maps the same property with an equal value expression (`userInfo` is not
    /// compared): two loads of one mapping model are equal, as on Apple platforms.
    override open func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSPropertyMapping else { return false }
        return name == other.name && valueExpression == other.valueExpression
    }

    /// A hash of the property's name, equal for equal mappings.
    override open var hash: Int { name?.hashValue ?? 0 }
}
