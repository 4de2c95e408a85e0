/// The built-in atomic stores' common part: the whole file is read into cache nodes when the
/// store is added and written atomically (``AtomicFile``) at each save, in the subclass's
/// ``AtomicStoreFormat``. Objects are known by integer references, one sequence per file.
///
/// Several coordinators, in this process or others, may use one file: a save takes the file's
/// lock, reads what another coordinator wrote since this one last read or wrote the file (an
/// object whose values changed counts as a new version, so optimistic locking sees the change),
/// then writes.
class AtomicFileStore: NSAtomicStore, @unchecked Sendable {
    /// The file format; each subclass names its own.
    class var format: any AtomicStoreFormat.Type { BinaryStoreFormat.self }

    /// The last reference handed out; the next object gets one more.
    private var lastReference: Int64 = 100
    /// The identity of the file as this store last read or wrote it.
    private var knownIdentity: AtomicFile.Identity?
    /// How deeply ``withFileLock(_:)`` is nested on the saving thread.
    private var lockDepth = 0

    private var filePath: String? {
        guard let url, url.isFileURL, url.path != StoreFile.nullDevice else { return nil }
        return url.path
    }

    override func load() throws {
        nodeLock.lock()
        defer { nodeLock.unlock() }
        // Apple keeps composite attributes in SQL stores only; these formats have no place for them.
        for entity in persistentStoreCoordinator?.managedObjectModel.entities ?? [] {
            for case let composite as NSCompositeAttributeDescription in entity.properties {
                throw CoreDataError.make(
                    NSPersistentStoreIncompatibleSchemaError,
                    "The \(type) store cannot hold the composite attribute \(entity.name ?? "").\(composite.name): composite attributes are stored by the SQLite store.",
                    [NSURLErrorKey: url as Any])
            }
        }
        guard let path = filePath, let url else { return }
        switch StoreFile.kind(at: path) {
        case .missing:
            return
        case .other:
            try StoreFile.refuseNonRegularFile(at: url, code: NSPersistentStoreOpenError, "open a store at")
        case .regular:
            let identity = AtomicFile.identity(at: path)
            // The version hashes before any object: a file of another model version may hold
            // entities this model does not have, which is a migration to offer, not a damaged file.
            let model = persistentStoreCoordinator?.managedObjectModel
            let image = try decode(AtomicFile.read(url), url: url) { header in
                guard let model, header[NSStoreModelVersionHashesKey] != nil else { return }
                do {
                    try StoreMetadata.checkVersionHashes(header, model: model, options: options, url: url)
                } catch {
                    metadata = header
                    throw error
                }
            }
            // The UUID first: object IDs carry it from the moment they are made.
            metadata = image.metadata
            merge(image, counting: false)
            knownIdentity = identity
        }
    }

    /// Reads the file; one written by another version of the model is migrated first when the
    /// options ask for it (`NSMigratePersistentStoresAutomaticallyOption`): with the mapping
    /// model the program ships for the two versions, else, with
    /// `NSInferMappingModelAutomaticallyOption`, an inferred one. NSMigrationManager writes the
    /// migrated store beside the file and it is renamed over it, so a failure or a kill leaves
    /// the old file.
    ///
    /// - Throws: what ``NSAtomicStore/loadMetadata()`` throws; `NSMigrationMissingSourceModelError`
    ///   (134130) when no version of the program's models wrote the file;
    ///   `NSMigrationMissingMappingModelError` (134140) or `NSMigrationError` (134110) when it
    ///   cannot be migrated.
    override func loadMetadata() throws {
        do {
            try super.loadMetadata()
        } catch let error as NSError
            where error.domain == NSCocoaErrorDomain && error.code == NSPersistentStoreIncompatibleVersionHashError
            && ((options?[NSMigratePersistentStoresAutomaticallyOption] as? Bool ?? false)
                || options?[NSPersistentStoreStagedMigrationManagerOptionKey] is NSStagedMigrationManager)
            && !isReadOnly
        {
            guard let url, let destination = persistentStoreCoordinator?.managedObjectModel else { throw error }
            if let staged = options?[NSPersistentStoreStagedMigrationManagerOptionKey] as? NSStagedMigrationManager {
                try staged.migrate(storeAt: url, type: type, to: destination, options: options)
                try reload()
                return
            }
            let stored = metadata ?? [:]
            guard
                let source = NSManagedObjectModel.mergedModel(
                    from: ModelVersions.programBundles, forStoreMetadata: stored)
            else {
                throw CoreDataError.make(
                    NSMigrationMissingSourceModelError, "Can't find model for source store.",
                    [NSURLErrorKey: url, NSUnderlyingErrorKey: error])
            }
            let mapping = try ModelVersions.mappingModel(
                from: source, to: destination,
                infer: options?[NSInferMappingModelAutomaticallyOption] as? Bool ?? false, url: url)
            try ModelVersions.migrateReplacing(storeAt: url, type: type, from: source, to: destination, with: mapping)
            try reload()
        }
        try writeNewFile()
    }

    /// A store added where there is no file writes its file at once — empty, with its metadata —
    /// as Apple's XML and binary stores do, so the file exists from the moment the store is added.
    private func writeNewFile() throws {
        guard let path = filePath, !isReadOnly, StoreFile.kind(at: path) == .missing else { return }
        try withFileLock {
            guard StoreFile.kind(at: path) == .missing else { return }
            try save()
        }
    }

    /// Forgets what was read and reads the file again (after it was migrated).
    private func reload() throws {
        nodeLock.lock()
        nodesByID = [:]
        order = [:]
        nodeLock.unlock()
        metadata = nil
        knownIdentity = nil
        try super.loadMetadata()
    }

    override func save() throws {
        guard let url, filePath != nil else { return }
        let data: Data
        do {
            data = try Self.format.encode(image())
        } catch let problem as StoreFileProblem {
            throw CoreDataError.make(
                NSPersistentStoreSaveError, "Cannot write the store at \(url.path): it \(problem.message).",
                [NSURLErrorKey: url, NSAffectedStoresErrorKey: [self]])
        }
        try AtomicFile.write(data, to: url)
        knownIdentity = AtomicFile.identity(at: url.path)
    }

    override func newReferenceObject(for managedObject: NSManagedObject) -> Any {
        nodeLock.lock()
        defer { nodeLock.unlock() }
        lastReference += 1
        return lastReference
    }

    /// Holds the file's lock through a save, first reading what another coordinator wrote.
    override func withFileLock(_ body: () throws -> Void) throws {
        guard let path = filePath, lockDepth == 0 else {
            lockDepth += 1
            defer { lockDepth -= 1 }
            return try body()
        }
        try AtomicFile.withExclusiveLock(path) {
            lockDepth = 1
            defer { lockDepth = 0 }
            try reloadIfChanged(path)
            try body()
        }
    }

    private func reloadIfChanged(_ path: String) throws {
        guard let identity = AtomicFile.identity(at: path), identity != knownIdentity, let url else { return }
        nodeLock.lock()
        defer { nodeLock.unlock() }
        let image = try decode(AtomicFile.read(url), url: url)
        merge(image, counting: true)
        if !metadataAwaitsSave {
            metadata = image.metadata
            savedMetadataRevision = metadataRevision
        }
        knownIdentity = identity
    }

    private func decode(
        _ data: Data, url: URL, checkingMetadata check: ([String: Any]) throws -> Void = { _ in }
    ) throws -> StoreImage {
        guard let model = persistentStoreCoordinator?.managedObjectModel else {
            throw CoreDataError.make(NSPersistentStoreOpenError, "The store has no coordinator to read it with.")
        }
        do {
            let image = try Self.format.decode(data, model: model, checkingMetadata: check)
            try image.validate()
            return image
        } catch let problem as StoreFileProblem {
            throw Self.corrupt(url, problem)
        }
    }

    static func corrupt(_ url: URL, _ problem: StoreFileProblem) -> NSError {
        CoreDataError.make(
            CocoaError.Code.fileReadCorruptFile.rawValue,
            "The file at \(url.path) is not a readable \(format == XMLStoreFormat.self ? "XML" : "binary") store: it \(problem.message).",
            [NSURLErrorKey: url, NSFilePathErrorKey: url.path, "reason": problem.message])
    }

    /// Makes the store's nodes those of `image`: new objects get nodes, objects whose values
    /// differ get them and (when `counting`) a new version, objects not in the image go away.
    /// Call with the node lock held.
    private func merge(_ image: StoreImage, counting: Bool) {
        lastReference = max(lastReference, image.lastReference)
        let wasEmpty = nodesByID.isEmpty
        var nodes: [Int64: NSAtomicStoreCacheNode] = [:]
        nodes.reserveCapacity(image.objects.count)
        var nodeOfObject: [NSAtomicStoreCacheNode] = []
        nodeOfObject.reserveCapacity(image.objects.count)
        var fresh: [NSAtomicStoreCacheNode] = []
        for object in image.objects {
            let id = objectID(for: object.entity, withReferenceObject: object.reference)
            let node: NSAtomicStoreCacheNode
            if !wasEmpty, let existing = nodesByID[IDKey(id)] {
                node = existing
            } else {
                node = NSAtomicStoreCacheNode(objectID: id, slots: [])
                fresh.append(node)
            }
            nodes[object.reference] = node
            nodeOfObject.append(node)
        }
        var kept = Set<ObjectIdentifier>()
        for (object, node) in zip(image.objects, nodeOfObject) {
            if !wasEmpty { kept.insert(ObjectIdentifier(node)) }
            var slots = object.values
            let layout = object.entity.layout
            for slot in layout.relationshipSlots {
                let references = slots[slot] as? [Int64] ?? []
                if case .toMany = layout.kinds[slot] {
                    slots[slot] = references.compactMap { nodes[$0] }
                } else {
                    slots[slot] = references.first.flatMap { nodes[$0] }
                }
            }
            if node.slots?.isEmpty ?? false || !counting {
                node.slots = slots
            } else if !Self.sameValues(
                node.snapshot(), NSAtomicStoreCacheNode(objectID: node.objectID, slots: slots).snapshot())
            {
                node.slots = slots
                node.version += 1
            }
        }
        if !wasEmpty { unregister(nodesByID.values.filter { !kept.contains(ObjectIdentifier($0)) }) }
        nodesByID.reserveCapacity(nodesByID.count + fresh.count)
        for node in fresh { register(node) }
    }

    private static func sameValues(_ a: Snapshot, _ b: Snapshot) -> Bool {
        guard a.values.count == b.values.count else { return false }
        for (x, y) in zip(a.values, b.values) {
            if let ids = x as? [NSManagedObjectID], let others = y as? [NSManagedObjectID] {
                if Set(ids) != Set(others) && ids != others { return false }
            } else if !DynamicValue.equal(x, y) {
                return false
            }
        }
        return true
    }

    /// The image of the store's nodes, entity by entity in the order the objects were added.
    fileprivate func image() -> StoreImage {
        nodeLock.lock()
        defer { nodeLock.unlock() }
        var objects: [StoreImage.Object] = []
        objects.reserveCapacity(nodesByID.count)
        for name in order.keys.sorted() {
            for case let id? in order[name] ?? [] {
                guard let node = nodesByID[IDKey(id)], case .integer(let reference) = id.key else { continue }
                var values = node.snapshot().values
                for slot in id.entity.layout.relationshipSlots {
                    switch values[slot] {
                    case let destination as NSManagedObjectID: values[slot] = Self.references([destination])
                    case let destinations as [NSManagedObjectID]: values[slot] = Self.references(destinations)
                    default: values[slot] = [Int64]()
                    }
                }
                objects.append(StoreImage.Object(entity: id.entity, reference: reference, values: values))
            }
        }
        var metadata = self.metadata ?? [:]
        metadata[NSStoreTypeKey] = type
        return StoreImage(metadata: metadata, lastReference: lastReference, objects: objects)
    }

    private static func references(_ ids: [NSManagedObjectID]) -> [Int64] {
        ids.compactMap {
            if case .integer(let reference) = $0.key { return reference }
            return nil
        }
    }

    /// The metadata of the store file at `url`, read without a coordinator.
    ///
    /// - Throws: `NSFileReadNoSuchFileError` (260) when there is no file,
    ///   `NSFileReadCorruptFileError` (259) when it is not a store of this type.
    override class func metadataForPersistentStore(with url: URL) throws -> [String: Any] {
        let data = try AtomicFile.read(url)
        do {
            return try format.metadata(of: data)
        } catch let problem as StoreFileProblem {
            throw corrupt(url, problem)
        }
    }

    /// Replaces the metadata of the store file at `url` (its objects are left as they are),
    /// atomically and under the file's lock; the type and UUID stay unless `metadata` names them.
    ///
    /// - Throws: as ``metadataForPersistentStore(with:)``; `NSFileWriteUnknownError` (512) when
    ///   the file cannot be written.
    override class func setMetadata(_ metadata: [String: Any]?, forPersistentStoreWith url: URL) throws {
        try AtomicFile.withExclusiveLock(url.path) {
            let data = try AtomicFile.read(url)
            do {
                let existing = try format.metadata(of: data)
                var merged = metadata ?? [:]
                merged[NSStoreTypeKey] = merged[NSStoreTypeKey] ?? existing[NSStoreTypeKey]
                merged[NSStoreUUIDKey] = merged[NSStoreUUIDKey] ?? existing[NSStoreUUIDKey]
                try AtomicFile.write(format.replacingMetadata(merged, in: data), to: url)
            } catch let problem as StoreFileProblem {
                throw corrupt(url, problem)
            }
        }
    }
}

/// Copying and destroying the atomic stores' files: one file each, written atomically.
extension AtomicFileStore: StoreFileOperations {
    /// Copies the store file at `source` over the one at `destination` atomically, under the
    /// destination's lock; `source` must be a store of this type.
    ///
    /// - Throws: as ``metadataForPersistentStore(with:)`` when `source` is not a store of this
    ///   type; `NSFileWriteUnknownError` (512) when the copy cannot be written.
    static func copyStore(at source: URL, to destination: URL) throws {
        let data = try AtomicFile.read(source)
        do {
            _ = try format.metadata(of: data)
        } catch let problem as StoreFileProblem {
            throw corrupt(source, problem)
        }
        try AtomicFile.withExclusiveLock(destination.path) { try AtomicFile.write(data, to: destination) }
    }

    /// Removes the store file at `url` when it is a store of this type; touches nothing else.
    ///
    /// - Throws: `NSPersistentStoreOperationError` (134070) when the file is not a store of this type.
    static func destroyStore(at url: URL) throws {
        guard url.isFileURL, case .regular = StoreFile.kind(at: url.path) else {
            try StoreFile.refuseNonRegularFile(at: url, code: NSPersistentStoreOperationError, "destroy")
            return
        }
        do {
            _ = try metadataForPersistentStore(with: url)
        } catch {
            throw CoreDataError.make(
                NSPersistentStoreOperationError,
                "Cannot destroy \(url.path): it is not a store of this type, and it was left untouched.",
                [NSURLErrorKey: url, NSUnderlyingErrorKey: error])
        }
        try FileManager.default.removeItem(at: url)
    }

    /// Writes this store's saved contents — its nodes as of the last save or load — to `destination`.
    func copySavedContents(to destination: URL) throws {
        let data: Data
        do {
            data = try Self.format.encode(image())
        } catch let problem as StoreFileProblem {
            throw CoreDataError.make(
                NSPersistentStoreSaveError, "Cannot write the store at \(destination.path): it \(problem.message).",
                [NSURLErrorKey: destination])
        }
        try AtomicFile.withExclusiveLock(destination.path) { try AtomicFile.write(data, to: destination) }
    }
}

/// The XML store (`NSXMLStoreType`): Apple's XML store format (STORE-FORMAT.md, "XML stores").
final class XMLStore: AtomicFileStore, @unchecked Sendable {
    override class var format: any AtomicStoreFormat.Type { XMLStoreFormat.self }
    override var type: String { NSXMLStoreType }
}

/// The binary store (`NSBinaryStoreType`): a compact file of this project's design
/// (STORE-FORMAT.md, "Binary stores"; DEVIATIONS.md).
final class BinaryStore: AtomicFileStore, @unchecked Sendable {
    override class var format: any AtomicStoreFormat.Type { BinaryStoreFormat.self }
    override var type: String { NSBinaryStoreType }
}
