/// Xcode's mapping-model files: an `.xcmappingmodel` folder holds `xcmapping.xml`, an XML store
/// (``NSXMLStoreType``) of the objects Xcode's mapping editor keeps — one mapping model, its
/// entity mappings, and their attribute and relationship mappings. This is the model of those
/// objects, as far as the files written by Xcode show it (STORE-FORMAT.md, "Mapping-model files").
///
/// The files record the hashes of Xcode's own model, which this one does not reproduce: open
/// them with `NSIgnorePersistentStoreVersioningOption`.
package enum XcodeMappingFile {
    /// The model: `XDDevMappingModel` (the two models' paths and archived data, its entity
    /// mappings), `XDDevEntityMapping` (source and destination entity names, mapping type, policy
    /// class, order, filter), and the abstract `XDDevPropertyMapping` (name, archived value
    /// expression or `autoGenerateExpression`) with `XDDevAttributeMapping` and
    /// `XDDevRelationshipMapping` (the source key path and the entity mapping it takes
    /// destinations from).
    package static let model: NSManagedObjectModel = {
        func entity(_ name: String, _ attributes: [(String, NSAttributeType)]) -> NSEntityDescription {
            let entity = NSEntityDescription()
            entity.name = name
            entity.properties = attributes.map { name, type in
                let attribute = NSAttributeDescription()
                attribute.name = name
                attribute.attributeType = type
                attribute.isOptional = true
                return attribute
            }
            return entity
        }
        func relationship(_ name: String, _ destination: NSEntityDescription, toMany: Bool) -> NSRelationshipDescription
        {
            let relationship = NSRelationshipDescription()
            relationship.name = name
            relationship.destinationEntity = destination
            relationship.minCount = 0
            relationship.maxCount = toMany ? 0 : 1
            relationship.deleteRule = toMany ? .cascadeDeleteRule : .nullifyDeleteRule
            return relationship
        }
        let mappingModel = entity(
            "XDDevMappingModel",
            [
                ("sourceModelPath", .stringAttributeType), ("destinationModelPath", .stringAttributeType),
                ("sourceModelData", .binaryDataAttributeType), ("destinationModelData", .binaryDataAttributeType),
            ])
        let entityMapping = entity(
            "XDDevEntityMapping",
            [
                ("sourceName", .stringAttributeType), ("destinationName", .stringAttributeType),
                ("mappingTypeName", .stringAttributeType), ("mappingNumber", .integer16AttributeType),
                ("migrationPolicyClassName", .stringAttributeType), ("autoGenerateExpression", .booleanAttributeType),
                ("sourceFilterPredicateString", .stringAttributeType),
                ("sourceExpressionData", .binaryDataAttributeType),
                ("userInfoData", .binaryDataAttributeType),
            ])
        let propertyMapping = entity(
            "XDDevPropertyMapping",
            [
                ("name", .stringAttributeType), ("valueExpressionData", .binaryDataAttributeType),
                ("autoGenerateExpression", .booleanAttributeType), ("userInfoData", .binaryDataAttributeType),
            ])
        propertyMapping.isAbstract = true
        let attributeMapping = entity("XDDevAttributeMapping", [])
        let relationshipMapping = entity(
            "XDDevRelationshipMapping",
            [("sourceKeyPath", .stringAttributeType), ("sourceMappingName", .stringAttributeType)])
        propertyMapping.subentities = [attributeMapping, relationshipMapping]
        mappingModel.properties += [relationship("entityMappings", entityMapping, toMany: true)]
        entityMapping.properties += [
            relationship("mappingModel", mappingModel, toMany: false),
            relationship("attributeMappings", attributeMapping, toMany: true),
            relationship("relationshipMappings", relationshipMapping, toMany: true),
        ]
        propertyMapping.properties += [relationship("entityMapping", entityMapping, toMany: false)]
        let model = NSManagedObjectModel()
        model.entities = [mappingModel, entityMapping, propertyMapping, attributeMapping, relationshipMapping]
        return model
    }()
}
