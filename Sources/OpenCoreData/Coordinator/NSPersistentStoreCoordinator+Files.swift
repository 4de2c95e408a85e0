extension NSPersistentStore {
    /// A store type by name, the typed spelling of `NSSQLiteStoreType` and friends.
    public struct StoreType: Hashable, RawRepresentable, Sendable {
        /// The type's name, as registered with `registerStoreClass(_:forStoreType:)`.
        public let rawValue: String

        /// A store type named `rawValue`.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The SQLite store, `NSSQLiteStoreType`.
        public static let sqlite = StoreType(rawValue: NSSQLiteStoreType)
        /// The in-memory store, `NSInMemoryStoreType`.
        public static let inMemory = StoreType(rawValue: NSInMemoryStoreType)
        /// The binary store, `NSBinaryStoreType`.
        public static let binary = StoreType(rawValue: NSBinaryStoreType)
        /// The XML store, `NSXMLStoreType` (macOS only on Apple's platforms).
        public static let xml = StoreType(rawValue: NSXMLStoreType)
    }
}

/// A store type that keeps its own model (a SQL store's `Z_MODELCACHE`) and so migrates in place
/// when it is opened with a newer model and lightweight migration's options, without being told
/// the model that wrote it: staged migration's lightweight steps just open it.
package protocol InPlaceMigratingStore: NSPersistentStore {}

extension NSPersistentStoreCoordinator {
    /// Whether stores of `type` migrate in place from their own model (``InPlaceMigratingStore``).
    package static func migratesInPlace(_ type: String) -> Bool {
        registry.storeClass(for: type) is any InPlaceMigratingStore.Type
    }
}

/// A store type that keeps nothing in files (the in-memory store): destroying one removes no file.
package protocol FilelessStore: NSPersistentStore {}

/// A store type whose files the coordinator copies and destroys itself (the SQLite store
/// copies through SQLite's backup API and removes its `-wal`, `-shm` and support folder).
package protocol StoreFileOperations: NSPersistentStore {
    /// Copies the store at `source` over the store at `destination` (creating it when missing).
    static func copyStore(at source: URL, to destination: URL) throws
    /// Removes every file of the store at `url`.
    static func destroyStore(at url: URL) throws
    /// Copies this open store's saved contents to `destination`.
    func copySavedContents(to destination: URL) throws
}

extension NSPersistentStoreCoordinator {
    /// Adds a store of `type`; the typed spelling of
    /// ``addPersistentStore(ofType:configurationName:at:options:)``.
    @discardableResult
    public func addPersistentStore(
        type: NSPersistentStore.StoreType, configuration: String? = nil, at storeURL: URL,
        options: [AnyHashable: Any]? = nil
    ) throws -> NSPersistentStore {
        try addPersistentStore(ofType: type.rawValue, configurationName: configuration, at: storeURL, options: options)
    }

    /// Moves `store`'s saved contents to a new store of `storeType` at `url` and returns the new
    /// store, which replaces `store` in the coordinator ("Save As"). The old store is removed and
    /// is no longer a useful reference; its file is left as it was.
    ///
    /// SQLite to SQLite goes through SQLite's backup API; any other pair copies every object and
    /// relationship through a private context. The new store keeps the old one's UUID and
    /// metadata.
    ///
    /// - Throws: `NSPersistentStoreOperationError` (134070) when `store` is not in the coordinator;
    ///   the new store's error when it cannot be written.
    public func migratePersistentStore(
        _ store: NSPersistentStore, to url: URL, options: [AnyHashable: Any]? = nil, withType storeType: String
    ) throws -> NSPersistentStore {
        try performAndWait {
            guard persistentStores.contains(where: { $0 === store }) else {
                throw CoreDataError.make(
                    NSPersistentStoreOperationError, "The store to migrate is not in this coordinator.",
                    [NSAffectedStoresErrorKey: [store]])
            }
            if let source = store as? StoreFileOperations, type(of: source) == Self.registry.storeClass(for: storeType)
            {
                try source.copySavedContents(to: url)
                let migrated = try addPersistentStore(
                    ofType: storeType, configurationName: store.configurationName, at: url, options: options)
                try remove(store)
                return migrated
            }
            let migrated = try addPersistentStore(
                ofType: storeType, configurationName: store.configurationName, at: url, options: options)
            do {
                try copyObjects(from: store, to: migrated)
            } catch {
                try? remove(migrated)
                throw error
            }
            try remove(store)
            return migrated
        }
    }

    /// The typed spelling of ``migratePersistentStore(_:to:options:withType:)``.
    public func migratePersistentStore(
        _ store: NSPersistentStore, to url: URL, options: [AnyHashable: Any]? = nil,
        type: NSPersistentStore.StoreType
    ) throws -> NSPersistentStore {
        try migratePersistentStore(store, to: url, options: options, withType: type.rawValue)
    }

    /// Deletes or truncates the store of `storeType` at `url` "in accordance with the store
    /// class's requirements" (Apple's words). Stores of this coordinator at `url` are removed
    /// from the coordinator first.
    ///
    /// The SQLite store is emptied through SQLite, not unlinked, as Apple's is: the file stays,
    /// with no table in it, and adding a store at the URL afterwards creates a new store there;
    /// its external-data folder is removed. `/dev/null` (an in-memory SQLite store) and a missing
    /// file need nothing. An in-memory store has no file. For any other type, the file is removed
    /// only when the store class reads it as a store of that type.
    ///
    /// Nothing that is not a store of `storeType` is ever touched: not a device or other
    /// non-regular file, not an SQLite database of another program, not a file of another type.
    ///
    /// - Throws: `NSPersistentStoreOperationError` (134070), touching nothing, when the file at
    ///   `url` is not a store of `storeType`; `NSPersistentStoreInvalidTypeError` (134000) for an
    ///   unregistered type.
    public func destroyPersistentStore(at url: URL, ofType storeType: String, options: [AnyHashable: Any]? = nil) throws
    {
        try performAndWait {
            guard let storeClass = Self.registry.storeClass(for: storeType) else {
                throw CoreDataError.make(
                    NSPersistentStoreInvalidTypeError, "Unknown store type \(storeType).", [NSURLErrorKey: url])
            }
            if let open = persistentStore(for: url) { try remove(open) }
            if let files = storeClass as? StoreFileOperations.Type {
                try files.destroyStore(at: url)
            } else if !(storeClass is any FilelessStore.Type) {
                try Self.removeStoreFile(at: url, of: storeClass, type: storeType)
            }
        }
    }

    /// Removes the file of a store class that keeps no files beside its one, after checking
    /// that the class reads it as a store of `type`.
    private static func removeStoreFile(at url: URL, of storeClass: NSPersistentStore.Type, type: String) throws {
        guard url.isFileURL, url.path != StoreFile.nullDevice else { return }
        switch StoreFile.kind(at: url.path) {
        case .missing: return
        case .other:
            try StoreFile.refuseNonRegularFile(at: url, code: NSPersistentStoreOperationError, "destroy")
        case .regular:
            let metadata: [String: Any]
            do {
                metadata = try storeClass.metadataForPersistentStore(with: url)
            } catch {
                throw CoreDataError.make(
                    NSPersistentStoreOperationError,
                    "Cannot destroy \(url.path): it is not a store of type \(type), and it was left untouched.",
                    [NSURLErrorKey: url, NSUnderlyingErrorKey: error])
            }
            guard metadata[NSStoreTypeKey] as? String == type else {
                throw CoreDataError.make(
                    NSPersistentStoreOperationError,
                    "Cannot destroy \(url.path): its metadata names the store type "
                        + "\(metadata[NSStoreTypeKey] as? String ?? "(none)"), not \(type); it was left untouched.",
                    [NSURLErrorKey: url])
            }
            try FileManager.default.removeItem(at: url)
        }
    }

    /// The typed spelling of ``destroyPersistentStore(at:ofType:options:)``.
    public func destroyPersistentStore(
        at url: URL, type: NSPersistentStore.StoreType, options: [AnyHashable: Any]? = nil
    ) throws {
        try destroyPersistentStore(at: url, ofType: type.rawValue, options: options)
    }

    /// Replaces the store at `destinationURL` with a copy of the store at `sourceURL`, both of
    /// `storeType` (SQLite through its backup API, so a store open elsewhere is copied safely).
    public func replacePersistentStore(
        at destinationURL: URL, destinationOptions: [AnyHashable: Any]? = nil,
        withPersistentStoreFrom sourceURL: URL, sourceOptions: [AnyHashable: Any]? = nil, ofType storeType: String
    ) throws {
        try performAndWait {
            if let files = Self.registry.storeClass(for: storeType) as? StoreFileOperations.Type {
                try files.copyStore(at: sourceURL, to: destinationURL)
                return
            }
            let manager = FileManager.default
            if manager.fileExists(atPath: destinationURL.path) { try manager.removeItem(at: destinationURL) }
            try manager.copyItem(at: sourceURL, to: destinationURL)
        }
    }

    /// The typed spelling of
    /// ``replacePersistentStore(at:destinationOptions:withPersistentStoreFrom:sourceOptions:ofType:)``.
    public func replacePersistentStore(
        at destinationURL: URL, destinationOptions: [AnyHashable: Any]? = nil,
        withPersistentStoreFrom sourceURL: URL, sourceOptions: [AnyHashable: Any]? = nil,
        type: NSPersistentStore.StoreType
    ) throws {
        try replacePersistentStore(
            at: destinationURL, destinationOptions: destinationOptions, withPersistentStoreFrom: sourceURL,
            sourceOptions: sourceOptions, ofType: type.rawValue)
    }
}
