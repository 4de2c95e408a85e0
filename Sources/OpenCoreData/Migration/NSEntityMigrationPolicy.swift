/// The key of the migration manager in a value expression's variables (`$manager`).
public let NSMigrationManagerKey = "manager"
/// The key of the source instance in a value expression's variables (`$source`).
public let NSMigrationSourceObjectKey = "source"
/// The key of the destination instance in a value expression's variables (`$destination`).
public let NSMigrationDestinationObjectKey = "destination"
/// The key of the current entity mapping in a value expression's variables (`$entityMapping`).
public let NSMigrationEntityMappingKey = "entityMapping"
/// The key of the current property mapping in a value expression's variables (`$propertyMapping`).
public let NSMigrationPropertyMappingKey = "propertyMapping"
/// The key of the entity migration policy in a value expression's variables (`$entityPolicy`).
public let NSMigrationEntityPolicyKey = "entityPolicy"

/// How one entity mapping's instances migrate. ``NSMigrationManager`` calls each method in turn
/// for every entity mapping; subclass it and name the subclass in the mapping model (the entity
/// mapping's `entityMigrationPolicyClassName`, "Custom Policy" in Xcode) to change a step.
///
/// The defaults: ``createDestinationInstances(forSource:in:manager:)`` makes one destination
/// instance per source instance, sets each attribute from its property mapping's value expression
/// and associates the two; ``createRelationships(forDestination:in:manager:)`` sets each
/// relationship from its mapping's value expression. The other steps do nothing.
///
/// Related documentation: NSEntityMigrationPolicy reference; Core Data Model Versioning and Data
/// Migration Programming Guide, "Customizing the Migration Process".
open class NSEntityMigrationPolicy: NSObject {
    /// A policy; the manager makes one per entity mapping.
    override public required init() {
        super.init()
    }

    /// Called before the mapping's instances are created.
    ///
    /// - Throws: to stop the migration with that error.
    open func begin(_ mapping: NSEntityMapping, with manager: NSMigrationManager) throws {}

    /// Makes the destination instance of `sInstance`: an instance of the mapping's destination
    /// entity in the destination context, its attributes set from the attribute mappings' value
    /// expressions (`$source` is `sInstance`), associated with `sInstance` for the mapping.
    ///
    /// - Throws: to stop the migration with that error.
    open func createDestinationInstances(
        forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
    ) throws {
        guard let entity = manager.destinationEntity(for: mapping) else { return }
        let destination = NSManagedObject(entity: entity, insertInto: manager.destinationContext)
        for property in mapping.attributeMappings ?? [] {
            guard let name = property.name, let expression = property.valueExpression,
                entity.attributesByName[name] != nil
            else { continue }
            let value = manager.evaluate(
                expression, source: sInstance, destination: destination, mapping: mapping, property: property,
                policy: self)
            destination.setValue(value, forKey: name)
        }
        manager.associate(sourceInstance: sInstance, withDestinationInstance: destination, for: mapping)
    }

    /// Called after every instance of the mapping was created.
    ///
    /// - Throws: to stop the migration with that error.
    open func endInstanceCreation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {}

    /// Sets `dInstance`'s relationships from the relationship mappings' value expressions
    /// (`$source` is the source instance it was made from).
    ///
    /// - Throws: to stop the migration with that error.
    open func createRelationships(
        forDestination dInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
    ) throws {
        guard let name = mapping.name else { return }
        let source = manager.sourceInstances(forEntityMappingName: name, destinationInstances: [dInstance]).first
        for property in mapping.relationshipMappings ?? [] {
            guard let key = property.name, let expression = property.valueExpression,
                let relationship = dInstance.entity.relationshipsByName[key]
            else { continue }
            let value = DynamicValue.unwrap(
                manager.evaluate(
                    expression, source: source, destination: dInstance, mapping: mapping, property: property,
                    policy: self))
            let objects = value.map { (DynamicValue.elements($0) ?? [$0]).compactMap { $0 as? NSManagedObject } } ?? []
            if relationship.isToMany {
                dInstance.setValue(
                    relationship.isOrdered ? NSOrderedSet(array: objects) as Any : Set(objects) as Any, forKey: key)
            } else {
                dInstance.setValue(objects.first, forKey: key)
            }
        }
    }

    /// Called after every relationship of the mapping's destination instances was set.
    ///
    /// - Throws: to stop the migration with that error.
    open func endRelationshipCreation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {}

    /// Checks the migrated instances beyond the model's own validation.
    ///
    /// - Throws: to stop the migration with that error.
    open func performCustomValidation(forMapping mapping: NSEntityMapping, manager: NSMigrationManager) throws {}

    /// Called when the mapping's migration is done.
    ///
    /// - Throws: to stop the migration with that error.
    open func end(_ mapping: NSEntityMapping, manager: NSMigrationManager) throws {}
}
