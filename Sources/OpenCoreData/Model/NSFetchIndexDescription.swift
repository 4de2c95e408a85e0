/// A fetch index of an entity: one or more elements, each a property or expression with an order.
open class NSFetchIndexDescription: NSObject, @unchecked Sendable {
    /// The index's name.
    open var name: String
    /// The index's elements, in order.
    open var elements: [NSFetchIndexElementDescription]
    /// An optional predicate that limits the index to matching rows.
    open var partialIndexPredicate: NSPredicate?
    /// The entity the index belongs to.
    open internal(set) var entity: NSEntityDescription? {
        get { entityReference.entity }
        set { entityReference.entity = newValue }
    }
    private var entityReference = WeakEntity()

    /// Creates an index with a name and elements.
    public init(name: String, elements: [NSFetchIndexElementDescription]?) {
        self.name = name
        self.elements = elements ?? []
        super.init()
        for element in self.elements { element.indexDescription = self }
    }
}
