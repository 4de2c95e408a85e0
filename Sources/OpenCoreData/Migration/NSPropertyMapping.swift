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
}
