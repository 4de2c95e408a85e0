/// The base of a store that reads its whole file into memory when it is added and writes the
/// whole file back on each save: the XML and binary stores, and any file format you write
/// yourself.
///
/// The store keeps one ``NSAtomicStoreCacheNode`` per object. Core Data asks the store for a
/// reference object for each new object (``newReferenceObject(for:)``), and at each save creates
/// nodes for inserted objects (``newCacheNode(for:)``), updates the nodes of changed ones
/// (``updateCacheNode(_:from:)``), tells the store which nodes go away
/// (``willRemoveCacheNodes(_:)``), then calls ``save()``. Fetches are answered from the nodes in
/// memory, with the whole predicate and sort language.
///
/// Override ``load()`` (read the file: make a node for each object with
/// ``objectID(for:withReferenceObject:)``, set its values, ``addCacheNodes(_:)``, and set
/// `metadata`), ``save()`` (write ``cacheNodes()`` and `metadata`), and
/// ``newReferenceObject(for:)``; override `metadataForPersistentStore(with:)` and
/// `setMetadata(_:forPersistentStoreWith:)` to read and write metadata without a coordinator.
///
/// ```swift
/// final class JSONStore: NSAtomicStore {
///     override var type: String { "JSON" }
///     override func load() throws { … addCacheNodes(nodes) … }
///     override func save() throws { … for node in cacheNodes() { … } … }
///     override func newReferenceObject(for managedObject: NSManagedObject) -> Any { UUID().uuidString }
/// }
/// NSPersistentStoreCoordinator.registerStoreClass(JSONStore.self, forStoreType: "JSON")
/// ```
///
/// > Note: Differs from Apple Core Data: ``newCacheNode(for:)`` and ``updateCacheNode(_:from:)``
/// > work as they are (they copy the object's stored properties into the node, relationships as
/// > the destinations' nodes), so a subclass need not override them; Apple's must be overridden.
///
/// Related documentation: Atomic Store Programming Topics; NSAtomicStore reference.
open class NSAtomicStore: NSPersistentStore {
    /// Guards the nodes; reads run on any thread, concurrently with a save.
    let nodeLock = NSRecursiveLock()
    /// Nodes by object ID.
    var nodesByID: [IDKey: NSAtomicStoreCacheNode] = [:]
    /// Object IDs per entity name in the order their nodes were added; `nil` where one was removed.
    var order: [String: [NSManagedObjectID?]] = [:]
    /// During a save: the snapshots being written, and nodes made for objects of the save that
    /// are not registered yet (so relationships between new objects find each other).
    var savingSnapshots: [IDKey: Snapshot] = [:]
    var pendingNodes: [IDKey: NSAtomicStoreCacheNode] = [:]
    /// The metadata revision the last save or load wrote or read.
    var savedMetadataRevision = 0

    /// Creates a store for `root` at `url`; the file is read by ``load()`` when the store is added.
    public required init(
        persistentStoreCoordinator root: NSPersistentStoreCoordinator?, configurationName name: String?, at url: URL,
        options: [AnyHashable: Any]? = nil
    ) {
        super.init(persistentStoreCoordinator: root, configurationName: name, at: url, options: options)
    }

    /// Reads the store's file into cache nodes and metadata. Called when the store is added.
    ///
    /// - Throws: the reason the file cannot be read; the store is then not added.
    open func load() throws {
        throw CoreDataError.make(
            NSPersistentStoreOperationError, "\(Swift.type(of: self)) does not override load()",
            [NSAffectedStoresErrorKey: [self]])
    }

    /// Writes every cache node and the metadata to the store's file. Called at the end of each save.
    ///
    /// - Throws: the reason the file cannot be written; the save then fails and the store's
    ///   nodes are as they were before it.
    open func save() throws {
        throw CoreDataError.make(
            NSPersistentStoreOperationError, "\(Swift.type(of: self)) does not override save()",
            [NSAffectedStoresErrorKey: [self]])
    }

    /// A new node for a newly inserted object, filled by ``updateCacheNode(_:from:)``.
    open func newCacheNode(for managedObject: NSManagedObject) -> NSAtomicStoreCacheNode {
        let id = managedObject.objectID
        let node = pendingNodes[IDKey(id)] ?? NSAtomicStoreCacheNode(objectID: id)
        pendingNodes[IDKey(id)] = node
        updateCacheNode(node, from: managedObject)
        return node
    }

    /// Copies the object's stored attributes and relationships into `node`: attribute values as
    /// they are, a to-one as the destination's node, a to-many as its destinations' nodes.
    open func updateCacheNode(_ node: NSAtomicStoreCacheNode, from managedObject: NSManagedObject) {
        let layout = managedObject.entity.layout
        let snapshot = savingSnapshots[IDKey(managedObject.objectID)]
        for slot in 0..<layout.count where layout.isPersistent(slot) {
            let name = layout.names[slot]
            switch layout.kinds[slot] {
            case .attribute:
                node.setValue(snapshot.map { $0.values[slot] } ?? managedObject.value(forKey: name), forKey: name)
            case .toOne:
                let value: Any? = snapshot.map { $0.values[slot] } ?? managedObject.value(forKey: name)
                if UnresolvedRelationship.isMarker(value) { continue }
                node.setValue(destinationID(value).map(relatedNode), forKey: name)
            case .toMany:
                let value: Any? = snapshot.map { $0.values[slot] } ?? managedObject.value(forKey: name)
                if UnresolvedRelationship.isMarker(value) { continue }
                let ids = value.flatMap(DynamicValue.elements)?.compactMap(destinationID) ?? []
                node.setValue(ids.map(relatedNode), forKey: name)
            case .fetched:
                continue
            }
        }
    }

    private func destinationID(_ value: Any?) -> NSManagedObjectID? {
        (value as? NSManagedObjectID) ?? (value as? NSManagedObject)?.objectID
    }

    /// The node of the object with `id`: registered, made earlier in this save, or made now for
    /// an object of this save whose own node comes later.
    func relatedNode(_ id: NSManagedObjectID) -> NSAtomicStoreCacheNode {
        if let node = cacheNode(for: id) ?? pendingNodes[IDKey(id)] { return node }
        let node = NSAtomicStoreCacheNode(objectID: id)
        pendingNodes[IDKey(id)] = node
        return node
    }

    /// Every node the store holds.
    open func cacheNodes() -> Set<NSAtomicStoreCacheNode> {
        nodeLock.lock()
        defer { nodeLock.unlock() }
        return Set(nodesByID.values)
    }

    /// Registers `cacheNodes` with the store (in ``load()``, and at a save for new objects); a
    /// node for an object the store already holds replaces the old one.
    open func addCacheNodes(_ cacheNodes: Set<NSAtomicStoreCacheNode>) {
        nodeLock.lock()
        defer { nodeLock.unlock() }
        for node in cacheNodes { register(node) }
    }

    /// Adds `node` to the store's tables. Call with the node lock held.
    func register(_ node: NSAtomicStoreCacheNode) {
        let id = node.objectID
        if let old = nodesByID[IDKey(id)] {
            node.position = old.position
        } else {
            let name = id.entity.name ?? ""
            node.position = order[name, default: []].count
            order[name, default: []].append(id)
        }
        nodesByID[IDKey(id)] = node
    }

    /// Removes `nodes` from the store's tables. Call with the node lock held.
    func unregister(_ nodes: some Sequence<NSAtomicStoreCacheNode>) {
        for node in nodes {
            guard nodesByID.removeValue(forKey: IDKey(node.objectID)) != nil else { continue }
            order[node.objectID.entity.name ?? ""]?[node.position] = nil
        }
    }

    /// Told before the nodes of deleted objects are removed from the store, at a save.
    open func willRemoveCacheNodes(_ cacheNodes: Set<NSAtomicStoreCacheNode>) {}

    /// The node of the object with `objectID`, if the store holds it.
    open func cacheNode(for objectID: NSManagedObjectID) -> NSAtomicStoreCacheNode? {
        nodeLock.lock()
        defer { nodeLock.unlock() }
        return nodesByID[IDKey(objectID)]
    }

    /// The ID of the object of `entity` the store knows by `data` (a number or string, for
    /// example); `data` must be `Hashable`.
    open func objectID(for entity: NSEntityDescription, withReferenceObject data: Any) -> NSManagedObjectID {
        NSManagedObjectID(entity: entity, key: NSManagedObjectID.permanentKey(for: data), store: self, reference: data)
    }

    /// A new, unique reference object for a newly inserted object: a UUID string unless a
    /// subclass chooses otherwise.
    open func newReferenceObject(for managedObject: NSManagedObject) -> Any {
        UUID().uuidString
    }

    /// The reference object of an ID this store made; `NSNull` for a temporary ID.
    open func referenceObject(for objectID: NSManagedObjectID) -> Any {
        objectID.referenceObject ?? NSNull()
    }

    /// Reads the file with ``load()``; a store without metadata (a new file) gets its type, a new
    /// UUID and the model's version hashes. A store whose recorded hashes differ from the model's
    /// is refused.
    ///
    /// - Throws: what ``load()`` throws; `NSPersistentStoreIncompatibleVersionHashError` (134100)
    ///   when the file was written by another model.
    open override func loadMetadata() throws {
        try load()
        var metadata = self.metadata ?? [:]
        let model = persistentStoreCoordinator?.managedObjectModel
        if let model, metadata[NSStoreModelVersionHashesKey] != nil {
            try StoreMetadata.checkVersionHashes(metadata, model: model, options: options, url: url)
        }
        var changed = false
        if metadata[NSStoreTypeKey] == nil {
            metadata[NSStoreTypeKey] = type
            changed = true
        }
        if metadata[NSStoreUUIDKey] as? String == nil {
            metadata[NSStoreUUIDKey] = UUID().uuidString
            changed = true
        }
        if let model, metadata[NSStoreModelVersionHashesKey] == nil {
            metadata.merge(StoreMetadata.keys(for: model)) { old, _ in old }
            changed = true
        }
        if changed || self.metadata == nil { self.metadata = metadata }
        savedMetadataRevision = changed ? metadataRevision - 1 : metadataRevision
    }

    /// The hook a file store uses to hold its file's lock through a save (and to read what
    /// another coordinator wrote first); the base runs `body`.
    func withFileLock(_ body: () throws -> Void) throws { try body() }

    /// Whether metadata set since the last save waits to be written.
    var metadataAwaitsSave: Bool { metadataRevision != savedMetadataRevision }
}
