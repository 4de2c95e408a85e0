import Foundation
import Testing

@testable import OpenCoreData

/// One model, many queues. Core Data Programming Guide ("Concurrency"): a managed object model
/// is immutable once a coordinator uses it and may be shared by every context of every queue, so
/// what the model fills in lazily — each entity's slot layout and its object class — must be
/// filled safely from any of them (CI runs this suite under ThreadSanitizer).
@Suite("A model shared by contexts on many queues")
struct SharedModelTests {
    @Test func lazyModelCachesFillSafelyFromEightQueues() throws {
        let model = CompanyModel.make()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        let entities = ["Employee", "Manager", "Department", "Project", "Badge"]
        let layouts = Collector<(String, ObjectIdentifier)>()
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            context.performAndWait {
                for round in 0..<20 {
                    let name = entities[(worker + round) % entities.count]
                    let object = NSEntityDescription.insertNewObject(forEntityName: name, into: context)
                    layouts.append((name, ObjectIdentifier(object.layout)))
                    _ = ManagedObjectClasses.objectClass(for: object.entity)
                }
            }
        }
        // Every object of an entity shares the one layout the entity kept, whichever queue made it.
        let byEntity = Dictionary(grouping: layouts.values, by: \.0).mapValues { Set($0.map(\.1)) }
        #expect(byEntity.count == entities.count)
        for (name, identities) in byEntity {
            let entity = try #require(model.entitiesByName[name])
            #expect(identities == [ObjectIdentifier(entity.layout)], "\(name)")
        }
    }
}
