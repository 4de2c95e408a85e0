/// Editors and locks: the context as AppKit's `NSEditorRegistration` and `NSEditor` (Linux has no
/// AppKit, so the protocols are declared here and any object — a form, a command-line prompt —
/// can register), and the legacy `NSLocking` alternative to `perform`.
///
/// Related documentation: NSManagedObjectContext reference, "Managing Editing" and "Locking";
/// NSEditor and NSEditorRegistration references (AppKit).

/// An object that edits values and can be asked to commit or discard what it holds.
public protocol NSEditor: AnyObject {
    /// Discards any uncommitted edit.
    func discardEditing()
    /// Commits the pending edit; `false` when it cannot (the value is invalid, say).
    func commitEditing() -> Bool
    /// Commits the pending edit, then tells `delegate` (an ``NSEditorCommitDelegate``) whether it
    /// did, when `didCommitSelector` is given.
    func commitEditing(
        withDelegate delegate: Any?, didCommit didCommitSelector: Selector?, contextInfo: UnsafeMutableRawPointer?)
    /// Commits the pending edit or throws why it cannot.
    func commitEditingAndReturnError() throws
}

extension NSEditor {
    /// Commits with ``commitEditing()`` and tells the delegate the outcome.
    public func commitEditing(
        withDelegate delegate: Any?, didCommit didCommitSelector: Selector?, contextInfo: UnsafeMutableRawPointer?
    ) {
        let committed = commitEditing()
        guard let didCommitSelector, let delegate = delegate as? NSEditorCommitDelegate else { return }
        delegate.editor(self, didCommit: committed, selector: didCommitSelector, contextInfo: contextInfo)
    }

    /// Commits with ``commitEditing()``; throws `NSManagedObjectValidationError` (1550) when it refuses.
    public func commitEditingAndReturnError() throws {
        guard commitEditing() else {
            throw CoreDataError.make(NSManagedObjectValidationError, "The editor could not commit its edit.")
        }
    }
}

/// The object a `commitEditing(withDelegate:didCommit:contextInfo:)` reports to. Linux has no
/// Objective-C messaging: the delegate receives the selector it was given along with the outcome.
public protocol NSEditorCommitDelegate: AnyObject {
    /// `editor` committed (`didCommit` true) or refused; `selector` and `contextInfo` are those
    /// given to `commitEditing(withDelegate:didCommit:contextInfo:)`.
    func editor(_ editor: NSEditor, didCommit: Bool, selector: Selector, contextInfo: UnsafeMutableRawPointer?)
}

/// An object that editors tell when they begin and end editing.
public protocol NSEditorRegistration: AnyObject {
    /// `editor` has uncommitted changes.
    func objectDidBeginEditing(_ editor: NSEditor)
    /// `editor` has no uncommitted changes any more.
    func objectDidEndEditing(_ editor: NSEditor)
}

extension NSManagedObjectContext: NSEditorRegistration, NSEditor, NSLocking {
    /// Registers `editor` as holding uncommitted changes, once however often it begins.
    public func objectDidBeginEditing(_ editor: NSEditor) {
        if !editors.contains(where: { $0 === editor }) { editors.append(editor) }
    }

    /// Unregisters `editor`.
    public func objectDidEndEditing(_ editor: NSEditor) {
        editors.removeAll { $0 === editor }
    }

    /// Asks each registered editor, in the order they registered, to commit; stops at the first
    /// that refuses and returns `false`. (An editor that commits tells the context it ended
    /// editing, as AppKit's editors do.)
    public func commitEditing() -> Bool {
        for editor in editors {
            guard editor.commitEditing() else { return false }
        }
        return true
    }

    /// Asks each registered editor to commit, telling `delegate` (an ``NSEditorCommitDelegate``)
    /// after each whether it did, and stops at the first that refuses.
    public func commitEditing(
        withDelegate delegate: Any?, didCommit didCommitSelector: Selector?, contextInfo: UnsafeMutableRawPointer?
    ) {
        let delegate = didCommitSelector == nil ? nil : delegate as? NSEditorCommitDelegate
        for editor in editors {
            let committed = editor.commitEditing()
            if let delegate, let didCommitSelector {
                delegate.editor(editor, didCommit: committed, selector: didCommitSelector, contextInfo: contextInfo)
            }
            if !committed { return }
        }
    }

    /// Tells every registered editor to discard its uncommitted changes.
    public func discardEditing() {
        for editor in editors { editor.discardEditing() }
    }

    /// Takes the context's lock (re-entrant). The legacy way to use a context from several threads;
    /// use `perform` / `performAndWait` instead.
    public func lock() { contextLock.lock() }

    /// Releases the context's lock.
    public func unlock() { contextLock.unlock() }

    /// Takes the context's lock if no other thread holds it; returns whether it did.
    public func tryLock() -> Bool { contextLock.try() }
}

extension NSPersistentStoreCoordinator: NSLocking {
    /// Takes the coordinator's lock (re-entrant): until ``unlock()``, no other thread's context
    /// reaches the stores. The legacy alternative to `perform` / `performAndWait`.
    public func lock() { requestLock.lock() }

    /// Releases the coordinator's lock.
    public func unlock() { requestLock.unlock() }

    /// Takes the coordinator's lock if no other thread holds it; returns whether it did.
    public func tryLock() -> Bool { requestLock.try() }
}
