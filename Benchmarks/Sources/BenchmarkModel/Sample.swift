import CoreData

/// The typed-accessor benchmark's class: `@NSManaged` properties whose accessors the
/// `CoreDataModelGenerator` plugin supplies (BENCHMARKS-JOURNAL.md, "typed accessors").
public final class Sample: NSManagedObject {
    @NSManaged public var id: Int64
    @NSManaged public var name: String?
    @NSManaged public var score: Double
}

extension BenchmarkModel {
    /// A model of one entity, `Sample` (id, name, score), whose objects are ``Sample``s.
    public static func sampleModel() -> NSManagedObjectModel {
        let sample = NSEntityDescription()
        sample.name = "Sample"
        sample.managedObjectClassName = "BenchmarkModel.Sample"
        sample.properties = [
            attribute("id", .integer64AttributeType), attribute("name", .stringAttributeType, optional: true),
            attribute("score", .doubleAttributeType),
        ]
        let model = NSManagedObjectModel()
        model.entities = [sample]
        return model
    }
}
