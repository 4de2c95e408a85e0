import Foundation
import Logging
import Testing

@testable import OpenCoreData

/// Loading Xcode model files (`NSManagedObjectModel(contentsOf:)`), against the real models in
/// `../shared/fixtures`, and building models in code (NSManagedObjectModel, NSEntityDescription,
/// NSAttributeDescription and NSRelationshipDescription class references).
@Suite("Model files and model classes")
struct ModelFileTests {
    static func allModelFiles(_ root: URL) -> [URL] {
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
        var models: [URL] = []
        while let url = enumerator?.nextObject() as? URL {
            if url.pathExtension == "xcdatamodel" || url.pathExtension == "xcdatamodeld" { models.append(url) }
        }
        return models.sorted { $0.path < $1.path }
    }

    @Test("every model in the fixtures loads, with every destination and inverse resolved")
    func everyFixtureModelLoads() throws {
        guard let root = Fixtures.root() else { return }
        let models = Self.allModelFiles(root)
        #expect(models.count >= 50)
        for url in models {
            let model = try NSManagedObjectModel(validatingContentsOf: url)
            #expect(!model.entities.isEmpty, "\(url.path) has entities")
            #expect(NSManagedObjectModel(contentsOf: url) != nil)
            for entity in model.entities {
                for relationship in entity.relationshipsByName.values {
                    #expect(relationship.destinationEntity != nil, "\(entity.name ?? "").\(relationship.name)")
                    if let inverse = relationship.inverseRelationship {
                        #expect(inverse.destinationEntity.map { entity.isKindOf(entity: $0) } == true)
                    }
                }
            }
        }
    }

    @Test("an .xcdatamodeld loads the version .xccurrentversion names")
    func currentVersion() throws {
        guard let root = Fixtures.root() else { return }
        let bundle = root.appendingPathComponent("stores/objcio-moody-migrations/Moody.xcdatamodeld")
        let current = try NSManagedObjectModel(validatingContentsOf: bundle)
        let six = try NSManagedObjectModel(
            validatingContentsOf: bundle.appendingPathComponent("Moody 6.xcdatamodel"))
        let one = try NSManagedObjectModel(validatingContentsOf: bundle.appendingPathComponent("Moody.xcdatamodel"))
        #expect(current.entityVersionHashesByName == six.entityVersionHashesByName)
        #expect(current.entityVersionHashesByName != one.entityVersionHashesByName)
    }

    @Test("inheritance, attribute types and relationships are read as Xcode wrote them")
    func sampleModel() throws {
        guard let root = Fixtures.root() else { return }
        let model = try NSManagedObjectModel(
            validatingContentsOf: root.appendingPathComponent(Fixtures.sampleModelSource))
        let entities = model.entitiesByName
        let car = try #require(entities["Car"])
        let sportCar = try #require(entities["SportCar"])
        let expensive = try #require(entities["ExpensiveSportCar"])
        let person = try #require(entities["Person"])
        #expect(sportCar.superentity === car)
        #expect(expensive.superentity === sportCar)
        #expect(car.subentities.map(\.name) == ["SportCar"])
        #expect(expensive.isKindOf(entity: car))
        #expect(!car.isKindOf(entity: expensive))
        #expect(expensive.attributesByName["numberPlate"] != nil, "inherited properties are included")
        #expect(expensive.propertiesByName["isLimitedEdition"] != nil)
        #expect(car.managedObjectClassName == "Car")

        let color = try #require(car.attributesByName["color"])
        #expect(color.attributeType == .transformableAttributeType)
        #expect(color.attributeType.rawValue == 1800)
        #expect(color.valueTransformerName == "ColorTransformer")
        #expect(color.attributeValueClassName == "Color")
        #expect(color.isOptional)
        #expect(car.attributesByName["numberPlate"]?.isOptional == false)
        #expect(car.attributesByName["currentDrivingSpeed"]?.isTransient == true)
        #expect(car.attributesByName["currentDrivingSpeed"]?.defaultValue as? Int64 == 0)
        #expect(person.attributesByName["id"]?.attributeType == .UUIDAttributeType)
        #expect(person.attributesByName["id"]?.preservesValueInHistoryOnDeletion == true)
        #expect(expensive.attributesByName["isLimitedEdition"]?.defaultValue as? Bool == false)

        let owner = try #require(car.relationshipsByName["owner"])
        let cars = try #require(person.relationshipsByName["cars"])
        #expect(!owner.isToMany)
        #expect(cars.isToMany)
        #expect(owner.destinationEntity === person)
        #expect(owner.inverseRelationship === cars)
        #expect(cars.inverseRelationship === owner)
        #expect(owner.deleteRule == .nullifyDeleteRule)
        #expect(car.relationships(forDestination: person) == [owner])
        #expect(car.uniquenessConstraints.map { $0.map { "\($0)" } } == [["numberPlate"]])
        #expect(person.uniquenessConstraints.map { $0.map { "\($0)" } } == [["firstName", "lastName"]])
        #expect(model.versionIdentifiers == ["1"])
    }

    @Test("configurations, fetched properties and typed defaults are read")
    func configurationsAndFetchedProperties() throws {
        guard let root = Fixtures.root() else { return }
        let tests = try NSManagedObjectModel(
            validatingContentsOf: root.appendingPathComponent("models/corestore/CoreStoreTests-Model.xcdatamodeld"))
        #expect(tests.configurations == ["Config1", "Config2"])
        #expect(tests.entities(forConfigurationName: "Config1")?.map(\.name) == ["TestEntity1AAA"])
        #expect(tests.entities(forConfigurationName: nil)?.count == tests.entities.count)
        let colors = try NSManagedObjectModel(
            validatingContentsOf: root.appendingPathComponent("models/corestore/Classic.ColorsDemo.xcdatamodeld"))
        let palette = try #require(colors.entitiesByName["Palette"])
        let fetched = try #require(palette.propertiesByName["testFetchProperty"] as? NSFetchedPropertyDescription)
        #expect(fetched.isTransient)
        #expect(fetched.fetchEntityName == "Palette")
        #expect(palette.attributesByName["hue"]?.defaultValue as? Float == 0)
    }

    private func writeModel(_ xml: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("ocd-\(UUID().uuidString).xcdatamodel")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(xml.utf8).write(to: directory.appendingPathComponent("contents"))
        return directory
    }

    private func loadError(_ url: URL) -> NSError? {
        do {
            _ = try NSManagedObjectModel(validatingContentsOf: url)
            return nil
        } catch {
            return error as NSError
        }
    }

    @Test(
        "a malformed model file is a Cocoa error naming the file and the problem",
        arguments: [
            (
                "<model><entity name=\"A\"><attribute name=\"x\" attributeType=\"Integer 128\"/></entity></model>",
                "A.x the unknown type \"Integer 128\""
            ),
            (
                "<model><entity name=\"A\"><relationship name=\"r\" destinationEntity=\"Nowhere\"/></entity></model>",
                "unknown destination entity Nowhere"
            ),
            ("<model><entity name=\"A\" parentEntity=\"Ghost\"/></model>", "unknown parent entity Ghost"),
            // Regression: inheritance cycles overflowed the stack.
            ("<model><entity name=\"A\" parentEntity=\"A\"/></model>", "A itself as an ancestor (A → A)"),
            // Regression: past libxml2's 256 levels the document loaded as a model with
            // no entities, silently.
            (
                "<model><entity name=\"A\"/>" + String(repeating: "<userInfo>", count: 300)
                    + String(repeating: "</userInfo>", count: 300) + "</model>",
                "deeper than 64 levels"
            ),
            (
                "<model><entity name=\"A\" parentEntity=\"B\"/><entity name=\"B\" parentEntity=\"A\"/></model>",
                "itself as an ancestor"
            ),
            (
                "<model><entity name=\"C\"/><entity name=\"A\" parentEntity=\"B\"/><entity name=\"B\" parentEntity=\"D\"/>"
                    + "<entity name=\"D\" parentEntity=\"A\"/></model>",
                "itself as an ancestor"
            ),
            ("<model><entity name=\"A\"/><entity name=\"A\"/></model>", "declares entity A twice"),
            (
                "<model><entity><attribute name=\"x\" attributeType=\"String\"/></entity></model>",
                "without the required \"name\""
            ),
            ("<model><entity name=\"A\"", "not well-formed XML"),
            ("<notAModel/>", "no <model> root element"),
        ])
    func malformedModels(xml: String, problem: String) throws {
        let url = try writeModel(xml)
        defer { try? FileManager.default.removeItem(at: url) }
        let error = try #require(loadError(url))
        #expect(error.domain == NSCocoaErrorDomain)
        #expect(error.code == CocoaError.Code.fileReadCorruptFile.rawValue)
        let message = error.userInfo[NSDebugDescriptionErrorKey] as? String ?? ""
        #expect(message.contains(problem), "\(message)")
        #expect((error.userInfo[NSFilePathErrorKey] as? String)?.hasSuffix("contents") == true)
        #expect(NSManagedObjectModel(contentsOf: url) == nil, "Apple's initializer returns nil")
    }

    /// Regression: a real app's model — an Integer 16 attribute whose default is "NO",
    /// which Xcode compiles — was refused whole. Apple's model compiler reads defaults with
    /// NSString's `longLongValue`, `doubleValue` and `boolValue` (NSString reference), so the model
    /// loads with those values; each such default is reported as a warning, not an error.
    @Test("a default Xcode accepts but that is not a value of its type loads as Apple reads it, with a warning")
    func lenientDefaults() throws {
        let attributes: [(name: String, type: String, text: String)] = [
            ("flag", "Integer 16", "NO"), ("yes", "Integer 32", "YES"), ("prefix", "Integer 32", " 12abc"),
            ("huge", "Integer 16", "99999"), ("weight", "Double", "1.5kg"), ("ratio", "Float", "junk"),
            ("active", "Boolean", "Yes please"), ("off", "Boolean", "nope"), ("id", "UUID", "not-a-uuid"),
            ("exact", "Integer 16", "0.0"),
        ]
        let xml =
            "<model><entity name=\"A\">"
            + attributes.map {
                "<attribute name=\"\($0.name)\" attributeType=\"\($0.type)\" defaultValueString=\"\($0.text)\"/>"
            }.joined() + "</entity></model>"
        let url = try writeModel(xml)
        defer { try? FileManager.default.removeItem(at: url) }
        try CapturedLog.modelWarnings.capture { lines in
            let model = try NSManagedObjectModel(validatingContentsOf: url)
            let defaults = try #require(model.entitiesByName["A"]).attributesByName.mapValues(\.defaultValue)
            #expect(defaults["flag"] as? Int16 == 0)
            #expect(defaults["yes"] as? Int32 == 0)
            #expect(defaults["prefix"] as? Int32 == 12)
            #expect(defaults["huge"] as? Int16 == Int16.max)
            #expect(defaults["weight"] as? Double == 1.5)
            #expect(defaults["ratio"] as? Float == 0)
            #expect(defaults["active"] as? Bool == true)
            #expect(defaults["off"] as? Bool == false)
            #expect(defaults.keys.contains("id") && defaults["id"]! == nil)
            #expect(defaults["exact"] as? Int16 == 0)
            let warnings = lines.logged(on: pthread_self())
            #expect(warnings.count == 9, "\(warnings)")
            #expect(warnings.contains { $0.contains("A.flag") && $0.contains("\"NO\"") && $0.contains(url.path) })
            #expect(!warnings.contains { $0.contains("A.exact") }, "Xcode's \"0.0\" for an integer is exact")
        }
    }

    /// Regression: migrating a store of a real app's 90-version model printed the same
    /// lenient-default warning once per version, 90 lines before the command's output.
    @Test("a warning shared by every version of a versioned model, or by loading a model twice, is said once")
    func warningsOnce() throws {
        let bundle = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ocd-\(UUID().uuidString).xcdatamodeld")
        defer { try? FileManager.default.removeItem(at: bundle) }
        for version in 1...3 {
            let folder = bundle.appendingPathComponent("App \(version).xcdatamodel")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let xml =
                "<model><entity name=\"Conversation\">"
                + "<attribute name=\"mutedStatus\" attributeType=\"Integer 32\" defaultValueString=\"NO\"/>"
                + (version == 3
                    ? "<attribute name=\"level\" attributeType=\"Integer 16\" defaultValueString=\"YES\"/>" : "")
                + "<attribute name=\"v\(version)\" attributeType=\"String\"/></entity></model>"
            try Data(xml.utf8).write(to: folder.appendingPathComponent("contents"))
        }
        try CapturedLog.modelWarnings.capture { lines in
            for _ in 0..<2 {
                for version in ModelVersions.versions(of: bundle) {
                    _ = try NSManagedObjectModel(validatingContentsOf: version)
                }
            }
            let warnings = lines.logged(on: pthread_self())
            #expect(warnings.count == 2, "\(warnings)")
            #expect(warnings.filter { $0.contains("Conversation.mutedStatus") }.count == 1)
            #expect(warnings.contains { $0.contains("Conversation.level") })
            #expect(warnings.allSatisfy { $0.contains("said once for every version of \(bundle.lastPathComponent)") })
        }
    }

    @Test("a missing model file is NSFileReadNoSuchFileError (260)")
    func missingModel() throws {
        let url = URL(fileURLWithPath: "/nonexistent/Model.xcdatamodeld")
        let error = try #require(loadError(url))
        #expect(error.code == CocoaError.Code.fileReadNoSuchFile.rawValue)
        #expect(error.userInfo[NSFilePathErrorKey] as? String == url.path)
    }

    @Test("a model built in code has Apple's structure and a version hash independent of property order")
    func modelInCode() {
        func makeModel(reversed: Bool) -> NSManagedObjectModel {
            let person = NSEntityDescription()
            person.name = "Person"
            let name = NSAttributeDescription()
            name.name = "name"
            name.attributeType = .stringAttributeType
            name.isOptional = false
            let age = NSAttributeDescription()
            age.name = "age"
            age.attributeType = .integer16AttributeType
            person.properties = reversed ? [age, name] : [name, age]
            let model = NSManagedObjectModel()
            model.entities = [person]
            return model
        }
        let model = makeModel(reversed: false)
        let person = model.entitiesByName["Person"]
        #expect(person?.managedObjectModel === model)
        #expect(person?.attributesByName["name"]?.entity === person)
        #expect(model.entityVersionHashesByName == makeModel(reversed: true).entityVersionHashesByName)
        let hashes = model.entityVersionHashesByName
        #expect(
            model.isConfiguration(withName: nil, compatibleWithStoreMetadata: ["NSStoreModelVersionHashes": hashes]))
        #expect(!model.isConfiguration(withName: nil, compatibleWithStoreMetadata: ["NSStoreModelVersionHashes": [:]]))
    }

    @Test("changing a model a coordinator uses traps, as Apple raises \"Can't modify an immutable model\"")
    func immutableModel() async {
        await #expect(processExitsWith: .failure) {
            let entity = NSEntityDescription()
            entity.name = "A"
            let model = NSManagedObjectModel()
            model.entities = [entity]
            model.isEditable = false
            entity.name = "B"
        }
    }
}
