import CoreData
import Testing

/// Uniqueness constraints resolved by merge policies. Rules: NSConstraintConflict reference (a
/// conflict names the constraint, its values, the stored object if any, and the conflicting
/// objects); NSMergePolicy reference, `resolve(constraintConflicts:)`; NSManagedObjectConstraintMergeError
/// (133021) with `"conflictList"` (Core Data Constants). Where Apple leaves a policy's outcome
/// unwritten, the outcome is the one DEVIATIONS.md states.
@Suite("Uniqueness constraints")
struct ConstraintTests {
    static let setups = TwoWriters.Setup.allCases
    static let early = Date(timeIntervalSinceReferenceDate: 0)
    static let late = Date(timeIntervalSinceReferenceDate: 86_400)

    /// The company model with employees (managers included) unique by name and badges by number.
    static func model() -> NSManagedObjectModel {
        let model = CompanyModel.make()
        model.entitiesByName["Employee"]?.uniquenessConstraints = [["name"]]
        model.entitiesByName["Badge"]?.uniquenessConstraints = [["number"]]
        return model
    }

    /// Saves Ada (salary 100, start date early, with badge 7) through the first context, then
    /// inserts another Ada with salary 300 into the second. Returns the saved ID and the new object.
    func collision(_ writers: TwoWriters) throws -> (stored: NSManagedObjectID, new: NSManagedObject) {
        let ada = writers.first.employee("Ada", salary: 100)
        ada.setValue(Self.early, forKey: "startDate")
        let badge = NSEntityDescription.insertNewObject(forEntityName: "Badge", into: writers.first)
        badge.setValue(7, forKey: "number")
        ada.setValue(badge, forKey: "badge")
        try writers.first.save()
        writers.first.reset()
        let new = writers.second.employee("Ada", salary: 300)
        return (ada.objectID, new)
    }

    /// Every stored employee by name: salary, start date, badge number, URI.
    func stored(_ writers: TwoWriters) throws -> [String: [String: Any]] {
        let reader = writers.makeReader()
        var result: [String: [String: Any]] = [:]
        for employee in try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee")) {
            var values = employee.dictionaryWithValues(forKeys: ["salary", "startDate"])
            values["badge"] = (employee.value(forKey: "badge") as? NSManagedObject)?.value(forKey: "number") ?? NSNull()
            values["uri"] = employee.objectID.uriRepresentation()
            values["department"] =
                (employee.value(forKey: "department") as? NSManagedObject)?.value(forKey: "name") ?? NSNull()
            result[employee.value(forKey: "name") as? String ?? ""] = values
        }
        let count = try reader.count(for: NSFetchRequest<NSManagedObject>(entityName: "Employee"))
        #expect(count == result.count, "no two stored employees share a name")
        return result
    }

    @Test(
        "NSErrorMergePolicy fails the save with 133021 and a conflict naming the stored object", arguments: setups)
    func errorPolicy(_ setup: TwoWriters.Setup) throws {
        let writers = try TwoWriters(setup, model: Self.model())
        let (id, new) = try collision(writers)
        let error = #expect(throws: NSError.self) { try writers.second.save() }
        #expect(error?.domain == NSCocoaErrorDomain)
        #expect(error?.code == NSManagedObjectConstraintMergeError)
        let list = error?.userInfo["conflictList"] as? [NSConstraintConflict]
        let conflict = try #require(list?.first)
        #expect(list?.count == 1)
        #expect(conflict.constraint == ["name"])
        #expect(conflict.constraintValues["name"] as? String == "Ada")
        #expect(conflict.databaseObject?.objectID.uriRepresentation() == id.uriRepresentation())
        #expect(conflict.databaseSnapshot?["salary"] as? Double == 100)
        #expect(conflict.conflictingObjects == [new])
        #expect(writers.second.hasChanges, "a failed save leaves the changes in place")
        #expect(try stored(writers)["Ada"]?["salary"] as? Double == 100, "nothing was written")
    }

    @Test("objects of one save that collide are a conflict without a stored object")
    func conflictWithinOneSave() throws {
        let writers = try TwoWriters(.sqlite, model: Self.model())
        let first = writers.second.employee("Bob", salary: 1)
        let second = writers.second.employee("Bob", salary: 2)
        let error = #expect(throws: NSError.self) { try writers.second.save() }
        #expect(error?.code == NSManagedObjectConstraintMergeError)
        let conflict = try #require((error?.userInfo["conflictList"] as? [NSConstraintConflict])?.first)
        #expect(conflict.databaseObject == nil)
        #expect(conflict.databaseSnapshot == nil)
        #expect(Set(conflict.conflictingObjects) == [first, second])
    }

    @Test(
        "mergeByPropertyObjectTrump upserts: the stored object takes the values the new one set, and stays",
        arguments: setups)
    func objectTrumpUpsert(_ setup: TwoWriters.Setup) throws {
        let writers = try TwoWriters(setup, model: Self.model())
        let (id, new) = try collision(writers)
        new.setValue(writers.second.department("Research"), forKey: "department")
        writers.second.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        try writers.second.save()
        let ada = try #require(try stored(writers)["Ada"])
        #expect(ada["uri"] as? URL == id.uriRepresentation(), "the stored row is kept, not replaced")
        #expect(ada["salary"] as? Double == 300, "a value the new object set wins")
        #expect(ada["startDate"] as? Date == Self.early, "a value the new object never set is kept")
        #expect(ada["badge"] as? Int == 7, "the stored object's relationships are kept")
        #expect(ada["department"] as? String == "Research", "the new object's relationship moves over")
        #expect(new.managedObjectContext == nil, "the new object left the context")
        #expect(!writers.second.hasChanges)
    }

    @Test(
        "mergeByPropertyStoreTrump: the stored values win; only values the row lacks are taken", arguments: setups)
    func storeTrump(_ setup: TwoWriters.Setup) throws {
        let writers = try TwoWriters(setup, model: Self.model())
        let (id, new) = try collision(writers)
        let stale = try writers.object(id, in: writers.first)
        stale.setValue(nil, forKey: "startDate")
        try writers.first.save()
        new.setValue(Self.late, forKey: "startDate")
        writers.second.mergePolicy = NSMergeByPropertyStoreTrumpMergePolicy
        try writers.second.save()
        let ada = try #require(try stored(writers)["Ada"])
        #expect(ada["uri"] as? URL == id.uriRepresentation())
        #expect(ada["salary"] as? Double == 100, "the stored value wins")
        #expect(ada["startDate"] as? Date == Self.late, "a value the row lacked is filled in")
        #expect(new.managedObjectContext == nil)
    }

    @Test(
        "overwrite: the stored object is deleted (its delete rules run) and the new one saved", arguments: setups)
    func overwrite(_ setup: TwoWriters.Setup) throws {
        let writers = try TwoWriters(setup, model: Self.model())
        let (id, new) = try collision(writers)
        writers.second.mergePolicy = NSOverwriteMergePolicy
        try writers.second.save()
        let ada = try #require(try stored(writers)["Ada"])
        #expect(ada["uri"] as? URL == new.objectID.uriRepresentation())
        #expect(ada["uri"] as? URL != id.uriRepresentation())
        #expect(ada["salary"] as? Double == 300)
        #expect(ada["startDate"] is NSNull, "nothing of the old row survives")
        let badges = try writers.makeReader().count(for: NSFetchRequest<NSManagedObject>(entityName: "Badge"))
        #expect(badges == 0, "the old row's cascade delete rule ran")
    }

    @Test("rollback: the new object leaves the save and the stored row is untouched", arguments: setups)
    func rollback(_ setup: TwoWriters.Setup) throws {
        let writers = try TwoWriters(setup, model: Self.model())
        let (id, new) = try collision(writers)
        writers.second.employee("Grace", salary: 5)
        writers.second.mergePolicy = NSRollbackMergePolicy
        try writers.second.save()
        let employees = try stored(writers)
        #expect(employees["Ada"]?["uri"] as? URL == id.uriRepresentation())
        #expect(employees["Ada"]?["salary"] as? Double == 100)
        #expect(employees["Grace"]?["salary"] as? Double == 5, "the rest of the save goes through")
        #expect(new.managedObjectContext == nil)
    }

    @Test("a changed object that takes a stored value conflicts; rollback gives it its old value back")
    func changedObjectCollides() throws {
        let writers = try TwoWriters(.sqlite, model: Self.model())
        writers.first.employee("Ada")
        let bob = writers.first.employee("Bob")
        try writers.first.save()
        bob.setValue("Ada", forKey: "name")
        let error = #expect(throws: NSError.self) { try writers.first.save() }
        #expect(error?.code == NSManagedObjectConstraintMergeError)
        writers.first.mergePolicy = NSRollbackMergePolicy
        try writers.first.save()
        #expect(bob.value(forKey: "name") as? String == "Bob")
        #expect(Set(try stored(writers).keys) == ["Ada", "Bob"])
    }

    @Test("sub-entities inherit their parent's constraint: a manager cannot take an employee's name")
    func inheritedConstraint() throws {
        let writers = try TwoWriters(.sqlite, model: Self.model())
        writers.first.employee("Ada")
        try writers.first.save()
        writers.second.employee("Ada", entity: "Manager")
        let error = #expect(throws: NSError.self) { try writers.second.save() }
        #expect(error?.code == NSManagedObjectConstraintMergeError)
    }

    @Test("a missing constrained value never conflicts (as SQL UNIQUE treats NULL)", arguments: setups)
    func missingValues(_ setup: TwoWriters.Setup) throws {
        let writers = try TwoWriters(setup, model: Self.model())
        for _ in 0..<3 { NSEntityDescription.insertNewObject(forEntityName: "Badge", into: writers.first) }
        try writers.first.save()
        let badges = try writers.makeReader().count(for: NSFetchRequest<NSManagedObject>(entityName: "Badge"))
        #expect(badges == 3)
    }

    @Test("between objects of one save, object trump keeps one object holding every value set")
    func objectTrumpWithinOneSave() throws {
        let writers = try TwoWriters(.sqlite, model: Self.model())
        writers.second.employee("Cy", salary: 10)
        let other = writers.second.employee("Cy", salary: 10)
        other.setValue(Self.late, forKey: "startDate")
        writers.second.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        try writers.second.save()
        let cy = try #require(try stored(writers)["Cy"])
        #expect(cy["salary"] as? Double == 10)
        #expect(cy["startDate"] as? Date == Self.late)
    }

    /// Saves a colliding employee under a numbered name instead — resolving constraint conflicts
    /// in code by subclassing NSMergePolicy.
    final class RenamePolicy: NSMergePolicy, @unchecked Sendable {
        init() { super.init(merge: .errorMergePolicyType) }

        override func resolve(constraintConflicts list: [NSConstraintConflict]) throws {
            for conflict in list {
                for (index, object) in conflict.conflictingObjects.enumerated() {
                    let name = conflict.constraintValues["name"] as? String ?? ""
                    object.setValue("\(name) (\(index + 2))", forKey: "name")
                }
            }
        }
    }

    @Test("a subclass of NSMergePolicy resolves constraint conflicts in code", arguments: setups)
    func subclassedPolicy(_ setup: TwoWriters.Setup) throws {
        let writers = try TwoWriters(setup, model: Self.model())
        _ = try collision(writers)
        writers.second.mergePolicy = RenamePolicy()
        try writers.second.save()
        let employees = try stored(writers)
        #expect(employees["Ada"]?["salary"] as? Double == 100)
        #expect(employees["Ada (2)"]?["salary"] as? Double == 300)
    }
}
