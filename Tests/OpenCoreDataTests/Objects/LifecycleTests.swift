import CoreData
import Testing

/// Records every lifecycle hook Core Data calls on it.
final class Tracked: NSManagedObject {
    nonisolated(unsafe) static var log: [String] = []

    private func note(_ hook: String) { Tracked.log.append("\(hook) \(primitiveName)") }
    private var primitiveName: String { isFault ? "fault" : (primitiveValue(forKey: "name") as? String ?? "?") }

    override func awakeFromInsert() { note("awakeFromInsert") }
    override func awakeFromFetch() { note("awakeFromFetch") }
    override func willSave() { note("willSave") }
    override func didSave() { note("didSave") }
    override func prepareForDeletion() { note("prepareForDeletion") }
    override func willTurnIntoFault() { note("willTurnIntoFault") }
    override func didTurnIntoFault() { Tracked.log.append("didTurnIntoFault") }
}

/// Lifecycle hooks and fetched properties. Rules from the NSManagedObject reference ("Managing the
/// Object Life Cycle": `awakeFromInsert` once on insertion, `awakeFromFetch` when values load from a
/// store, `willSave`/`didSave` around saves, `prepareForDeletion` before delete rules run,
/// `willTurnIntoFault`/`didTurnIntoFault` around faulting) and NSFetchedPropertyDescription
/// (`$FETCH_SOURCE` is the object the property belongs to).
@Suite("Lifecycle and fetched properties", .serialized)
struct LifecycleTests {
    @Test("hooks run in Apple's order through insert, save, fetch, refresh and delete")
    func hooks() throws {
        let model = CompanyModel.make()
        model.entitiesByName["Department"]?.managedObjectClassName = "Tracked"
        let context = try CompanyModel.stack(model)
        Tracked.log = []
        let dept = Tracked(context: context)
        dept.setValue("R&D", forKey: "name")
        try context.save()
        #expect(Tracked.log == ["awakeFromInsert ?", "willSave R&D", "didSave R&D"])

        Tracked.log = []
        context.refresh(dept, mergeChanges: false)
        #expect(dept.isFault)
        _ = dept.value(forKey: "name")
        #expect(Tracked.log == ["willTurnIntoFault R&D", "didTurnIntoFault", "awakeFromFetch R&D"])

        Tracked.log = []
        context.delete(dept)
        context.processPendingChanges()
        try context.save()
        #expect(Tracked.log == ["prepareForDeletion R&D", "willSave R&D", "didSave R&D"])
    }

    @Test("a fetched property runs its fetch with $FETCH_SOURCE bound to the object")
    func fetchedProperty() throws {
        let model = CompanyModel.make()
        let department = try #require(model.entitiesByName["Department"])
        let wellPaid = NSFetchedPropertyDescription()
        wellPaid.name = "wellPaid"
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Employee")
        request.predicate = NSPredicate(format: "department == $FETCH_SOURCE AND salary > 150")
        wellPaid.fetchRequest = request
        department.properties = department.properties + [wellPaid]
        let context = try CompanyModel.stack(model)
        let rnd = context.department("R&D")
        for (name, salary) in [("Ada", 300.0), ("Bob", 100.0)] {
            context.employee(name, salary: salary).setValue(rnd, forKey: "department")
        }
        context.department("Ops")
        try context.save()
        let found = rnd.value(forKey: "wellPaid") as? [Any]
        #expect(found?.compactMap { ($0 as? NSManagedObject)?.value(forKey: "name") as? String } == ["Ada"])
        #expect(wellPaid.isTransient)
    }
}
