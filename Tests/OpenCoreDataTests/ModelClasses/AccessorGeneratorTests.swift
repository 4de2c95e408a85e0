import Foundation
import Testing

@testable import CoreDataModelGeneratorKit

/// The generator behind the `CoreDataModelGenerator` plugin: the accessor symbols it names must
/// be exactly the ones the Swift compiler leaves undefined for `@NSManaged` declarations (Swift
/// ABI, `docs/ABI/Mangling.rst`), and a declaration it cannot support must fail the build with
/// its file and line, never with a link error. Every expected symbol below is what `nm` showed
/// the Swift 6.3.1 compiler referencing for the declaration; the example target
/// (`Examples/CompanyModel`) links only if the generator names them all.
@Suite("@NSManaged accessor generator")
struct AccessorGeneratorTests {
    private func accessor(_ module: String, _ owner: String, _ property: String, _ type: SwiftType) throws -> String {
        try SwiftMangler.accessor(module: module, owner: owner, property: property, type: type, setter: false)
    }

    @Test("property getters and setters of every kind of type")
    func propertyAccessors() throws {
        let department = SwiftType.user("Department", .class)
        #expect(try accessor("M", "Employee", "name", .optional(.named("String"))) == "$s1M8EmployeeC4nameSSSgvg")
        #expect(try accessor("M", "Employee", "age", .named("Int16")) == "$s1M8EmployeeC3ages5Int16Vvg")
        #expect(
            try accessor("M", "Employee", "born", .optional(.named("Date")))
                == "$s1M8EmployeeC4born20FoundationEssentials4DateVSgvg")
        #expect(
            try accessor("M", "Employee", "department", .optional(department))
                == "$s1M8EmployeeC10departmentAA10DepartmentCSgvg")
        #expect(
            try accessor("M", "Employee", "tags", .optional(.set(department)))
                == "$s1M8EmployeeC4tagsShyAA10DepartmentCGSgvg")
        #expect(
            try accessor("M", "Department", "employees", .optional(.named("NSSet")))
                == "$s1M10DepartmentC9employees10Foundation5NSSetCSgvg")
        #expect(
            try SwiftMangler.accessor(
                module: "M", owner: "Department", property: "title", type: .named("String"), setter: true)
                == "$s1M10DepartmentC5titleSSvs")
    }

    @Test("a property of its own class refers back to it (every identifier takes a substitution index)")
    func backReferences() throws {
        let employee = SwiftType.user("Employee", .class)
        #expect(
            try accessor("CompanyModelExample", "Employee", "mentor", .optional(employee))
                == "$s19CompanyModelExample8EmployeeC6mentorACSgvg")
        let a = SwiftType.user("A", .class)
        #expect(try accessor("M", "A", "many", .optional(.array(a))) == "$s1M1AC4manySayACGSgvg")
    }

    @Test("words of identifiers seen before are written as references")
    func wordSubstitutions() throws {
        let tag = SwiftType.user("RecordTag", .class)
        let module = "CompanyExample"
        #expect(
            try accessor(module, "PersonRecord", "lastRecord", .optional(.named("String")))
                == "$s14CompanyExample12PersonRecordC04lastD0SSSgvg")
        #expect(
            try accessor(module, "PersonRecord", "recordRecord", .optional(.named("Date")))
                == "$s14CompanyExample12PersonRecordC06recordD020FoundationEssentials4DateVSgvg")
        #expect(
            try accessor(module, "PersonRecord", "personRecordTags", .optional(.set(tag)))
                == "$s14CompanyExample12PersonRecordC06personD4TagsShyAA0D3TagCGSgvg")
        #expect(
            try accessor(module, "PersonRecord", "tag", .optional(tag))
                == "$s14CompanyExample12PersonRecordC3tagAA0D3TagCSgvg")
        #expect(
            try SwiftMangler.method(
                module: module, owner: "PersonRecord", name: "insertIntoRecordTags",
                parameters: [(nil, .array(tag)), ("at", .named("NSIndexSet"))])
                == "$s14CompanyExample12PersonRecordC010insertIntoD4Tags_2atySayAA0D3TagCG_10Foundation10NSIndexSetCtF")
    }

    @Test("the to-many methods Xcode generates, with their labels and parameter lists")
    func methods() throws {
        let employee = SwiftType.user("Employee", .class)
        func method(_ name: String, _ parameters: [(String?, SwiftType)]) throws -> String {
            try SwiftMangler.method(
                module: "M", owner: "Department", name: name, parameters: parameters.map { (label: $0.0, type: $0.1) })
        }
        #expect(try method("addToEmployees", [(nil, employee)]) == "$s1M10DepartmentC14addToEmployeesyyAA8EmployeeCF")
        #expect(
            try method("addToEmployees", [(nil, .named("NSSet"))])
                == "$s1M10DepartmentC14addToEmployeesyy10Foundation5NSSetCF")
        #expect(
            try method("insertIntoStaff", [(nil, employee), ("at", .named("Int"))])
                == "$s1M10DepartmentC15insertIntoStaff_2atyAA8EmployeeC_SitF")
        #expect(
            try method("replaceStaff", [("at", .named("Int")), ("with", employee)])
                == "$s1M10DepartmentC12replaceStaff2at4withySi_AA8EmployeeCtF")
        // A single labeled parameter is a one-element list.
        #expect(try method("removeFromStaff", [("at", .named("Int"))]) == "$s1M10DepartmentC15removeFromStaff2atySi_tF")
    }

    @Test("repeated types in one signature, consecutive references and library types")
    func repeatedTypes() throws {
        let b = SwiftType.user("B", .class)
        let a = SwiftType.user("A", .class)
        func method(_ name: String, _ parameters: [(String?, SwiftType)]) throws -> String {
            try SwiftMangler.method(
                module: "M", owner: "A", name: name, parameters: parameters.map { (label: $0.0, type: $0.1) })
        }
        #expect(try method("f", [(nil, a), (nil, b), (nil, b)]) == "$s1M1AC1fyyAC_AA1BCAFtF")
        #expect(try method("g", [(nil, b), (nil, b), (nil, a)]) == "$s1M1AC1gyyAA1BC_AfCtF")
        #expect(
            try method(
                "h", [(nil, .named("Date")), (nil, .named("Date")), (nil, .named("NSSet")), (nil, .named("NSSet"))])
                == "$s1M1AC1hyy20FoundationEssentials4DateV_AG0A05NSSetCAJtF")
        #expect(
            try method("k", [(nil, .array(b)), (nil, .array(b)), (nil, .optional(b)), (nil, .optional(b)), (nil, b)])
                == "$s1M1AC1kyySayAA1BCG_AgFSgAhFtF")
        #expect(
            try method(
                "m",
                [(nil, .optional(b)), (nil, .optional(b)), (nil, b), ("x", .named("Int16")), ("y", .named("Int16"))])
                == "$s1M1AC1m___1x1yyAA1BCSg_AiHs5Int16VAKtF")
        #expect(
            try method(
                "n",
                [
                    (nil, .set(b)), (nil, .set(b)), (nil, .dictionary(.named("String"), b)),
                    (nil, .dictionary(.named("String"), b)),
                ]) == "$s1M1AC1nyyShyAA1BCG_AGSDySSAFGAHtF")
    }

    private func errors(_ source: String) -> [String] {
        switch AccessorGenerator.generate(module: "App", sources: [("Model.swift", source)]) {
        case .success: return []
        case .failure(let failure): return failure.description.split(separator: "\n").map(String.init)
        }
    }

    /// A to-many may be declared `Set<Destination>` (Apple bridges its `NSSet` to the Swift set).
    /// When the sources show the element is a managed object class, the getter makes the set of
    /// that class from the members (`_managedSet`) and the setter hands the members over as
    /// objects; a set of any other class is still read and written through the runtime's cast.
    @Test("a Swift set of a model class is read and written as a to-many's members")
    func swiftSetsOfModelClasses() throws {
        let generated = try AccessorGenerator.generate(
            module: "App",
            sources: [
                (
                    "Model.swift",
                    """
                    class Base: NSManagedObject {}
                    class Skill: Base { @NSManaged var title: String? }
                    class Tag: NSObject {}
                    class Employee: NSManagedObject {
                        @NSManaged var skills: Set<Skill>?
                        @NSManaged var required: Set<Skill>
                        @NSManaged var any: Set<NSManagedObject>?
                        @NSManaged var tags: Set<Tag>?
                    }
                    """
                )
            ]
        ).get()
        #expect(generated.contains("return _managedSet(Employee._coreData_1_property, of: Skill.self)\n"))
        #expect(
            generated.contains(
                "return _managedSet(Employee._coreData_2_property, of: Skill.self) ?? _managedRequiredValue(Employee._coreData_2_property)"
            ), "declared non-optional: a failed cast traps naming the property, as the generic getter does")
        #expect(generated.contains("return _managedSet(Employee._coreData_3_property, of: NSManagedObject.self)"))
        #expect(generated.contains("_setManagedMembers(value, Employee._coreData_1_property)"))
        #expect(
            generated.contains("return _managedValue(Employee._coreData_4_property) as? Set<Tag>"),
            "Tag is not a managed object class")
    }

    @Test("a declaration the generator cannot support is an error naming the file and line")
    func unsupportedDeclarationsAreNamed() {
        let privateProperty = errors(
            """
            import CoreData
            class Item: NSManagedObject {
                @NSManaged private var secret: String?
            }
            """)
        #expect(privateProperty.count == 1)
        #expect(privateProperty.first?.hasPrefix("Model.swift:3: error: ") == true)
        #expect(privateProperty.first?.contains("make it internal or public") == true)

        let unknownType = errors(
            """
            class Item: NSManagedObject {
                @NSManaged var color: Color?
            }
            """)
        #expect(unknownType.first?.hasPrefix("Model.swift:2: error: @NSManaged var color: the type 'Color'") == true)

        let otherMethod = errors(
            """
            class Item: NSManagedObject {}
            extension Item {
                @NSManaged func frobnicate(_ value: Item)
            }
            """)
        #expect(otherMethod.first?.hasPrefix("Model.swift:3: error: @NSManaged func frobnicate is not one of") == true)

        let notAClass = errors(
            """
            struct Value {
                @NSManaged var x: Int
            }
            """)
        #expect(notAClass.first?.hasPrefix("Model.swift:2: error: @NSManaged is supported in classes") == true)

        let returning = errors(
            """
            class Item: NSManagedObject {
                @NSManaged func count() -> Int
            }
            """)
        #expect(returning.first?.contains("returns a value") == true)
    }

    @Test("comments, strings and nested types do not confuse the scanner")
    func scannerSkipsWhatIsNotCode() throws {
        let source = #"""
            import CoreData
            /* @NSManaged var inComment: String? /* nested */ */
            public class Item: NSManagedObject {
                let text = "@NSManaged var inString: String? \(1 + "}".count)"
                let raw = #"{ @NSManaged var inRaw: Int }"#
                struct Inner { let x = 1 }
                // @NSManaged var inLineComment: Int
                @NSManaged public var title: String?
                class func make() -> Item { Item() }
            }
            extension Item {
                @NSManaged var count: Int64
            }
            """#
        let generated = try AccessorGenerator.generate(module: "App", sources: [("Item.swift", source)]).get()
        #expect(generated.contains("@_silgen_name(\"$s3App4ItemC5titleSSSgvg\")"))
        #expect(generated.contains("@_silgen_name(\"$s3App4ItemC5counts5Int64Vvs\")"))
        #expect(!generated.contains("inComment") && !generated.contains("inString") && !generated.contains("inRaw"))
        #expect(generated.contains("public func _coreData_0_get() -> String?"))
        #expect(generated.contains("func _coreData_1_set(_ value: __owned Int64)"))
        #expect(!generated.contains("public func _coreData_1"))
    }
}
