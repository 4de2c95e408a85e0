internal import CPrefetch

// An object as an entry of the library's tables and bulk loops: filed under its ID in a context's
// registry (`IDTable`), keyed by identity where a table needs a hashable key, and asked for ahead
// of its turn by a loop going through many objects (ARCHITECTURE.md, "Misses overlapped").

extension NSManagedObject: IDTableEntry {}

extension NSManagedObject {
    /// Asks the processor to bring in the object's first cache line (its reference count and
    /// first fields); a hint, as ``IDTable/prefetch(_:)``.
    @inline(__always)
    func prefetch() {
        ocd_prefetch_for_write(Unmanaged.passUnretained(self).toOpaque())
    }

    /// Asks the processor to bring in the header of the row the object holds, if any (its
    /// reference count and row fields); a hint.
    @inline(__always)
    func prefetchHeldRow() {
        // The address is taken, and the reference let go of, before the hint.
        let address = heldRow.map { Unmanaged.passUnretained($0).toOpaque() }
        if let address { ocd_prefetch_for_write(address) }
    }
}

extension NSManagedObject: IdentityKeyed {
    var identityKey: AnyHashable { AnyHashable(objectID) }
}

extension NSManagedObjectID: IdentityKeyed {
    var identityKey: AnyHashable { AnyHashable(self) }
}
