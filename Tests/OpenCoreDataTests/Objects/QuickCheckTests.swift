import Foundation
import Testing

@testable import OpenCoreData

/// Saving validates every property of every changed object through `validateValue(_:forKey:)`
/// (Core Data Programming Guide, "Object Validation"; NSManagedObject reference,
/// `validateForInsert()`). The common case — a value of the attribute's own type, nothing else to
/// check — is decided without the general checks (`QuickCheck`). These tests pin that
/// the shortcut never accepts a value the general checks refuse, and that it does take the
/// common case, so the speed-up and Apple's errors both hold.
@Suite("Validation's common case")
struct QuickCheckTests {
    static func model() -> NSManagedObjectModel {
        let row = NSEntityDescription()
        row.name = "Row"
        let bounded = CompanyModel.attribute("bounded", .integer32AttributeType)
        bounded.maximumValueText = "10"
        let required = CompanyModel.attribute("required", .stringAttributeType)
        required.isOptional = false
        let checked = CompanyModel.attribute("checked", .stringAttributeType)
        checked.setValidationPredicates(
            [OpenCoreData.NSPredicate(format: "length > 2")], withValidationWarnings: ["too short"])
        row.properties = [
            CompanyModel.attribute("small", .integer16AttributeType),
            CompanyModel.attribute("medium", .integer32AttributeType),
            CompanyModel.attribute("large", .integer64AttributeType),
            CompanyModel.attribute("ratio", .doubleAttributeType),
            CompanyModel.attribute("flag", .booleanAttributeType),
            CompanyModel.attribute("text", .stringAttributeType), CompanyModel.attribute("when", .dateAttributeType),
            CompanyModel.attribute("price", .decimalAttributeType), bounded, required, checked,
        ]
        let model = NSManagedObjectModel()
        model.entities = [row]
        return model
    }

    static func context() throws -> NSManagedObjectContext {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model())
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// Values as the public accessors hand them to `validateValue(_:forKey:)`, right and wrong.
    static func values() -> [Any?] {
        [
            nil, NSNull(), NSNumber(value: 7), NSNumber(value: 32_767), NSNumber(value: 32_768),
            NSNumber(value: -32_769),
            NSNumber(value: Int64.max), NSNumber(value: Int64(Int32.min) - 1), NSNumber(value: 2.5),
            NSNumber(value: 1e10), NSNumber(value: Double.nan), NSNumber(value: true), NSNumber(value: UInt64.max),
            NSDecimalNumber(string: "3.25"), NSDecimalNumber(string: "4"), 7, 2.5, "seven", "", "ab", "abcdef",
            Date(timeIntervalSinceReferenceDate: 0), Data([1, 2]), UUID(),
        ]
    }

    @Test("the shortcut accepts a value only when the model's checks find nothing wrong with it")
    func shortcutNeverAcceptsWhatTheChecksRefuse() throws {
        let context = try Self.context()
        let object = NSEntityDescription.insertNewObject(forEntityName: "Row", into: context)
        let layout = object.layout
        var accepted = 0
        for slot in 0..<layout.count {
            for value in Self.values() where layout.quickChecks[slot].accepts(value) {
                accepted += 1
                let errors = object.constraintErrors(slot: slot, value: value)
                #expect(
                    errors.isEmpty,
                    "\(layout.properties[slot].name) accepted \(String(describing: value)) that the checks refuse")
            }
        }
        // The common values do take the shortcut (7 and 2.5 as NSNumber, strings, dates, nil).
        #expect(accepted >= 30)
    }

    /// Cases by name: the value a case checks, and whether the shortcut takes it.
    static func shortcutCase(_ name: String) -> (key: String, value: Any?, expected: Bool) {
        switch name {
        case "Integer 16 in range": ("small", NSNumber(value: 7), true)
        case "Integer 16 out of range": ("small", NSNumber(value: 40_000), false)
        case "Integer 32": ("medium", NSNumber(value: -5), true)
        case "Integer 64 at its maximum": ("large", NSNumber(value: Int64.max), true)
        case "a double for an Integer 64": ("large", NSNumber(value: 2.0), false)
        case "Double": ("ratio", NSNumber(value: 2.5), true)
        case "a string for a Double": ("ratio", "2.5", false)
        case "Boolean": ("flag", NSNumber(value: true), true)
        case "String": ("text", "Ada", true)
        case "NSNull for a String": ("text", NSNull(), false)
        case "no value, optional": ("text", nil, true)
        case "Date": ("when", Date(), true)
        case "Decimal": ("price", NSDecimalNumber(string: "1.5"), false)
        case "an attribute with a maximum": ("bounded", NSNumber(value: 3), false)
        case "no value, required": ("required", nil, false)
        case "required, present": ("required", "x", true)
        default: ("checked", "abc", false)  // an attribute with a validation predicate
        }
    }

    @Test(
        "common values of an attribute's own type take the shortcut; bounds, predicates and wrong types do not",
        arguments: [
            "Integer 16 in range", "Integer 16 out of range", "Integer 32", "Integer 64 at its maximum",
            "a double for an Integer 64", "Double", "a string for a Double", "Boolean", "String", "NSNull for a String",
            "no value, optional", "Date", "Decimal", "an attribute with a maximum", "no value, required",
            "required, present", "an attribute with a validation predicate",
        ])
    func commonValuesTakeTheShortcut(name: String) throws {
        let (key, value, expected) = Self.shortcutCase(name)
        let context = try Self.context()
        let object = NSEntityDescription.insertNewObject(forEntityName: "Row", into: context)
        let slot = try #require(object.layout.slotByName[key])
        #expect(object.layout.quickChecks[slot].accepts(value) == expected)
    }

    @Test("a required attribute left empty, and a value past its maximum, still fail the save with Apple's codes")
    func theGeneralChecksStillRun() throws {
        let context = try Self.context()
        let object = NSEntityDescription.insertNewObject(forEntityName: "Row", into: context)
        object.setValue(11, forKey: "bounded")
        let error = try #require(throws: NSError.self) { try context.save() }
        let codes = ((error.userInfo[NSDetailedErrorsKey] as? [NSError]) ?? [error]).map(\.code).sorted()
        #expect(codes == [NSValidationMissingMandatoryPropertyError, NSValidationNumberTooLargeError].sorted())
    }
}
