import Foundation
import OpenCoreDataSQL
import Testing

@testable import OpenCoreData

/// The compact storage of an object's values. Key-Value Coding Programming Guide,
/// "Accessing Object Properties": `value(forKey:)` returns what `setValue(_:forKey:)` stored, so a
/// slot must give back every value with the type it was given, and an object's values must not
/// change when a snapshot that shares their storage does (copy-on-write).
@Suite("Slot values")
struct SlotValuesTests {
    final class Marker {}
    struct Custom: Equatable { let a: Int, b: String, c: Double }

    @Test("every value reads back with the type it was stored with, typed cells and boxed ones alike")
    func roundTrip() throws {
        let marker = Marker()
        let url = try #require(URL(string: "https://example.com/a"))
        let uuid = UUID()
        let date = Date(timeIntervalSinceReferenceDate: 12.5)
        let given: [Any?] = [
            nil, 1, Int64(2), Int32(3), Int16(4), Int8(5), 6.5, Float(7.5), true, date, "a string longer than fifteen",
            "short", Data([1, 2, 3]), uuid, url, marker, Decimal(string: "1.25"), Custom(a: 1, b: "b", c: 2),
            Optional<Int>.some(9) as Any, NSNumber(value: 10), [1, 2], Set(["x"]),
        ]
        let values = SlotValues(given)
        #expect(values.count == given.count)
        #expect(values[0] == nil && values.isNil(at: 0))
        #expect(values[1] as? Int == 1 && type(of: values[1]!) == Int.self)
        #expect(type(of: values[2]!) == Int64.self && values[2] as? Int64 == 2)
        #expect(type(of: values[3]!) == Int32.self && values[3] as? Int32 == 3)
        #expect(type(of: values[4]!) == Int16.self && values[4] as? Int16 == 4)
        #expect(type(of: values[5]!) == Int8.self && values[5] as? Int8 == 5)
        #expect(values[6] as? Double == 6.5)
        #expect(type(of: values[7]!) == Float.self && values[7] as? Float == 7.5)
        #expect(values[8] as? Bool == true)
        #expect(values[9] as? Date == date)
        #expect(values[10] as? String == "a string longer than fifteen")
        #expect(values[11] as? String == "short")
        #expect(values[12] as? Data == Data([1, 2, 3]))
        #expect(values[13] as? UUID == uuid)
        #expect(values[14] as? URL == url)
        #expect(values[15] as? Marker === marker && values.reference(at: 15) === marker)
        #expect(values[16] as? Decimal == Decimal(string: "1.25"))
        #expect(values[17] as? Custom == Custom(a: 1, b: "b", c: 2))
        #expect(type(of: values[18]!) == Optional<Int>.self)
        #expect((values[19] as? NSNumber)?.intValue == 10 && values.reference(at: 19) is NSNumber)
        #expect(values[20] as? [Int] == [1, 2])
        #expect(values[21] as? Set<String> == ["x"])
        #expect(values.reference(at: 10) == nil)
    }

    @Test("numbers box as NSNumber from their cells, as NSNumber.boxing boxes them")
    func numbers() {
        let values = SlotValues([1, Int64(2), 3.5, true, Int16(4), Int32(5), Float(6.5), "7", nil])
        for slot in 0..<7 {
            let value = values[slot]
            #expect(values.number(at: slot) == value.flatMap(NSNumber.boxing))
        }
        #expect(values.number(at: 7) == nil && values.number(at: 8) == nil)
    }

    @Test("a copy keeps its values when the original changes, and the typed setters match the subscript")
    func copyOnWrite() {
        var original = SlotValues(repeating: nil, count: 4)
        original[0] = "first name, long enough to live on the heap"
        original.setReference(Marker(), at: 1)
        let copy = original
        original.setString("changed", at: 0)
        original.setInt(3, at: 2)
        original.setDouble(1.5, at: 3)
        #expect(copy[0] as? String == "first name, long enough to live on the heap")
        #expect(copy[2] == nil && copy[3] == nil)
        #expect(original[0] as? String == "changed")
        #expect(original[2] as? Int == 3 && original[3] as? Double == 1.5)
        #expect(copy.reference(at: 1) === original.reference(at: 1))
        original.setBool(true, at: 2)
        original.setDate(Date(timeIntervalSinceReferenceDate: 1), at: 3)
        #expect(original[2] as? Bool == true)
        #expect(original[3] as? Date == Date(timeIntervalSinceReferenceDate: 1))
        original[1] = nil
        #expect(original.reference(at: 1) == nil && copy.reference(at: 1) is Marker)
    }

    @Test("in 8-byte cells every value reads back with its type, a larger one through a box")
    func narrowCellsKeepTypes() throws {
        let url = try #require(URL(string: "https://example.com/b"))
        let given: [Any?] = [
            nil, 1, Int64(2), Int32(3), Int16(4), Int8(5), 6.5, Float(7.5), true,
            Date(timeIntervalSinceReferenceDate: 3), "a string longer than fifteen", "short", Data([4, 5]), UUID(), url,
            Marker(), Decimal(string: "2.5"), Custom(a: 2, b: "c", c: 3), NSNumber(value: 11), [3],
        ]
        var narrow = SlotValues(shape: SlotShape.interned(wide: Array(repeating: false, count: given.count)))
        for (slot, value) in given.enumerated() { narrow[slot] = value }
        let wide = SlotValues(given)
        for slot in given.indices {
            #expect(
                narrow[slot].map { ObjectIdentifier(type(of: $0)) } == wide[slot].map { ObjectIdentifier(type(of: $0)) }
            )
            #expect(String(describing: narrow[slot]) == String(describing: wide[slot]), "slot \(slot)")
            #expect(narrow.number(at: slot) == wide.number(at: slot))
        }
        #expect(narrow.reference(at: 15) === wide.reference(at: 15))
        // The typed setters box what does not fit, and a copy keeps its values.
        let copy = narrow
        narrow.setString("another string, longer than fifteen", at: 1)
        narrow.setDate(Date(timeIntervalSinceReferenceDate: 9), at: 2)
        #expect(narrow[1] as? String == "another string, longer than fifteen")
        #expect(narrow[2] as? Date == Date(timeIntervalSinceReferenceDate: 9))
        #expect(copy[1] as? Int == 1 && copy[2] as? Int64 == 2)
    }

    @Test("an entity's values give 16 bytes only to string, binary, UUID and URI attributes")
    func entityShape() {
        let entity = NSEntityDescription()
        entity.name = "Shaped"
        let types: [NSAttributeType] = [
            .stringAttributeType, .integer64AttributeType, .binaryDataAttributeType, .doubleAttributeType,
            .UUIDAttributeType, .dateAttributeType, .URIAttributeType, .booleanAttributeType, .decimalAttributeType,
            .transformableAttributeType,
        ]
        entity.properties = types.enumerated().map { index, type in
            let attribute = NSAttributeDescription()
            attribute.name = "a\(index)"
            attribute.attributeType = type
            return attribute
        }
        let model = NSManagedObjectModel()
        model.entities = [entity]
        let shape = entity.layout.slotShape
        #expect(
            (0..<types.count).map(shape.isWide) == [true, false, true, false, true, false, true, false, false, false])
        // Four 16-byte cells and six of 8 (112 bytes), then ten tag bytes: 16 words, where ten
        // 16-byte cells and their tags took 22.
        #expect(shape.words == 16)
        #expect(SlotShape.wide(count: types.count).words == 22)
    }

    /// Issue 21: a storage does not count its reference to its shape (each row a store decoded
    /// retained its entity's one shape, an atomic operation that waited for the stores setting up
    /// the new row), so shapes are interned for the life of the process: one instance per pattern
    /// of cell sizes, whichever model or caller asks. Values made in a shape nobody else keeps
    /// still read back, and two models with the same kinds of attributes share their entities'
    /// shape.
    @Test("a shape is one instance per pattern of cells, kept for every storage made in it")
    func shapesAreInterned() {
        let pattern = [false, true, true, false, true, false, false, true, false, true, true]
        #expect(SlotShape.interned(wide: pattern) === SlotShape.interned(wide: pattern))
        #expect(SlotShape.interned(wide: pattern) !== SlotShape.interned(wide: pattern.map { !$0 }))
        var values = SlotValues(shape: .interned(wide: Array(pattern.reversed())))
        values.setString("a string longer than fifteen bytes", at: 0)
        values.setInt(42, at: 2)
        let copy = values
        values.setString("changed", at: 0)
        #expect(copy[0] as? String == "a string longer than fifteen bytes")
        #expect(copy[2] as? Int == 42)
        #expect(values[0] as? String == "changed")

        func layout(of name: String) -> EntityLayout {
            let entity = NSEntityDescription()
            entity.name = name
            entity.properties = [NSAttributeType.stringAttributeType, .integer16AttributeType].enumerated().map {
                let attribute = NSAttributeDescription()
                attribute.name = "a\($0.offset)"
                attribute.attributeType = $0.element
                return attribute
            }
            let model = NSManagedObjectModel()
            model.entities = [entity]
            return entity.layout
        }
        #expect(layout(of: "First").slotShape === layout(of: "Second").slotShape)
    }
    @Test("the types stored unboxed fit a cell")
    func cellsHoldTheirTypes() {
        for size in [
            MemoryLayout<String>.size, MemoryLayout<Data>.size, MemoryLayout<UUID>.size, MemoryLayout<URL>.size,
            MemoryLayout<Date>.size, MemoryLayout<Int>.size, MemoryLayout<AnyObject>.size,
        ] {
            #expect(size <= SlotStorage.cellSize)
        }
    }

    @Test("a value let go of by its last slot is released")
    func releases() {
        weak var released: Marker?
        do {
            var values = SlotValues(repeating: nil, count: 2)
            let marker = Marker()
            released = marker
            values[0] = marker
            values[1] = Custom(a: 1, b: "b", c: 1)
            #expect(released != nil)
        }
        #expect(released == nil)
    }

    @Test(
        "values a reader fills in read back as the typed setters store them, and a cell filled twice lets go of its first value"
    )
    func fillerMatchesSetters() {
        // Two 16-byte cells, then 8-byte ones: the string and the date in the narrow cells go in boxes.
        let shape = SlotShape.interned(wide: [true, true, false, false, false, false, false, false, false])
        let date = Date(timeIntervalSinceReferenceDate: 4)
        let marker = Marker()
        let filler = SlotFiller(shape: shape)
        var set = SlotValues(shape: shape)
        filler.setString("a string longer than fifteen bytes", at: 0)
        set.setString("a string longer than fifteen bytes", at: 0)
        filler.set(Custom(a: 1, b: "b", c: 2), at: 1)
        set[1] = Custom(a: 1, b: "b", c: 2)
        filler.setInt(7, at: 2)
        set.setInt(7, at: 2)
        filler.setBool(true, at: 3)
        set.setBool(true, at: 3)
        filler.setDouble(2.5, at: 4)
        set.setDouble(2.5, at: 4)
        filler.setDate(date, at: 5)
        set.setDate(date, at: 5)
        filler.setReference(marker, at: 6)
        set.setReference(marker, at: 6)
        filler.setString("narrow", at: 7)
        set.setString("narrow", at: 7)
        let values = filler.take()
        for slot in 0..<shape.count {
            #expect(
                values[slot].map { ObjectIdentifier(type(of: $0)) } == set[slot].map { ObjectIdentifier(type(of: $0)) },
                "slot \(slot)")
            #expect(String(describing: values[slot]) == String(describing: set[slot]), "slot \(slot)")
        }
        #expect(values.reference(at: 6) === marker && values.isNil(at: 8))

        weak var released: Marker?
        do {
            let twice = SlotFiller(shape: shape)
            let first = Marker()
            released = first
            twice.setReference(first, at: 6)
            twice.setReference(Marker(), at: 6)
            #expect(twice.take().reference(at: 6) !== first)
        }
        #expect(released == nil)
    }

    /// A store writes each value in the column form of its attribute's type (STORE-FORMAT.md,
    /// "Types": Apple's encoding of each attribute type in its SQLite store). A column read from a
    /// cell must be the one ``SQLValues/column(_:type:attribute:)`` answers for the slot's value,
    /// for every pairing of the values a cell holds with the attribute types: the cell's own type
    /// and every other.
    @Test("a column taken from a cell is the column the slot's value gives, for every attribute type")
    func columnsFromCells() {
        let date = Date(timeIntervalSinceReferenceDate: 12.5)
        let given: [Any?] = [
            nil, 7, -3, 2.5, true, false, date, "text", "", "a string longer than fifteen", Int64(9), Int16(4),
            Float(1.5), Data([1, 2]), NSNumber(value: 3), Decimal(string: "1.25"), UUID(),
        ]
        let values = SlotValues(given)
        let types: [NSAttributeType] = [
            .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .booleanAttributeType,
            .doubleAttributeType, .floatAttributeType, .decimalAttributeType, .stringAttributeType,
            .dateAttributeType, .binaryDataAttributeType, .UUIDAttributeType, .URIAttributeType,
        ]
        var typed = 0
        for slot in given.indices {
            if case .other = values.scalar(at: slot) {} else { typed += 1 }
            for type in types {
                #expect(
                    SQLValues.column(values, slot: slot, type: type, attribute: nil)
                        == SQLValues.column(values[slot], type: type, attribute: nil),
                    "slot \(slot), type \(type.rawValue)")
            }
        }
        // nil, the two integers, the double, the two Booleans, the date, the three strings, and
        // the `Int64` and `Int16` (read as the `Int` they equal since the fourteenth session).
        #expect(typed == 12)
    }
}
