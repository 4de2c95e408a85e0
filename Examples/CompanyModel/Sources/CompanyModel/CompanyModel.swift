import CoreData
import Foundation

/// The example's model, built in code (the `.xcdatamodeld` form comes with the model-file step of
/// the generator): Department ⇄ Employee (to-many / to-one), Department ⇄ Project (ordered
/// to-many / to-one), Employee ⇄ Skill (many-to-many), Skill ⇄ Skill (`prerequisites` /
/// `unlocks`, many-to-many), Employee → Employee (`mentor`, no inverse).
public enum CompanyModel {
    /// A new model whose entities name this module's classes.
    public static func make() -> NSManagedObjectModel {
        let department = entity("Department")
        let employee = entity("Employee")
        let skill = entity("Skill")
        let project = entity("Project")

        let departmentOf = relationship("department", to: department, toMany: false)
        let employees = relationship("employees", to: employee, toMany: true)
        link(departmentOf, employees)
        let owner = relationship("owner", to: department, toMany: false)
        let projects = relationship("projects", to: project, toMany: true)
        projects.isOrdered = true
        link(owner, projects)
        let skills = relationship("skills", to: skill, toMany: true)
        let holders = relationship("holders", to: employee, toMany: true)
        link(skills, holders)
        let mentor = relationship("mentor", to: employee, toMany: false)
        let prerequisites = relationship("prerequisites", to: skill, toMany: true)
        let unlocks = relationship("unlocks", to: skill, toMany: true)
        link(prerequisites, unlocks)

        let nickname = attribute("nickname", .stringAttributeType)
        nickname.isOptional = false
        nickname.defaultValue = ""
        let tags = attribute("tags", .transformableAttributeType)
        tags.valueTransformerName = "NSSecureUnarchiveFromData"

        department.properties = [
            attribute("name", .stringAttributeType), attribute("budget", .doubleAttributeType),
            attribute("founded", .dateAttributeType), employees, projects,
        ]
        employee.properties = [
            attribute("name", .stringAttributeType), nickname, attribute("age", .integer16AttributeType),
            attribute("level", .integer32AttributeType), attribute("badge", .integer64AttributeType),
            attribute("rating", .floatAttributeType), attribute("score", .doubleAttributeType),
            attribute("active", .booleanAttributeType), attribute("salary", .decimalAttributeType),
            attribute("photo", .binaryDataAttributeType), attribute("identifier", .UUIDAttributeType),
            attribute("homepage", .URIAttributeType), attribute("hired", .dateAttributeType), tags, departmentOf,
            mentor, skills,
        ]
        skill.properties = [attribute("title", .stringAttributeType), holders, prerequisites, unlocks]
        project.properties = [attribute("title", .stringAttributeType), attribute("code", .stringAttributeType), owner]

        let model = NSManagedObjectModel()
        model.entities = [department, employee, skill, project]
        return model
    }

    private static func entity(_ name: String) -> NSEntityDescription {
        let entity = NSEntityDescription()
        entity.name = name
        entity.managedObjectClassName = "CompanyModel." + name
        return entity
    }

    private static func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
        let attribute = NSAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        attribute.isOptional = true
        return attribute
    }

    private static func relationship(
        _ name: String, to destination: NSEntityDescription, toMany: Bool
    ) -> NSRelationshipDescription {
        let relationship = NSRelationshipDescription()
        relationship.name = name
        relationship.destinationEntity = destination
        relationship.minCount = 0
        relationship.maxCount = toMany ? 0 : 1
        relationship.deleteRule = .nullifyDeleteRule
        relationship.isOptional = true
        return relationship
    }

    private static func link(_ a: NSRelationshipDescription, _ b: NSRelationshipDescription) {
        a.inverseRelationship = b
        b.inverseRelationship = a
    }
}
