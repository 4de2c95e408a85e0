import CoreData
import Testing

/// An employee that refuses a salary above its manager's, in `validateForUpdate()`.
final class CheckedEmployee: NSManagedObject {
    override func validateForInsert() throws {
        try super.validateForInsert()
        if (value(forKey: "salary") as? Double ?? 0) < 0 {
            throw NSError(
                domain: NSCocoaErrorDomain, code: NSManagedObjectValidationError,
                userInfo: [NSValidationKeyErrorKey: "salary", NSLocalizedDescriptionKey: "salary must not be negative"])
        }
    }
}

/// Validation. Rules from the Core Data Programming Guide ("Object Validation": property-level
/// constraints from the model, then inter-property validation in `validateFor…`, errors gathered
/// with `NSValidationMultipleErrorsError` and `NSDetailedErrorsKey`) and the Core Data Constants
/// reference (error codes and userInfo keys).
@Suite("Validation")
struct ValidationTests {
    @Test("a missing mandatory attribute fails the save with 1570, naming the object and key")
    func missingMandatory() throws {
        let context = try CompanyModel.stack()
        let nameless = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: context)
        let error = #expect(throws: NSError.self) { try context.save() }
        #expect(error?.domain == NSCocoaErrorDomain)
        #expect(error?.code == NSValidationMissingMandatoryPropertyError)
        #expect(error?.userInfo[NSValidationKeyErrorKey] as? String == "name")
        #expect(error?.userInfo[NSValidationObjectErrorKey] as? NSManagedObject === nameless)
    }

    @Test("several failures are one 1560 error with each under NSDetailedErrorsKey")
    func multipleErrors() throws {
        let context = try CompanyModel.stack()
        NSEntityDescription.insertNewObject(forEntityName: "Employee", into: context)
        NSEntityDescription.insertNewObject(forEntityName: "Department", into: context)
        let error = #expect(throws: NSError.self) { try context.save() }
        #expect(error?.code == NSValidationMultipleErrorsError)
        let details = error?.userInfo[NSDetailedErrorsKey] as? [Error]
        #expect(details?.count == 2)
        #expect(details?.allSatisfy { ($0 as NSError).code == NSValidationMissingMandatoryPropertyError } == true)
    }

    @Test("a failed save changes nothing and the context can retry once the problem is fixed")
    func retryAfterFailure() throws {
        let context = try CompanyModel.stack()
        let object = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: context)
        #expect(throws: NSError.self) { try context.save() }
        #expect(object.isInserted && object.objectID.isTemporaryID)
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Employee")) == 1)
        object.setValue("Ada", forKey: "name")
        try context.save()
        #expect(!object.objectID.isTemporaryID)
    }

    @Test("validation predicates with warnings: a numeric warning is the error code, else 1550")
    func validationPredicates() throws {
        let model = CompanyModel.make()
        let salary = try #require(model.entitiesByName["Employee"]?.attributesByName["salary"])
        salary.setValidationPredicates([NSPredicate(format: "SELF >= 0")], withValidationWarnings: ["1620"])
        let name = try #require(model.entitiesByName["Employee"]?.attributesByName["name"])
        name.setValidationPredicates([NSPredicate(format: "length <= 5")], withValidationWarnings: ["Name too long"])
        let context = try CompanyModel.stack(model)
        let ada = context.employee("Ada", salary: -1)
        var value: Any? = -1.0
        let tooSmall = #expect(throws: NSError.self) { try ada.validateValue(&value, forKey: "salary") }
        #expect(tooSmall?.code == NSValidationNumberTooSmallError)
        #expect(tooSmall?.userInfo[NSValidationPredicateErrorKey] is NSPredicate)
        value = "Adelaide"
        let tooLong = #expect(throws: NSError.self) { try ada.validateValue(&value, forKey: "name") }
        #expect(tooLong?.code == NSManagedObjectValidationError)
        #expect(tooLong?.localizedDescription == "Name too long")
        value = "Ada"
        try ada.validateValue(&value, forKey: "name")
    }

    @Test("to-many counts: fewer than minCount is 1580, more than maxCount is 1590")
    func relationshipCounts() throws {
        let model = CompanyModel.make()
        let members = try #require(model.entitiesByName["Project"]?.relationshipsByName["members"])
        members.minCount = 2
        members.maxCount = 3
        let context = try CompanyModel.stack(model)
        let project = NSEntityDescription.insertNewObject(forEntityName: "Project", into: context)
        project.setValue(NSOrderedSet(array: [context.employee("A")]), forKey: "members")
        #expect(throws: NSError.self) { try context.save() }
        var value: Any? = project.value(forKey: "members")
        let few = #expect(throws: NSError.self) { try project.validateValue(&value, forKey: "members") }
        #expect(few?.code == NSValidationRelationshipLacksMinimumCountError)
        value = NSOrderedSet(array: ["A", "B", "C", "D"].map { context.employee($0) })
        let many = #expect(throws: NSError.self) { try project.validateValue(&value, forKey: "members") }
        #expect(many?.code == NSValidationRelationshipExceedsMaximumCountError)
    }

    /// Apple's cardinality rule for an empty to-many: allowed when the relationship is optional,
    /// and when it is not but its `minCount` is 0 (a real library's models have such non-optional
    /// to-manys, empty and saved on Apple platforms); refused (1580) when it is not optional and
    /// needs members.
    @Test(
        "an empty to-many is valid when optional or when its minCount is 0, and 1580 otherwise",
        arguments: [(true, 0, true), (true, 2, true), (false, 0, true), (false, 2, false)])
    func emptyToMany(optional: Bool, minCount: Int, valid: Bool) throws {
        let model = CompanyModel.make()
        let members = try #require(model.entitiesByName["Project"]?.relationshipsByName["members"])
        members.isOptional = optional
        members.minCount = minCount
        let context = try CompanyModel.stack(model)
        let project = NSEntityDescription.insertNewObject(forEntityName: "Project", into: context)
        var value: Any? = NSOrderedSet()
        if valid {
            try project.validateValue(&value, forKey: "members")
            try context.performAndWait { try context.save() }
        } else {
            let error = #expect(throws: NSError.self) { try project.validateValue(&value, forKey: "members") }
            #expect(error?.code == NSValidationRelationshipLacksMinimumCountError)
        }
    }

    @Test("validateForInsert overrides run after the model's constraints and their errors are gathered")
    func customValidation() throws {
        let model = CompanyModel.make()
        model.entitiesByName["Employee"]?.managedObjectClassName = "CheckedEmployee"
        let context = try CompanyModel.stack(model)
        let object = CheckedEmployee(context: context)
        object.setValue("Ada", forKey: "name")
        object.setValue(-5.0, forKey: "salary")
        let error = #expect(throws: NSError.self) { try context.save() }
        #expect(error?.localizedDescription == "salary must not be negative")
        object.setValue(5.0, forKey: "salary")
        try context.save()
    }
}
