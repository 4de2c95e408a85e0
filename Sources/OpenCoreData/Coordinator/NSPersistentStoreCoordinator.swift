/// Connects contexts to persistent stores: it owns the model, routes requests to the stores that
/// hold each entity, and keeps the row cache of snapshots every context shares.
///
/// A coordinator makes its model immutable: editing the model afterwards traps, as Apple raises.
/// The coordinator is thread-safe.
///
/// ```swift
/// let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
/// try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
/// ```
open class NSPersistentStoreCoordinator: NSObject, @unchecked Sendable {
    /// The coordinator's model.
    public let managedObjectModel: NSManagedObjectModel
    /// A name for debugging.
    open var name: String?

    private var stores: [NSPersistentStore] = []
    /// Guards `stores` alone, so reading the list never waits for a save.
    private let storesLock = NSLock()
    /// Serializes writes — saves, permanent IDs, adding and removing stores — and the reads of
    /// stores that cannot read concurrently (``CoordinatedStore/readsConcurrently``).
    let requestLock = NSRecursiveLock()
    private let queue = DispatchQueue(label: "OpenCoreData.NSPersistentStoreCoordinator")
    let rowCache = RowCache()

    /// Creates a coordinator for `model`, which becomes immutable.
    public required init(managedObjectModel model: NSManagedObjectModel) {
        managedObjectModel = model
        model.isEditable = false
        super.init()
        ManagedObjectClasses.noteLive(model)
    }

    /// The stores added to the coordinator, in the order they were added.
    open var persistentStores: [NSPersistentStore] {
        storesLock.lock()
        defer { storesLock.unlock() }
        return stores
    }

    // MARK: Store types

    static let registry = StoreTypeRegistry()

    /// Registers the class that opens stores of `storeType`. Pass `nil` to unregister.
    ///
    /// ```swift
    /// NSPersistentStoreCoordinator.registerStoreClass(MyStore.self, forStoreType: "MyStore")
    /// ```
    open class func registerStoreClass(_ storeClass: AnyClass?, forStoreType storeType: String) {
        registry.register(storeClass as? NSPersistentStore.Type, for: storeType)
    }

    /// The typed spelling of ``registerStoreClass(_:forStoreType:)``.
    open class func registerStoreClass(_ storeClass: AnyClass?, type storeType: NSPersistentStore.StoreType) {
        registerStoreClass(storeClass, forStoreType: storeType.rawValue)
    }

    /// The registered store types, each with its class wrapped in an `NSValue` (read it back with
    /// `nonretainedObjectValue`), as Apple's property returns them.
    open class var registeredStoreTypes: [String: NSValue] {
        registry.all.mapValues { StoreClassValue($0) }
    }

    // MARK: Adding and removing stores

    /// Adds a store of `storeType` at `storeURL` holding the entities of `configuration`.
    ///
    /// - Throws: `NSPersistentStoreInvalidTypeError` (134000) for an unknown type; the store's
    ///   own error when it cannot be opened.
    @discardableResult
    open func addPersistentStore(
        ofType storeType: String, configurationName configuration: String?, at storeURL: URL?,
        options: [AnyHashable: Any]? = nil
    ) throws -> NSPersistentStore {
        guard let storeClass = Self.registry.storeClass(for: storeType) else {
            throw CoreDataError.make(
                NSPersistentStoreInvalidTypeError, "Unknown store type \(storeType).", [NSStoreTypeKey: storeType])
        }
        if let configuration, configuration != "PF_DEFAULT_CONFIGURATION_NAME", configuration != "Default",
            managedObjectModel.entities(forConfigurationName: configuration) == nil
        {
            throw CoreDataError.make(
                NSPersistentStoreIncompatibleSchemaError,
                "The model has no configuration named \(configuration).")
        }
        let url = storeURL ?? URL(string: "memory://\(UUID().uuidString)")!
        let store = storeClass.init(
            persistentStoreCoordinator: self, configurationName: configuration, at: url, options: options)
        try performAndWait {
            try store.loadMetadata()
            if store is NSIncrementalStore {
                guard store.metadata?[NSStoreTypeKey] != nil, store.metadata?[NSStoreUUIDKey] is String else {
                    throw CoreDataError.make(
                        NSPersistentStoreOpenError,
                        "An incremental store's loadMetadata() must set NSStoreTypeKey and NSStoreUUIDKey.",
                        [NSAffectedStoresErrorKey: [store]])
                }
            }
            storesLock.lock()
            stores.append(store)
            storesLock.unlock()
            store.didAdd(to: self)
        }
        postStoresDidChange(added: [store])
        return store
    }

    /// Adds the store a description describes, then calls `block` with the description and the
    /// error, if any.
    open func addPersistentStore(
        with storeDescription: NSPersistentStoreDescription,
        completionHandler block: @escaping (NSPersistentStoreDescription, (any Error)?) -> Void
    ) {
        do {
            try addPersistentStore(
                ofType: storeDescription.type, configurationName: storeDescription.configuration,
                at: storeDescription.url, options: storeDescription.options)
            block(storeDescription, nil)
        } catch {
            block(storeDescription, error)
        }
    }

    /// Removes `store`; its objects' IDs no longer resolve. Posts
    /// `NSPersistentStoreCoordinatorWillRemoveStore` (object: the store) before and
    /// `NSPersistentStoreCoordinatorStoresDidChange` (``NSRemovedPersistentStoresKey``) after.
    ///
    /// - Throws: `NSPersistentStoreOperationError` (134070) when `store` is not in the coordinator.
    open func remove(_ store: NSPersistentStore) throws {
        guard persistentStores.contains(where: { $0 === store }) else {
            throw CoreDataError.make(
                NSPersistentStoreOperationError, "The store is not in this coordinator.",
                [NSAffectedStoresErrorKey: [store]])
        }
        NotificationCenter.default.post(name: Self.willRemoveStoreNotification, object: store)
        try performAndWait {
            storesLock.lock()
            let index = stores.firstIndex(where: { $0 === store })
            if let index { stores.remove(at: index) }
            storesLock.unlock()
            guard index != nil else {
                throw CoreDataError.make(
                    NSPersistentStoreOperationError, "The store is not in this coordinator.",
                    [NSAffectedStoresErrorKey: [store]])
            }
            store.willRemove(from: self)
            rowCache.removeAll { $0.persistentStore === store }
        }
        postStoresDidChange(removed: [store])
    }

    /// The store at `url`, if the coordinator has one.
    open func persistentStore(for url: URL) -> NSPersistentStore? {
        persistentStores.first { $0.url?.standardizedFileURL == url.standardizedFileURL }
    }

    /// The location of `store`.
    open func url(for store: NSPersistentStore) -> URL {
        store.url ?? URL(string: "memory://")!
    }

    // MARK: Metadata

    /// The metadata of `store`.
    open func metadata(for store: NSPersistentStore) -> [String: Any] {
        store.metadata ?? [:]
    }

    /// Replaces the metadata of `store`; it is written with the store's next save.
    open func setMetadata(_ metadata: [String: Any]?, for store: NSPersistentStore) {
        var merged = metadata ?? [:]
        // The type and UUID identify the store; Apple keeps them whatever the caller passes.
        merged[NSStoreTypeKey] = store.metadata?[NSStoreTypeKey] ?? store.type
        merged[NSStoreUUIDKey] = store.metadata?[NSStoreUUIDKey] ?? store.identifier
        store.metadata = merged
    }

    /// The metadata of the store of `storeType` at `url`, without adding the store.
    open class func metadataForPersistentStore(
        ofType storeType: String, at url: URL, options: [AnyHashable: Any]? = nil
    ) throws -> [String: Any] {
        guard let storeClass = registry.storeClass(for: storeType) else {
            throw CoreDataError.make(NSPersistentStoreInvalidTypeError, "Unknown store type \(storeType).")
        }
        return try storeClass.metadataForPersistentStore(with: url)
    }

    /// Writes `metadata` to the store of `storeType` at `url` without adding the store to a
    /// coordinator. The store's type and UUID are kept when `metadata` leaves them out.
    ///
    /// - Throws: `NSPersistentStoreInvalidTypeError` (134000) for an unknown type; the store
    ///   class's error when the file is not such a store or cannot be written.
    open class func setMetadata(
        _ metadata: [String: Any]?, forPersistentStoreOfType storeType: String, at url: URL,
        options: [AnyHashable: Any]? = nil
    ) throws {
        guard let storeClass = registry.storeClass(for: storeType) else {
            throw CoreDataError.make(NSPersistentStoreInvalidTypeError, "Unknown store type \(storeType).")
        }
        try storeClass.setMetadata(metadata, forPersistentStoreWith: url)
    }

    /// The typed spelling of ``setMetadata(_:forPersistentStoreOfType:at:options:)``.
    ///
    /// - Throws: as ``setMetadata(_:forPersistentStoreOfType:at:options:)``.
    open class func setMetadata(
        _ metadata: [String: Any], type storeType: NSPersistentStore.StoreType, at url: URL,
        options: [AnyHashable: Any]? = nil
    ) throws {
        try setMetadata(metadata, forPersistentStoreOfType: storeType.rawValue, at: url, options: options)
    }

    /// The typed spelling of ``metadataForPersistentStore(ofType:at:options:)``.
    ///
    /// - Throws: `NSPersistentStoreInvalidTypeError` (134000) for an unknown type; the store
    ///   class's error when the file is not such a store.
    open class func metadataForPersistentStore(
        type storeType: NSPersistentStore.StoreType, at url: URL, options: [AnyHashable: Any]? = nil
    ) throws -> [String: Any] {
        try metadataForPersistentStore(ofType: storeType.rawValue, at: url, options: options)
    }

    // MARK: Object IDs

    /// The object ID a URI from ``NSManagedObjectID/uriRepresentation()`` names, or `nil` when no
    /// store of this coordinator matches.
    open func managedObjectID(forURIRepresentation url: URL) -> NSManagedObjectID? {
        guard url.scheme == "x-coredata" else { return nil }
        let parts = url.path.split(separator: "/").map(String.init)
        guard parts.count == 2, let entity = managedObjectModel.entitiesByName[parts[0]],
            let key = NSManagedObjectID.key(fromURIComponent: parts[1]), key.isPermanent,
            let host = url.host, !host.isEmpty,
            let store = persistentStores.first(where: { $0.identifier == host })
        else { return nil }
        return NSManagedObjectID(entity: entity, key: key, store: store)
    }

    // MARK: Running blocks

    /// Runs `block` asynchronously on the coordinator's queue.
    open func perform(_ block: @escaping () -> Void) {
        let work = UncheckedSendable(block)
        queue.async { [self] in
            requestLock.lock()
            defer { requestLock.unlock() }
            work.value()
        }
    }

    /// Runs `block` synchronously with the coordinator locked.
    open func performAndWait<T>(_ block: () throws -> T) rethrows -> T {
        requestLock.lock()
        defer { requestLock.unlock() }
        return try block()
    }
}

/// The store classes registered by type name, with the built-in types.
///
/// The SQLite store lives in its own module, which depends on this one, so this module cannot
/// name its class: the registry finds it by class name (`NSClassFromString`) the first time any
/// type is asked for or registered. The `OpenCoreData` and `CoreData` products link that module.
final class StoreTypeRegistry: @unchecked Sendable {
    /// Built-in store types whose classes live in other modules of this package. The PostgreSQL
    /// store's (type `"PostgreSQL"`, `NSPostgreSQLStoreType` in its module) is found when a program
    /// links the `OpenCoreDataPostgres` product.
    static let builtInClassNames = [
        NSSQLiteStoreType: "OpenCoreDataSQLite.SQLiteStore", "PostgreSQL": "OpenCoreDataPostgres.PostgreSQLStore",
    ]

    private let lock = NSLock()
    private var classes: [String: NSPersistentStore.Type] = [
        NSInMemoryStoreType: InMemoryStore.self, NSXMLStoreType: XMLStore.self, NSBinaryStoreType: BinaryStore.self,
    ]
    private var resolvedBuiltIns = false

    /// Adds the built-in classes of other modules, once. Call with the lock held.
    private func resolveBuiltIns() {
        guard !resolvedBuiltIns else { return }
        resolvedBuiltIns = true
        for (type, name) in Self.builtInClassNames where classes[type] == nil {
            classes[type] = NSClassFromString(name) as? NSPersistentStore.Type
        }
    }

    func register(_ storeClass: NSPersistentStore.Type?, for type: String) {
        lock.lock()
        defer { lock.unlock() }
        resolveBuiltIns()
        classes[type] = storeClass
    }

    func storeClass(for type: String) -> NSPersistentStore.Type? {
        lock.lock()
        defer { lock.unlock() }
        resolveBuiltIns()
        return classes[type]
    }

    var all: [String: NSPersistentStore.Type] {
        lock.lock()
        defer { lock.unlock() }
        resolveBuiltIns()
        return classes
    }
}

/// Carries a value the compiler cannot prove `Sendable` across a queue hop the caller has made safe.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
