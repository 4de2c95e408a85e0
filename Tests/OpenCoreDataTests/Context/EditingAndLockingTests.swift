import CoreData
import Foundation
import Testing

/// An editor that commits or refuses as told, recording what it was asked.
final class FormEditor: NSEditor {
    let name: String
    let accepts: Bool
    weak var registration: NSEditorRegistration?
    private(set) var asked: [String] = []

    init(_ name: String, accepts: Bool = true, registeredWith registration: NSEditorRegistration) {
        self.name = name
        self.accepts = accepts
        self.registration = registration
        registration.objectDidBeginEditing(self)
    }

    func commitEditing() -> Bool {
        asked.append("commit")
        if accepts { registration?.objectDidEndEditing(self) }
        return accepts
    }

    func discardEditing() {
        asked.append("discard")
        registration?.objectDidEndEditing(self)
    }
}

/// A commit delegate recording each report.
final class CommitReports: NSEditorCommitDelegate {
    private(set) var reports: [(editor: String, committed: Bool, selector: String)] = []

    func editor(_ editor: NSEditor, didCommit: Bool, selector: Selector, contextInfo: UnsafeMutableRawPointer?) {
        reports.append(((editor as? FormEditor)?.name ?? "?", didCommit, selector.name))
    }
}

/// Editors and locks on a context. Rules: NSManagedObjectContext reference, "Managing Editing"
/// (`objectDidBeginEditing(_:)`, `objectDidEndEditing(_:)`, `commitEditing()` — each registered
/// editor in turn, stopping at the first that cannot commit —, `commitEditing(withDelegate:…)`,
/// `discardEditing()`) and "Locking" (`lock()`, `unlock()`, `tryLock()`; NSPersistentStoreCoordinator
/// reference, the same three, re-entrant).
@Suite("Editors and locks")
struct EditingAndLockingTests {
    func context() throws -> NSManagedObjectContext { try CompanyModel.stack() }

    @Test("commitEditing asks each editor in turn and stops at the first that refuses")
    func commitStopsAtRefusal() throws {
        let context = try context()
        let name = FormEditor("name", registeredWith: context)
        let salary = FormEditor("salary", accepts: false, registeredWith: context)
        let notes = FormEditor("notes", registeredWith: context)
        #expect(context.commitEditing() == false)
        #expect(name.asked == ["commit"])
        #expect(salary.asked == ["commit"])
        #expect(notes.asked.isEmpty, "not asked after a refusal")
    }

    @Test("an editor registers once however often it begins, and leaves when it ends")
    func registration() throws {
        let context = try context()
        let form = FormEditor("form", registeredWith: context)
        context.objectDidBeginEditing(form)
        #expect(context.commitEditing())
        #expect(form.asked == ["commit"], "asked once")
        #expect(context.commitEditing())
        #expect(form.asked == ["commit"], "it ended editing when it committed")
    }

    @Test("commitEditing(withDelegate:) tells the delegate, per editor, whether it committed")
    func commitWithDelegate() throws {
        let context = try context()
        _ = FormEditor("name", registeredWith: context)
        _ = FormEditor("salary", accepts: false, registeredWith: context)
        _ = FormEditor("notes", registeredWith: context)
        let reports = CommitReports()
        context.commitEditing(withDelegate: reports, didCommit: "editor:didCommit:contextInfo:", contextInfo: nil)
        #expect(reports.reports.map(\.editor) == ["name", "salary"])
        #expect(reports.reports.map(\.committed) == [true, false])
        #expect(reports.reports.first?.selector == "editor:didCommit:contextInfo:")
        let silent = CommitReports()
        context.commitEditing(withDelegate: silent, didCommit: nil, contextInfo: nil)
        #expect(silent.reports.isEmpty, "no selector, no report")
    }

    @Test("discardEditing tells every registered editor")
    func discard() throws {
        let context = try context()
        let first = FormEditor("first", registeredWith: context)
        let second = FormEditor("second", accepts: false, registeredWith: context)
        context.discardEditing()
        #expect(first.asked == ["discard"])
        #expect(second.asked == ["discard"])
        #expect(context.commitEditing(), "both ended editing")
    }

    /// Whether another thread could take `lockable`'s lock now (it releases it again at once).
    func otherThreadCanTake(_ lockable: some TryLocking) -> Bool {
        let result = Collector<Bool>()
        let done = DispatchSemaphore(value: 0)
        Thread {
            let took = lockable.tryLock()
            if took { lockable.unlock() }
            result.append(took)
            done.signal()
        }.start()
        done.wait()
        return result.values.first ?? false
    }

    @Test("the context's lock is re-entrant and keeps other threads out until fully unlocked")
    func contextLock() throws {
        let context = try context()
        context.lock()
        #expect(context.tryLock(), "re-entrant on the holding thread")
        #expect(!otherThreadCanTake(context))
        context.unlock()
        #expect(!otherThreadCanTake(context))
        context.unlock()
        #expect(otherThreadCanTake(context))
    }

    @Test("the coordinator's lock is the one its store requests take")
    func coordinatorLock() throws {
        let context = try context()
        let coordinator = try #require(context.persistentStoreCoordinator)
        coordinator.lock()
        // Re-entrant: this thread's own requests still run.
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Employee")) == 0)
        #expect(!otherThreadCanTake(coordinator))
        coordinator.unlock()
        #expect(otherThreadCanTake(coordinator))
    }
}

/// The locks both a context and a coordinator offer.
protocol TryLocking: NSLocking, AnyObject, Sendable {
    func tryLock() -> Bool
}

extension NSManagedObjectContext: TryLocking {}
extension NSPersistentStoreCoordinator: TryLocking {}
