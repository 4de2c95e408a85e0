internal import CPrefetch
import Foundation

/// The values of an object's or a snapshot's slots: a collection of `Any?`, stored compactly.
///
/// The `ContiguousArray<Any?>` this replaces took 32 bytes a slot (an existential's inline buffer
/// and type), and the snapshots of fetched rows were a third of the memory a fetch kept.
/// Here a slot is a cell and a one-byte tag naming what the cell holds: the common value types of
/// attributes (`String`, the integers, `Double`, `Float`, `Bool`, `Date`, `Data`, `UUID`, `URL`)
/// unboxed, a class instance (an object, an object ID, an `NSNumber`) as one reference, and
/// anything else boxed. A value reads back with exactly the dynamic type it was stored with.
///
/// Cells are sized by a ``SlotShape``: an entity's values (``init(shape:)`` with its layout's
/// shape) take 16 bytes for a string, binary, UUID or URI attribute and 8 for every other slot, a
/// value too large for its cell going in a box; other values take 16 bytes a slot.
///
/// A value type with copy-on-write storage, as the array was: an object's values share a
/// snapshot's storage until the object changes.
package struct SlotValues: RandomAccessCollection, MutableCollection, ExpressibleByArrayLiteral,
    @unchecked Sendable
{
    /// `nil` when there are no slots (a fault's values).
    private var storage: SlotStorage?

    package init() { storage = nil }

    /// Values held in `storage`, shared until changed (a row cache's row, as its snapshot).
    init(storage: SlotStorage) { self.storage = storage.count > 0 ? storage : nil }

    /// The storage holding the values, shared; `nil` when there are no slots.
    var sharedStorage: SlotStorage? { storage }

    /// Asks the processor to bring in the storage's header (its reference count, its row
    /// fields), as ``IDTable/prefetch(_:)`` does for a table's lines. A hint: it changes nothing.
    @inline(__always)
    func prefetchStorage() {
        // The address is taken, and the reference let go of, before the hint.
        let address = storage.map { Unmanaged.passUnretained($0).toOpaque() }
        if let address { ocd_prefetch_for_write(address) }
    }

    package init(arrayLiteral elements: Any?...) { self.init(elements) }

    /// Slots holding `elements`, in order.
    package init<Elements: Collection>(_ elements: Elements) where Elements.Element == Any? {
        guard !elements.isEmpty else {
            storage = nil
            return
        }
        let storage = SlotStorage.make(shape: .wide(count: elements.count))
        for (slot, value) in elements.enumerated() { storage.initialize(slot, with: value) }
        self.storage = storage
    }

    /// Slots of `shape`'s sizes, holding no value.
    package init(shape: SlotShape) {
        storage = shape.count > 0 ? SlotStorage.make(shape: shape) : nil
    }

    /// `count` slots, each holding `value`.
    package init(repeating value: Any?, count: Int) {
        guard count > 0 else {
            storage = nil
            return
        }
        let storage = SlotStorage.make(shape: .wide(count: count))
        // A new storage's tags are zero: every cell already holds no value.
        if value != nil {
            for slot in 0..<count { storage.initialize(slot, with: value) }
        }
        self.storage = storage
    }

    package var startIndex: Int { 0 }
    package var endIndex: Int { storage?.count ?? 0 }

    package subscript(slot: Int) -> Any? {
        get { cells(for: slot).value(at: slot) }
        set {
            makeUnique()
            cells(for: slot).replace(slot, with: newValue)
        }
    }

    /// The class instance a slot holds (an object, an object ID, a marker), without going through
    /// `Any`: a relationship's slot is read this way on every traversal, and a cast from
    /// `AnyObject` to a class is a pointer check where one from `Any` is a runtime search.
    @inline(__always)
    package func reference(at slot: Int) -> AnyObject? {
        storage?.reference(at: slot)
    }

    /// The slot's number as `NSNumber`, boxed from its cell, or `nil` when it holds no Swift
    /// number (what `NSNumber.boxing` answers for the slot's value, without going through `Any`).
    package func number(at slot: Int) -> NSNumber? {
        storage?.number(at: slot)
    }

    /// The slot's value when it is an `Int`, `Double`, `Bool`, `Date` or `String` (or none),
    /// read from its cell without going through `Any`; ``SlotScalar/other`` for anything else. A
    /// fixed-width integer (`Int64`, `Int32`, `Int16`, `Int8`, as a model class's setter stores
    /// it) reads as the `Int` of the same value.
    package func scalar(at slot: Int) -> SlotScalar {
        cells(for: slot).scalar(at: slot)
    }

    /// Whether the slot holds no value.
    @inline(__always)
    package func isNil(at slot: Int) -> Bool {
        storage?.tag(at: slot) == .empty
    }

    // Typed setters: what a store reading a column knows the type of is stored without
    // classifying an `Any` (a metatype test per candidate type).

    /// Stores an `Int`, as ``subscript(_:)`` would store `value as Any`.
    package mutating func setInt(_ value: Int, at slot: Int) { set(value, .int, at: slot) }

    /// Stores a `Bool`, as ``subscript(_:)`` would store `value as Any`.
    package mutating func setBool(_ value: Bool, at slot: Int) { set(value, .bool, at: slot) }

    /// Stores a `Double`, as ``subscript(_:)`` would store `value as Any`.
    package mutating func setDouble(_ value: Double, at slot: Int) { set(value, .double, at: slot) }

    /// Stores a `Date`, as ``subscript(_:)`` would store `value as Any`.
    package mutating func setDate(_ value: Date, at slot: Int) { set(value, .date, at: slot) }

    /// Stores a `String`, as ``subscript(_:)`` would store `value as Any`.
    package mutating func setString(_ value: String, at slot: Int) { set(value, .string, at: slot) }

    /// Stores a class instance, as ``subscript(_:)`` would store `value as Any`.
    package mutating func setReference(_ value: AnyObject, at slot: Int) { set(value, .reference, at: slot) }

    /// Stores `value`, whose type `tag` names, as ``subscript(_:)`` would store `value as Any`.
    @inline(__always)
    mutating func set<Value>(_ value: Value, _ tag: SlotTag, at slot: Int) {
        makeUnique()
        cells(for: slot).fill(slot, with: value, tag)
    }

    /// The storage, to index at `slot`. Indexing slots that do not exist traps, as `Array`'s
    /// subscript does: slots come from the entity's layout, never from a file or a caller.
    @inline(__always)
    private func cells(for slot: Int) -> SlotStorage {
        guard let storage else { preconditionFailure("SlotValues: slot \(slot) of no slots") }
        return storage
    }

    /// Whether another holder shares the storage, so that the next write copies it first.
    package mutating func isShared() -> Bool {
        storage != nil && !isKnownUniquelyReferenced(&storage)
    }

    @inline(__always)
    private mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage), let shared = storage { storage = shared.copy() }
    }
}

/// New values a store's reader fills in, cell by cell, before anything else holds them.
///
/// ``SlotValues``' typed setters check that the storage is not shared, retain and release it, and
/// release what the cell held, for each cell: two atomic operations and more for each column of
/// every row read. Here each setter initializes
/// its cell in the storage directly; the cells start empty, so there is nothing to release. A cell
/// set twice releases its first value first, as ``SlotValues`` would.
package struct SlotFiller {
    private let storage: SlotStorage

    /// Empty cells of `shape`'s sizes. The shape is borrowed: the storage's header counts the one
    /// reference it keeps, and a store decoding rows passes its entity's shape without a retain
    /// and release of its own around each row (a release a row fewer; no
    /// change by the clock was measurable).
    package init(shape: borrowing SlotShape) { storage = SlotStorage.make(shape: shape) }

    /// ``init(shape:)`` with a shape its owner keeps alive, given unretained: a shape read from the
    /// stored properties of a reader and its layout was retained and released around the call,
    /// although both live as long as the store.
    package init(shape: Unmanaged<SlotShape>) {
        storage = shape._withUnsafeGuaranteedRef { SlotStorage.make(shape: $0) }
    }

    /// Stores an `Int`, as ``SlotValues/setInt(_:at:)`` does.
    package func setInt(_ value: Int, at slot: Int) { storage.fill(slot, with: value, .int) }

    /// Stores a `Bool`, as ``SlotValues/setBool(_:at:)`` does.
    package func setBool(_ value: Bool, at slot: Int) { storage.fill(slot, with: value, .bool) }

    /// Stores a `Double`, as ``SlotValues/setDouble(_:at:)`` does.
    package func setDouble(_ value: Double, at slot: Int) { storage.fill(slot, with: value, .double) }

    /// Stores a `Date`, as ``SlotValues/setDate(_:at:)`` does.
    package func setDate(_ value: Date, at slot: Int) { storage.fill(slot, with: value, .date) }

    /// Stores a `String`, as ``SlotValues/setString(_:at:)`` does.
    package func setString(_ value: consuming String, at slot: Int) { storage.fill(slot, with: value, .string) }

    /// Stores a class instance, as ``SlotValues/setReference(_:at:)`` does. The value is taken
    /// owned, as the string is by ``setString(_:at:)``: the cell keeps the caller's reference
    /// (an ID the reader had just made or found was retained for the cell and released
    /// by the reader, two atomic operations a to-one of every row).
    package func setReference(_ value: consuming AnyObject, at slot: Int) {
        storage.fill(slot, with: value, .reference)
    }

    /// Stores any value, as ``SlotValues``' subscript does.
    package func set(_ value: Any?, at slot: Int) { storage.fill(slot, with: value) }

    /// The values filled in (no slots at all for a shape of none), the filler given up: its
    /// reference to the storage moves to the values (a getter, and then dropping the
    /// filler, retained and released it).
    package consuming func take() -> SlotValues { SlotValues(storage: storage) }
}

/// A slot's value of one of the types most attributes hold, as ``SlotValues/scalar(at:)`` reads
/// it: what a store writing a row binds without classifying an `Any`.
package enum SlotScalar {
    /// No value.
    case none
    case int(Int)
    case double(Double)
    case bool(Bool)
    case date(Date)
    case string(String)
    /// A value of another type: read it through ``SlotValues``' subscript.
    case other

    /// The value as itself (an `Int`, not the `NSNumber` `value(forKey:)` makes of it); `nil` for
    /// no value and for ``other``.
    package var value: Any? {
        switch self {
        case .none, .other: nil
        case .int(let number): number
        case .double(let number): number
        case .bool(let flag): flag
        case .date(let date): date
        case .string(let string): string
        }
    }
}

/// What a cell of ``SlotStorage`` holds.
enum SlotTag: UInt8 {
    /// No value (`nil`); a new storage's tags are all zero.
    case empty, int, int64, int32, int16, int8, double, float, bool, date, string, data, uuid, url
    /// A class instance, held strongly.
    case reference
    /// Any other value, in a ``SlotBox``.
    case boxed

    /// Whether the cell holds something to release.
    var isTrivial: Bool {
        switch self {
        case .string, .data, .url, .reference, .boxed: return false
        default: return true
        }
    }
}

/// A value no cell holds unboxed.
final class SlotBox: @unchecked Sendable {
    let value: Any
    init(_ value: Any) { self.value = value }
}

/// The header of a ``SlotStorage``: its shape, then the fields of the row-cache row the storage
/// is once a cache takes it as one (``CachedRow``; zero until then, and in every copy).
struct SlotHeader {
    /// How the cells are laid out; never changes. The first field: `SlotStorage` reads it at
    /// offset 0 without retaining it. Unowned and not counted: shapes are interned and live as
    /// long as the process (``SlotShape/interned(wide:)``).
    unowned(unsafe) let shape: SlotShape
    /// The row's object's ID, as a value; `nil` while no cache has taken the storage as a row.
    var rowKey: IDValue?
    /// What keeps `rowKey`'s store part alive (the value holds it unretained); the row's cache
    /// belongs to a coordinator, whose model keeps the layout.
    var rowTail: IDTail?
    /// The row's version, as its snapshot's.
    var version: UInt64 = 0
    /// When the row was read or written (`ProcessInfo.systemUptime`), for staleness.
    var time: TimeInterval = 0
    /// How many registered objects (at most one per context) hold the row.
    var uses: Int32 = 0
    /// ``CachedRow``'s state bits; zero for a row whose snapshot is current.
    var rowState: UInt8 = 0
    /// Where the row read ``Prefetching/distance`` rows after this one by the same statement is
    /// in memory, for the row cache to ask the processor for when this row's fault fires
    /// (``RowCache/snapshot(of:maxAge:)``): an app goes through a fetch's results in order, and
    /// each fault's row was a cache miss when it fired. An address only, never read
    /// through, and it may be stale (that row gone since): a prefetch of any address is a hint
    /// that cannot fault. Zero when there is none.
    var nextRow: UInt = 0
}

/// The storage of ``SlotValues``: the cells of its shape, then one tag byte a cell.
final class SlotStorage: ManagedBuffer<SlotHeader, UInt64> {
    /// Bytes a wide cell takes: the largest unboxed value (`String`, `Data`, `UUID`, `URL`).
    static let cellSize = 16

    static func make(shape: SlotShape) -> SlotStorage {
        // An unowned field has no key-path offset: the field after it starts one word in.
        assert(
            MemoryLayout<SlotHeader>.offset(of: \SlotHeader.rowKey) == MemoryLayout<UnsafeRawPointer>.stride,
            "withShape reads the shape at offset 0")
        let buffer = SlotStorage.create(minimumCapacity: shape.words) { _ in SlotHeader(shape: shape) }
        let storage = unsafeDowncast(buffer, to: SlotStorage.self)
        storage.withUnsafeMutablePointerToElements { elements in
            let tags = UnsafeMutableRawPointer(elements) + shape.offset(shape.count)
            tags.initializeMemory(as: UInt8.self, repeating: 0, count: shape.count)
        }
        return storage
    }

    /// The storage's shape. Read through a pointer: the `header` property is a class's stored
    /// property, and each access to it was checked for exclusivity at run time. Only the shape's
    /// field is read: a row cache writes the others under its lock while objects read cells.
    var shape: SlotShape {
        @inline(__always) get { withUnsafeMutablePointerToHeader { $0.pointee.shape } }
    }

    /// The storage's shape, not retained, for the cell arithmetic every read and write does.
    ///
    /// `shape` loads the header's strong reference, and each load was a retain and a release: a
    /// dozen atomic operations for one decoded row. The
    /// header holds the shape in a `let` for the storage's whole life, so a storage being used
    /// keeps its shape alive without them. `shape` is the header's first field, at offset 0.
    @inline(__always)
    private func withShape<Result>(_ body: (SlotShape) -> Result) -> Result {
        withUnsafeMutablePointerToHeader { header in
            UnsafeRawPointer(header).load(as: Unmanaged<SlotShape>.self)._withUnsafeGuaranteedRef(body)
        }
    }

    /// The number of cells.
    var count: Int {
        @inline(__always) get { withShape { $0.count } }
    }

    /// Whether `slot`'s cell holds 16 bytes.
    @inline(__always)
    func isWide(_ slot: Int) -> Bool { withShape { $0.isWide(slot) } }

    @inline(__always)
    private func cell(_ slot: Int) -> UnsafeMutableRawPointer {
        let offset = withShape { $0.offset(slot) }
        return withUnsafeMutablePointerToElements { UnsafeMutableRawPointer($0) + offset }
    }

    /// The tag bytes, after the cells; read and written as raw bytes (the words are bound to
    /// `UInt64`).
    @inline(__always)
    private var tags: UnsafeMutableRawPointer {
        let offset = withShape { $0.offset($0.count) }
        return withUnsafeMutablePointerToElements { UnsafeMutableRawPointer($0) + offset }
    }

    @inline(__always)
    func tag(at slot: Int) -> SlotTag {
        precondition(slot >= 0 && slot < count, "SlotValues: slot \(slot) out of \(count)")
        return SlotTag(rawValue: tags.load(fromByteOffset: slot, as: UInt8.self)) ?? .empty
    }

    @inline(__always)
    private func setTag(_ tag: SlotTag, at slot: Int) {
        tags.storeBytes(of: tag.rawValue, toByteOffset: slot, as: UInt8.self)
    }

    func value(at slot: Int) -> Any? {
        let cell = cell(slot)
        switch tag(at: slot) {
        case .empty: return nil
        case .int: return cell.load(as: Int.self)
        case .int64: return cell.load(as: Int64.self)
        case .int32: return cell.load(as: Int32.self)
        case .int16: return cell.load(as: Int16.self)
        case .int8: return cell.load(as: Int8.self)
        case .double: return cell.load(as: Double.self)
        case .float: return cell.load(as: Float.self)
        case .bool: return cell.load(as: Bool.self)
        case .date: return cell.load(as: Date.self)
        case .uuid: return cell.load(as: UUID.self)
        case .string: return cell.assumingMemoryBound(to: String.self).pointee
        case .data: return cell.assumingMemoryBound(to: Data.self).pointee
        case .url: return cell.assumingMemoryBound(to: URL.self).pointee
        case .reference: return cell.assumingMemoryBound(to: AnyObject.self).pointee
        case .boxed: return cell.assumingMemoryBound(to: SlotBox.self).pointee.value
        }
    }

    func scalar(at slot: Int) -> SlotScalar {
        let cell = cell(slot)
        switch tag(at: slot) {
        case .empty: return .none
        case .int: return .int(cell.load(as: Int.self))
        // The widths a model class's setter stores (`Int16`…) read as the `Int` they equal (an
        // `Int64` an `Int` cannot hold, on a 32-bit platform, is left to the general path).
        case .int64: return Int(exactly: cell.load(as: Int64.self)).map(SlotScalar.int) ?? .other
        case .int32: return .int(Int(cell.load(as: Int32.self)))
        case .int16: return .int(Int(cell.load(as: Int16.self)))
        case .int8: return .int(Int(cell.load(as: Int8.self)))
        case .double: return .double(cell.load(as: Double.self))
        case .bool: return .bool(cell.load(as: Bool.self))
        case .date: return .date(cell.load(as: Date.self))
        case .string: return .string(cell.assumingMemoryBound(to: String.self).pointee)
        default: return .other
        }
    }

    func number(at slot: Int) -> NSNumber? {
        let cell = cell(slot)
        switch tag(at: slot) {
        case .int: return SmallNumbers.number(cell.load(as: Int.self))
        case .double: return NSNumber(value: cell.load(as: Double.self))
        case .int64: return SmallNumbers.number(cell.load(as: Int64.self))
        case .bool: return SmallNumbers.number(cell.load(as: Bool.self))
        case .int32: return SmallNumbers.number(cell.load(as: Int32.self))
        case .int16: return SmallNumbers.number(cell.load(as: Int16.self))
        case .float: return NSNumber(value: cell.load(as: Float.self))
        default: return nil
        }
    }

    @inline(__always)
    func reference(at slot: Int) -> AnyObject? {
        guard tag(at: slot) == .reference else { return nil }
        return cell(slot).assumingMemoryBound(to: AnyObject.self).pointee
    }

    /// Stores `value` in an uninitialized cell.
    func initialize(_ slot: Int, with value: Any?) {
        let cell = cell(slot)
        let tag = Self.store(value, in: cell, wide: isWide(slot))
        setTag(tag, at: slot)
    }

    /// Stores `value` of `tag` in `slot`'s cell, boxed when it does not fit the cell, releasing
    /// what the cell held first (nothing, in the new storage a ``SlotFiller`` fills). The caller
    /// holds the storage alone: ``SlotValues`` copies a shared one first.
    @inline(__always)
    func fill<Value>(_ slot: Int, with value: consuming Value, _ tag: SlotTag) {
        if self.tag(at: slot) != .empty { destroy(slot) }
        let cell = cell(slot)
        if MemoryLayout<Value>.size > 8, !isWide(slot) {
            cell.initializeMemory(as: SlotBox.self, to: SlotBox(value))
            setTag(.boxed, at: slot)
        } else {
            cell.initializeMemory(as: Value.self, to: value)
            setTag(tag, at: slot)
        }
    }

    /// Stores any `value` in a cell of a storage no one else holds yet, as ``initialize(_:with:)``.
    func fill(_ slot: Int, with value: Any?) {
        if tag(at: slot) != .empty { destroy(slot) }
        initialize(slot, with: value)
    }

    /// Releases what the cell holds and stores `value`.
    func replace(_ slot: Int, with value: Any?) {
        destroy(slot)
        initialize(slot, with: value)
    }

    /// Initializes `cell` with `value`, unboxed when its type has a tag (and, for a 16-byte type,
    /// the cell is `wide`), and returns the tag. Types are compared exactly, so a value reads back
    /// with the type it was given.
    private static func store(_ value: Any?, in cell: UnsafeMutableRawPointer, wide: Bool) -> SlotTag {
        guard let value else { return .empty }
        let type = Swift.type(of: value)
        if !wide, type == String.self || type == Data.self || type == UUID.self || type == URL.self {
            cell.initializeMemory(as: SlotBox.self, to: SlotBox(value))
            return .boxed
        }
        if type == String.self, let string = value as? String {
            cell.initializeMemory(as: String.self, to: string)
            return .string
        }
        if type == Int.self, let integer = value as? Int {
            cell.initializeMemory(as: Int.self, to: integer)
            return .int
        }
        if type == Double.self, let double = value as? Double {
            cell.initializeMemory(as: Double.self, to: double)
            return .double
        }
        if type == Bool.self, let bool = value as? Bool {
            cell.initializeMemory(as: Bool.self, to: bool)
            return .bool
        }
        if type == Date.self, let date = value as? Date {
            cell.initializeMemory(as: Date.self, to: date)
            return .date
        }
        if type == Int64.self, let integer = value as? Int64 {
            cell.initializeMemory(as: Int64.self, to: integer)
            return .int64
        }
        if type == Int16.self, let integer = value as? Int16 {
            cell.initializeMemory(as: Int16.self, to: integer)
            return .int16
        }
        if type == Int32.self, let integer = value as? Int32 {
            cell.initializeMemory(as: Int32.self, to: integer)
            return .int32
        }
        if type == Int8.self, let integer = value as? Int8 {
            cell.initializeMemory(as: Int8.self, to: integer)
            return .int8
        }
        if type == Float.self, let float = value as? Float {
            cell.initializeMemory(as: Float.self, to: float)
            return .float
        }
        if type == Data.self, let data = value as? Data {
            cell.initializeMemory(as: Data.self, to: data)
            return .data
        }
        if type == UUID.self, let uuid = value as? UUID {
            cell.initializeMemory(as: UUID.self, to: uuid)
            return .uuid
        }
        if type == URL.self, let url = value as? URL {
            cell.initializeMemory(as: URL.self, to: url)
            return .url
        }
        if type is AnyClass {
            cell.initializeMemory(as: AnyObject.self, to: value as AnyObject)
            return .reference
        }
        cell.initializeMemory(as: SlotBox.self, to: SlotBox(value))
        return .boxed
    }

    /// Releases what the cell holds; its tag still names it until overwritten.
    private func destroy(_ slot: Int) {
        let tag = tag(at: slot)
        guard !tag.isTrivial else { return }
        let cell = cell(slot)
        switch tag {
        case .string: cell.assumingMemoryBound(to: String.self).deinitialize(count: 1)
        case .data: cell.assumingMemoryBound(to: Data.self).deinitialize(count: 1)
        case .url: cell.assumingMemoryBound(to: URL.self).deinitialize(count: 1)
        case .reference: cell.assumingMemoryBound(to: AnyObject.self).deinitialize(count: 1)
        case .boxed: cell.assumingMemoryBound(to: SlotBox.self).deinitialize(count: 1)
        default: break
        }
    }

    /// A storage holding copies of this one's values.
    func copy() -> SlotStorage {
        let copy = SlotStorage.make(shape: shape)
        for slot in 0..<count {
            let tag = tag(at: slot)
            let from = cell(slot)
            let to = copy.cell(slot)
            switch tag {
            case .string: to.initializeMemory(as: String.self, to: from.assumingMemoryBound(to: String.self).pointee)
            case .data: to.initializeMemory(as: Data.self, to: from.assumingMemoryBound(to: Data.self).pointee)
            case .url: to.initializeMemory(as: URL.self, to: from.assumingMemoryBound(to: URL.self).pointee)
            case .reference:
                to.initializeMemory(as: AnyObject.self, to: from.assumingMemoryBound(to: AnyObject.self).pointee)
            case .boxed:
                to.initializeMemory(as: SlotBox.self, to: from.assumingMemoryBound(to: SlotBox.self).pointee)
            default: to.copyMemory(from: from, byteCount: isWide(slot) ? Self.cellSize : 8)
            }
            copy.setTag(tag, at: slot)
        }
        return copy
    }

    deinit {
        for slot in 0..<count { destroy(slot) }
    }
}
