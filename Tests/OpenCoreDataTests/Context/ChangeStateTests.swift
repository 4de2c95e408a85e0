import CoreData
import Foundation
import Testing

/// An object's change flags and its context's change sets agree, whatever happens to it
/// (NSManagedObject reference: `isInserted` — "inserted in a managed object context",
/// `isUpdated` — "has unsaved changes", `isDeleted` — "will be deleted during the next save";
/// NSManagedObjectContext reference: `insertedObjects`, `updatedObjects`, `deletedObjects` — "the
/// set of objects … not yet saved"). A seeded random walk over the public API — insert, change,
/// delete, undo, redo, save, rollback, refresh, a delete saved by another context and merged —
/// checks after every step that each object is in a set exactly when its flag says so, and in one
/// set at most. (Debug builds also assert the same rules inside the context at every change.)
@Suite("Change state: flags and change sets agree")
struct ChangeStateTests {
    /// A small deterministic generator (SplitMix64), so a failing walk can be replayed.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func check(_ context: NSManagedObjectContext, _ objects: [NSManagedObject], step: String) {
        let inserted = context.insertedObjects
        let updated = context.updatedObjects
        let deleted = context.deletedObjects
        #expect(inserted.isDisjoint(with: updated) && inserted.isDisjoint(with: deleted), "\(step)")
        #expect(updated.isDisjoint(with: deleted), "\(step)")
        for object in objects where object.managedObjectContext === context {
            #expect(object.isInserted == inserted.contains(object), "\(step): isInserted of \(object.objectID)")
            #expect(object.isUpdated == updated.contains(object), "\(step): isUpdated of \(object.objectID)")
            if deleted.contains(object) { #expect(object.isDeleted, "\(step): isDeleted of \(object.objectID)") }
        }
        for object in inserted.union(updated).union(deleted) {
            #expect(object.managedObjectContext === context, "\(step): a change set holds another context's object")
        }
    }

    @Test(arguments: Array(UInt64(1)...12))
    func aRandomWalkKeepsFlagsAndSetsInStep(seed: UInt64) throws {
        var random = SplitMix(state: seed)
        let directory = TemporaryDirectory()
        let context = try sqliteStack(directory.file("Walk.sqlite"))
        let other = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        other.persistentStoreCoordinator = context.persistentStoreCoordinator
        context.undoManager = UndoManager()
        var objects: [NSManagedObject] = []
        for step in 0..<400 {
            let live = objects.filter { $0.managedObjectContext === context }
            let pick = live.isEmpty ? nil : live[Int.random(in: 0..<live.count, using: &random)]
            let operation = Int.random(in: 0..<12, using: &random)
            var name = "\(step)"
            switch operation {
            case 0, 1:
                objects.append(context.employee("e\(step)"))
                name += " insert"
            case 2, 3:
                pick?.setValue("n\(step)", forKey: "name")
                name += " change"
            case 4:
                if let pick { context.delete(pick) }
                name += " delete"
            case 5:
                context.undoManager?.undo()
                name += " undo"
            case 6:
                // Like Apple's, redo() wants no undo group open: the event (and its group) ends first.
                context.processPendingChanges()
                if let undo = context.undoManager, undo.groupingLevel > 0 { undo.endUndoGrouping() }
                context.undoManager?.redo()
                name += " redo"
            case 7:
                try? context.save()
                name += " save"
            case 8:
                context.rollback()
                name += " rollback"
            case 9:
                if let pick { context.refresh(pick, mergeChanges: Bool.random(using: &random)) }
                name += " refresh"
            case 10:
                // Another context deletes a saved employee; this one merges the save.
                if let pick, !pick.objectID.isTemporaryID, let theirs = try? other.existingObject(with: pick.objectID) {
                    other.delete(theirs)
                    let observer = NotificationCenter.default.addObserver(
                        forName: .NSManagedObjectContextDidSave, object: other, queue: nil
                    ) { note in context.mergeChanges(fromContextDidSave: note) }
                    try? other.save()
                    NotificationCenter.default.removeObserver(observer)
                }
                name += " remote delete"
            default:
                context.processPendingChanges()
                name += " end of event"
            }
            Self.check(context, objects, step: name)
        }
        #expect(objects.count > 40)
    }
}
