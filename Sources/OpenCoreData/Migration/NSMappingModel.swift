import Foundation

/// How to move the data of a store from one model version to another: one entity mapping per
/// destination entity (and one per source entity that goes away).
///
/// Apple's documentation: NSMappingModel reference; Core Data Model Versioning and Data Migration
/// Programming Guide, "Mapping Overview" and "Lightweight Migration". Build one with
/// ``inferredMappingModel(forSourceModel:destinationModel:)`` for the changes lightweight migration
/// handles.
open class NSMappingModel: NSObject {
    /// The entity mappings, in the order a migration runs them. Apple's type; setting `nil`
    /// leaves none, so reading it never traps.
    open var entityMappings: [NSEntityMapping]! {
        get { mappings }
        set { mappings = newValue ?? [] }
    }
    private var mappings: [NSEntityMapping] = []

    /// The entity mappings by name.
    open var entityMappingsByName: [String: NSEntityMapping] {
        Dictionary(
            mappings.compactMap { mapping in mapping.name.map { ($0, mapping) } },
            uniquingKeysWith: { first, _ in first })
    }

    /// An empty mapping model.
    override public init() {
        super.init()
    }

    /// A mapping model that moves data from `sourceModel` to `destinationModel` as lightweight
    /// migration does, inferred from the differences between the two: entities and properties
    /// added, removed or renamed (through the destination's `renamingIdentifier`, which names the
    /// property's or entity's first name, so renames chain across versions); a non-optional
    /// attribute becoming optional, or an optional one non-optional; relationships becoming
    /// to-many or to-one, ordered or unordered; new parent or child entities, and properties moving
    /// up or down a hierarchy.
    ///
    /// - Throws: `NSInferredMappingModelError` (134190) when a change is beyond inference: an
    ///   attribute whose type changed, a property that changed from attribute to relationship or
    ///   back, a relationship whose destination is no longer the entity its source destination
    ///   became, two source entities becoming one, or entities of different source hierarchies
    ///   sharing a destination hierarchy. The error's `reason` in `userInfo` names the entity and
    ///   property.
    open class func inferredMappingModel(
        forSourceModel sourceModel: NSManagedObjectModel, destinationModel: NSManagedObjectModel
    ) throws -> NSMappingModel {
        let model = NSMappingModel()
        model.entityMappings = try MappingInference(source: sourceModel, destination: destinationModel).entityMappings()
        return model
    }

    override open var description: String {
        "<NSMappingModel: \(mappings.map { $0.name ?? "" })>"
    }

    /// Whether `object` has equal entity mappings, in the same order: two loads of one mapping
    /// model (`.xcmappingmodel` or `.cdm`) are equal, as on Apple platforms.
    override open func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSMappingModel else { return false }
        return other === self || mappings == other.mappings
    }

    /// A hash of the entity mappings' names, equal for equal mapping models.
    override open var hash: Int { mappings.map { $0.name ?? "" }.hashValue }
}
