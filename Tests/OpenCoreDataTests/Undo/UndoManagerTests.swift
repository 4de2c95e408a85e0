import CoreData
import Foundation
import Testing

/// A value whose setter registers its own undo, the pattern Foundation's UndoManager reference
/// shows: undoing sets the old value through the same setter, which registers the redo.
final class Counter {
    let undoManager: UndoManager
    private(set) var value = 0

    init(_ undoManager: UndoManager) { self.undoManager = undoManager }

    func set(_ newValue: Int) {
        let old = value
        undoManager.registerUndo(withTarget: self) { $0.set(old) }
        value = newValue
    }
}

/// Foundation's UndoManager, which Linux lacks. Rules: UndoManager reference (registering,
/// grouping, `groupsByEvent`, `levelsOfUndo`, `undo()`/`redo()`/`undoNestedGroup()`, enabling,
/// removing, action names, notifications); "Undo Architecture".
@Suite("UndoManager")
struct UndoManagerTests {
    /// An undo manager whose groups the test opens and closes.
    func manual() -> UndoManager {
        let manager = UndoManager()
        manager.groupsByEvent = false
        return manager
    }

    func step(_ counter: Counter, _ value: Int) {
        counter.undoManager.beginUndoGrouping()
        counter.set(value)
        counter.undoManager.endUndoGrouping()
    }

    @Test("undo runs a group's actions and records what they register as the redo group")
    func undoThenRedo() {
        let counter = Counter(manual())
        step(counter, 1)
        step(counter, 2)
        #expect(counter.undoManager.canUndo)
        #expect(!counter.undoManager.canRedo)
        counter.undoManager.undo()
        #expect(counter.value == 1)
        #expect(counter.undoManager.canRedo)
        counter.undoManager.undo()
        #expect(counter.value == 0)
        #expect(!counter.undoManager.canUndo)
        counter.undoManager.redo()
        counter.undoManager.redo()
        #expect(counter.value == 2)
        #expect(!counter.undoManager.canRedo)
    }

    @Test("a group's actions are undone together, last registered first")
    func groupUndoneTogether() {
        let counter = Counter(manual())
        counter.undoManager.beginUndoGrouping()
        counter.set(1)
        counter.set(2)
        counter.set(3)
        counter.undoManager.endUndoGrouping()
        counter.undoManager.undo()
        #expect(counter.value == 0)
        counter.undoManager.redo()
        #expect(counter.value == 3)
    }

    @Test("undoNestedGroup undoes the last nested group inside the open group")
    func nestedGroups() {
        let counter = Counter(manual())
        let manager = counter.undoManager
        manager.beginUndoGrouping()
        counter.set(1)
        manager.beginUndoGrouping()
        counter.set(2)
        manager.endUndoGrouping()
        #expect(manager.groupingLevel == 1)
        manager.undoNestedGroup()
        #expect(counter.value == 1, "only the nested group")
        manager.endUndoGrouping()
        manager.undo()
        #expect(counter.value == 0)
    }

    @Test("groupsByEvent: a registration opens a group that undo() closes first")
    func groupsByEventUndo() {
        let manager = UndoManager()
        let counter = Counter(manager)
        #expect(manager.groupsByEvent)
        counter.set(1)
        counter.set(2)
        #expect(manager.groupingLevel == 1)
        manager.undo()
        #expect(manager.groupingLevel == 0)
        #expect(counter.value == 0, "both registrations were one event")
    }

    @Test("groupsByEvent: the event group closes at the end of the run-loop pass")
    func groupsByEventRunLoop() {
        let manager = UndoManager()
        let counter = Counter(manager)
        counter.set(1)
        RunLoop.current.run(until: Date().addingTimeInterval(0.01))
        #expect(manager.groupingLevel == 0)
        counter.set(2)
        RunLoop.current.run(until: Date().addingTimeInterval(0.01))
        manager.undo()
        #expect(counter.value == 1, "each pass was its own group")
    }

    @Test("a program without a run loop closes the event group with endUndoGrouping()")
    func groupsByEventWithoutRunLoop() {
        let manager = UndoManager()
        let counter = Counter(manager)
        counter.set(1)
        manager.endUndoGrouping()
        counter.set(2)
        manager.endUndoGrouping()
        manager.undo()
        #expect(counter.value == 1)
    }

    @Test("levelsOfUndo keeps only the most recent groups")
    func levelsOfUndo() {
        let counter = Counter(manual())
        counter.undoManager.levelsOfUndo = 2
        for value in 1...4 { step(counter, value) }
        counter.undoManager.undo()
        counter.undoManager.undo()
        #expect(counter.value == 2)
        #expect(!counter.undoManager.canUndo)
    }

    @Test("registering while disabled records nothing; disabling nests")
    func disabling() {
        let counter = Counter(manual())
        let manager = counter.undoManager
        step(counter, 1)
        manager.disableUndoRegistration()
        manager.disableUndoRegistration()
        step(counter, 2)
        manager.enableUndoRegistration()
        #expect(!manager.isUndoRegistrationEnabled)
        step(counter, 3)
        manager.enableUndoRegistration()
        #expect(manager.isUndoRegistrationEnabled)
        manager.undo()
        #expect(counter.value == 0, "the only recorded step set 1 from 0")
    }

    @Test("a new registration clears the redo stack")
    func registrationClearsRedo() {
        let counter = Counter(manual())
        step(counter, 1)
        counter.undoManager.undo()
        #expect(counter.undoManager.canRedo)
        step(counter, 5)
        #expect(!counter.undoManager.canRedo)
    }

    @Test("isUndoing and isRedoing are true while the actions run")
    func undoingFlags() {
        let manager = manual()
        final class Probe {
            var seen: [String] = []
        }
        let probe = Probe()
        func record(_ probe: Probe) {
            probe.seen.append(manager.isUndoing ? "undoing" : manager.isRedoing ? "redoing" : "neither")
            manager.registerUndo(withTarget: probe, handler: record)
        }
        manager.beginUndoGrouping()
        manager.registerUndo(withTarget: probe, handler: record)
        manager.endUndoGrouping()
        manager.undo()
        manager.redo()
        #expect(probe.seen == ["undoing", "redoing"])
        #expect(!manager.isUndoing && !manager.isRedoing)
    }

    @Test("removeAllActions empties both stacks and enables registration; withTarget removes one target's")
    func removing() {
        let manager = manual()
        let first = Counter(manager)
        let second = Counter(manager)
        manager.beginUndoGrouping()
        first.set(1)
        second.set(1)
        manager.endUndoGrouping()
        manager.removeAllActions(withTarget: first)
        manager.undo()
        #expect(first.value == 1)
        #expect(second.value == 0)
        manager.disableUndoRegistration()
        manager.removeAllActions()
        #expect(!manager.canUndo && !manager.canRedo)
        #expect(manager.isUndoRegistrationEnabled)
    }

    @Test("action names and menu titles follow the group to the redo stack")
    func actionNames() {
        let counter = Counter(manual())
        let manager = counter.undoManager
        manager.beginUndoGrouping()
        counter.set(1)
        manager.setActionName("Raise")
        manager.endUndoGrouping()
        #expect(manager.undoActionName == "Raise")
        #expect(manager.undoMenuItemTitle == "Undo Raise")
        #expect(manager.redoMenuItemTitle == "Redo")
        manager.undo()
        #expect(manager.redoActionName == "Raise")
        #expect(manager.redoMenuItemTitle == "Redo Raise")
        #expect(manager.undoMenuTitle(forUndoActionName: "") == "Undo")
    }

    @Test("notifications: open, close, undo and redo, with the manager as object")
    func notifications() {
        let counter = Counter(manual())
        let manager = counter.undoManager
        let names: [Notification.Name] = [
            .NSUndoManagerDidOpenUndoGroup, .NSUndoManagerWillCloseUndoGroup, .NSUndoManagerDidCloseUndoGroup,
            .NSUndoManagerWillUndoChange, .NSUndoManagerDidUndoChange, .NSUndoManagerWillRedoChange,
            .NSUndoManagerDidRedoChange,
        ]
        let recorder = NotificationRecorder(names, object: manager)
        step(counter, 1)
        manager.undo()
        manager.redo()
        #expect(recorder.notes.map(\.name) == names)
    }

    @Test("the undo manager does not retain targets: an action whose target is gone does nothing")
    func targetsNotRetained() {
        let manager = manual()
        weak var gone: Counter?
        do {
            let counter = Counter(manager)
            gone = counter
            step(counter, 1)
        }
        #expect(gone == nil)
        manager.undo()
        #expect(!manager.canUndo)
    }

    final class Named: UndoSelectorTarget {
        var name = "Ada"
        func performUndo(_ selector: Selector, with object: Any?) {
            if selector == "setName:", let name = object as? String { self.name = name }
        }
    }

    @Test("selector-based registration reaches a target adopting UndoSelectorTarget")
    func selectorRegistration() {
        let manager = manual()
        let target = Named()
        manager.beginUndoGrouping()
        manager.registerUndo(withTarget: target, selector: "setName:", object: target.name)
        target.name = "Grace"
        manager.endUndoGrouping()
        manager.undo()
        #expect(target.name == "Ada")
    }
}
