import CoreData
import Foundation

/// An employee: an empty class body and every property in an extension, as Xcode's
/// Category/Extension code generation writes them — every attribute type, optional and scalar.
public class Employee: NSManagedObject {}

extension Employee {
    /// `Employee.fetchRequest()` typed as Xcode generates it.
    @nonobjc public class func fetchRequest() -> NSFetchRequest<Employee> {
        NSFetchRequest<Employee>(entityName: "Employee")
    }

    @NSManaged public var name: String?
    /// A string the model requires: declared non-optional by hand.
    @NSManaged public var nickname: String
    @NSManaged public var age: Int16
    @NSManaged public var level: Int32
    @NSManaged public var badge: Int64
    @NSManaged public var rating: Float
    @NSManaged public var score: Double
    @NSManaged public var active: Bool
    @NSManaged public var salary: NSDecimalNumber?
    @NSManaged public var photo: Data?
    @NSManaged public var identifier: UUID?
    @NSManaged public var homepage: URL?
    @NSManaged public var hired: Date?
    /// A transformable attribute holding an array.
    @NSManaged public var tags: [String]?
    /// To-one; inverse `Department.employees`.
    @NSManaged public var department: Department?
    /// To-one to the same entity, no inverse.
    @NSManaged public var mentor: Employee?
    /// Many-to-many as a Swift set; inverse `Skill.holders`.
    @NSManaged var skills: Set<Skill>?
}

/// An internal class: its accessors are internal too.
class Skill: NSManagedObject {
    @NSManaged var title: String?
    @NSManaged var holders: NSSet?
    /// Many-to-many to its own entity, declared as a Swift set that is never nil (an empty
    /// set when there are none); inverse `unlocks`.
    @NSManaged var prerequisites: Set<Skill>
    /// The inverse of `prerequisites`, as an optional Swift set.
    @NSManaged var unlocks: Set<Skill>?
}

/// A project of a department's ordered to-many.
public class Project: NSManagedObject {
    @NSManaged public var title: String?
    @NSManaged public var owner: Department?
    /// The primitive accessor of `title`, which Core Data provides for every modelled property:
    /// it reads and sets the value without the change notifications of `title`, as custom
    /// accessors and `willSave()` use it.
    @NSManaged public var primitiveTitle: String?
    /// Set only through ``assign(code:)``: `private(set)` restricts the setter, not the property.
    @NSManaged public private(set) var code: String?

    /// Gives the project its code.
    public func assign(code: String) { self.code = code }
}
