import Foundation
import Testing

@testable import OpenCoreData

/// What typed code writes is what key-value coding writes. The setters `@NSManaged` scalar,
/// string and date properties compile to (`_setManagedValue(_:_:)` with an `Int64`, a `String`, a
/// `Date`…) store the value in its cell with the tag of its type, without going through `Any`:
/// the value stored, its change record, its undo and its save must be those of
/// `setValue(_:forKey:)` with the same value.
///
/// Related documentation: Core Data Programming Guide, "Managed Object Accessor Methods" (the
/// dynamically generated accessors "are key-value coding and key-value observing compliant" and
/// record changes as `setValue(_:forKey:)` does); NSManagedObject reference, `changedValues()`,
/// `changedValuesForCurrentEvent()`; NSManagedObjectContext reference, `undoManager`.
@Suite("Typed writes: model class setters store what key-value coding stores")
struct TypedWriteTests {
    /// One attribute of each type a typed setter takes.
    private static func model() -> NSManagedObjectModel {
        gaugeModel([
            ("i16", .integer16AttributeType), ("i32", .integer32AttributeType), ("i64", .integer64AttributeType),
            ("count", .integer64AttributeType), ("real", .doubleAttributeType), ("ratio", .floatAttributeType),
            ("flag", .booleanAttributeType), ("label", .stringAttributeType), ("when", .dateAttributeType),
        ])
    }

    /// Each key with the value a typed setter gives it and the same setter called.
    private static var writes: [(key: String, value: Any, set: (NSManagedObject, _ManagedProperty) -> Void)] {
        [
            ("i16", Int16(-300), { $0._setManagedValue(Int16(-300), $1) }),
            ("i32", Int32(70_000), { $0._setManagedValue(Int32(70_000), $1) }),
            ("i64", Int64(9_000_000_000), { $0._setManagedValue(Int64(9_000_000_000), $1) }),
            ("count", 42, { $0._setManagedValue(42, $1) }),
            ("real", 0.375, { $0._setManagedValue(0.375, $1) }),
            ("ratio", Float(2.5), { $0._setManagedValue(Float(2.5), $1) }),
            ("flag", true, { $0._setManagedValue(true, $1) }),
            (
                "label", "Ada Lovelace, who wrote the first program",
                {
                    $0._setManagedValue("Ada Lovelace, who wrote the first program", $1)
                }
            ),
            (
                "when", Date(timeIntervalSinceReferenceDate: 86_400),
                {
                    $0._setManagedValue(Date(timeIntervalSinceReferenceDate: 86_400), $1)
                }
            ),
        ]
    }

    /// A context on an in-memory store of ``model()``.
    private static func context() throws -> NSManagedObjectContext {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model())
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    @Test("a typed setter stores the value, of the same type, that setValue(_:forKey:) stores")
    func storesWhatKeyValueCodingStores() throws {
        let context = try Self.context()
        let typed = NSEntityDescription.insertNewObject(forEntityName: "Gauge", into: context)
        let keyed = NSEntityDescription.insertNewObject(forEntityName: "Gauge", into: context)
        for write in Self.writes {
            write.set(typed, _ManagedProperty(write.key))
            keyed.setValue(write.value, forKey: write.key)
            let slot = try #require(typed.layout.slot(named: write.key))
            let stored = try #require(typed.values[slot], "\(write.key)")
            let expected = try #require(keyed.values[slot], "\(write.key)")
            #expect(type(of: stored) == type(of: expected), "\(write.key)")
            #expect(type(of: stored) == type(of: write.value), "\(write.key) keeps the declared type")
            #expect(Self.reads(typed.value(forKey: write.key), as: write.value), "\(write.key)")
            #expect(Self.reads(keyed.value(forKey: write.key), as: write.value), "\(write.key)")
        }
        #expect(Set(typed.changedValues().keys) == Set(Self.writes.map(\.key)))
    }

    @Test("a typed setter on a saved object records the change, the event's old value and its undo")
    func recordsTheChangeAndItsUndo() throws {
        let context = try Self.context()
        let gauge = NSEntityDescription.insertNewObject(forEntityName: "Gauge", into: context)
        gauge.setValue(Int64(1), forKey: "i64")
        gauge.setValue("before", forKey: "label")
        try context.save()
        let undo = UndoManager()
        context.undoManager = undo
        let recorder = NotificationRecorder([.NSManagedObjectContextObjectsDidChange], object: context)
        gauge._setManagedValue(Int64(2), _ManagedProperty("i64"))
        gauge._setManagedValue("after", _ManagedProperty("label"))
        #expect(gauge.isUpdated)
        #expect(context.updatedObjects == [gauge])
        #expect((gauge.changedValuesForCurrentEvent()["i64"] as? NSNumber)?.int64Value == 1)
        #expect(gauge.changedValuesForCurrentEvent()["label"] as? String == "before")
        context.processPendingChanges()
        #expect(recorder.objects(.NSManagedObjectContextObjectsDidChange, NSUpdatedObjectsKey) == [gauge])
        if undo.groupingLevel > 0 { undo.endUndoGrouping() }  // no run loop closes the event's group
        undo.undo()
        #expect((gauge.value(forKey: "i64") as? NSNumber)?.int64Value == 1)
        #expect(gauge.value(forKey: "label") as? String == "before")
        #expect(!context.hasChanges)
    }

    @Test("what typed setters store is saved, and read back by a fresh context, as the values set")
    func savesTheValuesSet() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("typed.sqlite")
        let model = Self.model()
        func context() throws -> NSManagedObjectContext {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url)
            let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            return context
        }
        let writer = try context()
        let gauge = NSEntityDescription.insertNewObject(forEntityName: "Gauge", into: writer)
        for write in Self.writes { write.set(gauge, _ManagedProperty(write.key)) }
        try writer.save()
        let reader = try context()
        let read = try #require(try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Gauge")).first)
        for write in Self.writes {
            #expect(Self.reads(read.value(forKey: write.key), as: write.value), "\(write.key)")
        }
    }

    /// Whether `read`, as `value(forKey:)` hands it out (a number or Boolean as `NSNumber`), is
    /// `value`.
    private static func reads(_ read: Any?, as value: Any) -> Bool {
        switch value {
        case let value as String: return read as? String == value
        case let value as Date: return read as? Date == value
        case let value as Int16: return (read as? NSNumber)?.int16Value == value
        case let value as Int32: return (read as? NSNumber)?.int32Value == value
        case let value as Int64: return (read as? NSNumber)?.int64Value == value
        case let value as Int: return (read as? NSNumber)?.intValue == value
        case let value as Double: return (read as? NSNumber)?.doubleValue == value
        case let value as Float: return (read as? NSNumber)?.floatValue == value
        case let value as Bool: return (read as? NSNumber)?.boolValue == value
        default: return false
        }
    }
}
