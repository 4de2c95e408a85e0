/// A store class in an `NSValue`, as ``NSPersistentStoreCoordinator/registeredStoreTypes`` hands
/// them out. Foundation on Linux cannot wrap an object in an `NSValue`
/// (`NSValue(nonretainedObject:)` is missing), so the class is kept in a subclass.
final class StoreClassValue: NSValue, @unchecked Sendable {
    /// The Objective-C type encoding of a class, `#`.
    nonisolated(unsafe) private static let classEncoding: UnsafePointer<CChar> = UnsafePointer(strdup("#")!)

    private(set) var storeClass: AnyClass = NSPersistentStore.self

    convenience init(_ storeClass: AnyClass) {
        var none = 0
        self.init(bytes: &none, objCType: Self.classEncoding)
        self.storeClass = storeClass
    }

    required init(bytes value: UnsafeRawPointer, objCType type: UnsafePointer<CChar>) { super.init() }

    required init?(coder: NSCoder) { nil }

    override var objCType: UnsafePointer<CChar> { Self.classEncoding }

    override func getValue(_ value: UnsafeMutableRawPointer) {}

    override var description: String { "\(storeClass)" }

    override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? StoreClassValue else { return false }
        return other.storeClass === storeClass
    }

    override var hash: Int { ObjectIdentifier(storeClass).hashValue }
}

extension NSValue {
    /// The object (here: the store class) the value wraps, as Apple's `nonretainedObjectValue`;
    /// `nil` for values that wrap no object.
    public var nonretainedObjectValue: Any? { (self as? StoreClassValue)?.storeClass }
}
