import CoreData
import Foundation
import Testing

/// Batch insert, update and delete requests on the SQLite store, as Apple documents
/// them: NSBatchInsertRequest, NSBatchUpdateRequest, NSBatchDeleteRequest and their results; the
/// Core Data Batch Programming Guide ("Implementing Batch Updates", "Implementing Batch Deletes":
/// the changes happen in the store, contexts are not changed until the app merges, validation
/// rules are not enforced).
@Suite("Batch requests")
struct BatchRequestTests {
    let directory = TemporaryDirectory()

    /// A context on a SQLite store of `model` in the test's directory.
    func stack(_ model: NSManagedObjectModel = CompanyModel.make(), name: String = "batch.sqlite") throws
        -> NSManagedObjectContext
    {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: directory.file(name), options: nil)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// What a fresh coordinator reads from the store file: `entity`'s objects' `key` values, sorted.
    func stored(_ entity: String, _ key: String, model: NSManagedObjectModel, name: String = "batch.sqlite") throws
        -> [String]
    {
        let context = try stack(model, name: name)
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        return try context.fetch(request).map { "\($0.value(forKey: key) ?? "nil")" }.sorted()
    }

    /// The company model with Employee constrained unique by name.
    func constrainedModel() -> NSManagedObjectModel {
        let model = CompanyModel.make()
        model.entitiesByName["Employee"]?.uniquenessConstraints = [["name"]]
        return model
    }

    // MARK: Insert

    @Test("a batch insert writes every dictionary in the store; each result type answers as documented")
    func insertResultTypes() throws {
        let model = CompanyModel.make()
        let context = try stack(model)
        let status = NSBatchInsertRequest(
            entityName: "Employee", objects: [["name": "Ada", "salary": 10.0], ["name": "Grace", "salary": 20.0]])
        let statusResult = try #require(try context.execute(status) as? NSBatchInsertResult)
        #expect(statusResult.resultType == .statusOnly)
        #expect((statusResult.result as? NSNumber)?.boolValue == true)

        let ids = NSBatchInsertRequest(entityName: "Employee", objects: [["name": "Linus"]])
        ids.resultType = .objectIDs
        let idResult = try #require(try context.execute(ids) as? NSBatchInsertResult)
        let inserted = try #require(idResult.result as? [NSManagedObjectID])
        #expect(inserted.count == 1)
        #expect(inserted.first?.entity.name == "Employee")
        #expect(inserted.first?.isTemporaryID == false)

        let count = NSBatchInsertRequest(entityName: "Department", objects: [["name": "R&D"], ["name": "Sales"]])
        count.resultType = .count
        #expect((try context.execute(count) as? NSBatchInsertResult)?.result as? NSNumber == 2)

        #expect(try stored("Employee", "name", model: model) == ["Ada", "Grace", "Linus"])
        #expect(try stored("Department", "name", model: model) == ["R&D", "Sales"])
        // An attribute a dictionary leaves out takes the model's default (salary: 0).
        #expect(try stored("Employee", "salary", model: model) == ["0.0", "10.0", "20.0"])
        // The inserted object reads back by its ID.
        let linus = try context.existingObject(with: inserted[0])
        #expect(linus.value(forKey: "name") as? String == "Linus")
    }

    @Test(
        "a batch insert leaves the context's objects alone and does not validate (Apple: validation rules are not enforced)"
    )
    func insertDoesNotTouchContexts() throws {
        let model = CompanyModel.make()
        let context = try stack(model)
        final class Flag: @unchecked Sendable { var raised = false }
        let notified = Flag()
        let observer = NotificationCenter.default.addObserver(
            forName: .NSManagedObjectContextObjectsDidChange, object: context, queue: nil
        ) { _ in notified.raised = true }
        defer { NotificationCenter.default.removeObserver(observer) }
        // `name` is required: an object without one would fail validation on save.
        try context.execute(NSBatchInsertRequest(entityName: "Employee", objects: [["salary": 5.0]]))
        context.processPendingChanges()
        #expect(!notified.raised)
        #expect(context.registeredObjects.isEmpty)
        #expect(try stored("Employee", "salary", model: model) == ["5.0"])
    }

    @Test("the dictionary and managed-object handlers are called until they return true; that call inserts nothing")
    func insertHandlers() throws {
        let model = CompanyModel.make()
        let context = try stack(model)
        var next = 0
        let names = ["a", "b", "c"]
        let byDictionary = NSBatchInsertRequest(entityName: "Employee") { (dictionary: NSMutableDictionary) in
            guard next < names.count else { return true }
            dictionary["name"] = names[next]
            next += 1
            return false
        }
        try context.execute(byDictionary)
        var made = 0
        let byObject = NSBatchInsertRequest(entity: try #require(model.entitiesByName["Department"])) {
            (object: NSManagedObject) in
            made += 1
            object.setValue("D\(made)", forKey: "name")
            return made > 2
        }
        try context.execute(byObject)
        #expect(try stored("Employee", "name", model: model) == ["a", "b", "c"])
        #expect(try stored("Department", "name", model: model) == ["D1", "D2"])
    }

    /// NSBatchInsertRequest `managedObjectHandler`: "a closure that … provides a managed object" of
    /// the request's entity — an instance of the entity's class, so the handler casts it and sets
    /// typed properties (`(object as! Employee).name = …`). Regression: a plain NSManagedObject.
    @Test("the managed-object handler gets an instance of the entity's class")
    func insertHandlerObjectsAreOfTheEntitysClass() throws {
        let model = CompanyModel.make()
        model.entitiesByName["Employee"]?.managedObjectClassName = NSStringFromClass(Employee.self)
        let context = try stack(model)
        var made = 0
        let request = NSBatchInsertRequest(entity: try #require(model.entitiesByName["Employee"])) {
            (object: NSManagedObject) in
            guard let employee = object as? Employee else { return true }
            made += 1
            employee.name = "E\(made)"
            return made > 2
        }
        try context.execute(request)
        #expect(made == 3)
        #expect(try stored("Employee", "name", model: model) == ["E1", "E2"])
    }

    @Test("with a uniqueness constraint, a dictionary matching a stored object updates it instead of adding a second")
    func insertHonoursConstraints() throws {
        let model = constrainedModel()
        let context = try stack(model)
        let first = NSBatchInsertRequest(entityName: "Employee", objects: [["name": "Ada", "salary": 1.0]])
        first.resultType = .objectIDs
        let ada = try #require((try context.execute(first) as? NSBatchInsertResult)?.result as? [NSManagedObjectID])
        let second = NSBatchInsertRequest(
            entityName: "Employee",
            objects: [
                ["name": "Ada", "salary": 2.0], ["name": "Bob", "salary": 3.0], ["name": "Bob", "salary": 4.0],
            ])
        second.resultType = .objectIDs
        let ids = try #require((try context.execute(second) as? NSBatchInsertResult)?.result as? [NSManagedObjectID])
        #expect(ids.count == 2)
        #expect(ids.first == ada.first)
        #expect(try stored("Employee", "name", model: model) == ["Ada", "Bob"])
        // The later values win (the request's values trump the stored object's).
        #expect(try stored("Employee", "salary", model: model) == ["2.0", "4.0"])
        // An attribute the matching dictionary left out keeps the stored value.
        let start = Date(timeIntervalSinceReferenceDate: 1000)
        try context.execute(
            NSBatchInsertRequest(entityName: "Employee", objects: [["name": "Ada", "startDate": start]]))
        try context.execute(NSBatchInsertRequest(entityName: "Employee", objects: [["name": "Ada", "salary": 9.0]]))
        let check = try stack(model)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.predicate = NSPredicate(format: "name == 'Ada'")
        let stored = try #require(try check.fetch(request).first)
        #expect(stored.value(forKey: "startDate") as? Date == start)
        #expect(stored.value(forKey: "salary") as? Double == 9.0)
    }

    @Test(
        "a batch insert setting a relationship, an unknown key or a value of the wrong type fails, inserting nothing"
    )
    func insertErrors() throws {
        let model = CompanyModel.make()
        let context = try stack(model)
        let cases: [[String: Any]] = [
            ["name": "x", "department": NSNull()], ["name": "x", "nosuch": 1], ["name": 42], ["salary": "lots"],
        ]
        for dictionary in cases {
            let request = NSBatchInsertRequest(entityName: "Employee", objects: [["name": "ok"], dictionary])
            #expect(throws: NSError.self) { try context.execute(request) }
            do { try context.execute(request) } catch let error as NSError {
                #expect(error.domain == NSCocoaErrorDomain)
                #expect(error.code == NSManagedObjectValidationError)
            }
        }
        #expect(try stored("Employee", "name", model: model).isEmpty)
    }

    @Test("the coordinator's execute(_:with:) runs batch requests too, returning their results")
    func coordinatorExecute() throws {
        let model = CompanyModel.make()
        let context = try stack(model)
        let coordinator = try #require(context.persistentStoreCoordinator)
        let insert = NSBatchInsertRequest(entityName: "Employee", objects: [["name": "Ada"]])
        insert.resultType = .count
        let result = try coordinator.execute(insert, with: context) as? NSBatchInsertResult
        #expect(result?.result as? NSNumber == 1)
        #expect(try stored("Employee", "name", model: model) == ["Ada"])
    }

    @Test("batch requests on a store that cannot run them fail with NSPersistentStoreUnsupportedRequestTypeError")
    func unsupportedStores() throws {
        let context = try CompanyModel.stack()
        let requests: [NSPersistentStoreRequest] = [
            NSBatchInsertRequest(entityName: "Employee", objects: [["name": "x"]]),
            NSBatchUpdateRequest(entityName: "Employee"),
            NSBatchDeleteRequest(fetchRequest: NSFetchRequest(entityName: "Employee")),
        ]
        for request in requests {
            context.performAndWait {
                do {
                    _ = try context.execute(request)
                    Issue.record("\(request) ran on an in-memory store")
                } catch let error as NSError {
                    #expect(error.code == NSPersistentStoreUnsupportedRequestTypeError)
                }
            }
        }
    }

    // MARK: Update

    /// A store with employees Ada (10), Grace (20), and manager Linus (30).
    func staff(_ model: NSManagedObjectModel) throws -> NSManagedObjectContext {
        let context = try stack(model)
        context.employee("Ada", salary: 10)
        context.employee("Grace", salary: 20)
        context.employee("Linus", salary: 30, entity: "Manager")
        try context.save()
        return context
    }

    @Test("a batch update sets constants on the objects its predicate matches, sub-entities included unless excluded")
    func updateConstants() throws {
        let model = CompanyModel.make()
        let context = try staff(model)
        let raise = NSBatchUpdateRequest(entityName: "Employee")
        raise.predicate = NSPredicate(format: "salary >= 20")
        raise.propertiesToUpdate = ["salary": 25.0]
        raise.resultType = .updatedObjectsCountResultType
        #expect((try context.execute(raise) as? NSBatchUpdateResult)?.result as? NSNumber == 2)
        #expect(try stored("Employee", "salary", model: model) == ["10.0", "25.0", "25.0"])

        let employeesOnly = NSBatchUpdateRequest(entityName: "Employee")
        employeesOnly.includesSubentities = false
        employeesOnly.propertiesToUpdate = [model.entitiesByName["Employee"]!.attributesByName["salary"]!: 1.0]
        employeesOnly.resultType = .updatedObjectIDsResultType
        let ids = try #require(
            (try context.execute(employeesOnly) as? NSBatchUpdateResult)?.result as? [NSManagedObjectID])
        #expect(ids.count == 2)
        #expect(ids.allSatisfy { $0.entity.name == "Employee" })
        #expect(try stored("Employee", "salary", model: model) == ["1.0", "1.0", "25.0"])
    }

    @Test("a batch update evaluates expressions against each object's stored values")
    func updateExpressions() throws {
        let model = CompanyModel.make()
        let context = try staff(model)
        let double = NSBatchUpdateRequest(entityName: "Employee")
        double.propertiesToUpdate = ["salary": NSExpression(format: "salary * 2")]
        let result = try #require(try context.execute(double) as? NSBatchUpdateResult)
        #expect((result.result as? NSNumber)?.boolValue == true)
        #expect(try stored("Employee", "salary", model: model) == ["20.0", "40.0", "60.0"])
    }

    @Test("after a batch update, a context sees the old values until it merges; a stale save is a merge conflict")
    func updateThenMerge() throws {
        let model = CompanyModel.make()
        let context = try staff(model)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.predicate = NSPredicate(format: "name == 'Ada'")
        let ada = try #require(try context.fetch(request).first)
        #expect(ada.value(forKey: "salary") as? Double == 10)
        let update = NSBatchUpdateRequest(entityName: "Employee")
        update.predicate = NSPredicate(format: "name == 'Ada'")
        update.propertiesToUpdate = ["salary": 99.0]
        update.resultType = .updatedObjectIDsResultType
        let ids = try #require((try context.execute(update) as? NSBatchUpdateResult)?.result as? [NSManagedObjectID])
        #expect(ada.value(forKey: "salary") as? Double == 10)
        // The row's version moved on: saving the stale object conflicts (optimistic locking).
        ada.setValue(11.0, forKey: "salary")
        #expect(throws: NSError.self) { try context.save() }
        context.rollback()
        NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSUpdatedObjectsKey: ids], into: [context])
        #expect(ada.value(forKey: "salary") as? Double == 99)
    }

    // MARK: Delete

    @Test("a batch delete removes the objects a fetch request matches; each result type answers as documented")
    func deleteByFetch() throws {
        let model = CompanyModel.make()
        let context = try staff(model)
        let fetch = NSFetchRequest<NSFetchRequestResult>(entityName: "Employee")
        fetch.predicate = NSPredicate(format: "salary < 25")
        let delete = NSBatchDeleteRequest(fetchRequest: fetch)
        delete.resultType = .resultTypeCount
        #expect((try context.execute(delete) as? NSBatchDeleteResult)?.result as? NSNumber == 2)
        #expect(try stored("Employee", "name", model: model) == ["Linus"])
    }

    /// Apple's code passes an Xcode-typed request with `as! NSFetchRequest<NSFetchRequestResult>`,
    /// which traps in Swift on Linux (DEVIATIONS.md): the generic form takes the typed request as
    /// it is, and deletes what it matches.
    @Test("a batch delete takes a typed fetch request without a cast")
    func deleteByTypedFetch() throws {
        let model = CompanyModel.make()
        let context = try staff(model)
        let fetch = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        fetch.predicate = NSPredicate(format: "salary < 25")
        #expect((fetch as Any) as? NSFetchRequest<NSFetchRequestResult> == nil, "the cast Apple's code writes fails")
        let delete = NSBatchDeleteRequest(fetchRequest: fetch)
        delete.resultType = .resultTypeCount
        #expect(delete.fetchRequest.predicate == fetch.predicate)
        #expect((try context.execute(delete) as? NSBatchDeleteResult)?.result as? NSNumber == 2)
        #expect(try stored("Employee", "name", model: model) == ["Linus"])
    }

    @Test("a batch delete by object IDs deletes those objects; IDs of two entities are an error")
    func deleteByIDs() throws {
        let model = CompanyModel.make()
        let context = try staff(model)
        let department = context.department("R&D")
        try context.save()
        let employees = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee"))
        let ada = try #require(employees.first { $0.value(forKey: "name") as? String == "Ada" })
        let mixed = NSBatchDeleteRequest(objectIDs: [ada.objectID, department.objectID])
        #expect(throws: NSError.self) { try context.execute(mixed) }
        let delete = NSBatchDeleteRequest(objectIDs: [ada.objectID])
        delete.resultType = .resultTypeObjectIDs
        let ids = try #require((try context.execute(delete) as? NSBatchDeleteResult)?.result as? [NSManagedObjectID])
        #expect(ids == [ada.objectID])
        #expect(try stored("Employee", "name", model: model) == ["Grace", "Linus"])
        // The context still holds Ada until it merges the deletion.
        #expect(!ada.isDeleted)
        NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSDeletedObjectsKey: ids], into: [context])
        #expect(context.registeredObject(for: ada.objectID) == nil || ada.managedObjectContext == nil)
    }

    @Test("a batch delete applies delete rules: cascade deletes destinations, nullify clears inverses and join rows")
    func deleteRules() throws {
        let model = CompanyModel.make()
        let context = try stack(model)
        let ada = context.employee("Ada")
        let grace = context.employee("Grace")
        let department = context.department("R&D")
        department.mutableSetValue(forKey: "employees").addObjects(from: [ada, grace])
        let badge = NSEntityDescription.insertNewObject(forEntityName: "Badge", into: context)
        badge.setValue(ada, forKey: "holder")
        let project = NSEntityDescription.insertNewObject(forEntityName: "Project", into: context)
        project.setValue("Engine", forKey: "title")
        project.mutableOrderedSetValue(forKey: "members").addObjects(from: [ada, grace])
        try context.save()

        // Employee.badge cascades: Ada's badge goes with her; Project.members loses her.
        let delete = NSBatchDeleteRequest(objectIDs: [ada.objectID])
        delete.resultType = .resultTypeObjectIDs
        let ids = try #require((try context.execute(delete) as? NSBatchDeleteResult)?.result as? [NSManagedObjectID])
        #expect(Set(ids) == [ada.objectID, badge.objectID])
        let check = try stack(model)
        #expect(try check.count(for: NSFetchRequest<NSManagedObject>(entityName: "Badge")) == 0)
        let members =
            try #require(try check.fetch(NSFetchRequest<NSManagedObject>(entityName: "Project")).first)
            .value(forKey: "members") as? NSOrderedSet
        #expect(members?.array.compactMap { ($0 as? NSManagedObject)?.value(forKey: "name") as? String } == ["Grace"])

        // Department.employees nullifies: deleting the department clears Grace's department.
        try context.execute(NSBatchDeleteRequest(objectIDs: [department.objectID]))
        let again = try stack(model)
        let stillGrace = try #require(try again.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee")).first)
        #expect(stillGrace.value(forKey: "name") as? String == "Grace")
        #expect(stillGrace.value(forKey: "department") == nil)
    }

    /// Entries and their sub-entity, with no relationships: a batch delete of them runs as one
    /// `DELETE … RETURNING` statement.
    static func logModel() -> NSManagedObjectModel {
        let entry = NSEntityDescription()
        entry.name = "Entry"
        let audit = NSEntityDescription()
        audit.name = "Audit"
        entry.properties = [
            CompanyModel.attribute("level", .integer64AttributeType),
            CompanyModel.attribute("text", .stringAttributeType),
        ]
        entry.subentities = [audit]
        let model = NSManagedObjectModel()
        model.entities = [entry, audit]
        return model
    }

    @Test(
        "a batch delete of objects without relationships deletes what the predicate matches, sub-entities as asked, and records it"
    )
    func deleteInOneStatement() throws {
        let model = Self.logModel()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: directory.file("log.sqlite"),
            options: [NSPersistentHistoryTrackingKey: true])
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        var rows: [[String: Any]] = []
        for level in 0..<10 { rows.append(["level": level, "text": "e\(level)"]) }
        try context.execute(NSBatchInsertRequest(entityName: "Entry", objects: rows))
        try context.execute(NSBatchInsertRequest(entityName: "Audit", objects: [["level": 9, "text": "a"]]))
        let fetch = NSFetchRequest<NSFetchRequestResult>(entityName: "Entry")
        fetch.predicate = NSPredicate(format: "level >= 8")
        fetch.includesSubentities = false
        let delete = NSBatchDeleteRequest(fetchRequest: fetch)
        delete.resultType = .resultTypeObjectIDs
        let ids = try #require((try context.execute(delete) as? NSBatchDeleteResult)?.result as? [NSManagedObjectID])
        #expect(ids.count == 2)
        #expect(ids.allSatisfy { $0.entity.name == "Entry" })
        #expect(try stored("Entry", "text", model: model, name: "log.sqlite").count == 9)
        // With sub-entities: the audit entry goes too.
        fetch.includesSubentities = true
        let all = NSBatchDeleteRequest(fetchRequest: fetch)
        all.resultType = .resultTypeCount
        #expect((try context.execute(all) as? NSBatchDeleteResult)?.result as? NSNumber == 1)
        let history = try #require(
            (try context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?))
                as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction])
        #expect(history.suffix(2).map { $0.changes?.map(\.changeType) ?? [] } == [[.delete, .delete], [.delete]])
        #expect(history.last?.changes?.first?.changedObjectID.entity.name == "Audit")
    }

    @Test("deny with destinations, and nullifying a required to-one, fail the batch delete and delete nothing")
    func deleteRefusals() throws {
        for denies in [true, false] {
            let model = CompanyModel.make()
            let employees = try #require(model.entitiesByName["Department"]?.relationshipsByName["employees"])
            if denies {
                employees.deleteRule = .denyDeleteRule
            } else {
                model.entitiesByName["Employee"]?.relationshipsByName["department"]?.isOptional = false
            }
            let name = "refusal-\(denies).sqlite"
            let context = try stack(model, name: name)
            let department = context.department("R&D")
            context.employee("Ada").setValue(department, forKey: "department")
            try context.save()
            do {
                try context.execute(NSBatchDeleteRequest(objectIDs: [department.objectID]))
                Issue.record("the batch delete ran")
            } catch let error as NSError {
                #expect(error.code == (denies ? NSValidationRelationshipDeniedDeleteError : NSPersistentStoreSaveError))
            }
            #expect(try stored("Department", "name", model: model, name: name) == ["R&D"])
            #expect(try stored("Employee", "name", model: model, name: name) == ["Ada"])
        }
    }
}
