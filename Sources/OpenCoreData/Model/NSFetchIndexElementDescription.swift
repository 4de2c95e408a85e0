/// One element of a fetch index.
open class NSFetchIndexElementDescription: NSObject, @unchecked Sendable {
    /// How an index element is stored, with Apple's raw values.
    public enum CollationType: UInt, Sendable {
        /// A binary (B-tree) index.
        case binary = 0
        /// An R-tree index, for ranges.
        case rTree = 1
    }

    /// The property indexed.
    open var property: NSPropertyDescription?
    /// The name of the property indexed.
    open var propertyName: String?
    /// Whether the index sorts ascending.
    open var isAscending: Bool = true
    /// The collation.
    open var collationType: CollationType = .binary
    /// The index the element belongs to.
    open internal(set) weak var indexDescription: NSFetchIndexDescription?

    /// Creates an element for a property.
    public init(property: NSPropertyDescription, collationType: CollationType) {
        self.property = property
        propertyName = property.name
        self.collationType = collationType
        super.init()
    }

    init(propertyName: String, ascending: Bool, collationType: CollationType) {
        self.propertyName = propertyName
        isAscending = ascending
        self.collationType = collationType
        super.init()
    }
}
