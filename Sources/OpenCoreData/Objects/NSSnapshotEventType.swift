/// The kinds of event that reload an object's values, for ``NSManagedObject/awake(fromSnapshotEvents:)``.
public struct NSSnapshotEventType: OptionSet, Sendable {
    /// The raw value.
    public let rawValue: UInt
    /// Creates an event set from its raw value.
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// An undo inserted the object.
    public static let undoInsertion = NSSnapshotEventType(rawValue: 1 << 1)
    /// An undo deleted the object.
    public static let undoDeletion = NSSnapshotEventType(rawValue: 1 << 2)
    /// An undo changed the object.
    public static let undoUpdate = NSSnapshotEventType(rawValue: 1 << 3)
    /// A rollback restored the object.
    public static let rollback = NSSnapshotEventType(rawValue: 1 << 4)
    /// A refresh reloaded the object.
    public static let refresh = NSSnapshotEventType(rawValue: 1 << 5)
    /// A merge changed the object.
    public static let mergePolicy = NSSnapshotEventType(rawValue: 1 << 6)
}
