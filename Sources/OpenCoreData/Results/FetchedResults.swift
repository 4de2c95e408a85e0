/// The results a fetched results controller keeps: the sections and their objects in order, and
/// the work of keeping them in step with the context. Both faces of a controller (the typed one
/// the app holds and the `NSFetchRequestResult` one its delegate receives) share one.
///
/// Each object is placed by the values of its sort keys and section key as they were when it was
/// placed, so an object whose values changed is found where it is by binary search, and a change
/// costs work in proportion to the change and the logarithm of the results, never a refetch.
final class FetchedResults: @unchecked Sendable {
    /// One object where it stands: its sort-key values and section name when it was placed.
    struct Entry {
        let object: NSManagedObject
        let keys: ContiguousArray<Any?>
        let section: String
    }

    /// One section: its name, index title and entries in order.
    final class Section: NSFetchedResultsSectionInfo {
        let name: String
        var indexTitle: String?
        var entries: [Entry] = []

        init(name: String, indexTitle: String?) {
            self.name = name
            self.indexTitle = indexTitle
        }

        var numberOfObjects: Int { entries.count }
        var objects: [Any]? { entries.map(\.object) }
    }

    let context: NSManagedObjectContext
    let entity: NSEntityDescription?
    let predicate: NSPredicate?
    let includesSubentities: Bool
    let sortDescriptors: [NSSortDescriptor]
    /// Whether the request had sort descriptors at all (`nil` is refused; an empty array is not).
    private let hasSortDescriptors: Bool
    let sortPaths: [KeyPathComponents?]
    let sectionNameKeyPath: String?
    private let sectionPath: KeyPathComponents?
    private let fetch: () throws -> [NSManagedObject]
    private(set) var sections: [Section] = []
    private var sectionsByName: [String: Section] = [:]
    private var placed: [ObjectIdentifier: Entry] = [:]
    private(set) var hasFetched = false
    weak var delegate: (any NSFetchedResultsControllerDelegate)?
    private var observer: (any NSObjectProtocol)?
    /// The face handed to the delegate, while something holds it (it holds the results).
    weak var erased: NSFetchedResultsController<NSFetchRequestResult>?

    init(
        context: NSManagedObjectContext, entity: NSEntityDescription?, predicate: NSPredicate?,
        includesSubentities: Bool, sortDescriptors: [NSSortDescriptor]?, sectionNameKeyPath: String?,
        fetch: @escaping () throws -> [NSManagedObject]
    ) {
        self.context = context
        self.entity = entity
        self.predicate = predicate
        self.includesSubentities = includesSubentities
        self.sortDescriptors = sortDescriptors ?? []
        hasSortDescriptors = sortDescriptors != nil
        sortPaths = self.sortDescriptors.map { $0.key.map(KeyPathComponents.init) }
        self.sectionNameKeyPath = sectionNameKeyPath
        sectionPath = sectionNameKeyPath.map(KeyPathComponents.init)
        self.fetch = fetch
    }

    deinit {
        if let observer { NotificationCenter.default.removeObserver(observer) }
    }

    // MARK: Fetching

    /// Fetches and sorts the results into sections, and starts following the context's changes.
    ///
    /// - Throws: `NSCoreDataError` (134060) when the request's sort descriptors are `nil` (Apple
    ///   raises; an empty array is accepted, as Apple accepts it); the fetch's error.
    func performFetch() throws {
        guard hasSortDescriptors else {
            throw CoreDataError.make(
                NSCoreDataError, "A fetched results controller needs a fetch request with sort descriptors.",
                ["reason": "no sort descriptors"])
        }
        let entries = sortedEntries(try fetch().map(entry))
        sections = []
        sectionsByName = [:]
        placed = [:]
        for entry in entries {
            section(named: entry.section, appending: true).entries.append(entry)
            placed[ObjectIdentifier(entry.object)] = entry
        }
        hasFetched = true
        if observer == nil {
            observer = NotificationCenter.default.addObserver(
                forName: .NSManagedObjectContextObjectsDidChange, object: context, queue: nil
            ) { [weak self] notification in
                self?.contextDidChange(notification.userInfo ?? [:])
            }
        }
    }

    /// `entries` in the controller's order. The fetch already sorted them by the sort descriptors
    /// (in SQL, or in memory by the same rules), so only runs of ties are put in identity order —
    /// one comparison per neighbour rather than a sort; a fetch whose order disagrees anywhere is
    /// sorted whole.
    private func sortedEntries(_ fetched: [Entry]) -> [Entry] {
        var entries = fetched
        var start = 0
        var index = 1
        while index <= entries.count {
            let relation =
                index < entries.count ? descriptorOrder(entries[index - 1], entries[index]) : .orderedAscending
            if relation == .orderedDescending { return fetched.sorted { order($0, $1) == .orderedAscending } }
            if relation == .orderedAscending {
                if index - start > 1 { entries[start..<index].sort { order($0, $1) == .orderedAscending } }
                start = index
            }
            index += 1
        }
        return entries
    }

    /// The section named `name`, made (at the end, or where `index` says) when there is none.
    private func section(named name: String, appending: Bool) -> Section {
        if let section = sectionsByName[name] { return section }
        let section = Section(name: name, indexTitle: indexTitle(for: name))
        sectionsByName[name] = section
        if appending { sections.append(section) }
        return section
    }

    private func indexTitle(for name: String) -> String? {
        if let delegate, let title = delegate.controller(erasedController(), sectionIndexTitleForSectionName: name) {
            return title
        }
        return name.first.map { String($0).uppercased() }
    }

    /// An object's entry as it is now.
    private func entry(_ object: NSManagedObject) -> Entry {
        var keys = ContiguousArray<Any?>()
        keys.reserveCapacity(sortPaths.count)
        for path in sortPaths {
            keys.append(path.map { KeyValueCodingAccess.value(of: object, keyPath: $0) } ?? object)
        }
        let name: String
        if let sectionPath,
            let value = DynamicValue.unwrap(KeyValueCodingAccess.value(of: object, keyPath: sectionPath))
        {
            name = value as? String ?? String(describing: value)
        } else {
            name = ""
        }
        return Entry(object: object, keys: keys, section: name)
    }

    /// The order of two entries: by the sort descriptors, then by object identity, so every two
    /// entries are ordered and binary search finds each.
    private func order(_ a: Entry, _ b: Entry) -> ComparisonResult {
        let result = descriptorOrder(a, b)
        if result != .orderedSame { return result }
        let x = UInt(bitPattern: ObjectIdentifier(a.object).hashValue)
        let y = UInt(bitPattern: ObjectIdentifier(b.object).hashValue)
        return x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
    }

    /// The order of two entries by the sort descriptors alone.
    private func descriptorOrder(_ a: Entry, _ b: Entry) -> ComparisonResult {
        for (index, descriptor) in sortDescriptors.enumerated() {
            var result = descriptor.comparator(a.keys[index] ?? NSNull(), b.keys[index] ?? NSNull())
            if !descriptor.ascending {
                result =
                    result == .orderedAscending
                    ? .orderedDescending : result == .orderedDescending ? .orderedAscending : .orderedSame
            }
            if result != .orderedSame { return result }
        }
        return .orderedSame
    }

    /// Where `entry` is, or would go, in `entries` (binary search).
    private func position(of entry: Entry, in entries: [Entry]) -> Int {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if order(entries[middle], entry) == .orderedAscending { low = middle + 1 } else { high = middle }
        }
        return low
    }

    // MARK: Reading

    var allObjects: [NSManagedObject] { sections.flatMap { $0.entries.map(\.object) } }

    func object(at indexPath: IndexPath) -> NSManagedObject? {
        guard indexPath.count == 2, sections.indices.contains(indexPath[0]),
            sections[indexPath[0]].entries.indices.contains(indexPath[1])
        else { return nil }
        return sections[indexPath[0]].entries[indexPath[1]].object
    }

    func indexPath(for object: NSManagedObject) -> IndexPath? {
        guard let entry = placed[ObjectIdentifier(object)], let section = sectionsByName[entry.section],
            let sectionIndex = sections.firstIndex(where: { $0 === section })
        else { return nil }
        let item = position(of: entry, in: section.entries)
        guard item < section.entries.count, section.entries[item].object === object else { return nil }
        return IndexPath(item: item, section: sectionIndex)
    }

    // MARK: Following changes

    /// What one change of the context does to the results.
    private enum Change {
        case insert(NSManagedObject)
        case delete(NSManagedObject)
        case move(NSManagedObject)
        case update(NSManagedObject)
    }

    private func belongs(_ object: NSManagedObject) -> Bool {
        guard !object.isDeleted, let entity else { return false }
        guard object.entity === entity || (includesSubentities && object.entity.isKindOf(entity: entity)) else {
            return false
        }
        return predicate?.evaluate(with: object) ?? true
    }

    private func contextDidChange(_ info: [AnyHashable: Any]) {
        guard hasFetched, let delegate else { return }
        func objects(_ key: String) -> Set<NSManagedObject> { info[key] as? Set<NSManagedObject> ?? [] }
        let inserted = objects(NSInsertedObjectsKey)
        let updated = objects(NSUpdatedObjectsKey).union(objects(NSRefreshedObjectsKey))
        let deleted = objects(NSDeletedObjectsKey).union(objects(NSInvalidatedObjectsKey))
        var changes: [Change] = []
        for object in deleted where placed[ObjectIdentifier(object)] != nil { changes.append(.delete(object)) }
        for object in inserted.union(updated) where !deleted.contains(object) {
            let present = placed[ObjectIdentifier(object)]
            let member = belongs(object)
            switch (present, member) {
            case (nil, true): changes.append(.insert(object))
            case (.some, false): changes.append(.delete(object))
            case (.some(let old), true):
                let now = entry(object)
                if now.section != old.section || order(old, now) != .orderedSame
                    || zip(old.keys, now.keys).contains(where: { !DynamicValue.equal($0, $1) })
                {
                    changes.append(.move(object))
                } else {
                    changes.append(.update(object))
                }
            case (nil, false): continue
            }
        }
        guard !changes.isEmpty else { return }
        apply(changes, to: delegate)
    }

    /// Applies `changes` and reports them in Apple's order.
    private func apply(_ changes: [Change], to delegate: any NSFetchedResultsControllerDelegate) {
        let controller = erasedController()
        // Old positions, and old flat offsets for the difference.
        var oldStarts: [ObjectIdentifier: (index: Int, start: Int)] = [:]
        var start = 0
        for (index, section) in sections.enumerated() {
            oldStarts[ObjectIdentifier(section)] = (index, start)
            start += section.entries.count
        }
        func oldPath(_ object: NSManagedObject) -> (IndexPath, Int)? {
            guard let path = indexPath(for: object) else { return nil }
            let flat = (oldStarts[ObjectIdentifier(sections[path.section])]?.start ?? 0) + path.item
            return (path, flat)
        }
        var removals: [(object: NSManagedObject, path: IndexPath, flat: Int, moving: Bool)] = []
        var updates: [NSManagedObject] = []
        var insertions: [NSManagedObject] = []
        for change in changes {
            switch change {
            case .delete(let object):
                if let (path, flat) = oldPath(object) { removals.append((object, path, flat, false)) }
            case .move(let object):
                if let (path, flat) = oldPath(object) { removals.append((object, path, flat, true)) }
                insertions.append(object)
            case .update(let object):
                updates.append(object)
            case .insert(let object):
                insertions.append(object)
            }
        }
        var updatePaths: [(NSManagedObject, IndexPath)] = []
        for object in updates { if let (path, _) = oldPath(object) { updatePaths.append((object, path)) } }
        // Removals, last first, so earlier positions stay valid.
        let oldSections = sections
        for removal in removals.sorted(by: { $0.path > $1.path }) {
            let section = sections[removal.path.section]
            section.entries.remove(at: removal.path.item)
            placed[ObjectIdentifier(removal.object)] = nil
        }
        var deletedSections: [(Int, Section)] = []
        for (index, section) in oldSections.enumerated().reversed() where section.entries.isEmpty {
            deletedSections.append((index, section))
            sections.remove(at: index)
            sectionsByName[section.name] = nil
        }
        // Insertions, each where its values now put it.
        var newSections: [Section] = []
        for object in insertions {
            let entry = entry(object)
            let section: Section
            if let existing = sectionsByName[entry.section] {
                section = existing
            } else {
                section = self.section(named: entry.section, appending: false)
                let index = sections.firstIndex { order(entry, $0.entries[0]) == .orderedAscending } ?? sections.count
                sections.insert(section, at: index)
                newSections.append(section)
            }
            section.entries.insert(entry, at: position(of: entry, in: section.entries))
            placed[ObjectIdentifier(object)] = entry
        }
        // Report, in Apple's order.
        delegate.controllerWillChangeContent(controller)
        for (index, section) in deletedSections {
            delegate.controller(controller, didChange: section, atSectionIndex: index, for: .delete)
        }
        let insertedSectionIndexes = newSections.compactMap { section in sections.firstIndex { $0 === section } }
            .sorted()
        for index in insertedSectionIndexes {
            delegate.controller(controller, didChange: sections[index], atSectionIndex: index, for: .insert)
        }
        var differenceChanges: [CollectionDifference<NSManagedObjectID>.Change] = []
        for removal in removals where !removal.moving {
            delegate.controller(
                controller, didChange: removal.object, at: removal.path, for: .delete, newIndexPath: nil)
        }
        for removal in removals {
            differenceChanges.append(
                .remove(offset: removal.flat, element: removal.object.objectID, associatedWith: nil))
        }
        var newStarts: [ObjectIdentifier: Int] = [:]
        start = 0
        for section in sections {
            newStarts[ObjectIdentifier(section)] = start
            start += section.entries.count
        }
        let moving = Set(removals.filter(\.moving).map { ObjectIdentifier($0.object) })
        for object in insertions {
            guard let path = indexPath(for: object) else { continue }
            let flat = (newStarts[ObjectIdentifier(sections[path.section])] ?? 0) + path.item
            differenceChanges.append(.insert(offset: flat, element: object.objectID, associatedWith: nil))
            if moving.contains(ObjectIdentifier(object)) {
                let old = removals.first { $0.object === object }?.path
                delegate.controller(controller, didChange: object, at: old, for: .move, newIndexPath: path)
            } else {
                delegate.controller(controller, didChange: object, at: nil, for: .insert, newIndexPath: path)
            }
        }
        for (object, path) in updatePaths {
            delegate.controller(
                controller, didChange: object, at: path, for: .update, newIndexPath: indexPath(for: object))
        }
        delegate.controllerDidChangeContent(controller)
        if let difference = CollectionDifference(differenceChanges) {
            delegate.controller(controller, didChangeContentWith: difference)
        }
    }

    /// The face the delegate receives.
    func erasedController() -> NSFetchedResultsController<NSFetchRequestResult> {
        if let erased { return erased }
        let face = NSFetchedResultsController<NSFetchRequestResult>(sharing: self)
        erased = face
        return face
    }
}
