@_exported import Foundation
@_exported import Observation
import OpenCoreData

/// A class whose instances SwiftData stores: what `@Model` makes of a class.
///
/// The model's values live in its backing data: apart from a context, in the backing data itself;
/// once inserted into a ``ModelContext``, in a Core Data object of that context, which saves them
/// to the context's store in Apple's layout.
///
/// Related documentation: SwiftData, `PersistentModel`; `Model()`.
public protocol PersistentModel: AnyObject, Observable, Hashable, Identifiable {
    /// Where the model's values live.
    var persistentBackingData: any BackingData<Self> { get set }
    /// The model's persisted properties, as `@Model` lists them.
    static var schemaMetadata: [Schema.PropertyMetadata] { get }
    /// A model whose values live in `backingData` (a fetched model's are in its context).
    init(backingData: any BackingData<Self>)
    /// The key paths of each `#Unique` constraint of the class; what the macro writes.
    static var _$uniquenessConstraints: [[AnyKeyPath]] { get }
    /// The key paths of each binary `#Index` of the class; what the macro writes.
    static var _$indexes: [[AnyKeyPath]] { get }
    /// The key paths of each R-tree `#Index` of the class (`.rtree(...)`); what the macro writes.
    static var _$rTreeIndexes: [[AnyKeyPath]] { get }
}

extension PersistentModel {
    /// No `#Unique` constraints.
    public static var _$uniquenessConstraints: [[AnyKeyPath]] { [] }

    /// No `#Index`.
    public static var _$indexes: [[AnyKeyPath]] { [] }

    /// No R-tree `#Index`.
    public static var _$rTreeIndexes: [[AnyKeyPath]] { [] }

    /// The model's identifier: temporary until it is first saved, then its store's.
    public var persistentModelID: PersistentIdentifier { persistentBackingData.persistentModelID }

    /// The model's stable identity, its ``persistentModelID``.
    public var id: PersistentIdentifier { persistentModelID }

    /// The context the model was inserted into or fetched from; `nil` for a model in no context.
    public var modelContext: ModelContext? { (persistentBackingData as? any ContextBacked)?.context }

    /// Whether the model has changes its context has not saved.
    public var hasChanges: Bool { (persistentBackingData as? any ContextBacked)?.attached?.hasChanges ?? false }

    /// Whether the model was deleted from its context (and the deletion not yet saved, or saved).
    public var isDeleted: Bool { (persistentBackingData as? any ContextBacked)?.attached?.isDeleted ?? false }

    /// The Core Data object holding the model's values; `nil` while the model is in no context.
    var attachedObject: NSManagedObject? { (persistentBackingData as? any ContextBacked)?.attached }

    /// The backing data of a new model, before it joins a context: its values kept by itself.
    public static func createBackingData() -> any BackingData<Self> { DefaultBackingData<Self>() }

    /// The value of a persisted property, read from the backing data.
    public func getValue<Value>(forKey key: KeyPath<Self, Value>) -> Value {
        persistentBackingData.getValue(forKey: key)
    }

    /// Sets the value of a persisted property in the backing data.
    public func setValue<Value>(forKey key: KeyPath<Self, Value>, to newValue: Value) {
        persistentBackingData.setValue(forKey: key, to: newValue)
    }

    /// Models are the same model when they are the same instance.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs === rhs }

    /// Hashes the instance's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
