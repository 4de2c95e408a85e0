import Foundation
import Logging
import Testing

@testable import OpenCoreData

/// Model files that Xcode would never write — damaged or hostile `.mom` archives, store model
/// caches and `.xcdatamodel` sources — load as a thrown error naming the problem, never as a
/// model that crashes or answers wrongly later. What Xcode accepts with a warning (a minimum that
/// is not a number) loads with a warning. Core Data Model Editor Help: an attribute "must have a
/// defined type" unless transient; relationships, constraints and indexes name the model's own
/// entities and properties.
@Suite("Hostile and inconsistent model files")
struct HostileModelTests {
    // MARK: Compiled models, built by hand as NSKeyedArchiver property lists

    private static func uid(_ index: Int) -> [String: Any] { ["CF$UID": index] }

    /// A keyed archive of a model with one entity `A` holding one attribute `x`; `entity` and
    /// `attribute` add keys to those objects, `extra` appends objects (their indexes start at 12),
    /// `entities` replaces the model's dictionary of entities (object 3).
    private static func archive(
        entity: [String: Any] = [:], attribute: [String: Any] = ["NSAttributeType": 700], extra: [Any] = [],
        entities: [String: Any]? = nil
    ) throws -> Data {
        var entityObject: [String: Any] = ["$class": uid(7), "NSProperties": uid(8)]
        entityObject.merge(entity) { _, new in new }
        var attributeObject: [String: Any] = ["$class": uid(11), "NSEntity": uid(6)]
        attributeObject.merge(attribute) { _, new in new }
        let objects: [Any] =
            [
                "$null",
                ["$class": uid(2), "NSEntities": uid(3)],
                ["$classname": "NSManagedObjectModel", "$classes": ["NSManagedObjectModel", "NSObject"]],
                entities ?? ["$class": uid(4), "NS.keys": [uid(5)], "NS.objects": [uid(6)]],
                ["$classname": "NSDictionary", "$classes": ["NSDictionary", "NSObject"]],
                "A",
                entityObject,
                ["$classname": "NSEntityDescription", "$classes": ["NSEntityDescription", "NSObject"]],
                ["$class": uid(4), "NS.keys": [uid(9)], "NS.objects": [uid(10)]],
                "x",
                attributeObject,
                ["$classname": "NSAttributeDescription", "$classes": ["NSAttributeDescription", "NSObject"]],
            ] + extra
        let plist: [String: Any] = [
            "$archiver": "NSKeyedArchiver", "$version": 100000, "$top": ["root": uid(1)], "$objects": objects,
        ]
        return try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)
    }

    private func problem(_ data: Data) -> String? {
        do {
            _ = try CompiledModelDecoder.model(from: data)
            return nil
        } catch let problem as ModelProblem {
            return problem.message
        } catch {
            return "\(error)"
        }
    }

    @Test func theHandBuiltArchiveIsAValidModel() throws {
        let model = try CompiledModelDecoder.model(from: Self.archive())
        #expect(model.entitiesByName["A"]?.attributesByName["x"]?.attributeType == .stringAttributeType)
    }

    /// Regression: a negative type clamped to "undefined" and a string type defaulted
    /// to it, and the model loaded.
    @Test("an attribute type that is negative, a string or missing is an error", arguments: ["-3", "\"700\"", "none"])
    func badAttributeTypes(type: String) throws {
        let attribute: [String: Any] =
            switch type {
            case "-3": ["NSAttributeType": -3]
            case "none": [:]
            default: ["NSAttributeType": "700"]
            }
        let message = try #require(problem(Self.archive(attribute: attribute)))
        #expect(message.contains("A.x"), "\(message)")
    }

    /// Regression: a superentity reference to something that is not an entity was
    /// ignored, and the entity loaded as a root entity.
    @Test func aSuperentityThatIsNotAnEntityIsAnError() throws {
        let message = try #require(problem(Self.archive(entity: ["NSSuperentity": Self.uid(5)])))
        #expect(message.contains("superentity that is not one of its entities"), "\(message)")
    }

    /// Regression: user info fanning out through shared references — each array
    /// holding the next one twice, 30 deep — described 2³⁰ values and hung the decoder.
    @Test func sharedReferencesCannotExpandWithoutBound() throws {
        let depth = 30
        let arrayClass = 12 + depth
        var extra: [Any] = (0..<depth).map { level -> Any in
            let next = level + 1 < depth ? Self.uid(13 + level) : Self.uid(5)
            return ["$class": Self.uid(arrayClass), "NS.objects": [next, next]]
        }
        extra.append(["$classname": "NSArray", "$classes": ["NSArray", "NSObject"]])
        let data = try Self.archive(attribute: ["NSAttributeType": 700, "NSDefaultValue": Self.uid(12)], extra: extra)
        let clock = ContinuousClock()
        let start = clock.now
        let message = try #require(problem(data))
        #expect(message.contains("more than 100000 elements"), "\(message)")
        #expect(clock.now - start < .seconds(10))
    }

    /// Regression (found by the archive fuzz target): an entity listing one property
    /// description under two names decoded into two properties, only one of which had its
    /// relationship resolved — a relationship without a destination that our own encoder then
    /// refused to archive. Apple's model compiler archives each property once per entity.
    @Test func onePropertyDescriptionUnderTwoNamesIsAnError() throws {
        let extra: [Any] = [
            [
                "$class": Self.uid(4), "NS.keys": [Self.uid(9), Self.uid(13)],
                "NS.objects": [Self.uid(10), Self.uid(10)],
            ],
            "y",
        ]
        let message = try #require(problem(Self.archive(entity: ["NSProperties": Self.uid(12)], extra: extra)))
        #expect(message.contains("with another property's description"), "\(message)")
    }

    /// Regression (the store fuzz target, this project's CI): a store's cached model listing two
    /// entities under one name loaded both; objects of the one the name finds were then read
    /// through the other's properties, and `value(forKey:)` met a key the object did not have.
    /// Models find entities by name (`entitiesByName`), and Xcode never archives a name twice.
    @Test func twoEntitiesOfOneNameAreAnError() throws {
        let extra: [Any] = [
            ["$class": Self.uid(7), "NSProperties": Self.uid(13)],
            ["$class": Self.uid(4), "NS.keys": [Self.uid(14)], "NS.objects": [Self.uid(15)]],
            "y",
            ["$class": Self.uid(11), "NSEntity": Self.uid(12), "NSAttributeType": 700],
        ]
        let entities: [String: Any] = [
            "$class": Self.uid(4), "NS.keys": [Self.uid(5), Self.uid(5)], "NS.objects": [Self.uid(6), Self.uid(12)],
        ]
        let message = try #require(problem(Self.archive(extra: extra, entities: entities)))
        #expect(message.contains("archives entity A twice"), "\(message)")
    }

    // MARK: Xcode's source format

    private func load(_ xml: String) throws -> NSManagedObjectModel {
        let directory = TemporaryDirectory()
        let url = directory.file("Hostile.xcdatamodel")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try Data(xml.utf8).write(to: url.appendingPathComponent("contents"))
        return try NSManagedObjectModel(validatingContentsOf: url)
    }

    private func loadProblem(_ xml: String) -> String? {
        do {
            _ = try load(xml)
            return nil
        } catch {
            return (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
        }
    }

    @Test(
        "what Xcode refuses to build is a load error",
        arguments: [
            // A stored attribute with no attributeType (Xcode: "must have a defined type").
            ("<model><entity name=\"A\"><attribute name=\"x\"/></entity></model>", "no type"),
            // An inverse whose destination is a third entity.
            (
                "<model><entity name=\"A\"><relationship name=\"b\" destinationEntity=\"B\" inverseName=\"c\"/></entity>"
                    + "<entity name=\"B\"><relationship name=\"c\" destinationEntity=\"C\"/></entity>"
                    + "<entity name=\"C\"/></model>",
                "which leads to C instead"
            ),
            (
                "<model><entity name=\"A\"><attribute name=\"x\" attributeType=\"String\"/>"
                    + "<uniquenessConstraints><uniquenessConstraint><constraint value=\"nosuch\"/>"
                    + "</uniquenessConstraint></uniquenessConstraints></entity></model>",
                "uniqueness constraint on the unknown property nosuch"
            ),
            (
                "<model><entity name=\"A\"><attribute name=\"x\" attributeType=\"String\"/>"
                    + "<fetchIndex name=\"byY\"><fetchIndexElement property=\"y\" type=\"Binary\" order=\"ascending\"/>"
                    + "</fetchIndex></entity></model>",
                "index on the unknown property y"
            ),
            (
                "<model><entity name=\"A\"><attribute name=\"x\" attributeType=\"String\"/>"
                    + "<compoundIndexes><compoundIndex><index value=\"z\"/></compoundIndex></compoundIndexes>"
                    + "</entity></model>",
                "index on the unknown property z"
            ),
            // Two properties with one name (found by the archive fuzz target in a compiled model:
            // an inverse named by that name led to either, and the model did not survive being
            // archived again).
            (
                "<model><entity name=\"A\"><attribute name=\"x\" attributeType=\"String\"/>"
                    + "<attribute name=\"x\" attributeType=\"Date\"/></entity></model>",
                "declares property A.x twice"
            ),
            (
                "<model><entity name=\"A\"><attribute name=\"x\" attributeType=\"String\"/></entity>"
                    + "<entity name=\"B\" parentEntity=\"A\"><attribute name=\"x\" attributeType=\"String\"/></entity>"
                    + "</model>",
                "two properties named x"
            ),
            (
                "<model><entity name=\"A\"><relationship name=\"r\" destinationEntity=\"A\" toMany=\"YES\" maxCount=\"-5\"/>"
                    + "</entity></model>",
                "negative count"
            ),
            (
                "<model><entity name=\"A\"><relationship name=\"r\" destinationEntity=\"A\" toMany=\"YES\" "
                    + "maxCount=\"99999999999999999999999\"/></entity></model>",
                "not a count"
            ),
        ])
    func inconsistentSources(xml: String, expected: String) throws {
        let message = try #require(loadProblem(xml))
        #expect(message.contains(expected), "\(message)")
    }

    /// A transient attribute may be undefined (NSAttributeDescription, `undefinedAttributeType`).
    @Test func aTransientAttributeMayBeUndefined() throws {
        let model = try load("<model><entity name=\"A\"><attribute name=\"x\" transient=\"YES\"/></entity></model>")
        #expect(model.entitiesByName["A"]?.attributesByName["x"]?.attributeType == .undefinedAttributeType)
    }

    /// A minimum that is not a number is ignored with a warning, as validation would ignore it.
    @Test func aMinimumThatIsNotANumberIsIgnoredWithAWarning() throws {
        try CapturedLog.modelWarnings.capture { lines in
            let model = try load(
                "<model><entity name=\"A\"><attribute name=\"n\" attributeType=\"Integer 32\" minValueString=\"ten\" "
                    + "maxValueString=\"20\"/></entity></model>")
            let attribute = try #require(model.entitiesByName["A"]?.attributesByName["n"])
            #expect(attribute.minimumValueText == nil)
            #expect(attribute.maximumValueText == "20")
            #expect(lines.logged(on: pthread_self()).contains { $0.contains("minimum \"ten\" of A.n") })
        }
    }

    /// Regression: a chain of 10,000 superentities spent minutes in version hashing.
    @Test func inheritanceDeeperThan100LevelsIsAnError() throws {
        func chain(_ count: Int) -> String {
            "<model><entity name=\"E0\"/>"
                + (1..<count).map { "<entity name=\"E\($0)\" parentEntity=\"E\($0 - 1)\"/>" }.joined() + "</model>"
        }
        let message = try #require(loadProblem(chain(10_000)))
        #expect(message.contains("more than 100 superentities"), "\(message)")
        let model = try load(chain(101))
        #expect(model.entitiesByName["E100"]?.versionHash.count == 32)
    }
}
