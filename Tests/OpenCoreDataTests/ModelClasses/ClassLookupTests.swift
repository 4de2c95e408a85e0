import CoreData
import Foundation
import Testing

// Classes no code uses with Core Data: only their names, in the model below, lead to them.
final class Lantern: NSManagedObject {}
final class Lighthouse {}
enum Harbour {
    final class Beacon: NSManagedObject {}
}
final class Lamp: NSManagedObject {}
enum Twins {
    enum North {
        final class Buoy: NSManagedObject {}
    }
    enum South {
        final class Buoy: NSManagedObject {}
    }
}

/// `NSEntityDescription.managedObjectClassName` reference: "the name of the class that
/// represents the receiver's entity" — objects of the entity are instances of that class, whether
/// they are inserted or fetched, with no other use of the class first (on Apple platforms the
/// Objective-C class table resolves the name; here the Swift runtime's type descriptors do).
@Suite("Model classes found by their names")
struct ClassLookupTests {
    private static func model() -> NSManagedObjectModel {
        let model = NSManagedObjectModel()
        model.entities = [
            ("Lantern", "Lantern"), ("Beacon", ".Beacon"), ("Buoy", "Buoy"),
            ("NorthBuoy", "OpenCoreDataTests.Twins.North.Buoy"), ("Lighthouse", "Lighthouse"),
        ].map { name, className in
            let entity = NSEntityDescription()
            entity.name = name
            entity.managedObjectClassName = className
            let label = NSAttributeDescription()
            label.name = "label"
            label.attributeType = .stringAttributeType
            entity.properties = [label]
            return entity
        }
        return model
    }

    @Test("an untyped fetch makes objects of the class an entity names by its bare name, before any typed use")
    func bareNamesFindTheirClassesFromTheFirstFetch() throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("Harbour.sqlite")
        do {
            let context = try sqliteStack(url, model: Self.model())
            for name in ["Lantern", "Beacon", "Buoy", "NorthBuoy", "Lighthouse"] {
                NSEntityDescription.insertNewObject(forEntityName: name, into: context).setValue(name, forKey: "label")
            }
            try context.save()
        }
        let context = try sqliteStack(url, model: Self.model())
        func fetched(_ entity: String) throws -> NSManagedObject {
            let objects = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: entity))
            #expect(objects.first?.value(forKey: "label") as? String == entity)
            return try #require(objects.first)
        }
        #expect(try fetched("Lantern") is Lantern, "a bare class name, as Xcode writes it")
        #expect(try fetched("Beacon") is Harbour.Beacon, "`.Beacon` (current product module): a nested class")
        #expect(try fetched("NorthBuoy") is Twins.North.Buoy, "a module-qualified name picks one of two")
    }

    @Test("a bare name two classes share, or a class that is no managed object, makes NSManagedObject")
    func ambiguousOrUnsuitableNamesFallBackToNSManagedObject() throws {
        let directory = TemporaryDirectory()
        let context = try sqliteStack(directory.file("Twins.sqlite"), model: Self.model())
        let buoy = NSEntityDescription.insertNewObject(forEntityName: "Buoy", into: context)
        #expect(type(of: buoy) == NSManagedObject.self, "Twins.North.Buoy and Twins.South.Buoy are both named Buoy")
        let lighthouse = NSEntityDescription.insertNewObject(forEntityName: "Lighthouse", into: context)
        #expect(type(of: lighthouse) == NSManagedObject.self, "Lighthouse is not an NSManagedObject subclass")
        #expect(lighthouse.value(forKey: "label") == nil)
    }

    /// `NSManagedObject.init(context:)` reference: the object is of "the entity description for
    /// the class" in the context's model. Two models name `Lamp` for different entities; each
    /// context's model answers its own, however often and in whatever order they are asked (each
    /// immutable model keeps its answer).
    @Test("init(context:) finds the class's entity in the context's own model, every time")
    func initWithContextUsesTheContextsModel() throws {
        func model(_ entityName: String) -> NSManagedObjectModel {
            let entity = NSEntityDescription()
            entity.name = entityName
            entity.managedObjectClassName = "Lamp"
            let model = NSManagedObjectModel()
            model.entities = [entity]
            return model
        }
        let directory = TemporaryDirectory()
        let desk = try sqliteStack(directory.file("Desk.sqlite"), model: model("DeskLamp"))
        let floor = try sqliteStack(directory.file("Floor.sqlite"), model: model("FloorLamp"))
        for _ in 0..<3 {
            let first = Lamp(context: desk)
            let second = Lamp(context: floor)
            #expect(first.entity.name == "DeskLamp")
            #expect(second.entity.name == "FloorLamp")
            #expect(first.entity === desk.persistentStoreCoordinator?.managedObjectModel.entitiesByName["DeskLamp"])
        }
        #expect(desk.insertedObjects.count == 3)
        #expect(floor.insertedObjects.allSatisfy { $0.entity.name == "FloorLamp" })
    }
}
