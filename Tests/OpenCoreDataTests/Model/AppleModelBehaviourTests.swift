import CoreData
import Testing

/// Model and expression details real code relies on. NSPropertyDescription and
/// NSEntityDescription `userInfo` (empty, so `userInfo?["k"] = v` stores); NSFetchedPropertyDescription
/// `fetchRequest` (the whole request: sort descriptors, limit); NSAttributeDescription `type`
/// (macOS 12 / iOS 15); NSExpression `expressionValue(with:context:)` (numbers as `NSNumber`);
/// Predicate Programming Guide, "Format String Summary" (`%K` substitutes a key, also after a variable).
@Suite("Apple's model and expression details")
struct AppleModelBehaviourTests {
    /// Two loads of the same model compare equal on Apple platforms (a Core Data stack library's
    /// tests compare the model it loaded with the one it expects, 7 of them); models of other
    /// entities or other versions of an entity do not. Regression: models compared by identity.
    @Test("two loads of one model are equal and hash alike; a changed entity makes them unequal")
    func modelsCompareByTheirEntities() throws {
        let first = CompanyModel.make()
        let second = CompanyModel.make()
        #expect(first !== second)
        #expect(first == second)
        #expect(first.hash == second.hash)
        #expect(Set([first, second]).count == 1)
        let changed = CompanyModel.make()
        changed.entitiesByName["Employee"]?.properties.append(CompanyModel.attribute("title", .stringAttributeType))
        #expect(changed != first)
        #expect(first != CompanyModel.owning("A", [], toMany: "bs", members: "B", [], toOne: "a"))
    }

    @Test("userInfo starts empty, so optional-chained assignment stores a value")
    func userInfoStartsEmpty() {
        let attribute = NSAttributeDescription()
        attribute.userInfo?["source"] = "import"
        #expect(attribute.userInfo?["source"] as? String == "import")
        let entity = NSEntityDescription()
        entity.userInfo?["table"] = "people"
        #expect(entity.userInfo?["table"] as? String == "people")
    }

    /// NSPropertyDescription `entity`, NSRelationshipDescription `destinationEntity`,
    /// NSEntityDescription `superentity`, NSFetchIndexDescription `entity`: the entity each belongs
    /// to or refers to, which it does not keep (Apple's are unretained; here they read `nil` once
    /// the entity is gone). Read through the entity's own token, not a weak reference to
    /// the entity, so each must still answer its entity and let it go.
    @Test("descriptions refer back to their entities without keeping them")
    func descriptionsReferToEntitiesWithoutKeepingThem() {
        let attribute = NSAttributeDescription()
        attribute.name = "title"
        let relationship = NSRelationshipDescription()
        relationship.name = "owner"
        let index = NSFetchIndexDescription(name: "byTitle", elements: [])
        let child = NSEntityDescription()
        do {
            let parent = NSEntityDescription()
            parent.name = "Parent"
            parent.properties = [attribute, relationship]
            parent.indexes = [index]
            parent.subentities = [child]
            relationship.destinationEntity = parent
            #expect(attribute.entity === parent)
            #expect(relationship.entity === parent)
            #expect(relationship.destinationEntity === parent)
            #expect(index.entity === parent)
            #expect(child.superentity === parent)
            relationship.destinationEntity = child
            #expect(relationship.destinationEntity === child)
            relationship.destinationEntity = parent
        }
        #expect(attribute.entity == nil)
        #expect(relationship.entity == nil)
        #expect(relationship.destinationEntity == nil)
        #expect(index.entity == nil)
        #expect(child.superentity == nil)
    }

    @Test("a fetched property keeps its whole request: sort descriptors and limit apply")
    func fetchedPropertyKeepsTheWholeRequest() throws {
        let model = CompanyModel.make()
        let department = try #require(model.entitiesByName["Department"])
        let topTwo = NSFetchedPropertyDescription()
        topTwo.name = "topTwo"
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Employee")
        request.predicate = NSPredicate(format: "department == $FETCH_SOURCE")
        request.sortDescriptors = [NSSortDescriptor(key: "salary", ascending: false)]
        request.fetchLimit = 2
        topTwo.fetchRequest = request
        department.properties = department.properties + [topTwo]
        #expect(topTwo.fetchRequest?.fetchLimit == 2)
        #expect(topTwo.fetchRequest?.sortDescriptors?.first?.key == "salary")
        let context = try CompanyModel.stack(model)
        let rnd = context.department("R&D")
        for (name, salary) in [("Ada", 300.0), ("Bob", 100.0), ("Cy", 200.0)] {
            context.employee(name, salary: salary).setValue(rnd, forKey: "department")
        }
        try context.save()
        let found = rnd.value(forKey: "topTwo") as? [Any]
        #expect(found?.compactMap { ($0 as? NSManagedObject)?.value(forKey: "name") as? String } == ["Ada", "Cy"])
    }

    @Test("NSAttributeDescription.type is the typed attribute type")
    func typedAttributeType() {
        let attribute = NSAttributeDescription()
        attribute.type = .uuid
        #expect(attribute.attributeType == .UUIDAttributeType)
        attribute.attributeType = .integer16AttributeType
        #expect(attribute.type == .integer16)
        #expect(NSAttributeDescription.AttributeType(.stringAttributeType) == .string)
    }

    @Test("arithmetic and functions answer NSNumber: 4 + 5 casts to Int, Double and NSNumber")
    func expressionNumbersAreNSNumbers() {
        let sum = NSExpression(format: "4 + 5").expressionValue(with: nil, context: nil)
        #expect(sum as? Int == 9)
        #expect(sum as? Double == 9)
        #expect((sum as? NSNumber)?.intValue == 9)
        let quotient = NSExpression(format: "10 / 4").expressionValue(with: nil, context: nil)
        #expect(quotient as? Double == 2.5)
        let count = NSExpression(format: "count:({1, 2, 3})").expressionValue(with: nil, context: nil)
        #expect(count as? Int == 3 && count is NSNumber)
    }

    @Test("%K after $VARIABLE. substitutes the key: \"%K == $FETCH_SOURCE.%K\"")
    func keyAfterVariable() throws {
        let predicate = try NSPredicate(validatingFormat: "%K == $FETCH_SOURCE.%K", argumentArray: ["a", "b.c"])
        #expect(predicate.predicateFormat == "a == $FETCH_SOURCE.b.c")
        let bound = predicate.withSubstitutionVariables(["FETCH_SOURCE": ["b": ["c": 1]]])
        #expect(bound.evaluate(with: ["a": 1]))
        #expect(!bound.evaluate(with: ["a": 2]))
    }

    /// NSManagedObjectModel, `entitiesByName`: "the entities of the model, keyed by name". The
    /// dictionary of a model in use is built once; until then it follows every edit.
    @Test("entitiesByName follows edits to an editable model and answers the same once it is in use")
    func entitiesByNameBeforeAndAfterUse() throws {
        let model = NSManagedObjectModel()
        let entity = NSEntityDescription()
        entity.name = "Draft"
        model.entities = [entity]
        #expect(model.entitiesByName["Draft"] === entity)
        entity.name = "Employee"
        #expect(model.entitiesByName["Draft"] == nil)
        #expect(model.entitiesByName["Employee"] === entity)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        _ = try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        #expect(model.entitiesByName.keys.sorted() == ["Employee"])
        #expect(NSEntityDescription.entity(forEntityName: "Employee", in: context) === entity)
        let inserted = NSEntityDescription.insertNewObject(forEntityName: "Employee", into: context)
        #expect(inserted.entity === entity)
    }
}
