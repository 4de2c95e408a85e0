/// Foundation's undo manager, which Foundation on Linux lacks: a stack of undo groups and a stack
/// of redo groups, each group a list of actions (or nested groups) run in reverse order.
///
/// Actions registered while undoing go to the redo stack, actions registered while redoing go to
/// the undo stack, and any other registration clears the redo stack. With ``groupsByEvent`` (the
/// default) the first registration outside a group opens one, which closes at the end of the
/// current run-loop pass; a program that does not run its run loop closes it itself with
/// ``endUndoGrouping()`` (``undo()`` also closes it first), or turns ``groupsByEvent`` off and
/// brackets its changes with ``beginUndoGrouping()`` / ``endUndoGrouping()``.
///
/// Not thread-safe, as Foundation's: use an undo manager on one thread (or queue) at a time.
///
/// Related documentation: Foundation's UndoManager reference; "Undo Architecture".
open class UndoManager: NSObject {
    /// One registered action, or a closed nested group.
    private enum Action {
        case call(Call)
        case group(Group)

        func refers(to target: AnyObject) -> Bool {
            if case .call(let call) = self { return call.target === target }
            return false
        }
    }

    /// An action and its target, which is not retained (as Foundation's): an action whose target
    /// has gone does nothing.
    private final class Call {
        weak var target: AnyObject?
        let run: (AnyObject) -> Void

        init(target: AnyObject, run: @escaping (AnyObject) -> Void) {
            self.target = target
            self.run = run
        }
    }

    /// A group of actions, undone (or redone) together.
    private final class Group {
        var actions: [Action] = []
        var actionName = ""
        var isDiscardable = false

        /// Removes the actions of `target`, in nested groups too; returns whether any is left.
        func remove(target: AnyObject) -> Bool {
            actions = actions.compactMap { action in
                switch action {
                case .call: return action.refers(to: target) ? nil : action
                case .group(let nested): return nested.remove(target: target) ? action : nil
                }
            }
            return !actions.isEmpty
        }
    }

    private var undoStack: [Group] = []
    private var redoStack: [Group] = []
    /// Groups begun and not yet ended, outermost first.
    private var openGroups: [Group] = []
    /// The group an undo or redo records the opposite actions in.
    private var replayGroup: Group?
    private var disableCount = 0
    /// Counts the groups opened by an event, so a run-loop close only closes its own.
    private var eventGroupSerial = 0
    private var eventGroupIsOpen = false

    /// Whether the first registration outside a group opens a group that closes with the event.
    open var groupsByEvent = true
    /// How many top-level groups the undo stack keeps (the oldest go first); 0 for no limit.
    open var levelsOfUndo = 0 {
        didSet { trimUndoStack() }
    }
    /// The run-loop modes in which an event group closes.
    open var runLoopModes: [RunLoop.Mode] = [.default]
    /// Whether an undo is running.
    open private(set) var isUndoing = false
    /// Whether a redo is running.
    open private(set) var isRedoing = false

    /// Creates an empty undo manager.
    public override init() {
        super.init()
    }

    // MARK: Registering

    /// Records an action that undoes a change: `handler` runs with `target` when the group it is
    /// in is undone. The target is not retained; once it is gone, the action does nothing.
    open func registerUndo<TargetType: AnyObject>(
        withTarget target: TargetType, handler: @escaping (TargetType) -> Void
    ) {
        register(.call(Call(target: target) { handler($0 as! TargetType) }))
    }

    /// Records an action that sends `selector` with `anObject` to `target` when undone. Linux has no
    /// Objective-C messaging: `target` must adopt ``UndoSelectorTarget`` to receive it.
    open func registerUndo(withTarget target: AnyObject, selector: Selector, object anObject: Any?) {
        guard target is UndoSelectorTarget else {
            preconditionFailure(
                "registerUndo(withTarget:selector:object:): \(type(of: target)) does not adopt UndoSelectorTarget")
        }
        register(.call(Call(target: target) { ($0 as? UndoSelectorTarget)?.performUndo(selector, with: anObject) }))
    }

    private func register(_ action: Action) {
        guard isUndoRegistrationEnabled else { return }
        if let replayGroup {
            replayGroup.actions.append(action)
            return
        }
        if openGroups.isEmpty {
            guard groupsByEvent else {
                preconditionFailure("UndoManager: an action was registered outside any undo group")
            }
            beginEventGroup()
        }
        openGroups[openGroups.count - 1].actions.append(action)
        redoStack.removeAll()
    }

    /// Opens the group of the current event and asks the run loop to close it after this pass.
    private func beginEventGroup() {
        beginUndoGrouping()
        eventGroupIsOpen = true
        eventGroupSerial += 1
        let serial = eventGroupSerial
        // The block runs on this thread's run loop, the thread the manager is used on.
        let manager = RunLoopReference(manager: self)
        RunLoop.current.perform(inModes: runLoopModes) {
            guard let self = manager.manager, self.eventGroupIsOpen, self.eventGroupSerial == serial,
                self.groupingLevel == 1
            else { return }
            self.endUndoGrouping()
        }
    }

    /// A weak reference handed to the run loop of the thread the manager is used on.
    private struct RunLoopReference: @unchecked Sendable {
        weak var manager: UndoManager?
    }

    // MARK: Groups

    /// How many groups are open.
    open var groupingLevel: Int { openGroups.count }

    /// Opens a group: the actions registered until the matching ``endUndoGrouping()`` are undone
    /// together. Groups nest.
    open func beginUndoGrouping() {
        if openGroups.isEmpty { eventGroupIsOpen = false }
        post(.NSUndoManagerCheckpoint)
        openGroups.append(Group())
        post(.NSUndoManagerDidOpenUndoGroup)
    }

    /// Closes the innermost open group. A nested group becomes one action of its parent; a
    /// top-level group goes on the undo stack (an empty group is dropped).
    open func endUndoGrouping() {
        guard let group = openGroups.last else {
            preconditionFailure("endUndoGrouping() called with no open undo group")
        }
        post(.NSUndoManagerCheckpoint)
        post(
            .NSUndoManagerWillCloseUndoGroup,
            group.isDiscardable ? [NSUndoManagerGroupIsDiscardableKey: true] : nil)
        openGroups.removeLast()
        if openGroups.isEmpty { eventGroupIsOpen = false }
        if !group.actions.isEmpty {
            if let parent = openGroups.last {
                parent.actions.append(.group(group))
            } else {
                undoStack.append(group)
                trimUndoStack()
            }
        }
        post(.NSUndoManagerDidCloseUndoGroup)
    }

    private func trimUndoStack() {
        if levelsOfUndo > 0, undoStack.count > levelsOfUndo {
            undoStack.removeFirst(undoStack.count - levelsOfUndo)
        }
    }

    // MARK: Undoing and redoing

    /// Whether there is something to undo (a group on the stack, or an open top-level group with
    /// actions, which ``undo()`` would close first).
    open var canUndo: Bool {
        !undoStack.isEmpty || (openGroups.count == 1 && !openGroups[0].actions.isEmpty)
    }

    /// Whether there is something to redo.
    open var canRedo: Bool {
        post(.NSUndoManagerCheckpoint)
        return !redoStack.isEmpty
    }

    /// Closes the open top-level group if there is one, then undoes the last group: its actions
    /// run in reverse order, and what they register becomes one redo group.
    ///
    /// Traps when groups are nested more than one level deep, as Foundation raises.
    open func undo() {
        if openGroups.count == 1 { endUndoGrouping() }
        precondition(openGroups.isEmpty, "undo() called with nested undo groups open")
        undoNestedGroup()
    }

    /// Undoes the last group — the last nested group of the open group if it ends with one, else
    /// the top group of the undo stack — recording what it registers as one redo group.
    open func undoNestedGroup() {
        let group: Group
        if let open = openGroups.last, case .group(let nested)? = open.actions.last {
            open.actions.removeLast()
            group = nested
        } else if openGroups.last?.actions.isEmpty == false {
            preconditionFailure("undoNestedGroup() called with actions registered in the open group")
        } else if let last = undoStack.popLast() {
            group = last
        } else {
            return
        }
        post(.NSUndoManagerCheckpoint)
        post(.NSUndoManagerWillUndoChange)
        let redo = replay(group, flag: \.isUndoing)
        if !redo.actions.isEmpty { redoStack.append(redo) }
        post(.NSUndoManagerDidUndoChange)
    }

    /// Redoes the last undone group, recording what it registers as one undo group.
    open func redo() {
        precondition(openGroups.isEmpty, "redo() called with an undo group open")
        guard let group = redoStack.popLast() else { return }
        post(.NSUndoManagerCheckpoint)
        post(.NSUndoManagerWillRedoChange)
        let undo = replay(group, flag: \.isRedoing)
        if !undo.actions.isEmpty {
            undoStack.append(undo)
            trimUndoStack()
        }
        post(.NSUndoManagerDidRedoChange)
    }

    /// Runs a group's actions last first, collecting what they register in a new group that
    /// keeps the group's name.
    private func replay(_ group: Group, flag: ReferenceWritableKeyPath<UndoManager, Bool>) -> Group {
        let opposite = Group()
        opposite.actionName = group.actionName
        opposite.isDiscardable = group.isDiscardable
        let outer = replayGroup
        replayGroup = opposite
        self[keyPath: flag] = true
        defer {
            self[keyPath: flag] = false
            replayGroup = outer
        }
        run(group)
        return opposite
    }

    private func run(_ group: Group) {
        for action in group.actions.reversed() {
            switch action {
            case .call(let call): if let target = call.target { call.run(target) }
            case .group(let nested): run(nested)
            }
        }
    }

    // MARK: Enabling, clearing

    /// Stops recording actions until a matching ``enableUndoRegistration()``. Calls nest.
    open func disableUndoRegistration() {
        disableCount += 1
    }

    /// Undoes one ``disableUndoRegistration()``. Traps when registration is not disabled, as
    /// Foundation raises.
    open func enableUndoRegistration() {
        precondition(disableCount > 0, "enableUndoRegistration() called without disableUndoRegistration()")
        disableCount -= 1
    }

    /// Whether actions are being recorded.
    open var isUndoRegistrationEnabled: Bool { disableCount == 0 }

    /// Empties both stacks, drops open groups and enables registration again.
    open func removeAllActions() {
        undoStack.removeAll()
        redoStack.removeAll()
        openGroups.removeAll()
        eventGroupIsOpen = false
        disableCount = 0
    }

    /// Removes every action whose target is `target`, from both stacks and open groups.
    open func removeAllActions(withTarget target: Any) {
        let target = target as AnyObject
        undoStack = undoStack.filter { $0.remove(target: target) }
        redoStack = redoStack.filter { $0.remove(target: target) }
        for group in openGroups { _ = group.remove(target: target) }
    }

    // MARK: Action names

    /// Names the group being recorded: the open group, or while undoing or redoing the opposite
    /// group being built.
    open func setActionName(_ actionName: String) {
        (replayGroup ?? openGroups.last)?.actionName = actionName
    }

    /// Marks the group being recorded as discardable (undoing it changes nothing that matters).
    open func setActionIsDiscardable(_ discardable: Bool) {
        (replayGroup ?? openGroups.last)?.isDiscardable = discardable
    }

    /// The name of the group ``undo()`` would undo; empty when unnamed or none.
    open var undoActionName: String {
        (openGroups.first.flatMap { $0.actions.isEmpty ? nil : $0 } ?? undoStack.last)?.actionName ?? ""
    }
    /// The name of the group ``redo()`` would redo; empty when unnamed or none.
    open var redoActionName: String { redoStack.last?.actionName ?? "" }
    /// Whether the group ``undo()`` would undo is discardable.
    open var undoActionIsDiscardable: Bool { undoStack.last?.isDiscardable ?? false }
    /// Whether the group ``redo()`` would redo is discardable.
    open var redoActionIsDiscardable: Bool { redoStack.last?.isDiscardable ?? false }

    /// "Undo" followed by the undo action's name.
    open var undoMenuItemTitle: String { undoMenuTitle(forUndoActionName: undoActionName) }
    /// "Redo" followed by the redo action's name.
    open var redoMenuItemTitle: String { redoMenuTitle(forUndoActionName: redoActionName) }

    /// "Undo" followed by `actionName` (just "Undo" when it is empty).
    open func undoMenuTitle(forUndoActionName actionName: String) -> String {
        actionName.isEmpty ? "Undo" : "Undo \(actionName)"
    }

    /// "Redo" followed by `actionName` (just "Redo" when it is empty).
    open func redoMenuTitle(forUndoActionName actionName: String) -> String {
        actionName.isEmpty ? "Redo" : "Redo \(actionName)"
    }

    private func post(_ name: Notification.Name, _ userInfo: [AnyHashable: Any]? = nil) {
        NotificationCenter.default.post(name: name, object: self, userInfo: userInfo)
    }
}

/// A target of selector-based undo actions: receives the selector and object the action was
/// registered with (Linux's stand-in for Objective-C message sending).
public protocol UndoSelectorTarget: AnyObject {
    /// Performs the undo action named by `selector` with `object`.
    func performUndo(_ selector: Selector, with object: Any?)
}

/// The key in `NSUndoManagerWillCloseUndoGroup`'s user info telling whether the group is discardable.
public let NSUndoManagerGroupIsDiscardableKey = "NSUndoManagerGroupIsDiscardableKey"

extension Notification.Name {
    /// Posted when an undo manager opens or closes a group and when it checks its redo stack.
    public static let NSUndoManagerCheckpoint = Notification.Name("NSUndoManagerCheckpointNotification")
    /// Posted after an undo manager opens a group.
    public static let NSUndoManagerDidOpenUndoGroup = Notification.Name("NSUndoManagerDidOpenUndoGroupNotification")
    /// Posted before an undo manager closes a group.
    public static let NSUndoManagerWillCloseUndoGroup = Notification.Name(
        "NSUndoManagerWillCloseUndoGroupNotification")
    /// Posted after an undo manager closes a group.
    public static let NSUndoManagerDidCloseUndoGroup = Notification.Name("NSUndoManagerDidCloseUndoGroupNotification")
    /// Posted before an undo manager undoes a group.
    public static let NSUndoManagerWillUndoChange = Notification.Name("NSUndoManagerWillUndoChangeNotification")
    /// Posted after an undo manager undoes a group.
    public static let NSUndoManagerDidUndoChange = Notification.Name("NSUndoManagerDidUndoChangeNotification")
    /// Posted before an undo manager redoes a group.
    public static let NSUndoManagerWillRedoChange = Notification.Name("NSUndoManagerWillRedoChangeNotification")
    /// Posted after an undo manager redoes a group.
    public static let NSUndoManagerDidRedoChange = Notification.Name("NSUndoManagerDidRedoChangeNotification")
}
