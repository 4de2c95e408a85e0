/// How to add one persistent store: its type, location, configuration and options.
///
/// ```swift
/// let description = NSPersistentStoreDescription(url: storeURL)
/// description.type = NSSQLiteStoreType
/// description.setOption(true as NSNumber, forKey: NSReadOnlyPersistentStoreOption)
/// container.persistentStoreDescriptions = [description]
/// ```
open class NSPersistentStoreDescription: NSObject, NSCopying, @unchecked Sendable {
    /// The store type; `NSSQLiteStoreType` by default.
    open var type: String = NSSQLiteStoreType
    /// The model configuration whose entities the store holds; `nil` for all.
    open var configuration: String?
    /// The store's location.
    open var url: URL?
    /// The options passed when the store is added.
    open private(set) var options: [String: NSObject] = [:]
    /// Whether the store is opened read-only.
    open var isReadOnly: Bool {
        get { (options[NSReadOnlyPersistentStoreOption] as? NSNumber)?.boolValue ?? false }
        set { options[NSReadOnlyPersistentStoreOption] = NSNumber(value: newValue) }
    }
    /// Seconds to wait for a lock on the store.
    open var timeout: TimeInterval {
        get { (options[NSPersistentStoreTimeoutOption] as? NSNumber)?.doubleValue ?? 240 }
        set { options[NSPersistentStoreTimeoutOption] = NSNumber(value: newValue) }
    }
    /// Whether `loadPersistentStores` adds the store in the background.
    open var shouldAddStoreAsynchronously = false
    /// Whether the store is migrated to the model automatically.
    open var shouldMigrateStoreAutomatically: Bool {
        get { (options[NSMigratePersistentStoresAutomaticallyOption] as? NSNumber)?.boolValue ?? true }
        set { options[NSMigratePersistentStoresAutomaticallyOption] = NSNumber(value: newValue) }
    }
    /// Whether a mapping model is inferred for automatic migration.
    open var shouldInferMappingModelAutomatically: Bool {
        get { (options[NSInferMappingModelAutomaticallyOption] as? NSNumber)?.boolValue ?? true }
        set { options[NSInferMappingModelAutomaticallyOption] = NSNumber(value: newValue) }
    }

    /// Creates a description with no location.
    override public init() {
        super.init()
        shouldMigrateStoreAutomatically = true
        shouldInferMappingModelAutomatically = true
    }

    /// Creates a description of the store at `url`.
    public convenience init(url: URL) {
        self.init()
        self.url = url
    }

    /// Sets an option; `nil` removes it.
    open func setOption(_ option: NSObject?, forKey key: String) {
        options[key] = option
    }

    /// The SQLite pragmas to set when the store opens.
    open var sqlitePragmas: [String: NSObject] {
        (options[NSSQLitePragmasOption] as? NSDictionary).map { dictionary in
            var pragmas: [String: NSObject] = [:]
            for (key, value) in dictionary {
                if let key = key as? String, let value = value as? NSObject { pragmas[key] = value }
            }
            return pragmas
        } ?? [:]
    }

    /// Sets one SQLite pragma; `nil` removes it.
    open func setValue(_ value: NSObject?, forPragmaNamed name: String) {
        var pragmas = sqlitePragmas
        pragmas[name] = value
        options[NSSQLitePragmasOption] = NSDictionary(dictionary: pragmas)
    }

    /// Returns a copy of the description.
    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = NSPersistentStoreDescription()
        copy.type = type
        copy.configuration = configuration
        copy.url = url
        copy.options = options
        copy.shouldAddStoreAsynchronously = shouldAddStoreAsynchronously
        return copy
    }

    override open var description: String {
        "<NSPersistentStoreDescription> (type: \(type), url: \(url?.absoluteString ?? "nil"))"
    }
}
