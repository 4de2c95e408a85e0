extension Schema {
    /// The indexes `#Index` declares for a model class: each binary, on a list of its properties,
    /// or R-tree, for range queries over several numbers at once.
    ///
    /// Related documentation: SwiftData, `Schema.Index`.
    public final class Index<T: PersistentModel>: @unchecked Sendable {
        /// The kind of one index and the properties it covers.
        public enum Types<P: PersistentModel> {
            /// An ordinary (B-tree) index on the properties, in order.
            case binary([PartialKeyPath<P>])
            /// An R-tree index on the properties, for range queries over them together.
            case rtree([PartialKeyPath<P>])
        }

        /// The indexes.
        public let indices: [Types<T>]

        /// Indexes of the kinds given.
        public init(_ indices: Types<T>...) {
            self.indices = indices
        }

        /// Binary indexes, each on a list of properties.
        public init(_ binaryIndices: [PartialKeyPath<T>]...) {
            indices = binaryIndices.map { .binary($0) }
        }

        /// The key paths of each index of one kind, as a model class lists them.
        public func keyPaths(rTree: Bool) -> [[AnyKeyPath]] {
            indices.compactMap { index in
                switch index {
                case .binary(let keyPaths): rTree ? nil : keyPaths
                case .rtree(let keyPaths): rTree ? keyPaths : nil
                }
            }
        }
    }
}
