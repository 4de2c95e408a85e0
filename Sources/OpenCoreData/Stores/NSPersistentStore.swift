/// The SQLite store type.
public let NSSQLiteStoreType = "SQLite"
/// The in-memory store type.
public let NSInMemoryStoreType = "InMemory"
/// The binary (atomic) store type.
public let NSBinaryStoreType = "Binary"
/// The XML (atomic) store type.
public let NSXMLStoreType = "XML"

/// The metadata key of the store's type.
public let NSStoreTypeKey = "NSStoreType"
/// The metadata key of the store's UUID.
public let NSStoreUUIDKey = "NSStoreUUID"
/// The metadata key of the version hashes of the model that wrote the store.
public let NSStoreModelVersionHashesKey = "NSStoreModelVersionHashes"
/// The metadata key of the version identifiers of the model that wrote the store.
public let NSStoreModelVersionIdentifiersKey = "NSStoreModelVersionIdentifiers"
/// The metadata key of the version of Core Data that wrote the store.
public let NSPersistenceFrameworkVersionKey = "NSPersistenceFrameworkVersion"

/// Option: open the store read-only.
public let NSReadOnlyPersistentStoreOption = "NSReadOnlyPersistentStoreOption"
/// Option: seconds to wait for a lock on the store.
public let NSPersistentStoreTimeoutOption = "NSPersistentStoreTimeoutOption"
/// Option: SQLite pragmas to set, keyed by pragma name.
public let NSSQLitePragmasOption = "NSSQLitePragmasOption"
/// Option: rebuild the SQLite file with SQLite's `VACUUM` when the store is added, releasing the
/// pages deleted rows left (ignored by other store types).
public let NSSQLiteManualVacuumOption = "NSSQLiteManualVacuumOption"
/// Option: run SQLite's `ANALYZE` when the store is added, refreshing the query planner's
/// statistics (ignored by other store types).
public let NSSQLiteAnalyzeOption = "NSSQLiteAnalyzeOption"
/// Option: migrate the store to the model automatically.
public let NSMigratePersistentStoresAutomaticallyOption = "NSMigratePersistentStoresAutomaticallyOption"
/// Option: infer a mapping model when migrating automatically.
public let NSInferMappingModelAutomaticallyOption = "NSInferMappingModelAutomaticallyOption"
/// Option: open the store even when its version hashes do not match the model.
public let NSIgnorePersistentStoreVersioningOption = "NSIgnorePersistentStoreVersioningOption"
/// Option: record persistent history.
public let NSPersistentHistoryTrackingKey = "NSPersistentHistoryTrackingKey"
/// Option (an addition of this library): with persistent history, also record the values changed
/// attributes had before each change — an update's changed attributes, a delete's every
/// attribute — read back as ``NSPersistentHistoryChange/oldValues``, so an audit log or a sync
/// needs no snapshot of its own. Costs one read of each updated or deleted row per save.
public let PersistentHistoryOldValuesKey = "OpenCoreDataPersistentHistoryOldValues"
/// Option: post a notification when another coordinator changes the store.
public let NSPersistentStoreRemoteChangeNotificationPostOptionKey =
    "NSPersistentStoreRemoteChangeNotificationOptionKey"

/// A store of persistent objects, the base of every store type.
///
/// Stores are created by a coordinator (``NSPersistentStoreCoordinator/addPersistentStore(ofType:configurationName:at:options:)``)
/// from the class registered for their type.
///
/// > Note: Differs from Apple Core Data: the initializer is `required`, so the coordinator can create
/// > a registered store class without the Objective-C runtime. A subclass that overrides it writes
/// > `required init(persistentStoreCoordinator:configurationName:at:options:)`.
open class NSPersistentStore: NSObject {
    private weak var coordinator: NSPersistentStoreCoordinator?
    private let configuration: String?
    private var storeURL: URL?
    private var storeOptions: [AnyHashable: Any]?
    private var storeIdentifier: String? {
        didSet { forgetObjectIDSpace() }
    }
    private var storeMetadata: [String: Any]? {
        didSet { forgetObjectIDSpace() }
    }
    /// The space of the IDs made for the current identifier (``objectIDSpace``), made on first use
    /// and forgotten when the identifier or the metadata is set. Stores read rows on several
    /// threads at once, so it is kept under a lock.
    private var idSpace: ObjectIDSpace?
    private let idSpaceLock = NSLock()
    /// Grows by one whenever `metadata` is set, so a store writes its metadata only after a change.
    package private(set) var metadataRevision = 0
    /// Whether metadata set since the last save waits to be written; a save writes it even when
    /// no object changed. A row store that writes metadata at save says so
    /// (``RowStore/metadataAwaitsSave``).
    package var hasUnsavedMetadata: Bool {
        (self as? any RowStore)?.metadataAwaitsSave ?? (self as? NSAtomicStore)?.metadataAwaitsSave ?? false
    }
    private var readOnly: Bool

    /// Creates a store for `root`, holding the entities of `name` (every entity when `nil`).
    public required init(
        persistentStoreCoordinator root: NSPersistentStoreCoordinator?, configurationName name: String?, at url: URL,
        options: [AnyHashable: Any]? = nil
    ) {
        coordinator = root
        configuration = name
        storeURL = url
        storeOptions = options
        readOnly = (options?[NSReadOnlyPersistentStoreOption] as? Bool) ?? false
        super.init()
    }

    /// The metadata of the store at `url`. Subclasses that keep metadata in files override this.
    open class func metadataForPersistentStore(with url: URL) throws -> [String: Any] {
        throw CoreDataError.make(
            NSPersistentStoreInvalidTypeError, "The store type cannot read metadata without a store.",
            [NSURLErrorKey: url])
    }

    /// Writes metadata to the store at `url`. Subclasses that keep metadata in files override this.
    open class func setMetadata(_ metadata: [String: Any]?, forPersistentStoreWith url: URL) throws {
        throw CoreDataError.make(
            NSPersistentStoreInvalidTypeError, "The store type cannot write metadata without a store.",
            [NSURLErrorKey: url])
    }

    /// The coordinator the store belongs to.
    open var persistentStoreCoordinator: NSPersistentStoreCoordinator? { coordinator }

    /// The name of the configuration whose entities the store holds; "PF_DEFAULT_CONFIGURATION_NAME"
    /// for the default configuration.
    open var configurationName: String { configuration ?? "PF_DEFAULT_CONFIGURATION_NAME" }

    /// The options the store was added with.
    open var options: [AnyHashable: Any]? { storeOptions }

    /// The store's location.
    open var url: URL? {
        get { storeURL }
        set { storeURL = newValue }
    }

    /// The store's unique identifier, also its UUID in object-ID URIs.
    open var identifier: String! {
        get { storeIdentifier ?? (storeMetadata?[NSStoreUUIDKey] as? String) }
        set { storeIdentifier = newValue }
    }

    /// What the store's object IDs share: made once per identifier, so the IDs a store makes for
    /// many rows carry one reference instead of a weak store reference and a string each. A
    /// subclass that overrides ``identifier`` has its answer read when the first ID is made, and
    /// again after the identifier or the metadata is set.
    package var objectIDSpace: ObjectIDSpace {
        idSpaceLock.lock()
        if let idSpace {
            idSpaceLock.unlock()
            return idSpace
        }
        idSpaceLock.unlock()
        let space = ObjectIDSpace(store: self, identifier: identifier)
        idSpaceLock.lock()
        defer { idSpaceLock.unlock() }
        if let idSpace { return idSpace }
        idSpace = space
        return space
    }

    private func forgetObjectIDSpace() {
        idSpaceLock.lock()
        idSpace = nil
        idSpaceLock.unlock()
    }

    /// The store's type; each store class answers its own (`NSSQLiteStoreType`, …).
    open var type: String { "" }

    /// Whether the store refuses saves.
    open var isReadOnly: Bool {
        get { readOnly }
        set { readOnly = newValue }
    }

    /// The store's metadata: its type, UUID, model version hashes and any app-defined keys.
    open var metadata: [String: Any]! {
        get { storeMetadata }
        set {
            storeMetadata = newValue
            metadataRevision &+= 1
        }
    }

    /// Reads the store's metadata; called when the store is added to a coordinator.
    open func loadMetadata() throws {}

    /// Called after the store was added to `coordinator`.
    open func didAdd(to coordinator: NSPersistentStoreCoordinator) {}

    /// Called before the store is removed from `coordinator`.
    open func willRemove(from coordinator: NSPersistentStoreCoordinator?) {}

    /// The entities the store holds: those of its configuration.
    var entities: [NSEntityDescription] {
        coordinator?.managedObjectModel.entities(forConfigurationName: configuration) ?? []
    }

    /// Whether the store can hold objects of `entity`.
    func holds(_ entity: NSEntityDescription) -> Bool {
        guard let configuration, configuration != "PF_DEFAULT_CONFIGURATION_NAME", configuration != "Default" else {
            return true
        }
        return entities.contains { $0 === entity || entity.isKindOf(entity: $0) }
    }

    override open var description: String {
        "<\(Swift.type(of: self))> (\(type)) \(url?.absoluteString ?? "nil")"
    }
}

extension NSPersistentStore {
    /// An option's Boolean value (`true`, a non-zero number, or `"YES"`/`"true"`).
    package static func flag(_ value: Any?) -> Bool {
        guard let value = DynamicValue.unwrap(value) else { return false }
        if let bool = value as? Bool { return bool }
        if let number = DynamicValue.number(value) { return number.doubleValue != 0 }
        if let text = value as? String { return ["yes", "true", "1"].contains(text.lowercased()) }
        return false
    }

    /// Whether the store was added with `NSPersistentHistoryTrackingKey` set (to `true`, or to a
    /// dictionary of options, as Apple also accepts).
    package var historyTrackingRequested: Bool {
        let value = options?[NSPersistentHistoryTrackingKey]
        return Self.flag(value) || value is [AnyHashable: Any] || value is NSDictionary
    }

    /// Whether the store records old values in its history (``PersistentHistoryOldValuesKey``).
    package var oldValuesRequested: Bool {
        historyTrackingRequested && Self.flag(options?[PersistentHistoryOldValuesKey])
    }

    /// Whether the store was added with `NSMigratePersistentStoresAutomaticallyOption` set.
    package var automaticMigrationRequested: Bool { Self.flag(options?[NSMigratePersistentStoresAutomaticallyOption]) }

    /// Whether the store was added with `NSInferMappingModelAutomaticallyOption` set.
    package var inferredMappingRequested: Bool { Self.flag(options?[NSInferMappingModelAutomaticallyOption]) }
}
