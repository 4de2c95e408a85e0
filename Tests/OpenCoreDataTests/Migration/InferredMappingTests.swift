import CoreData
import Foundation
import Testing

/// Lightweight migration's inferred mapping models. Apple's documentation: "Migrating your data
/// model automatically" (the changes an inferred mapping model covers: attributes added or
/// removed, non-optional becoming optional and optional becoming non-optional with a default,
/// entities and properties renamed through the renaming identifier, relationships added, removed,
/// renamed, changed between to-one and to-many and between ordered and unordered, entities added,
/// removed, renamed, new parent or child entities, properties moved up or down a hierarchy — but
/// not entity hierarchies merged); Core Data Model Versioning and Data Migration Programming Guide,
/// "Lightweight Migration" (the renaming identifier is a canonical name, so renames chain);
/// NSMappingModel reference, `inferredMappingModel(forSourceModel:destinationModel:)`;
/// `NSInferredMappingModelError`.
@Suite("Migration: inferred mapping models")
struct InferredMappingTests {
    /// An entity named `name` with string attributes `attributes`.
    private static func entity(_ name: String, _ attributes: [String], renamedFrom: String? = nil)
        -> NSEntityDescription
    {
        let entity = NSEntityDescription()
        entity.name = name
        entity.renamingIdentifier = renamedFrom
        entity.properties = attributes.map { attribute($0) }
        return entity
    }

    private static func attribute(
        _ name: String, _ type: NSAttributeType = .stringAttributeType, renamedFrom: String? = nil,
        optional: Bool = true
    ) -> NSAttributeDescription {
        let attribute = NSAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        attribute.renamingIdentifier = renamedFrom
        attribute.isOptional = optional
        return attribute
    }

    private static func model(_ entities: [NSEntityDescription]) -> NSManagedObjectModel {
        let model = NSManagedObjectModel()
        model.entities = entities
        return model
    }

    /// The source name each destination attribute of `mapping` reads (`FUNCTION($source,
    /// "valueForKey:", name)`), or "" for one with no value expression.
    private static func sources(_ mapping: NSEntityMapping?) -> [String: String] {
        var result: [String: String] = [:]
        for property in mapping?.attributeMappings ?? [] {
            let expression = property.valueExpression
            let key = expression?.arguments?.first?.constantValue as? String
            result[property.name ?? ""] = key ?? ""
        }
        return result
    }

    private static func infer(_ source: NSManagedObjectModel, _ destination: NSManagedObjectModel) throws
        -> NSMappingModel
    {
        try NSMappingModel.inferredMappingModel(forSourceModel: source, destinationModel: destination)
    }

    @Test("an unchanged entity is copied; added and removed attributes make a transform")
    func attributesAddedAndRemoved() throws {
        let v1 = Self.model([Self.entity("Post", ["title", "body"]), Self.entity("Tag", ["label"])])
        let v2 = Self.model([Self.entity("Post", ["title", "summary"]), Self.entity("Tag", ["label"])])
        let mapping = try Self.infer(v1, v2)
        #expect(mapping.entityMappingsByName["IEM_Copy_Tag"]?.mappingType == .copyEntityMappingType)
        let post = try #require(mapping.entityMappingsByName["IEM_Transform_Post"])
        #expect(post.mappingType == .transformEntityMappingType)
        #expect(post.sourceEntityVersionHash == v1.entitiesByName["Post"]?.versionHash)
        #expect(post.destinationEntityVersionHash == v2.entitiesByName["Post"]?.versionHash)
        // `title` reads the source's title; `summary` is new (its default); `body` is dropped.
        #expect(Self.sources(post) == ["title": "title", "summary": ""])
        let title = try #require(post.attributeMappings?.first { $0.name == "title" }?.valueExpression)
        #expect(title.expressionType == .function && title.function == "valueForKey:")
        #expect(title.operand.expressionType == .variable && title.operand.variable == "source")
    }

    @Test("optional becoming non-optional (with a default) and non-optional becoming optional infer")
    func optionalityChanges() throws {
        let v1 = Self.model([Self.entity("Post", [])])
        v1.entities[0].properties = [
            Self.attribute("title"), Self.attribute("rank", .integer16AttributeType, optional: false),
        ]
        let v2 = Self.model([Self.entity("Post", [])])
        let title = Self.attribute("title", optional: false)
        title.defaultValue = "Untitled"
        v2.entities[0].properties = [title, Self.attribute("rank", .integer16AttributeType)]
        let post = try #require(try Self.infer(v1, v2).entityMappingsByName["IEM_Transform_Post"])
        #expect(post.mappingType == .transformEntityMappingType)
        #expect(Self.sources(post) == ["title": "title", "rank": "rank"])
    }

    @Test("renames through the renaming identifier, which is canonical: 1 → 3 and 2 → 3 both find it")
    func renamesChain() throws {
        // Version 1: Car.color; version 2: Automobile.paintColor; version 3: Automobile.hue. Each
        // later version names the first name as its renaming identifier.
        let v1 = Self.model([Self.entity("Car", ["color"])])
        let v2 = Self.model([Self.entity("Automobile", [], renamedFrom: "Car")])
        v2.entities[0].properties = [Self.attribute("paintColor", renamedFrom: "color")]
        let v3 = Self.model([Self.entity("Automobile", [], renamedFrom: "Car")])
        v3.entities[0].properties = [Self.attribute("hue", renamedFrom: "color")]
        let oneToTwo = try #require(try Self.infer(v1, v2).entityMappingsByName["IEM_Transform_Car"])
        #expect(Self.sources(oneToTwo) == ["paintColor": "color"])
        let oneToThree = try #require(try Self.infer(v1, v3).entityMappingsByName["IEM_Transform_Car"])
        #expect(Self.sources(oneToThree) == ["hue": "color"])
        let twoToThree = try #require(
            try Self.infer(v2, v3).entityMappingsByName.values.first { $0.sourceEntityName == "Automobile" })
        #expect(Self.sources(twoToThree) == ["hue": "paintColor"])
        #expect(twoToThree.mappingType == .transformEntityMappingType)
    }

    /// Code that looks inferred mappings up by name finds Apple's `IEM_<Kind>_<Entity>` names
    /// (`IEM_Add_` with the destination entity, `IEM_Copy_`, `IEM_Transform_` and `IEM_Remove_`
    /// with the source entity), and each mapping carries a user info dictionary.
    @Test("entities added and removed get add and remove mappings, named IEM_<Kind>_<Entity>, with user info")
    func entitiesAddedAndRemoved() throws {
        let v1 = Self.model([Self.entity("Post", ["title"]), Self.entity("Draft", ["text"])])
        let v2 = Self.model([Self.entity("Post", ["title"]), Self.entity("Section", ["body"])])
        let mapping = try Self.infer(v1, v2)
        #expect(mapping.entityMappingsByName["IEM_Add_Section"]?.mappingType == .addEntityMappingType)
        #expect(mapping.entityMappingsByName["IEM_Add_Section"]?.sourceEntityName == nil)
        #expect(mapping.entityMappingsByName["IEM_Remove_Draft"]?.mappingType == .removeEntityMappingType)
        #expect(mapping.entityMappingsByName["IEM_Remove_Draft"]?.destinationEntityName == nil)
        #expect(mapping.entityMappings.map(\.name) == ["IEM_Copy_Post", "IEM_Add_Section", "IEM_Remove_Draft"])
        #expect(mapping.entityMappings.allSatisfy { $0.userInfo != nil })
    }

    @Test("relationships changing between to-one and to-many and ordered and unordered infer")
    func relationshipKinds() throws {
        func graph(toMany: Bool, ordered: Bool) -> NSManagedObjectModel {
            let post = Self.entity("Post", ["title"])
            let tag = Self.entity("Tag", ["label"])
            let tags = NSRelationshipDescription()
            tags.name = "tags"
            tags.destinationEntity = tag
            tags.maxCount = toMany ? 0 : 1
            tags.isOrdered = ordered
            let posts = NSRelationshipDescription()
            posts.name = "posts"
            posts.destinationEntity = post
            posts.maxCount = 0
            tags.inverseRelationship = posts
            posts.inverseRelationship = tags
            post.properties += [tags]
            tag.properties += [posts]
            return Self.model([post, tag])
        }
        for (from, to) in [
            ((false, false), (true, false)), ((true, false), (true, true)), ((true, true), (false, false)),
        ] {
            let mapping = try Self.infer(graph(toMany: from.0, ordered: from.1), graph(toMany: to.0, ordered: to.1))
            let post = try #require(mapping.entityMappingsByName["IEM_Transform_Post"])
            #expect(post.mappingType == .transformEntityMappingType)
            let tags = try #require(post.relationshipMappings?.first { $0.name == "tags" }?.valueExpression)
            #expect(tags.function == "destinationInstancesForSourceRelationshipNamed:sourceInstances:")
            #expect(tags.arguments?.first?.constantValue as? String == "tags")
        }
    }

    @Test("a new parent entity, with a property moved up to it, infers")
    func newParentEntity() throws {
        let v1 = Self.model([Self.entity("Car", ["name", "wheels"]), Self.entity("Boat", ["name", "sails"])])
        let vehicle = Self.entity("Vehicle", ["name"])
        vehicle.isAbstract = true
        let car = Self.entity("Car", ["wheels"])
        let boat = Self.entity("Boat", ["name", "sails"])
        vehicle.subentities = [car]
        let v2 = Self.model([vehicle, car, boat])
        let mapping = try Self.infer(v1, v2)
        #expect(
            Self.sources(mapping.entityMappingsByName["IEM_Transform_Car"]) == ["name": "name", "wheels": "wheels"])
        #expect(mapping.entityMappingsByName["IEM_Add_Vehicle"]?.mappingType == .addEntityMappingType)
        #expect(mapping.entityMappingsByName["IEM_Copy_Boat"]?.mappingType == .copyEntityMappingType)
    }

    @Test("what cannot be inferred fails with NSInferredMappingModelError (134190) and a reason")
    func failures() throws {
        // An attribute whose type changed.
        let v1 = Self.model([Self.entity("Post", ["rank"])])
        let v2 = Self.model([Self.entity("Post", [])])
        v2.entities[0].properties = [Self.attribute("rank", .integer32AttributeType)]
        let typeChange = #expect(throws: NSError.self) { try Self.infer(v1, v2) }
        #expect(typeChange?.domain == NSCocoaErrorDomain && typeChange?.code == NSInferredMappingModelError)
        #expect((typeChange?.userInfo["reason"] as? String)?.contains("Post.rank") == true)
        // Two entities of different source hierarchies sharing a destination hierarchy.
        let separate = Self.model([Self.entity("Car", ["name"]), Self.entity("Boat", ["name"])])
        let car = Self.entity("Car", ["name"])
        let boat = Self.entity("Boat", [])
        car.subentities = [boat]
        let merged = #expect(throws: NSError.self) { try Self.infer(separate, Self.model([car, boat])) }
        #expect(merged?.code == NSInferredMappingModelError)
        #expect((merged?.userInfo["reason"] as? String)?.contains("merge entity hierarchies") == true)
        // An attribute that became a relationship.
        let tag = Self.entity("Tag", ["label"])
        let post = Self.entity("Post", [])
        let relationship = NSRelationshipDescription()
        relationship.name = "rank"
        relationship.destinationEntity = tag
        relationship.maxCount = 1
        post.properties = [relationship]
        let kind = #expect(throws: NSError.self) { try Self.infer(v1, Self.model([post, tag])) }
        #expect(kind?.code == NSInferredMappingModelError)
    }

    @Test("the fixture lineages infer what their renaming identifiers say")
    func fixtureLineages() throws {
        guard let root = Fixtures.root() else { return }
        let wibosco = root.appendingPathComponent("stores/wibosco-migration/CoreDataMigration_Example.xcdatamodeld")
        func version(_ name: String, in folder: URL) throws -> NSManagedObjectModel {
            try NSManagedObjectModel(validatingContentsOf: folder.appendingPathComponent(name))
        }
        let w1 = try version("CoreDataMigration_Example.xcdatamodel", in: wibosco)
        let w2 = try version("CoreDataMigration_Example 2.xcdatamodel", in: wibosco)
        let w3 = try version("CoreDataMigration_Example 3.xcdatamodel", in: wibosco)
        let w4 = try version("CoreDataMigration_Example 4.xcdatamodel", in: wibosco)
        // 1 → 2 renames `color` to `hexColor` (renaming identifier `color`).
        let posts12 = try Self.infer(w1, w2).entityMappingsByName.values.first { $0.sourceEntityName == "Post" }
        #expect(
            Self.sources(posts12) == ["content": "content", "date": "date", "hexColor": "color", "postID": "postID"])
        // 2 → 3 adds Section and drops `content` (the app splits it with a mapping model of its own).
        let twoToThree = try Self.infer(w2, w3)
        #expect(twoToThree.entityMappingsByName["IEM_Add_Section"]?.mappingType == .addEntityMappingType)
        #expect(
            Self.sources(twoToThree.entityMappingsByName.values.first { $0.sourceEntityName == "Post" }) == [
                "date": "date", "hexColor": "hexColor", "postID": "postID",
            ])
        // 3 → 4 adds a non-optional Boolean with a default.
        #expect(
            Self.sources(try Self.infer(w3, w4).entityMappingsByName.values.first { $0.sourceEntityName == "Post" })[
                "softDeleted"] == "")
        // CoreDataPlus SampleModel: ExpensiveSportCar became LuxuryCar (renaming identifier).
        let sample = root.appendingPathComponent(
            "stores/coredataplus-samplemodel/SampleModel/SampleModel.xcdatamodeld")
        let s1 = try version("SampleModel.xcdatamodel", in: sample)
        let s2 = try version("SampleModel2.xcdatamodel", in: sample)
        let luxury = try Self.infer(s1, s2).entityMappingsByName["IEM_Transform_ExpensiveSportCar"]
        #expect(luxury?.mappingType == .transformEntityMappingType)
        #expect(luxury?.sourceEntityName == "ExpensiveSportCar" && luxury?.destinationEntityName == "LuxuryCar")
    }

    @Test("the version that wrote a store is found among a model's versions, and models merge")
    func versionsAndMerging() throws {
        let post = Self.model([Self.entity("Post", ["title"])])
        let tag = Self.model([Self.entity("Tag", ["label"])])
        let merged = try #require(NSManagedObjectModel(byMerging: [post, tag]))
        #expect(Set(merged.entitiesByName.keys) == ["Post", "Tag"])
        #expect(post.entities.count == 1, "the models merged are left as they were")
        #expect(NSManagedObjectModel(byMerging: [post, Self.model([Self.entity("Post", ["other"])])]) == nil)
        let metadata: [String: Any] = ["NSStoreModelVersionHashes": merged.entityVersionHashesByName]
        #expect(NSManagedObjectModel(byMerging: [post, tag], forStoreMetadata: metadata) != nil)
        #expect(NSManagedObjectModel(byMerging: [post], forStoreMetadata: metadata) == nil)
        guard let root = Fixtures.root() else { return }
        let store = root.appendingPathComponent("stores/wibosco-migration/CoreDataMigration_Example_2.sqlite")
        let directory = TemporaryDirectory()
        let copy = directory.file("Example_2.sqlite")
        try FileManager.default.copyItem(at: store, to: copy)
        let stored = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: copy, options: nil)
        // A bundle whose resources hold the lineage's model: the version that wrote the store is found.
        let bundleFolder = directory.url.appendingPathComponent("App.resources")
        try FileManager.default.createDirectory(at: bundleFolder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: root.appendingPathComponent("stores/wibosco-migration/CoreDataMigration_Example.xcdatamodeld"),
            to: bundleFolder.appendingPathComponent("CoreDataMigration_Example.xcdatamodeld"))
        let bundle = try #require(Bundle(path: bundleFolder.path))
        let found = try #require(NSManagedObjectModel.mergedModel(from: [bundle], forStoreMetadata: stored))
        #expect(found.entitiesByName["Post"]?.attributesByName["hexColor"] != nil)
        #expect(found.entitiesByName["Post"]?.attributesByName["content"] != nil, "version 2, not the current 4")
        #expect(found.isConfiguration(withName: nil, compatibleWithStoreMetadata: stored))
        #expect(
            NSManagedObjectModel.mergedModel(from: [bundle])?.entitiesByName["Section"] != nil, "the current version")
        // versionChecksum: what a store of DuckDuckGo's (written by a recent Core Data) records.
        let bookmarks = try FixtureStores.copy("ddg-bookmarks/Bookmarks_V4.sqlite", root: root, to: directory)
        let recorded = try NSPersistentStoreCoordinator.metadataForPersistentStore(
            ofType: NSSQLiteStoreType, at: bookmarks, options: nil)
        let writer = try #require(
            try FixtureStores.matchingModel(
                for: bookmarks, models: root.appendingPathComponent("stores/ddg-bookmarks/BookmarksModel.xcdatamodeld"))
        )
        #expect(writer.versionChecksum == recorded["NSStoreModelVersionChecksumKey"] as? String)
    }
}
