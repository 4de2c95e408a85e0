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

/// Stamps its start date in `willSave()` with a primitive setter, as Apple's NSManagedObject
/// `willSave()` documentation advises (primitive accessors there notify no one).
final class Stamped: NSManagedObject {
    static let stamp = Date(timeIntervalSinceReferenceDate: 86_400)

    override func willSave() {
        if !isDeleted { setPrimitiveValue(Self.stamp, forKey: "startDate") }
    }
}

/// Fetches through the context it is given whenever it turns into a fault.
final class FetchesWhenFaulted: NSManagedObject {
    nonisolated(unsafe) static var context: NSManagedObjectContext?
    nonisolated(unsafe) static var fetched: [Int] = []

    override func didTurnIntoFault() {
        guard let context = Self.context else { return }
        let found = (try? context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Department"))) ?? []
        Self.fetched.append(found.count)
    }
}

/// Lifecycle hooks and fetched properties. Rules from the NSManagedObject reference ("Managing the
/// Object Life Cycle": `awakeFromInsert` once on insertion, `awakeFromFetch` when values load from a
/// store, `willSave`/`didSave` around saves, `prepareForDeletion` before delete rules run,
/// `willTurnIntoFault`/`didTurnIntoFault` around faulting) and NSFetchedPropertyDescription
/// (`$FETCH_SOURCE` is the object the property belongs to).
@Suite("Lifecycle and fetched properties", .serialized)
struct LifecycleTests {
    /// Regression: the primitive set made `save()` post a second objects-did-change, listing the
    /// inserted object as updated.
    @Test("setPrimitiveValue in willSave() is saved with the object and posts no objects-did-change")
    func primitiveSetInWillSave() throws {
        let model = CompanyModel.make()
        model.entitiesByName["Employee"]?.managedObjectClassName = "Stamped"
        let directory = TemporaryDirectory()
        let url = directory.file("Stamped.sqlite")
        let context = try sqliteStack(url, model: model)
        let ada = context.employee("Ada")
        context.processPendingChanges()
        let recorder = NotificationRecorder([.NSManagedObjectContextObjectsDidChange], object: context)
        try context.save()
        #expect(recorder.notes.isEmpty, "the save posted \(recorder.notes.count) objects-did-change")
        ada.setValue(2.0, forKey: "salary")
        context.processPendingChanges()
        let afterUpdate = NotificationRecorder([.NSManagedObjectContextObjectsDidChange], object: context)
        try context.save()
        #expect(afterUpdate.notes.isEmpty)
        let reader = try sqliteStack(url, model: model)
        let stored = try #require(try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee")).first)
        #expect(stored.value(forKey: "startDate") as? Date == Stamped.stamp)
        #expect(stored.value(forKey: "salary") as? Double == 2)
    }

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

    /// `reset()` turns the context's objects into faults (`didTurnIntoFault` runs for each) while
    /// it lets go of them a chunk at a time. An app's hook may use the context then — a
    /// fetch registers objects — and that must work, not trap on the context's registry being in
    /// use; after the reset the context holds nothing and fetches as before.
    @Test("an app's didTurnIntoFault that fetches while reset() lets go of the objects: no trap")
    func hookFetchesDuringReset() throws {
        let model = CompanyModel.make()
        model.entitiesByName["Department"]?.managedObjectClassName = "FetchesWhenFaulted"
        let context = try CompanyModel.stack(model)
        for index in 0..<3 { context.department("D\(index)") }
        try context.save()
        FetchesWhenFaulted.fetched = []
        FetchesWhenFaulted.context = context
        context.reset()
        FetchesWhenFaulted.context = nil
        #expect(FetchesWhenFaulted.fetched == [3, 3, 3], "each department's hook fetched the three")
        #expect(context.registeredObjects.isEmpty)
        #expect(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Department")).count == 3)
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
