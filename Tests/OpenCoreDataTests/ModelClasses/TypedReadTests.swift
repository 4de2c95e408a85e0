import Foundation
import Testing

@testable import OpenCoreData

/// What typed code reads is what key-value coding reads. The scalar getters `@NSManaged`
/// properties compile to (`_managedInt16(_:)` and the rest) answer the attribute's number as the
/// declared scalar, converted as its `NSNumber` converts, and zero (false) for no value (Xcode's
/// "Use Scalar Type"); a to-many declared `NSSet?` (Xcode's type) holds the relationship's
/// objects; a fetch of `NSFetchRequest<Class>` answers the entity's and its sub-entities' objects
/// as `Class`.
///
/// Related documentation: Core Data Programming Guide, "Creating and Modifying Custom Managed
/// Objects" (scalar attribute accessors, to-many accessors); `NSNumber`'s `int16Value`,
/// `int32Value`, `int64Value`, `intValue`, `doubleValue`, `floatValue`, `boolValue`;
/// `NSManagedObjectContext.fetch(_:)` ("An array of objects that meet the criteria specified by
/// request", of the request's result type).
/// A model of one entity, `Gauge`, with an optional attribute of each name and type.
func gaugeModel(_ attributes: [(String, NSAttributeType)]) -> NSManagedObjectModel {
    let gauge = NSEntityDescription()
    gauge.name = "Gauge"
    gauge.properties = attributes.map { name, type in
        let attribute = NSAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        attribute.isOptional = true
        return attribute
    }
    let model = NSManagedObjectModel()
    model.entities = [gauge]
    return model
}

@Suite("Typed reads: scalars, to-many sets, fetched model classes")
struct TypedReadTests {
    /// One attribute of each scalar type.
    private static func model() -> NSManagedObjectModel {
        gaugeModel([
            ("i16", .integer16AttributeType), ("i32", .integer32AttributeType), ("i64", .integer64AttributeType),
            ("real", .doubleAttributeType), ("ratio", .floatAttributeType), ("flag", .booleanAttributeType),
        ])
    }

    /// A private-queue context on its own coordinator with the SQLite store at `url`: a writer,
    /// then a reader that sees only what the writer saved.
    private static func sqliteContext(_ model: NSManagedObjectModel, _ url: URL) throws -> NSManagedObjectContext {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// A company store in `directory`, filled by `fill` and saved; its model and file.
    private static func savedCompany(
        in directory: TemporaryDirectory, _ fill: @escaping (NSManagedObjectContext) -> Void
    ) throws -> (NSManagedObjectModel, URL) {
        let url = directory.file("company.sqlite")
        let model = CompanyModel.make()
        let writer = try sqliteContext(model, url)
        try writer.performAndWait {
            fill(writer)
            try writer.save()
        }
        return (model, url)
    }

    /// Each scalar getter's answer for `key` next to `value(forKey:)`'s `NSNumber` converted the
    /// same way (zero or false for no value).
    private static func expectSameAsKeyValueCoding(
        _ object: NSManagedObject, _ key: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let property = _ManagedProperty(key)
        let number = object.value(forKey: key) as? NSNumber
        #expect(object._managedInt16(property) == number?.int16Value ?? 0, "\(key)", sourceLocation: sourceLocation)
        #expect(object._managedInt32(property) == number?.int32Value ?? 0, "\(key)", sourceLocation: sourceLocation)
        #expect(object._managedInt64(property) == number?.int64Value ?? 0, "\(key)", sourceLocation: sourceLocation)
        #expect(object._managedInt(property) == number?.intValue ?? 0, "\(key)", sourceLocation: sourceLocation)
        #expect(object._managedDouble(property) == number?.doubleValue ?? 0, "\(key)", sourceLocation: sourceLocation)
        #expect(object._managedFloat(property) == number?.floatValue ?? 0, "\(key)", sourceLocation: sourceLocation)
        #expect(object._managedBool(property) == number?.boolValue ?? false, "\(key)", sourceLocation: sourceLocation)
    }

    @Test(
        "every scalar getter converts a set value as its NSNumber does, in range or not",
        arguments: [
            ("i16", 36 as any Sendable), ("i16", -32_768), ("i16", 70_000), ("i16", 2.75), ("i16", true),
            ("i32", 3_000_000_000), ("i32", Int32(-7)), ("i64", Int64.max), ("i64", 9_000_000_000),
            ("real", 0.125), ("real", 12), ("real", -1e300), ("ratio", Float(4.5)), ("ratio", 1.5),
            ("flag", true), ("flag", false), ("flag", 2), ("i16", NSNumber(value: 41)),
            ("real", NSDecimalNumber(string: "1234.56")),
        ] as [(String, any Sendable)])
    func setValuesConvertAsNumbers(key: String, value: any Sendable) throws {
        let context = try CompanyModel.stack(Self.model())
        try context.performAndWait {
            let gauge = NSEntityDescription.insertNewObject(forEntityName: "Gauge", into: context)
            gauge.setValue(value, forKey: key)
            Self.expectSameAsKeyValueCoding(gauge, key)
            try #require(gauge.value(forKey: key) is NSNumber)
        }
    }

    @Test("no value reads as zero, and false")
    func noValueReadsAsZero() throws {
        let context = try CompanyModel.stack(Self.model())
        context.performAndWait {
            let gauge = NSEntityDescription.insertNewObject(forEntityName: "Gauge", into: context)
            let property = _ManagedProperty("i16")
            #expect(gauge._managedInt16(property) == 0)
            #expect(gauge._managedInt64(_ManagedProperty("i64")) == 0)
            #expect(gauge._managedDouble(_ManagedProperty("real")) == 0)
            #expect(gauge._managedBool(_ManagedProperty("flag")) == false)
            Self.expectSameAsKeyValueCoding(gauge, "i32")
        }
    }

    @Test("numbers read back from an SQLite store come out as the saved scalars, faults firing first")
    func storedRowsReadAsScalars() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("gauges.sqlite")
        let model = Self.model()
        let writer = try Self.sqliteContext(model, url)
        try writer.performAndWait {
            let gauge = NSEntityDescription.insertNewObject(forEntityName: "Gauge", into: writer)
            gauge.setValue(-12, forKey: "i16")
            gauge.setValue(70_000, forKey: "i32")
            gauge.setValue(Int64(9_000_000_000), forKey: "i64")
            gauge.setValue(0.375, forKey: "real")
            gauge.setValue(Float(2.5), forKey: "ratio")
            gauge.setValue(true, forKey: "flag")
            NSEntityDescription.insertNewObject(forEntityName: "Gauge", into: writer)
            try writer.save()
        }
        let reader = try Self.sqliteContext(model, url)
        try reader.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Gauge")
            // SQLite orders no value before any number: descending, the gauge with values comes first.
            request.sortDescriptors = [NSSortDescriptor(key: "i16", ascending: false)]
            let gauges = try reader.fetch(request)
            try #require(gauges.count == 2)
            let (set, empty) = (gauges[0], gauges[1])
            #expect(set.isFault)
            #expect(set._managedInt16(_ManagedProperty("i16")) == -12)
            #expect(!set.isFault)
            #expect(set._managedInt32(_ManagedProperty("i32")) == 70_000)
            #expect(set._managedInt64(_ManagedProperty("i64")) == 9_000_000_000)
            #expect(set._managedDouble(_ManagedProperty("real")) == 0.375)
            #expect(set._managedFloat(_ManagedProperty("ratio")) == 2.5)
            #expect(set._managedBool(_ManagedProperty("flag")))
            #expect(empty._managedInt16(_ManagedProperty("i16")) == 0)
            #expect(empty._managedBool(_ManagedProperty("flag")) == false)
            for key in ["i16", "i32", "i64", "real", "ratio", "flag"] {
                Self.expectSameAsKeyValueCoding(set, key)
                Self.expectSameAsKeyValueCoding(empty, key)
            }
        }
    }

    /// A model class's setters store the declared width (`Int16`, `Int32`, `Int64`); getters,
    /// key-value coding and the saved row all answer the number set, at the edges of each width.
    @Test("fixed-width integers as a model class's setters store them read back, and save, as the numbers set")
    func fixedWidthIntegersReadAndSave() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("widths.sqlite")
        let model = Self.model()
        let writer = try Self.sqliteContext(model, url)
        let values: [(Int16, Int32, Int64)] = [
            (.min, .min, .min), (.max, .max, .max), (-1, 0, 1), (300, 70_000, 9_000_000_000),
        ]
        try writer.performAndWait {
            for (i16, i32, i64) in values {
                let gauge = NSEntityDescription.insertNewObject(forEntityName: "Gauge", into: writer)
                gauge._setManagedValue(i16, _ManagedProperty("i16"))
                gauge._setManagedValue(i32, _ManagedProperty("i32"))
                gauge._setManagedValue(i64, _ManagedProperty("i64"))
                #expect(gauge._managedInt16(_ManagedProperty("i16")) == i16)
                #expect(gauge._managedInt32(_ManagedProperty("i32")) == i32)
                #expect(gauge._managedInt64(_ManagedProperty("i64")) == i64)
                #expect(gauge._managedInt(_ManagedProperty("i32")) == Int(i32))
                #expect(gauge._managedDouble(_ManagedProperty("i16")) == Double(i16))
                #expect(gauge._managedBool(_ManagedProperty("i64")) == (i64 != 0))
                for key in ["i16", "i32", "i64"] { Self.expectSameAsKeyValueCoding(gauge, key) }
            }
            try writer.save()
        }
        let reader = try Self.sqliteContext(model, url)
        try reader.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Gauge")
            request.sortDescriptors = [NSSortDescriptor(key: "i64", ascending: true)]
            let read = try reader.fetch(request).map { gauge in
                (
                    gauge._managedInt16(_ManagedProperty("i16")), gauge._managedInt32(_ManagedProperty("i32")),
                    gauge._managedInt64(_ManagedProperty("i64"))
                )
            }
            let expected = values.sorted { $0.2 < $1.2 }
            #expect(read.count == expected.count)
            for (got, want) in zip(read, expected) {
                #expect(got.0 == want.0 && got.1 == want.1 && got.2 == want.2, "\(got) saved as \(want)")
            }
        }
    }

    @Test("a to-many read as NSSet holds the relationship's objects, and bridges to a Swift set")
    func toManyAsNSSet() throws {
        let context = try CompanyModel.stack()
        context.performAndWait {
            let department = context.department("Engines")
            let staff = ["Ada", "Charles", "Grace"].map { context.employee($0) }
            #expect(department._managedNSSet(_ManagedProperty("employees"))?.count == 0, "no members: an empty set")
            department.mutableSetValue(forKey: "employees").addObjects(from: staff)
            let members = department._managedNSSet(_ManagedProperty("employees"))
            #expect(members?.count == 3)
            for employee in staff { #expect(members?.contains(employee) == true) }
            #expect(members?.contains(context.employee("Linus")) == false)
            let bridged = members as? Set<NSManagedObject>
            #expect(bridged == Set(staff))
            var names: [String] = []
            for case let member as NSManagedObject in members ?? NSSet() {
                names.append(member.value(forKey: "name") as? String ?? "")
            }
            #expect(names.sorted() == ["Ada", "Charles", "Grace"])
        }
    }

    /// Core Data Programming Guide, "Creating and Modifying Custom Managed Objects": the to-many
    /// accessors and `mutableSetValue(forKey:)` are views of one relationship. A stored to-many
    /// read first through the `NSSet` getter (kept as the objects it was read as) must
    /// answer the same members by key, change through its mutable set with the inverse kept,
    /// and save; read first by key, the getter answers the same.
    @Test("a stored to-many read as NSSet first is the relationship key-value coding reads and changes")
    func storedToManyReadAsNSSetFirst() throws {
        let directory = TemporaryDirectory()
        let (model, url) = try Self.savedCompany(in: directory) { writer in
            let engines = writer.department("Engines")
            for name in ["Ada", "Charles", "Grace"] { writer.employee(name).setValue(engines, forKey: "department") }
            writer.department("Looms").setValue(
                Set(["Linus", "Ken"].map { writer.employee($0) }), forKey: "employees")
        }
        let reader = try Self.sqliteContext(model, url)
        let employees = _ManagedProperty("employees")
        try reader.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Department")
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            let departments = try reader.fetch(request)
            try #require(departments.count == 2)
            let (engines, looms) = (departments[0], departments[1])
            let typed = try #require(engines._managedNSSet(employees))
            let names = { (members: [Any]) in
                members.compactMap { ($0 as? NSManagedObject)?.value(forKey: "name") as? String }.sorted()
            }
            #expect(names(typed.allObjects) == ["Ada", "Charles", "Grace"])
            let byKey = try #require(engines.value(forKey: "employees") as? Set<NSManagedObject>)
            #expect(byKey == Set(typed.allObjects.compactMap { $0 as? NSManagedObject }))
            #expect(engines._managedNSSet(employees)?.count == 3, "read again, the same members")
            let ada = try #require(byKey.first { $0.value(forKey: "name") as? String == "Ada" })
            engines.mutableSetValue(forKey: "employees").remove(ada)
            #expect(ada.value(forKey: "department") == nil, "the inverse follows")
            #expect(names(engines._managedNSSet(employees)?.allObjects ?? []) == ["Charles", "Grace"])
            // Read by key first, the getter answers the same objects.
            let loomsByKey = try #require(looms.value(forKey: "employees") as? Set<NSManagedObject>)
            #expect(
                Set((looms._managedNSSet(employees)?.allObjects ?? []).compactMap { $0 as? NSManagedObject })
                    == loomsByKey)
            try reader.save()
        }
        let check = try Self.sqliteContext(model, url)
        try check.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Department")
            request.predicate = NSPredicate(format: "name == %@", "Engines")
            let engines = try #require(try check.fetch(request).first)
            let members = engines._managedNSSet(employees)?.allObjects ?? []
            #expect(
                members.compactMap { ($0 as? NSManagedObject)?.value(forKey: "name") as? String }.sorted() == [
                    "Charles", "Grace",
                ])
        }
    }

    /// Apple's Core Data lets a to-many be declared `Set<Destination>` and bridges the
    /// relationship's `NSSet` to it, copying ("Core Data WWDC 2020 FAQ", Apple Developer Forums:
    /// "Declaring an accessor as Set forces an immediate copy of the entire relationship"); a
    /// bridging cast that cannot succeed — a member not of the declared class, an ordered
    /// to-many's `NSOrderedSet` — gives no set. Such a getter and setter must be the relationship
    /// key-value coding reads and changes, inverse included, and save.
    @Test("a stored to-many declared as a Swift set is the relationship key-value coding reads and changes")
    func storedToManyAsSwiftSet() throws {
        let directory = TemporaryDirectory()
        let (model, url) = try Self.savedCompany(in: directory) { writer in
            let engines = writer.department("Engines")
            for name in ["Ada", "Charles", "Grace"] { writer.employee(name).setValue(engines, forKey: "department") }
            _ = writer.department("Looms")
        }
        let reader = try Self.sqliteContext(model, url)
        let employees = _ManagedProperty("employees")
        let names = { (members: Set<NSManagedObject>?) in
            (members ?? []).compactMap { $0.value(forKey: "name") as? String }.sorted()
        }
        try reader.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Department")
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            let departments = try reader.fetch(request)
            try #require(departments.count == 2)
            let (engines, looms) = (departments[0], departments[1])
            #expect(engines.isFault, "the getter fires the fault")
            let members = try #require(engines._managedSet(employees, of: NSManagedObject.self))
            #expect(names(members) == ["Ada", "Charles", "Grace"])
            #expect(members == engines.value(forKey: "employees") as? Set<NSManagedObject>)
            #expect(looms._managedSet(employees, of: NSManagedObject.self) == [], "no members: an empty set")
            #expect(
                engines._managedSet(employees, of: NotAnEmployee.self) == nil,
                "members not of the declared class: the bridging cast fails")
            let ada = try #require(members.first { $0.value(forKey: "name") as? String == "Ada" })
            looms._setManagedMembers(Set([ada]), employees)
            #expect(ada.value(forKey: "department") as? NSManagedObject === looms, "the inverse follows")
            #expect(names(engines._managedSet(employees, of: NSManagedObject.self)) == ["Charles", "Grace"])
            #expect(names(looms._managedSet(employees, of: NSManagedObject.self)) == ["Ada"])
            try reader.save()
            let project = NSEntityDescription.insertNewObject(forEntityName: "Project", into: reader)
            project.setValue(NSOrderedSet(array: [ada]), forKey: "members")
            #expect(
                project._managedSet(_ManagedProperty("members"), of: NSManagedObject.self) == nil,
                "an ordered to-many is an NSOrderedSet, not a set")
            reader.rollback()
        }
        let check = try Self.sqliteContext(model, url)
        try check.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Department")
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            let departments = try check.fetch(request)
            #expect(
                departments.map { names($0._managedSet(employees, of: NSManagedObject.self)) } == [
                    ["Charles", "Grace"], ["Ada"],
                ])
            departments[1]._setManagedMembers(nil as Set<NSManagedObject>?, employees)
            #expect(departments[1]._managedSet(employees, of: NSManagedObject.self) == [], "nil sets no members")
        }
    }

    @Test("a to-one read as an object is the destination, fired from a saved row, and nil when unset")
    func toOneAsObject() throws {
        let directory = TemporaryDirectory()
        let (model, url) = try Self.savedCompany(in: directory) { writer in
            writer.employee("Ada").setValue(writer.department("Engines"), forKey: "department")
            writer.employee("Grace")
        }
        let reader = try Self.sqliteContext(model, url)
        try reader.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            let employees = try reader.fetch(request)
            try #require(employees.count == 2)
            let department = _ManagedProperty("department")
            let destination = employees[0]._managedObject(department)
            #expect(destination === (employees[0].value(forKey: "department") as AnyObject))
            #expect((destination as? NSManagedObject)?.value(forKey: "name") as? String == "Engines")
            #expect(employees[1]._managedObject(department) == nil)
            // Not a to-one: the value as key-value coding reads it, as an object.
            #expect(employees[0]._managedObject(_ManagedProperty("name")) as? String == "Ada")
        }
    }

    @Test("a fetch of a model class answers the entity's and its sub-entity's objects as that class")
    func fetchedModelClasses() throws {
        let model = CompanyModel.make()
        model.entitiesByName["Employee"]?.managedObjectClassName = NSStringFromClass(FetchedEmployee.self)
        model.entitiesByName["Manager"]?.managedObjectClassName = NSStringFromClass(FetchedManager.self)
        let context = try CompanyModel.stack(model)
        try context.performAndWait {
            for name in ["Ada", "Grace"] { context.employee(name) }
            context.employee("Charles", entity: "Manager")
            let request = NSFetchRequest<FetchedEmployee>(entityName: "Employee")
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            let fetched = try context.fetch(request)
            #expect(fetched.map { $0.value(forKey: "name") as? String } == ["Ada", "Charles", "Grace"])
            #expect(fetched.map { $0 is FetchedManager } == [false, true, false])
            let managers = try context.fetch(NSFetchRequest<FetchedManager>(entityName: "Manager"))
            #expect(managers.map { $0.value(forKey: "name") as? String } == ["Charles"])
        }
    }
}

/// The class of `Employee` objects in ``TypedReadTests/fetchedModelClasses()``.
class FetchedEmployee: NSManagedObject {}

/// The class of `Manager` objects in ``TypedReadTests/fetchedModelClasses()``.
final class FetchedManager: FetchedEmployee {}

/// A model class no entity of ``TypedReadTests/storedToManyAsSwiftSet()``'s model has.
final class NotAnEmployee: NSManagedObject {}
