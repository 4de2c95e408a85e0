/// `IndexPath`'s section and item (or row), which UIKit and AppKit add on Apple platforms and
/// fetched results controllers use: the first index is the section, the second the item.
extension IndexPath {
    /// An index path to `item` in `section`.
    public init(item: Int, section: Int) {
        self.init(indexes: [section, item])
    }

    /// An index path to `row` in `section`.
    public init(row: Int, section: Int) {
        self.init(indexes: [section, row])
    }

    /// The section: the first index.
    public var section: Int {
        get { self[0] }
        set { self[0] = newValue }
    }

    /// The item within the section: the second index.
    public var item: Int {
        get { self[1] }
        set { self[1] = newValue }
    }

    /// The row within the section: the second index (the same as ``item``).
    public var row: Int {
        get { self[1] }
        set { self[1] = newValue }
    }
}
