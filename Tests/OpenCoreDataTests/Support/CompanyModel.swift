import CoreData

/// The employee/department/manager model the Core Data and Key-Value Coding guides use in their
/// examples, built in code: Employee (name, salary, startDate, manager ⇄ directReports,
/// department ⇄ employees), Manager (sub-entity of Employee, budget), Department (name,
/// employees — cascade from department to employees is off: nullify), Badge (one-to-one with
/// Employee, cascade), Project (many-to-many with Employee, ordered members).
enum CompanyModel {
    static func make() -> NSManagedObjectModel {
        let employee = NSEntityDescription()
        employee.name = "Employee"
        let manager = NSEntityDescription()
        manager.name = "Manager"
        let department = NSEntityDescription()
        department.name = "Department"
        let badge = NSEntityDescription()
        badge.name = "Badge"
        let project = NSEntityDescription()
        project.name = "Project"

        let name = attribute("name", .stringAttributeType, optional: false)
        let salary = attribute("salary", .doubleAttributeType)
        salary.defaultValue = 0.0
        let startDate = attribute("startDate", .dateAttributeType)
        let nickname = attribute("nickname", .stringAttributeType)
        nickname.isTransient = true

        let managerRel = relationship("manager", to: employee, toMany: false, rule: .nullifyDeleteRule)
        let reports = relationship("directReports", to: employee, toMany: true, rule: .nullifyDeleteRule)
        link(managerRel, reports)
        let departmentRel = relationship("department", to: department, toMany: false, rule: .nullifyDeleteRule)
        let employees = relationship("employees", to: employee, toMany: true, rule: .nullifyDeleteRule)
        link(departmentRel, employees)
        let badgeRel = relationship("badge", to: badge, toMany: false, rule: .cascadeDeleteRule)
        let holder = relationship("holder", to: employee, toMany: false, rule: .nullifyDeleteRule)
        link(badgeRel, holder)
        let projects = relationship("projects", to: project, toMany: true, rule: .nullifyDeleteRule)
        let members = relationship("members", to: employee, toMany: true, rule: .nullifyDeleteRule)
        members.isOrdered = true
        link(projects, members)

        employee.properties = [
            name, salary, startDate, nickname, managerRel, reports, departmentRel, badgeRel, projects,
        ]
        manager.properties = [attribute("budget", .integer64AttributeType)]
        employee.subentities = [manager]
        department.properties = [attribute("name", .stringAttributeType, optional: false), employees]
        badge.properties = [attribute("number", .integer32AttributeType), holder]
        project.properties = [attribute("title", .stringAttributeType), members]

        let model = NSManagedObjectModel()
        model.entities = [employee, manager, department, badge, project]
        return model
    }

    static func attribute(_ name: String, _ type: NSAttributeType, optional: Bool = true) -> NSAttributeDescription {
        let attribute = NSAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        attribute.isOptional = optional
        return attribute
    }

    static func relationship(
        _ name: String, to destination: NSEntityDescription, toMany: Bool, rule: NSDeleteRule
    ) -> NSRelationshipDescription {
        let relationship = NSRelationshipDescription()
        relationship.name = name
        relationship.destinationEntity = destination
        relationship.minCount = 0
        relationship.maxCount = toMany ? 0 : 1
        relationship.deleteRule = rule
        return relationship
    }

    /// Two entities, an owner and its members, linked by the owner's `toMany` and the members'
    /// inverse to-one `toOne` (nullify both ways), each with `attributes` first: the small models
    /// several suites build. `isToMany: false` makes the owner's side a to-one as well.
    static func owning(
        _ owner: String, _ ownerAttributes: [NSAttributeDescription], toMany: String, isToMany: Bool = true,
        members member: String, _ memberAttributes: [NSAttributeDescription], toOne: String
    ) -> NSManagedObjectModel {
        let ownerEntity = NSEntityDescription()
        ownerEntity.name = owner
        let memberEntity = NSEntityDescription()
        memberEntity.name = member
        let many = relationship(toMany, to: memberEntity, toMany: isToMany, rule: .nullifyDeleteRule)
        let one = relationship(toOne, to: ownerEntity, toMany: false, rule: .nullifyDeleteRule)
        link(many, one)
        ownerEntity.properties = ownerAttributes + [many]
        memberEntity.properties = memberAttributes + [one]
        let model = NSManagedObjectModel()
        model.entities = [ownerEntity, memberEntity]
        return model
    }

    static func link(_ a: NSRelationshipDescription, _ b: NSRelationshipDescription) {
        a.inverseRelationship = b
        b.inverseRelationship = a
    }

    /// A coordinator for `model` (a fresh company model by default) with one in-memory store, and a
    /// private-queue context on it.
    static func stack(_ model: NSManagedObjectModel = make()) throws -> NSManagedObjectContext {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }
}

extension NSManagedObjectContext {
    /// Inserts an employee (or manager) with a name and salary.
    @discardableResult
    func employee(_ name: String, salary: Double = 0, entity: String = "Employee") -> NSManagedObject {
        let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: self)
        object.setValue(name, forKey: "name")
        object.setValue(salary, forKey: "salary")
        return object
    }

    /// Inserts a department with a name.
    @discardableResult
    func department(_ name: String) -> NSManagedObject {
        let object = NSEntityDescription.insertNewObject(forEntityName: "Department", into: self)
        object.setValue(name, forKey: "name")
        return object
    }
}
