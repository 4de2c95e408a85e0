import CoreData
import Testing

/// A class no model claims.
final class Unclaimed: NSManagedObject {}

extension Employee {
    /// The factory pattern of real code: `Self(context:)` needs `init(context:)` to be `required`.
    class func make(in context: NSManagedObjectContext, name: String) -> Self {
        let object = Self(context: context)
        object.name = name
        return object
    }
}

/// A coordinator subclass built the way real code builds one: `self.init(managedObjectModel:)`
/// in a convenience initializer needs the initializer to be `required`.
final class AppCoordinator: NSPersistentStoreCoordinator, @unchecked Sendable {
    convenience init(inMemoryWith model: NSManagedObjectModel) throws {
        self.init(managedObjectModel: model)
        try addPersistentStore(type: .inMemory, at: URL(fileURLWithPath: "/dev/null"))
    }
}

/// Initializers and validation as Apple declares them. NSManagedObject reference:
/// `init(context:)` and `class func entity()`; NSPersistentStoreCoordinator reference:
/// `init(managedObjectModel:)`; NSManagedObject `validateValue(_:forKey:)`, called from Swift as
/// `try object.validateValue(&value, forKey:)` with `var value: AnyObject?`.
@Suite("Apple's initializers and validateValue spelling")
struct AppleInitializerTests {
    @Test("Self(context:) in a class method and self.init(managedObjectModel:) in a subclass compile and work")
    func requiredInitializers() throws {
        let model = CompanyModel.make()
        model.entitiesByName["Employee"]?.managedObjectClassName = NSStringFromClass(Employee.self)
        let coordinator = try AppCoordinator(inMemoryWith: model)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let ada: Employee = Employee.make(in: context, name: "Ada")
        #expect(ada.entity.name == "Employee")
        try context.save()
        #expect(try context.count(for: NSFetchRequest<Employee>(entityName: "Employee")) == 1)
    }

    /// `Employee()` compiles on Apple platforms (NSObject's `init()`), so ported code calls it;
    /// here it makes an object of the entity the class is named by, in no context, ready to
    /// insert (Apple: "insert it with `insert(_:)`" for objects made with a nil context).
    @Test("Employee() makes an object of Employee's entity, in no context, that a context can insert and save")
    func plainInitializer() throws {
        let model = CompanyModel.make()
        model.entitiesByName["Employee"]?.managedObjectClassName = NSStringFromClass(Employee.self)
        let coordinator = try AppCoordinator(inMemoryWith: model)
        let ada = Employee()
        #expect(ada.entity.name == "Employee")
        #expect(ada.managedObjectContext == nil)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        context.insert(ada)
        ada.name = "Ada"
        try context.save()
        #expect(try context.count(for: NSFetchRequest<Employee>(entityName: "Employee")) == 1)
    }

    /// Apple's `entity()` for a class no loaded model claims does not raise: it answers an entity
    /// description without a name (real code writes `entity().name ?? className`).
    @Test("entity() of a class no model claims is a nameless entity, not a trap")
    func entityOfAnUnclaimedClass() throws {
        _ = try CompanyModel.stack()
        let entity = Unclaimed.entity()
        #expect(entity.name == nil)
        #expect(entity.properties.isEmpty)
        #expect(Unclaimed.entity().name ?? "Unclaimed" == "Unclaimed")
    }

    @Test("validateValue(&value, forKey:) with var value: AnyObject? validates and can coerce")
    func validateValueWithAnyObject() throws {
        let context = try CompanyModel.stack()
        let ada = context.employee("Ada")
        var good: AnyObject? = "Grace" as AnyObject
        try ada.validateValue(&good, forKey: "name")
        var missing: AnyObject? = nil
        let error = #expect(throws: NSError.self) { try ada.validateValue(&missing, forKey: "name") }
        #expect(error?.code == NSValidationMissingMandatoryPropertyError)
        // A registered validate<Key> method that coerces (a negative salary becomes 0) hands its
        // value back through the AnyObject? spelling too.
        let validated = try KeyValidationTests().context()
        let bob = validated.employee("Bob")
        var salary: AnyObject? = -5.0 as AnyObject
        try bob.validateValue(&salary, forKey: "salary")
        #expect(salary as? Double == 0)
    }
}
