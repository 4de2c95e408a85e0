import CoreData
import Testing

/// A subclass named by an entity's `managedObjectClassName`.
final class Employee: NSManagedObject {
    nonisolated(unsafe) static var insertions = 0
    var name: String? {
        get { value(forKey: "name") as? String }
        set { setValue(newValue, forKey: "name") }
    }

    override func awakeFromInsert() {
        super.awakeFromInsert()
        Employee.insertions += 1
        setPrimitiveValue(Date(timeIntervalSinceReferenceDate: 0), forKey: "startDate")
    }
}

/// Managed objects: key-value coding, primitive accessors, state flags and change reporting.
/// Rules from the NSManagedObject reference and the Key-Value Coding Programming Guide.
@Suite("NSManagedObject")
struct NSManagedObjectTests {
    @Test(
        "an object is equal only to itself, whatever its values (NSManagedObject reference: isEqual and hash are identity)"
    )
    func equalityIsIdentity() throws {
        let context = try CompanyModel.stack()
        let first = context.employee("Ada")
        let second = context.employee("Ada")
        #expect(first.isEqual(first))
        #expect(!first.isEqual(second), "equal values, two objects")
        #expect(!first.isEqual(first.objectID))
        #expect(!first.isEqual("Ada"))
        #expect(!first.isEqual(nil))
        #expect(first.hash != second.hash)
        #expect(Set([first, second, first]).count == 2)
    }

    @Test("value(forKey:) answers attributes, defaults from the model, and relationships as objects and sets")
    func keyValueCoding() throws {
        let context = try CompanyModel.stack()
        let ada = context.employee("Ada")
        #expect(ada.value(forKey: "name") as? String == "Ada")
        let fresh = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: context)
        #expect(fresh.value(forKey: "salary") as? Double == 0, "NSAttributeDescription.defaultValue")
        #expect(fresh.value(forKey: "startDate") == nil)
        let dept = context.department("R&D")
        ada.setValue(dept, forKey: "department")
        #expect(ada.value(forKey: "department") as? NSManagedObject === dept)
        #expect(dept.value(forKey: "employees") as? Set<NSManagedObject> == [ada])
        ada.setValuesForKeys(["salary": 10.0, "startDate": NSNull()])
        #expect(ada.dictionaryWithValues(forKeys: ["salary", "startDate"])["startDate"] is NSNull)
    }

    @Test("key paths walk relationships: manager.manager.department.name (KVC guide's example)")
    func keyPathWalk() throws {
        let context = try CompanyModel.stack()
        let dept = context.department("Engineering")
        let ceo = context.employee("Grace", salary: 300)
        ceo.setValue(dept, forKey: "department")
        let lead = context.employee("Ada", salary: 200)
        lead.setValue(ceo, forKey: "manager")
        let dev = context.employee("Bob", salary: 100)
        dev.setValue(lead, forKey: "manager")
        #expect(dev.value(forKeyPath: "manager.manager.department.name") as? String == "Engineering")
        dev.setValue("Platform", forKeyPath: "manager.manager.department.name")
        #expect(dept.value(forKey: "name") as? String == "Platform")
    }

    @Test("collection operators over to-many relationships: department.employees.@sum.salary")
    func collectionOperators() throws {
        let context = try CompanyModel.stack()
        let dept = context.department("R&D")
        for (name, salary) in [("A", 100.0), ("B", 200.0), ("C", 300.0)] {
            context.employee(name, salary: salary).setValue(dept, forKey: "department")
        }
        let bob = context.employee("Bob")
        bob.setValue(dept, forKey: "department")
        #expect(bob.value(forKeyPath: "department.employees.@sum.salary") as? Double == 600)
        #expect(dept.value(forKeyPath: "employees.@count") as? Int == 4)
        #expect(dept.value(forKeyPath: "employees.@max.salary") as? Double == 300)
        #expect(dept.value(forKeyPath: "employees.@avg.salary") as? Double == 150)
        let names = dept.value(forKeyPath: "employees.@distinctUnionOfObjects.name") as? [Any]
        #expect(names?.count == 4)
    }

    @Test("primitive accessors store values without maintaining the inverse (NSManagedObject reference)")
    func primitiveAccessors() throws {
        let context = try CompanyModel.stack()
        let ada = context.employee("Ada")
        let dept = context.department("R&D")
        ada.setPrimitiveValue(dept, forKey: "department")
        #expect(ada.primitiveValue(forKey: "department") as? NSManagedObject === dept)
        #expect((dept.value(forKey: "employees") as? Set<NSManagedObject>)?.isEmpty == true)
        ada.willChangeValue(forKey: "name")
        ada.setPrimitiveValue("Ada L.", forKey: "name")
        ada.didChangeValue(forKey: "name")
        #expect(ada.value(forKey: "name") as? String == "Ada L.")
    }

    @Test("mutableSetValue(forKey:) and mutableOrderedSetValue(forKey:) edit the relationship and its inverse")
    func mutableProxies() throws {
        let context = try CompanyModel.stack()
        let dept = context.department("R&D")
        let ada = context.employee("Ada")
        let bob = context.employee("Bob")
        let employees = dept.mutableSetValue(forKey: "employees")
        employees.add(ada)
        employees.add(bob)
        #expect(employees.count == 2)
        #expect(bob.value(forKey: "department") as? NSManagedObject === dept)
        employees.remove(ada)
        #expect(ada.value(forKey: "department") == nil)
        #expect(dept.value(forKey: "employees") as? Set<NSManagedObject> == [bob])

        let project = NSEntityDescription.insertNewObject(forEntityName: "Project", into: context)
        let members = project.mutableOrderedSetValue(forKey: "members")
        members.add(bob)
        members.insert(ada, at: 0)
        let ordered = project.value(forKey: "members") as? NSOrderedSet
        #expect(ordered?.array.map { ($0 as? NSManagedObject)?.value(forKey: "name") as? String } == ["Ada", "Bob"])
        #expect((ada.value(forKey: "projects") as? Set<NSManagedObject>)?.contains(project) == true)
        members.removeObject(at: 0)
        #expect((ada.value(forKey: "projects") as? Set<NSManagedObject>)?.isEmpty == true)
    }

    @Test("state flags: isInserted, isUpdated, isDeleted, hasChanges follow the object through a save")
    func stateFlags() throws {
        let context = try CompanyModel.stack()
        let ada = context.employee("Ada")
        #expect(ada.isInserted && !ada.isUpdated && !ada.isDeleted && ada.hasChanges)
        try context.save()
        #expect(!ada.isInserted && !ada.hasChanges)
        ada.setValue(5.0, forKey: "salary")
        #expect(ada.isUpdated && ada.hasChanges && ada.hasPersistentChangedValues)
        context.delete(ada)
        #expect(ada.isDeleted && !ada.isUpdated)
        try context.save()
        #expect(!ada.isDeleted)
        #expect(ada.managedObjectContext == nil, "a deleted object leaves its context when the delete is saved")
    }

    /// NSManagedObject reference, `managedObjectContext`: the object does not retain its context
    /// ("may be nil if the object has been deleted from its context" — and a context that went
    /// away leaves its objects with none). Issue 21: the reference is the context's one shared
    /// weak link instead of a weak reference per object; a context's objects read it while it
    /// lives, another context's objects read theirs, and all read `nil` once it is gone.
    @Test("an object does not keep its context alive, and reads nil once the context is gone")
    func contextIsNotRetained() throws {
        let coordinator = try #require(try CompanyModel.stack().persistentStoreCoordinator)
        var context: NSManagedObjectContext? = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context?.persistentStoreCoordinator = coordinator
        let other = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        other.persistentStoreCoordinator = coordinator
        weak let gone = context
        let ada = try #require(context).employee("Ada")
        let bob = other.employee("Bob")
        #expect(ada.managedObjectContext === context)
        #expect(bob.managedObjectContext === other)
        context = nil
        #expect(gone == nil, "the object did not keep its context alive")
        #expect(ada.managedObjectContext == nil)
        #expect(bob.managedObjectContext === other)
    }

    /// The same rule on an entity of 70 attributes: the slots past the 64th are tracked as the first
    /// 64 are (an object keeps its first 64 change bits in one word and the rest apart).
    @Test("changedValues() and changedValuesForCurrentEvent() on an entity of 70 attributes name exactly what changed")
    func changedValuesPastSixtyFourAttributes() throws {
        let entity = NSEntityDescription()
        entity.name = "Wide"
        entity.properties = (0..<70).map { index in
            let attribute = NSAttributeDescription()
            attribute.name = "a\(index)"
            attribute.attributeType = .integer64AttributeType
            attribute.isOptional = true
            return attribute
        }
        let model = NSManagedObjectModel()
        model.entities = [entity]
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let wide = NSEntityDescription.insertNewObject(forEntityName: "Wide", into: context)
        try context.save()
        #expect(wide.changedValues().isEmpty)
        for index in [0, 63, 64, 69] { wide.setValue(index + 100, forKey: "a\(index)") }
        #expect(Set(wide.changedValues().keys) == ["a0", "a63", "a64", "a69"])
        #expect(wide.changedValues()["a69"] as? Int == 169)
        #expect(Set(wide.changedValuesForCurrentEvent().keys) == ["a0", "a63", "a64", "a69"])
        context.processPendingChanges()
        #expect(wide.changedValuesForCurrentEvent().isEmpty, "a new event")
        #expect(Set(wide.changedValues().keys) == ["a0", "a63", "a64", "a69"], "unsaved still")
        try context.save()
        #expect(wide.changedValues().isEmpty)
        #expect(!wide.hasChanges)
    }

    @Test("changedValues() names persistent properties changed since the last save; transients are left out")
    func changedValues() throws {
        let context = try CompanyModel.stack()
        let ada = context.employee("Ada", salary: 10)
        try context.save()
        #expect(ada.changedValues().isEmpty)
        ada.setValue(20.0, forKey: "salary")
        ada.setValue("Countess", forKey: "nickname")
        ada.setValue(nil, forKey: "startDate")
        let changes = ada.changedValues()
        #expect(Set(changes.keys) == ["salary", "startDate"])
        #expect(changes["salary"] as? Double == 20)
        #expect(changes["startDate"] is NSNull)
        #expect(ada.hasPersistentChangedValues)
    }

    @Test("committedValues(forKeys:) returns the last saved values; changedValuesForCurrentEvent() the old ones")
    func committedAndEventValues() throws {
        let context = try CompanyModel.stack()
        let ada = context.employee("Ada", salary: 10)
        #expect(ada.committedValues(forKeys: nil).isEmpty, "an object never saved has no committed values")
        try context.save()
        ada.setValue(20.0, forKey: "salary")
        #expect(ada.committedValues(forKeys: ["salary"])["salary"] as? Double == 10)
        #expect(ada.changedValuesForCurrentEvent()["salary"] as? Double == 10)
        context.processPendingChanges()
        #expect(ada.changedValuesForCurrentEvent().isEmpty)
        ada.setValue(30.0, forKey: "salary")
        #expect(ada.changedValuesForCurrentEvent()["salary"] as? Double == 20)
        #expect(ada.changedValues()["salary"] as? Double == 30)
    }

    @Test("an entity's managedObjectClassName picks the subclass; awakeFromInsert runs once per insert")
    func subclasses() throws {
        let model = CompanyModel.make()
        model.entitiesByName["Employee"]?.managedObjectClassName = "Employee"
        let context = try CompanyModel.stack(model)
        let before = Employee.insertions
        let ada = Employee(context: context)
        ada.name = "Ada"
        #expect(Employee.insertions == before + 1)
        #expect(ada.entity.name == "Employee")
        #expect(ada.value(forKey: "startDate") as? Date == Date(timeIntervalSinceReferenceDate: 0))
        try context.save()
        context.reset()
        let fetched = try context.fetch(NSFetchRequest<Employee>(entityName: "Employee"))
        #expect(fetched.first?.name == "Ada")
        #expect(Employee.insertions == before + 1, "fetching does not call awakeFromInsert")
        let generic = try context.fetch(NSFetchRequest<NSFetchRequestResult>(entityName: "Employee"))
        #expect(generic.first is Employee)
        #expect(Employee.entity() === model.entitiesByName["Employee"])
    }

    @Test("fetched objects are faults until a value is read; realized objects report their values")
    func faulting() throws {
        let context = try CompanyModel.stack()
        let dept = context.department("R&D")
        context.employee("Ada").setValue(dept, forKey: "department")
        try context.save()
        context.reset()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        let ada = try #require(try context.fetch(request).first)
        #expect(ada.isFault, "returnsObjectsAsFaults is true by default")
        #expect(ada.hasFault(forRelationshipNamed: "department"))
        #expect(ada.objectIDs(forRelationshipNamed: "department").count == 1)
        #expect(ada.value(forKey: "name") as? String == "Ada")
        #expect(!ada.isFault)
        #expect(ada.value(forKeyPath: "department.name") as? String == "R&D")
        request.returnsObjectsAsFaults = false
        context.reset()
        #expect(try context.fetch(request).first?.isFault == false)
    }

    @Test("creating an object of an abstract entity traps, as Apple raises")
    func abstractEntityTraps() async {
        await #expect(processExitsWith: .failure) {
            let model = CompanyModel.make()
            model.entitiesByName["Department"]?.isAbstract = true
            _ = NSManagedObject(entity: model.entitiesByName["Department"]!, insertInto: nil)
        }
    }

    @Test("reading an unknown key traps, as Apple raises NSUnknownKeyException")
    func unknownKeyTraps() async {
        await #expect(processExitsWith: .failure) {
            let context = try CompanyModel.stack()
            _ = context.employee("Ada").value(forKey: "shoeSize")
        }
    }
}
