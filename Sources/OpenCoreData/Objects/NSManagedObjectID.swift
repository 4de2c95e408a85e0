import Synchronization

/// A compact, universal identifier for a managed object, valid across contexts and threads.
///
/// An object inserted in a context has a *temporary* ID until it is saved or
/// ``NSManagedObjectContext/obtainPermanentIDs(for:)`` is called; the object then gets a new,
/// permanent ID (the temporary ID object itself never changes). IDs are `Sendable`: pass them,
/// not objects, between contexts.
///
/// ```swift
/// let id = employee.objectID
/// let uri = id.uriRepresentation()   // x-coredata://<store UUID>/Employee/p42
/// ```
open class NSManagedObjectID: NSObject, NSCopying, NSFetchRequestResult, @unchecked Sendable {
    /// Temporary IDs are unique by a process-wide counter; permanent ones by the store's reference
    /// object, with integer keys (every SQLite primary key) kept unboxed for fast hashing.
    ///
    /// Two words: a reference that is not an integer is boxed (``ReferenceKey``), so the IDs a
    /// store makes for every row it reads stay small.
    package enum Key: Hashable, @unchecked Sendable {
        case temporary(UInt64)
        case integer(Int64)
        case reference(ReferenceKey)

        var isPermanent: Bool {
            if case .temporary = self { return false }
            return true
        }
    }

    /// The integer key or temporary counter (unused for other references).
    private let bits: UInt64
    /// The entity's layout, which holds the entity and its root. Entities are weakly referenced
    /// (by their properties), so each retain and release of one takes the runtime's slow path;
    /// an ID holds the layout instead, which nothing references weakly.
    package let layout: EntityLayout
    /// What kind of key `bits` is, and the ID's store (``IDValue``'s tail). Three words in all,
    /// so an ID takes a 48-byte heap block.
    private let tail: IDTail?

    /// The ID's contents as a value (``IDValue``): what the registries and the row cache file
    /// objects and rows under, held inline by each object and row so that neither keeps an ID
    /// instance of its own (ARCHITECTURE.md, "IDs as keys"). Valid while the ID lives.
    package var value: IDValue {
        @inline(__always) get { IDValue(bits: bits, layout: layout, tail: tail) }
    }

    /// The ID's key: temporary, an integer, or another reference.
    package var key: Key {
        @inline(__always) get { withExtendedLifetime(self) { value.key } }
    }

    /// What the permanent IDs of one store share: the store (weakly) and its identifier. One
    /// object per store, so an ID holds no weak reference and no string of its own, which made
    /// reading a row cost far more.
    package var space: ObjectIDSpace? {
        @inline(__always) get { withExtendedLifetime(self) { value.space } }
    }

    /// The store identifier captured at creation, so the URI stays valid after the store goes away.
    var storeIdentifier: String? { space?.identifier }

    /// The reference object as the store gave it, when `key` alone does not give it back (a
    /// store's own `Int64` keys need nothing more).
    private var originalReference: Any? {
        guard let tail, tail.kind == .extras else { return nil }
        return unsafeDowncast(tail, to: IDExtras.self).original
    }

    package convenience init(entity: NSEntityDescription, key: Key, store: NSPersistentStore?, reference: Any? = nil) {
        self.init(entity: entity, key: key, space: store?.objectIDSpace, reference: reference)
    }

    /// An ID in `space`, the form a store reading many rows uses (``NSPersistentStore/objectIDSpace``
    /// found once for all of them).
    package convenience init(entity: NSEntityDescription, key: Key, space: ObjectIDSpace?, reference: Any? = nil) {
        self.init(layout: entity.layout, key: key, space: space, reference: reference)
    }

    /// An ID for an object of `layout`'s entity.
    package init(layout: EntityLayout, key: Key, space: ObjectIDSpace?, reference: Any? = nil) {
        var original = reference
        if let reference, case .integer(let integer) = key, let given = reference as? Int64, given == integer {
            original = nil
        }
        let bits: UInt64
        switch key {
        case .integer(let integer): bits = UInt64(bitPattern: integer)
        case .temporary(let counter): bits = counter
        case .reference: bits = 0
        }
        let tail: IDTail?
        switch (key, space, original) {
        case (.integer, _, nil): tail = space
        case (.temporary, nil, nil): tail = IDTail.temporary
        default: tail = IDExtras(key: key, space: space, original: original)
        }
        self.bits = bits
        self.layout = layout
        self.tail = tail
        super.init()
    }

    /// The ID of row `key` of `layout`'s entity in `space`: what a store makes for each row it
    /// reads, without the general initializer's matching of the key and the reference.
    package init(layout: EntityLayout, integer key: Int64, space: ObjectIDSpace) {
        self.layout = layout
        bits = UInt64(bitPattern: key)
        tail = space
        super.init()
    }

    /// The ID an object or a row holds as `value` (``IDValue``), made when somebody asks for it.
    /// The value's owner must keep its layout and tail alive until this returns; the ID then
    /// holds them itself.
    package init(value: IDValue) {
        bits = value.bits
        layout = value.layout
        tail = value.tail
        super.init()
    }

    /// An ID that names no object, as the initializer Apple's class inherits from `NSObject`
    /// makes: code uses it as a placeholder. Its entity has no name and belongs to no model, and
    /// it equals only itself.
    public override convenience init() {
        self.init(value: .temporary(for: Self.noEntityLayout))
    }

    /// The entity of ``init()``'s IDs, and its layout, kept here: the layout of an entity of no
    /// model is not cached by the entity, and an ``IDValue`` does not retain its layout.
    private static let noEntity = NSEntityDescription()
    private static let noEntityLayout = noEntity.layout

    /// A new temporary ID for an object of `layout`'s entity that has not been saved.
    static func temporary(for layout: EntityLayout) -> NSManagedObjectID {
        NSManagedObjectID(value: .temporary(for: layout))
    }

    /// The entity of the object.
    open var entity: NSEntityDescription { layout.entity }

    /// The store that holds the object; `nil` for a temporary ID.
    open var persistentStore: NSPersistentStore? { space?.store }

    /// Whether the ID is temporary: the object has not been saved and has no permanent ID yet.
    open var isTemporaryID: Bool {
        if case .temporary = key { return true }
        return false
    }

    /// The store's reference object behind a permanent ID (the primary key for SQLite).
    var referenceObject: Any? {
        switch key {
        case .temporary: return nil
        case .integer(let integer): return originalReference ?? integer
        case .reference(let reference): return originalReference ?? reference.value.base
        }
    }

    /// A URI that names the object: `x-coredata://<store UUID>/<Entity>/p<key>` for a permanent ID,
    /// `x-coredata:///<Entity>/t<UUID><n>` for a temporary one (STORE-FORMAT.md, "Object IDs"; Apple's
    /// temporary URIs are a per-process UUID followed by a counter).
    ///
    /// Pass it to ``NSPersistentStoreCoordinator/managedObjectID(forURIRepresentation:)`` to get
    /// the ID back.
    open func uriRepresentation() -> URL {
        let parts = uriParts
        var components = URLComponents()
        components.scheme = "x-coredata"
        components.host = parts.host
        components.path = "/\(parts.entity)/\(parts.key)"
        return components.url ?? URL(string: "x-coredata:///")!
    }

    /// The parts of ``uriRepresentation()``: the store's identifier (none for a temporary ID), the
    /// entity's name, and the key (`p<integer>`, `t<UUID><n>`, `s<reference>`).
    private var uriParts: (host: String, entity: String, key: String) {
        let entityName = entity.name ?? ""
        switch key {
        case .temporary(let counter): return ("", entityName, "t\(TemporaryIDs.prefix)\(counter)")
        case .integer(let integer): return (storeIdentifier ?? "", entityName, "p\(integer)")
        case .reference(let reference): return (storeIdentifier ?? "", entityName, "s\(reference.value.base)")
        }
    }

    /// ``uriRepresentation()``'s absolute string. When every part is made of characters a URI
    /// takes as they are (a UUID; an entity name of letters, digits, `_`, `-`, `.`; an integer
    /// key), it is written directly: what SwiftData's identifiers hold for every model, where
    /// making the URL and reading its string back was most of the work. Anything else is written
    /// by the URL, which percent-encodes.
    package var uriString: String {
        let parts = uriParts
        guard !parts.entity.isEmpty, Self.isUnreserved(parts.host), Self.isUnreserved(parts.entity),
            Self.isUnreserved(parts.key)
        else { return uriRepresentation().absoluteString }
        return "x-coredata://" + parts.host + "/" + parts.entity + "/" + parts.key
    }

    /// Whether `text` is only characters RFC 3986 calls unreserved (taken as they are in a host
    /// and in a path).
    private static func isUnreserved(_ text: String) -> Bool {
        text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                true
            default: false
            }
        }
    }

    /// The key for a store's reference object. Integers are normalized to `Int64`, so `5` and
    /// `Int64(5)` name the same object; other references must be `Hashable`.
    static func permanentKey(for reference: Any) -> Key {
        if !(reference is String), let number = DynamicValue.number(reference), let integer = number.exactInt {
            return .integer(integer)
        }
        guard let hashable = reference as? AnyHashable else {
            preconditionFailure("newObjectID(for:referenceObject:): the reference object \(reference) is not Hashable")
        }
        return .reference(ReferenceKey(hashable))
    }

    /// Parses the last path component of an object URI back into a key.
    static func key(fromURIComponent component: String) -> Key? {
        guard let marker = component.first else { return nil }
        let rest = String(component.dropFirst())
        switch marker {
        case "t":
            guard rest.hasPrefix(TemporaryIDs.prefix) else { return nil }
            return UInt64(rest.dropFirst(TemporaryIDs.prefix.count)).map { .temporary($0) }
        case "p": return Int64(rest).map { .integer($0) }
        case "s": return .reference(ReferenceKey(AnyHashable(rest)))
        default: return nil
        }
    }

    override open func isEqual(_ object: Any?) -> Bool {
        guard let object, DynamicValue.isObject(object), let other = object as? NSManagedObjectID else { return false }
        return isSame(as: other)
    }

    /// Whether `other` names the same object: the same key in the same store, under the same
    /// root entity (``IDValue/isSame(as:)``).
    @inline(__always)
    package func isSame(as other: NSManagedObjectID) -> Bool {
        other === self || withExtendedLifetime((self, other)) { value.isSame(as: other.value) }
    }

    override open var hash: Int { cachedHash }

    /// The ID's hash (``IDValue/cachedHash``).
    @inline(__always)
    var cachedHash: Int { withExtendedLifetime(self) { value.cachedHash } }

    /// IDs are immutable; a copy is the ID itself.
    open func copy(with zone: NSZone? = nil) -> Any { self }

    override open var description: String {
        "<NSManagedObjectID> \(uriRepresentation().absoluteString)"
    }
}

/// An object ID's contents as a value: its key (an integer, a temporary counter, or a boxed
/// reference in `tail`), its entity's layout and its store. What ``IDTable``s file objects and
/// rows under, and what an object and a row of the row cache hold inline instead of an
/// ``NSManagedObjectID`` instance, which is made only when somebody asks for it (an ID
/// instance a row, kept by its object and its row, was a third of the heap blocks of every fetched
/// object, each retained and released by every pass over the objects).
///
/// Three words; equal and hashed exactly as the ``NSManagedObjectID`` made from it.
package struct IDValue: @unchecked Sendable {
    /// The integer key or temporary counter (unused for other references).
    let bits: UInt64
    /// The entity's layout, unretained: copying a value into a registry's probe, an object or a
    /// row costs no reference counting (with the references retained, each copy was two
    /// atomic increments and two decrements, more than the ID instance it replaced). Whoever
    /// keeps a value keeps its layout alive: an object holds its layout, a row cache's coordinator
    /// its model (whose entities keep their layouts for good), an ID its own fields.
    private let layoutPointer: UnsafeRawPointer
    /// What kind of key `bits` is, and the ID's store, unretained as the layout is (an object and
    /// a row keep it alive beside the value): `nil` for an integer key of no store; the store's
    /// ``ObjectIDSpace`` for an integer key of that store (every row a store reads);
    /// ``IDTail/temporary`` for a temporary ID; an ``IDExtras`` for anything else (a reference that
    /// is not an integer, a reference object kept as given).
    private let tailPointer: UnsafeRawPointer?

    init(bits: UInt64, layout: EntityLayout, tail: IDTail?) {
        self.bits = bits
        layoutPointer = UnsafeRawPointer(Unmanaged.passUnretained(layout).toOpaque())
        tailPointer = tail.map { UnsafeRawPointer(Unmanaged.passUnretained($0).toOpaque()) }
    }

    /// The value of the ID of row `key` of `layout`'s entity in `space`: what a store reading
    /// rows makes for each (``NSManagedObjectID/init(layout:integer:space:)`` without the instance).
    /// The store's reader keeps `layout` and `space` alive; the row cache's row and the object
    /// made for the row keep them from then on.
    ///
    /// The layout and the space are borrowed: an initializer takes its arguments owned unless told
    /// otherwise, so each caller retained both for the value to release them again — four atomic
    /// operations for every row a store read.
    package init(layout: borrowing EntityLayout, integer key: Int64, space: borrowing ObjectIDSpace) {
        bits = UInt64(bitPattern: key)
        layoutPointer = UnsafeRawPointer(Unmanaged.passUnretained(layout).toOpaque())
        tailPointer = UnsafeRawPointer(Unmanaged.passUnretained(space).toOpaque())
    }

    /// The entity's layout.
    package var layout: EntityLayout {
        @inline(__always) get { Unmanaged<EntityLayout>.fromOpaque(layoutPointer).takeUnretainedValue() }
    }

    /// The key's kind and the store (see `tailPointer`).
    var tail: IDTail? {
        @inline(__always) get { tailPointer.map { Unmanaged<IDTail>.fromOpaque($0).takeUnretainedValue() } }
    }

    /// The tail's kind, read without retaining it.
    private var tailKind: IDTail.Kind? {
        @inline(__always) get {
            tailPointer.map { Unmanaged<IDTail>.fromOpaque($0)._withUnsafeGuaranteedRef { $0.kind } }
        }
    }

    /// The layout's root hash, read without retaining it.
    private var rootHash: Int {
        @inline(__always) get {
            Unmanaged<EntityLayout>.fromOpaque(layoutPointer)._withUnsafeGuaranteedRef { $0.rootHash }
        }
    }

    /// Which of a context's registry tables files the ID (``ObjectTables``): its root entity's
    /// name hash for a permanent ID (IDs equal only within one root, whose sub-entities share its
    /// keys), one value for every temporary ID (equal whatever their entity).
    var keySpace: Int {
        @inline(__always) get { isTemporary ? Int.min : rootHash }
    }

    /// A new temporary ID's value for an object of `layout`'s entity that has not been saved.
    static func temporary(for layout: EntityLayout) -> IDValue {
        IDValue(bits: TemporaryIDs.next(), layout: layout, tail: IDTail.temporary)
    }

    /// The key: temporary, an integer, or another reference.
    package var key: NSManagedObjectID.Key {
        @inline(__always) get {
            switch tailKind {
            case nil, .space: return .integer(Int64(bitPattern: bits))
            case .temporary: return .temporary(bits)
            case .extras: return unsafeDowncast(tail.unsafelyUnwrapped, to: IDExtras.self).key
            }
        }
    }

    /// Whether the value's entity layout is `layout`, compared by identity with no reference
    /// counted: a fetch registering its rows asks for each.
    @inline(__always)
    func hasLayout(_ layout: EntityLayout) -> Bool {
        layoutPointer == UnsafeRawPointer(Unmanaged.passUnretained(layout).toOpaque())
    }

    /// The identity of the value's tail (its store's ID space for an integer key of a store), for
    /// telling whether two values share one without a reference counted.
    var tailIdentity: UnsafeRawPointer? {
        @inline(__always) get { tailPointer }
    }

    /// Whether the key is temporary, read without making the key.
    var isTemporary: Bool {
        @inline(__always) get {
            switch tailKind {
            case nil, .space: return false
            case .temporary: return true
            case .extras: return !unsafeDowncast(tail.unsafelyUnwrapped, to: IDExtras.self).key.isPermanent
            }
        }
    }

    /// The store's shared part of its IDs; `nil` for a temporary ID or an ID of no store.
    package var space: ObjectIDSpace? {
        @inline(__always) get {
            guard let tail else { return nil }
            switch tail.kind {
            case .space: return unsafeDowncast(tail, to: ObjectIDSpace.self)
            case .temporary: return nil
            case .extras: return unsafeDowncast(tail, to: IDExtras.self).space
            }
        }
    }

    /// Whether `other` names the same object: the same key in the same store, under the same
    /// root entity. Registries and row caches compare IDs millions of times, so the common
    /// answers come first: a different key, the same root entity instance.
    @inline(__always)
    package func isSame(as other: IDValue) -> Bool {
        if tailPointer == other.tailPointer, tailKind != .extras {
            // One store (or none) and one kind of key, held in `bits`: the common case, compared
            // without making the keys.
            guard bits == other.bits else { return false }
            if tailKind == .temporary { return true }
            return layoutPointer == other.layoutPointer || Self.sameRoot(layout, other.layout)
        }
        guard key == other.key else { return false }
        if case .temporary = key { return true }
        guard space === other.space || space?.identifier == other.space?.identifier else { return false }
        return layoutPointer == other.layoutPointer || Self.sameRoot(layout, other.layout)
    }

    /// Whether two entities share a root entity, and so a key space.
    private static func sameRoot(_ layout: EntityLayout, _ other: EntityLayout) -> Bool {
        layout.rootIdentity == other.rootIdentity || layout.rootName == other.rootName
    }

    /// The hash, from the key and, for a permanent ID, its root entity's name (equal IDs have
    /// equal keys and, when permanent, one root), computed rather than stored. Not mixed here:
    /// ``IDKey`` and ``IDTable`` mix it, and `hash` goes through `Hasher` wherever `NSObject`'s
    /// hashing is used.
    ///
    /// The root matters because every table of a store numbers its rows from 1: row 7 of
    /// `Employee` and row 7 of `Department` are different objects with the same key. Hashed by the
    /// key alone, every ID of one entity met the IDs of every other entity with the same key in
    /// a context's registry and the row cache, and each such meeting compared the two IDs in
    /// full, reading an object and an ID the processor's caches rarely held. Temporary IDs
    /// are unique by their counter alone and equal whatever their entity, so they leave it out.
    @inline(__always)
    var cachedHash: Int {
        switch tailKind {
        case nil, .space: return Int(Int64(bitPattern: bits)) ^ rootHash
        case .temporary: return Int(bitPattern: UInt(bits)) ^ Int.min
        case .extras:
            switch key {
            case .integer(let integer): return Int(integer) ^ rootHash
            case .temporary(let counter): return Int(bitPattern: UInt(counter)) ^ Int.min
            case .reference(let reference): return reference.hash ^ rootHash
            }
        }
    }
}

/// What the permanent object IDs of one store share: the store, held weakly once for all of
/// them, and the identifier their URIs carry. A store hands out one space while its identifier
/// stays the same (``NSPersistentStore/objectIDSpace``).
package final class ObjectIDSpace: IDTail, @unchecked Sendable {
    /// The store; `nil` once it has gone away.
    package private(set) weak var store: NSPersistentStore?
    /// The store's identifier when the space was made.
    package let identifier: String?

    init(store: NSPersistentStore, identifier: String?) {
        self.store = store
        self.identifier = identifier
        super.init(kind: .space)
    }
}

/// The last word of an ``NSManagedObjectID``: a store's ``ObjectIDSpace``, the one marker of
/// temporary IDs, or an ``IDExtras``; its kind says which without a cast.
package class IDTail: @unchecked Sendable {
    enum Kind: UInt8 {
        case space, temporary, extras
    }

    let kind: Kind

    /// Only the three kinds of tail in this file make one, so `kind` always names the class
    /// (``NSManagedObjectID`` downcasts by it).
    fileprivate init(kind: Kind) { self.kind = kind }

    /// The tail of every temporary ID without a store or a reference object.
    static let temporary = IDTail(kind: .temporary)
}

/// An ID's key, store and reference object as given, for the IDs whose key and store are not
/// one integer and one ``ObjectIDSpace``: other reference objects, and references given in
/// another type than the key holds (an `Int` given for an integer key, which the key holds as
/// `Int64`), which `referenceObject` gives back as given.
final class IDExtras: IDTail, @unchecked Sendable {
    let key: NSManagedObjectID.Key
    let space: ObjectIDSpace?
    let original: Any?

    init(key: NSManagedObjectID.Key, space: ObjectIDSpace?, original: Any?) {
        self.key = key
        self.space = space
        self.original = original
        super.init(kind: .extras)
    }
}

/// A store's reference object that is not an integer, as an object ID's key: boxed so keys stay
/// small, with its hash computed once.
package final class ReferenceKey: Hashable, @unchecked Sendable {
    /// The reference object.
    package let value: AnyHashable
    /// `value`'s hash.
    let hash: Int

    init(_ value: AnyHashable) {
        self.value = value
        hash = value.hashValue
    }

    package static func == (lhs: ReferenceKey, rhs: ReferenceKey) -> Bool { lhs === rhs || lhs.value == rhs.value }

    package func hash(into hasher: inout Hasher) { hasher.combine(hash) }
}

/// A dictionary key hashed by an object ID's hash (``IDKey``, ``IDValueKey``): the ID's hash (its
/// key, and for a permanent ID its root entity: ``NSManagedObjectID/cachedHash``), mixed with the
/// table's seed by a multiply–xorshift instead of SipHash. Every table keyed by ID hashes IDs on
/// each lookup and each resize (`Hasher` was a tenth of firing a batch of faults). Equal
/// keys have equal hashes, as `Hashable` requires.
package protocol IDHashedKey: Hashable {
    /// The ID's hash, unmixed.
    var idHash: Int { get }
}

extension IDHashedKey {
    @inline(__always)
    package func hash(into hasher: inout Hasher) { hasher.combine(idHash) }

    /// The hash a `Dictionary` or `Set` of the given seed buckets the key by.
    @inline(__always)
    package func _rawHashValue(seed: Int) -> Int {
        Int(Int64(bitPattern: IDKey.mix(idHash ^ seed)))
    }
}

/// An object ID as a dictionary key for the tables that look IDs up for every object they touch
/// (a save's snapshots, batch work; a context's registry and the row cache are ``IDTable``s):
/// hashed as an ``IDHashedKey`` and compared with ``NSManagedObjectID/isSame(as:)``, without the
/// `NSObject` path (`hash` and `isEqual(_:)` dispatched dynamically, the other side cast from
/// `Any?`). Equal exactly when the IDs are.
///
/// One word: the hash is computed from the ID's key when needed, not kept in the key.
package struct IDKey: IDHashedKey {
    package let id: NSManagedObjectID

    @inline(__always)
    package init(_ id: NSManagedObjectID) {
        self.id = id
    }

    @inline(__always)
    package var idHash: Int { id.cachedHash }

    /// A hash mixed so that every bit of the result depends on every bit of it (integer keys are
    /// a store's primary keys, consecutive numbers): Murmur3's finalizer. ``IDTable`` hashes with
    /// it too.
    @inline(__always)
    static func mix(_ hash: Int) -> UInt64 {
        var bits = UInt64(bitPattern: Int64(hash))
        bits ^= bits >> 33
        bits &*= 0xff51_afd7_ed55_8ccd
        bits ^= bits >> 33
        bits &*= 0xc4ce_b9fe_1a85_ec53
        bits ^= bits >> 33
        return bits
    }

    @inline(__always)
    package static func == (lhs: IDKey, rhs: IDKey) -> Bool { lhs.id.isSame(as: rhs.id) }
}

/// An ID value (``IDValue``) as a dictionary key: ``IDKey`` for tables whose entries keep their
/// IDs as values (a store's batches waiting to be read), hashed and compared as ``IDKey`` hashes
/// and compares the ID instance. The value's references are unretained: whoever files a key
/// keeps its layout and store alive while the key is in the table.
package struct IDValueKey: IDHashedKey {
    package let value: IDValue

    @inline(__always)
    package init(_ value: IDValue) {
        self.value = value
    }

    @inline(__always)
    package var idHash: Int { value.cachedHash }

    @inline(__always)
    package static func == (lhs: IDValueKey, rhs: IDValueKey) -> Bool { lhs.value.isSame(as: rhs.value) }
}

/// Temporary-ID numbering: a per-process UUID (so temporary URIs from two processes never collide)
/// and a counter, rather than a fresh UUID per object (which costs a system call each).
enum TemporaryIDs {
    static let prefix = UUID().uuidString
    // An atomic rather than `Mutex`: ThreadSanitizer does not see `Mutex`'s futex on Linux and
    // reported its own accesses as races.
    private static let counter = Atomic<UInt64>(0)

    static func next() -> UInt64 {
        counter.wrappingAdd(1, ordering: .relaxed).newValue
    }
}
