import OpenCoreData

/// The results of a fetch by batches: the models in order, each made when it is first read, the
/// store's rows read a batch at a time.
///
/// Related documentation: SwiftData, `FetchResultsCollection`.
public struct FetchResultsCollection<Element: PersistentModel>: RandomAccessCollection, @unchecked Sendable {
    private let objects: [NSManagedObject]
    private let context: ModelContext

    init(objects: [NSManagedObject], context: ModelContext) {
        self.objects = objects
        self.context = context
    }

    /// The first position, 0.
    public var startIndex: Int { 0 }
    /// The position after the last model.
    public var endIndex: Int { objects.count }

    /// The model at `position`.
    public subscript(position: Int) -> Element { context.model(of: objects[position], as: Element.self) }
}

extension ModelContext {
    /// The models `descriptor` describes, read from the store `batchSize` at a time as they are
    /// used.
    ///
    /// - Throws: as ``fetch(_:)``.
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, batchSize: Int) throws
        -> FetchResultsCollection<T>
    {
        FetchResultsCollection(objects: try fetchObjects(descriptor, batchSize: batchSize), context: self)
    }

    /// Calls `block` with each model `descriptor` describes, reading them `batchSize` at a time.
    /// After each batch the models the block left unchanged go back to being faults, so memory
    /// holds about one batch; a model the block changed keeps its changes for the next save,
    /// which `allowEscapingMutations` false does not prevent (nothing is discarded).
    ///
    /// - Throws: as ``fetch(_:)``, or what `block` throws (the enumeration stops there).
    public func enumerate<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, batchSize: Int = 5000, allowEscapingMutations: Bool = false,
        block: (T) throws -> Void
    ) throws {
        let objects = try fetchObjects(descriptor, batchSize: max(batchSize, 1))
        var start = 0
        while start < objects.count {
            let batch = objects[start..<min(start + max(batchSize, 1), objects.count)]
            for object in batch { try block(model(of: object, as: T.self)) }
            for object in batch where !object.hasChanges { managedObjectContext.refresh(object, mergeChanges: false) }
            start = batch.endIndex
        }
    }
}
