import CoreData
import Testing

/// An employee with per-key validation methods named as Apple would find them (`validate<Key>`),
/// registered once because Linux has no runtime to find them by name.
class ValidatedEmployee: NSManagedObject {
    var calls: [String] = []

    func validateName(_ value: inout Any?) throws {
        calls.append("Employee.name")
        if (value as? String)?.contains("!") == true {
            throw NSError(
                domain: NSCocoaErrorDomain, code: NSManagedObjectValidationError,
                userInfo: [NSValidationKeyErrorKey: "name", NSValidationObjectErrorKey: self])
        }
    }

    func validateSalary(_ value: inout Any?) throws {
        if let salary = value as? Double, salary < 0 { value = 0.0 }
    }
}

final class ValidatedManager: ValidatedEmployee {
    func validateManagerName(_ value: inout Any?) throws {
        calls.append("Manager.name")
    }
}

/// Per-key validation. Rules: Core Data Programming Guide, "Object Validation" (property-level
/// validation runs after the model's constraints; a validation method may coerce the value or
/// fail with an error); NSManagedObject reference, `validateValue(_:forKey:)`. DEVIATIONS.md says
/// how `validate<Key>` methods are found on Linux.
@Suite("Per-key validation")
struct KeyValidationTests {
    static let registered: Void = {
        ValidatedManager.registerValidation(forKey: "name", ValidatedManager.validateManagerName)
        ValidatedEmployee.registerValidation(forKey: "name", ValidatedEmployee.validateName)
        ValidatedEmployee.registerValidation(forKey: "salary", ValidatedEmployee.validateSalary)
    }()

    func context() throws -> NSManagedObjectContext {
        _ = Self.registered
        let model = CompanyModel.make()
        model.entitiesByName["Employee"]?.managedObjectClassName = NSStringFromClass(ValidatedEmployee.self)
        model.entitiesByName["Manager"]?.managedObjectClassName = NSStringFromClass(ValidatedManager.self)
        return try CompanyModel.stack(model)
    }

    @Test("a registered validation rejects a value when the object is saved")
    func rejectsOnSave() throws {
        let context = try context()
        let ada = try #require(context.employee("Ada!") as? ValidatedEmployee)
        let error = #expect(throws: NSError.self) { try context.save() }
        #expect(error?.code == NSManagedObjectValidationError)
        #expect(error?.userInfo[NSValidationKeyErrorKey] as? String == "name")
        ada.setValue("Ada", forKey: "name")
        try context.save()
    }

    @Test("the model's constraints come first: a failing constraint stops before the method")
    func modelFirst() throws {
        let context = try context()
        let nameless = try #require(
            NSEntityDescription.insertNewObject(forEntityName: "Employee", into: context) as? ValidatedEmployee)
        var value: Any? = nil
        let error = #expect(throws: NSError.self) { try nameless.validateValue(&value, forKey: "name") }
        #expect(error?.code == NSValidationMissingMandatoryPropertyError)
        #expect(nameless.calls.isEmpty)
    }

    @Test("a validation may coerce the value it is given")
    func coercion() throws {
        let context = try context()
        let ada = try #require(context.employee("Ada") as? ValidatedEmployee)
        var value: Any? = -5.0
        try ada.validateValue(&value, forKey: "salary")
        #expect(value as? Double == 0)
    }

    @Test("a subclass runs its superclass's validation first, then its own; other entities are untouched")
    func inheritance() throws {
        let context = try context()
        let boss = try #require(context.employee("Grace", entity: "Manager") as? ValidatedManager)
        var value: Any? = "Grace"
        try boss.validateValue(&value, forKey: "name")
        #expect(boss.calls == ["Employee.name", "Manager.name"])
        let ada = try #require(context.employee("Ada") as? ValidatedEmployee)
        try ada.validateValue(&value, forKey: "name")
        #expect(ada.calls == ["Employee.name"], "a manager's validation is not an employee's")
        context.department("Research!")
        try context.save()
    }
}
