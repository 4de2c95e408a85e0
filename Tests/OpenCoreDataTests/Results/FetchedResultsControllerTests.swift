import CoreData
import Foundation
import Testing

/// A delegate that keeps its own copy of the sections by applying the reported changes as a
/// table view applies a batch (NSFetchedResultsControllerDelegate reference, "Typical Use"):
/// rows deleted at their old index paths, last first; sections deleted, then inserted; rows
/// inserted at their new index paths, first first; a move as a deletion and an insertion; an
/// update changes nothing in the structure. It also applies the collection difference to a flat
/// copy.
final class SectionMirror: NSFetchedResultsControllerDelegate {
    var sections: [(name: String, ids: [NSManagedObjectID])] = []
    var flat: [NSManagedObjectID] = []
    private var rowDeletions: [IndexPath] = []
    private var rowInsertions: [(IndexPath, NSManagedObjectID)] = []
    private var sectionDeletions: [Int] = []
    private var sectionInsertions: [(Int, String)] = []
    var updates: [IndexPath] = []
    var events: [String] = []
    var sawController = false

    init(_ controller: NSFetchedResultsController<NSManagedObject>) {
        sections = (controller.sections ?? []).map { section in
            (section.name, (section.objects ?? []).compactMap { ($0 as? NSManagedObject)?.objectID })
        }
        flat = sections.flatMap(\.ids)
    }

    func controllerWillChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {
        events.append("will")
        rowDeletions = []
        rowInsertions = []
        sectionDeletions = []
        sectionInsertions = []
        updates = []
    }

    func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any,
        at indexPath: IndexPath?,
        for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?
    ) {
        let id = (anObject as? NSManagedObject)?.objectID
        switch type {
        case .delete: rowDeletions.append(indexPath!)
        case .insert: rowInsertions.append((newIndexPath!, id!))
        case .move:
            rowDeletions.append(indexPath!)
            rowInsertions.append((newIndexPath!, id!))
        case .update: updates.append(indexPath!)
        }
        events.append("object \(type)")
    }

    func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        didChange sectionInfo: any NSFetchedResultsSectionInfo, atSectionIndex sectionIndex: Int,
        for type: NSFetchedResultsChangeType
    ) {
        if type == .delete {
            sectionDeletions.append(sectionIndex)
        } else {
            sectionInsertions.append((sectionIndex, sectionInfo.name))
        }
        events.append("section \(type)")
    }

    func controllerDidChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {
        events.append("did")
        for path in rowDeletions.sorted(by: >) { sections[path.section].ids.remove(at: path.item) }
        for index in sectionDeletions.sorted(by: >) { sections.remove(at: index) }
        for (index, name) in sectionInsertions.sorted(by: { $0.0 < $1.0 }) { sections.insert((name, []), at: index) }
        for (path, id) in rowInsertions.sorted(by: { $0.0 < $1.0 }) {
            sections[path.section].ids.insert(id, at: path.item)
        }
    }

    func controller(
        _ controller: NSFetchedResultsController<NSFetchRequestResult>,
        didChangeContentWith diff: CollectionDifference<NSManagedObjectID>
    ) {
        flat = flat.applying(diff) ?? []
        events.append("difference")
    }
}

/// NSFetchedResultsController: sections, index paths and index titles as
/// Apple documents them, and change tracking whose reported changes, applied in Apple's order,
/// turn the old sections into the new ones (NSFetchedResultsController and
/// NSFetchedResultsControllerDelegate references).
@Suite("Fetched results controller")
struct FetchedResultsControllerTests {
    /// Item: name, group (the section key) and score; the controller shows scores below 90.
    /// Item (name, group, score, tag) and Tag (label, items).
    static let model = CompanyModel.owning(
        "Tag", [CompanyModel.attribute("label", .stringAttributeType)], toMany: "items",
        members: "Item",
        [
            CompanyModel.attribute("name", .stringAttributeType), CompanyModel.attribute("group", .stringAttributeType),
            CompanyModel.attribute("score", .integer64AttributeType),
        ], toOne: "tag")

    func context() throws -> NSManagedObjectContext {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.model)
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// Items scoring below 90, in sections by group, ordered by their tag's label (a key path
    /// across a relationship), then by score, highest first.
    func controller(_ context: NSManagedObjectContext) -> NSFetchedResultsController<NSManagedObject> {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
        request.predicate = NSPredicate(format: "score < 90")
        request.sortDescriptors = [
            NSSortDescriptor(key: "group", ascending: true), NSSortDescriptor(key: "tag.label", ascending: true),
            NSSortDescriptor(key: "score", ascending: false),
        ]
        return NSFetchedResultsController(
            fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "group", cacheName: nil)
    }

    @discardableResult
    func item(_ name: String, _ group: String, _ score: Int, in context: NSManagedObjectContext) -> NSManagedObject {
        let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
        item.setValue(name, forKey: "name")
        item.setValue(group, forKey: "group")
        item.setValue(Int64(score), forKey: "score")
        return item
    }

    @Test("Sections group the sorted results by the section key path; index paths, titles and lookups agree")
    func sections() throws {
        let context = try context()
        for (name, group, score) in [
            ("a", "alpha", 10), ("b", "alpha", 30), ("c", "beta", 20), ("d", "gamma", 95), ("e", "gamma", 5),
        ] {
            item(name, group, score, in: context)
        }
        try context.save()
        let controller = controller(context)
        #expect(controller.fetchedObjects == nil && controller.sections == nil)
        try controller.performFetch()
        let sections = try #require(controller.sections)
        #expect(sections.map(\.name) == ["alpha", "beta", "gamma"])
        #expect(sections.map(\.numberOfObjects) == [2, 1, 1])
        #expect(sections.map(\.indexTitle) == ["A", "B", "G"])
        #expect(controller.fetchedObjects?.compactMap { $0.value(forKey: "name") as? String } == ["b", "a", "c", "e"])
        let b = controller.object(at: IndexPath(item: 0, section: 0))
        #expect(b.value(forKey: "name") as? String == "b")
        #expect(controller.indexPath(forObject: b) == IndexPath(row: 0, section: 0))
        #expect(controller.sectionIndexTitles == ["A", "B", "G"])
        #expect(controller.section(forSectionIndexTitle: "G", at: 0) == 2)
        #expect(controller.sectionIndexTitle(forSectionName: "delta") == "D")
        var path = IndexPath(item: 3, section: 1)
        path.row = 4
        #expect(path.section == 1 && path.item == 4 && path.row == 4 && path == IndexPath(indexes: [1, 4]))
    }

    /// NSFetchedResultsController reference, `sectionIndexTitles`: "The default implementation
    /// returns the array created by calling sectionIndexTitle(forSectionName:) on all the known
    /// sections" — so a subclass that overrides that method changes the titles, and the lookup
    /// by title follows.
    @Test(
        "sectionIndexTitles and section(forSectionIndexTitle:at:) use an overridden sectionIndexTitle(forSectionName:)")
    func overriddenSectionIndexTitle() throws {
        final class Titled: NSFetchedResultsController<NSManagedObject>, @unchecked Sendable {
            override func sectionIndexTitle(forSectionName sectionName: String) -> String? {
                String(sectionName.suffix(2)).uppercased()
            }
        }
        let context = try context()
        for (name, group, score) in [("a", "alpha", 10), ("c", "beta", 20), ("e", "gamma", 5)] {
            item(name, group, score, in: context)
        }
        let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
        request.sortDescriptors = [NSSortDescriptor(key: "group", ascending: true)]
        let controller = Titled(
            fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "group", cacheName: nil)
        try controller.performFetch()
        #expect(controller.sectionIndexTitles == ["HA", "TA", "MA"])
        #expect(controller.section(forSectionIndexTitle: "TA", at: 0) == 1)
    }

    /// NSFetchedResultsController reference, `init(fetchRequest:…)`: the request "must have at
    /// least one sort descriptor"; Apple raises for `nil` sort descriptors, but accepts an empty
    /// array (real code passes `[]` for an unsorted list), and the results then come in the
    /// fetch's order.
    @Test("A request whose sort descriptors are nil is refused; an empty array is accepted")
    func sortDescriptorsRequired() throws {
        let context = try context()
        let controller = NSFetchedResultsController(
            fetchRequest: NSFetchRequest<NSManagedObject>(entityName: "Item"), managedObjectContext: context,
            sectionNameKeyPath: nil, cacheName: nil)
        #expect(throws: (any Error).self) { try controller.performFetch() }
        for name in ["b", "a", "c"] {
            NSEntityDescription.insertNewObject(forEntityName: "Item", into: context).setValue(name, forKey: "name")
        }
        let unsorted = NSFetchRequest<NSManagedObject>(entityName: "Item")
        unsorted.sortDescriptors = []
        let accepting = NSFetchedResultsController(
            fetchRequest: unsorted, managedObjectContext: context, sectionNameKeyPath: nil, cacheName: nil)
        try accepting.performFetch()
        #expect(accepting.fetchedObjects?.count == 3)
        #expect(accepting.sections?.first?.numberOfObjects == 3)
    }

    @Test(
        "Random inserts, deletes, key changes and relationship changes, reported in Apple's order, turn the old sections into the new",
        arguments: 0..<60)
    func randomChanges(seed: Int) throws {
        var random = ChangeStateTests.SplitMix(state: UInt64(seed) + 1)
        let context = try context()
        let groups = ["alpha", "beta", "gamma", "delta"]
        let tags = ["red", "green", "blue"].map { label -> NSManagedObject in
            let tag = NSEntityDescription.insertNewObject(forEntityName: "Tag", into: context)
            tag.setValue(label, forKey: "label")
            return tag
        }
        var items: [NSManagedObject] = []
        for n in 0..<30 {
            items.append(
                item(
                    "i\(n)", groups.randomElement(using: &random)!, Int.random(in: 0..<100, using: &random), in: context
                ))
        }
        try context.save()
        let controller = controller(context)
        try controller.performFetch()
        let mirror = SectionMirror(controller)
        controller.delegate = mirror
        for round in 0..<25 {
            for _ in 0..<Int.random(in: 1...5, using: &random) {
                switch Int.random(in: 0..<6, using: &random) {
                case 5 where !items.isEmpty:
                    // A relationship change that changes a sort key (`tag.label`).
                    items.randomElement(using: &random)!.setValue(tags.randomElement(using: &random), forKey: "tag")
                case 0:
                    // Permanent IDs at once: the mirror keeps IDs, and a save would change a temporary one.
                    let new = item(
                        "n\(round)", groups.randomElement(using: &random)!, Int.random(in: 0..<100, using: &random),
                        in: context)
                    try context.obtainPermanentIDs(for: [new])
                    items.append(new)
                case 1 where !items.isEmpty:
                    context.delete(items.remove(at: Int.random(in: 0..<items.count, using: &random)))
                case 2 where !items.isEmpty:
                    items.randomElement(using: &random)!.setValue(
                        groups.randomElement(using: &random)!, forKey: "group")
                case 3 where !items.isEmpty:
                    items.randomElement(using: &random)!.setValue(
                        Int64.random(in: 0..<100, using: &random), forKey: "score")
                default:
                    items.randomElement(using: &random)?.setValue("renamed \(round)", forKey: "name")
                }
            }
            context.processPendingChanges()
            if round % 7 == 6 { try context.save() }
            let expected = (controller.sections ?? []).map { section in
                (section.name, (section.objects ?? []).compactMap { ($0 as? NSManagedObject)?.objectID })
            }
            #expect(mirror.sections.map(\.name) == expected.map(\.0), "seed \(seed) round \(round)")
            #expect(mirror.sections.map(\.ids) == expected.map(\.1), "seed \(seed) round \(round)")
            #expect(mirror.flat == expected.flatMap(\.1), "seed \(seed) round \(round)")
            // The controller's results are what a fresh fetch gives.
            let fresh = self.controller(context)
            try fresh.performFetch()
            #expect(
                fresh.fetchedObjects?.map(\.objectID) == controller.fetchedObjects?.map(\.objectID),
                "seed \(seed) round \(round)")
        }
        #expect(mirror.events.first == "will")
    }

    @Test("Changes merged from another context's save reach the delegate")
    func mergedChanges() throws {
        let context = try context()
        item("a", "alpha", 10, in: context)
        try context.save()
        let controller = controller(context)
        try controller.performFetch()
        let mirror = SectionMirror(controller)
        controller.delegate = mirror
        let other = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        other.persistentStoreCoordinator = context.persistentStoreCoordinator
        item("b", "beta", 20, in: other)
        let observer = NotificationCenter.default.addObserver(
            forName: .NSManagedObjectContextDidSave, object: other, queue: nil
        ) { note in context.mergeChanges(fromContextDidSave: note) }
        try other.save()
        NotificationCenter.default.removeObserver(observer)
        #expect(controller.sections?.map(\.name) == ["alpha", "beta"])
        #expect(mirror.sections.map(\.name) == ["alpha", "beta"])
        #expect(mirror.events == ["will", "section insert", "object insert", "did", "difference"])
    }

    @Test("A child context's save and undo reach the delegate through the context's ObjectsDidChange")
    func childSavesAndUndo() throws {
        let context = try context()
        context.undoManager = UndoManager()
        item("a", "alpha", 10, in: context)
        try context.save()
        let controller = controller(context)
        try controller.performFetch()
        let mirror = SectionMirror(controller)
        controller.delegate = mirror
        // A child context's save changes the parent, which the controller follows.
        let child = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        child.parent = context
        item("b", "beta", 20, in: child)
        try child.save()
        context.processPendingChanges()
        #expect(controller.sections?.map(\.name) == ["alpha", "beta"])
        #expect(mirror.sections.map(\.name) == ["alpha", "beta"])
        // Undo of a change in the context moves the object back.
        context.processPendingChanges()
        context.undoManager?.removeAllActions()
        let a = controller.object(at: IndexPath(item: 0, section: 0))
        context.undoManager?.beginUndoGrouping()
        a.setValue("beta", forKey: "group")
        context.processPendingChanges()
        context.undoManager?.endUndoGrouping()
        #expect(controller.sections?.map(\.name) == ["beta"])
        context.undo()
        context.processPendingChanges()
        #expect(controller.sections?.map(\.name) == ["alpha", "beta"])
        #expect(
            mirror.sections.map(\.ids)
                == (controller.sections ?? []).map {
                    ($0.objects ?? []).compactMap { ($0 as? NSManagedObject)?.objectID }
                })
    }

    @Test("The cache name is kept; deleteCache(withName:) leaves a controller that fetches as before")
    func cacheName() throws {
        let context = try context()
        item("a", "alpha", 10, in: context)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        let controller = NSFetchedResultsController(
            fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: nil, cacheName: "Items")
        #expect(controller.cacheName == "Items")
        NSFetchedResultsController<NSManagedObject>.deleteCache(withName: "Items")
        NSFetchedResultsController<NSManagedObject>.deleteCache(withName: nil)
        try controller.performFetch()
        #expect(controller.sections?.map(\.name) == [""])
        #expect(controller.fetchedObjects?.count == 1)
    }
}
