import CoreData
import Foundation

/// A department: properties declared in the class body, as hand-written classes often are, and
/// the to-many accessors Xcode generates in an extension.
public class Department: NSManagedObject {
    @NSManaged public var name: String?
    @NSManaged public var budget: Double
    @NSManaged public var founded: Date?
    /// Unordered to-many; inverse `Employee.department`.
    @NSManaged public var employees: NSSet?
    /// Ordered to-many; inverse `Project.owner`.
    @NSManaged public var projects: NSOrderedSet?
}

// The accessors Xcode generates for an unordered to-many (Class Definition / Category).
extension Department {
    // On Apple platforms Xcode writes `@objc(addEmployeesObject:)` here; it does not compile on
    // Linux, so it is guarded (README, "Model classes").
    #if canImport(ObjectiveC)
        @objc(addEmployeesObject:)
    #endif
    @NSManaged public func addToEmployees(_ value: Employee)

    @NSManaged public func removeFromEmployees(_ value: Employee)

    @NSManaged public func addToEmployees(_ values: NSSet)

    @NSManaged public func removeFromEmployees(_ values: NSSet)
}

// The ten accessors Xcode generates for an ordered to-many.
extension Department {
    @NSManaged public func insertIntoProjects(_ value: Project, at idx: Int)

    @NSManaged public func removeFromProjects(at idx: Int)

    @NSManaged public func insertIntoProjects(_ values: [Project], at indexes: NSIndexSet)

    @NSManaged public func removeFromProjects(at indexes: NSIndexSet)

    @NSManaged public func replaceProjects(at idx: Int, with value: Project)

    @NSManaged public func replaceProjects(at indexes: NSIndexSet, with values: [Project])

    @NSManaged public func addToProjects(_ value: Project)

    @NSManaged public func removeFromProjects(_ value: Project)

    @NSManaged public func addToProjects(_ values: NSOrderedSet)

    @NSManaged public func removeFromProjects(_ values: NSOrderedSet)
}
