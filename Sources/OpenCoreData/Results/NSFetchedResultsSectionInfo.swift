/// One section of a fetched results controller: its name (the section key path's value), its
/// index title, and its objects in order.
public protocol NSFetchedResultsSectionInfo {
    /// The section's name: the section key path's value for its objects, as text (`""` for none).
    var name: String { get }
    /// The title the section index shows for the section.
    var indexTitle: String? { get }
    /// How many objects the section holds.
    var numberOfObjects: Int { get }
    /// The section's objects, in the controller's order.
    var objects: [Any]? { get }
}
