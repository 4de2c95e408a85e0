import OpenCoreData

/// A position in the persistent history of a container's stores, ordered as the transactions are.
///
/// Related documentation: SwiftData, `HistoryToken`.
public protocol HistoryToken: Codable, Comparable, Hashable, Sendable {}

/// The token of ``DefaultHistoryTransaction``: for each store, the number of the last transaction
/// it covers.
///
/// Related documentation: SwiftData, `DefaultHistoryToken`.
public struct DefaultHistoryToken: HistoryToken {
    /// The last transaction number covered, by store identifier.
    let numbers: [String: Int64]

    /// Whether `lhs` comes before `rhs`: no store of `lhs` is past `rhs`'s position in it, and
    /// one is before it (as Core Data orders its history tokens).
    public static func < (lhs: DefaultHistoryToken, rhs: DefaultHistoryToken) -> Bool {
        NSPersistentHistoryToken(numbers: lhs.numbers) < NSPersistentHistoryToken(numbers: rhs.numbers)
    }
}

/// One save recorded in persistent history: who made it, when, in which store, and what changed.
///
/// Related documentation: SwiftData, `HistoryTransaction`.
public protocol HistoryTransaction: Hashable, Identifiable, Sendable {
    /// The type of the transaction's token.
    associatedtype TokenType: HistoryToken
    /// The transaction's number in its store.
    var transactionIdentifier: Int64 { get }
    /// The author of the context that saved (``ModelContext/author``).
    var author: String? { get }
    /// The bundle identifier of the program that saved.
    var bundleIdentifier: String { get }
    /// The process that saved.
    var processIdentifier: String { get }
    /// The identifier of the store.
    var storeIdentifier: String { get }
    /// When the save happened.
    var timestamp: Date { get }
    /// The position of the transaction in the history.
    var token: TokenType { get }
    /// What changed, one change per model.
    var changes: [HistoryChange] { get }
}

/// The transactions `ModelContext.fetchHistory(_:)` answers.
///
/// Related documentation: SwiftData, `DefaultHistoryTransaction`.
public struct DefaultHistoryTransaction: HistoryTransaction, @unchecked Sendable {
    /// The transaction's number in its store.
    public let transactionIdentifier: Int64
    /// The author of the context that saved.
    public let author: String?
    /// The bundle identifier of the program that saved.
    public let bundleIdentifier: String
    /// The process that saved.
    public let processIdentifier: String
    /// The identifier of the store.
    public let storeIdentifier: String
    /// When the save happened.
    public let timestamp: Date
    /// The position of the transaction in the history.
    public let token: DefaultHistoryToken
    /// What changed, one change per model.
    public let changes: [HistoryChange]

    /// The transaction's identity: its number in its store.
    public var id: Int64 { transactionIdentifier }

    /// Transactions are the same when they are the same store's same transaction.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.storeIdentifier == rhs.storeIdentifier && lhs.transactionIdentifier == rhs.transactionIdentifier
    }

    /// Hashes the store and the transaction number.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(storeIdentifier)
        hasher.combine(transactionIdentifier)
    }

    /// The transaction `transaction` of Core Data's history, its changes typed by the model
    /// classes of `schema` (a change of an entity the schema has no class for is left out).
    init(_ transaction: NSPersistentHistoryTransaction, schema: Schema) {
        transactionIdentifier = transaction.transactionNumber
        author = transaction.author
        bundleIdentifier = transaction.bundleID
        processIdentifier = transaction.processID
        storeIdentifier = transaction.storeID
        timestamp = transaction.timestamp
        token = DefaultHistoryToken(numbers: [transaction.storeID: transaction.transactionNumber])
        changes = (transaction.changes ?? []).compactMap { change in
            guard let type = schema.typesByEntityName[change.changedObjectID.entity.name ?? ""] else { return nil }
            func typed<Model: PersistentModel>(_ model: Model.Type) -> HistoryChange {
                let id = PersistentIdentifier(change.changedObjectID)
                let number = transaction.transactionNumber
                switch change.changeType {
                case .insert:
                    return .insert(DefaultHistoryInsert<Model>(id, change.changeID, number))
                case .update:
                    let properties = ModelProperties.of(Model.self)
                    let keyPaths = (change.updatedProperties ?? []).sorted { $0.name < $1.name }.compactMap {
                        properties.keyPath(named: $0.name) as? PartialKeyPath<Model>
                    }
                    return .update(DefaultHistoryUpdate<Model>(id, change.changeID, number, keyPaths))
                case .delete:
                    var values: [String: Any] = [:]
                    for case (let key as String, let value) in change.tombstone ?? [:] { values[key] = value }
                    return .delete(
                        DefaultHistoryDelete<Model>(id, change.changeID, number, HistoryTombstone(values: values)))
                }
            }
            return typed(type)
        }
    }
}

/// One change of a transaction.
///
/// Related documentation: SwiftData, `HistoryChange`.
public enum HistoryChange: @unchecked Sendable {
    /// A model was inserted.
    case insert(any HistoryInsert)
    /// A model was updated.
    case update(any HistoryUpdate)
    /// A model was deleted.
    case delete(any HistoryDelete)

    /// The identifier of the model that changed.
    public var changedPersistentIdentifier: PersistentIdentifier {
        switch self {
        case .insert(let change): change.changedPersistentIdentifier
        case .update(let change): change.changedPersistentIdentifier
        case .delete(let change): change.changedPersistentIdentifier
        }
    }
}

/// An insert of a model.
///
/// Related documentation: SwiftData, `HistoryInsert`.
public protocol HistoryInsert<Model>: Hashable, Sendable {
    /// The model class.
    associatedtype Model: PersistentModel
    /// The identifier of the model that changed.
    var changedPersistentIdentifier: PersistentIdentifier { get }
    /// The change's number in the history.
    var changeIdentifier: Int64 { get }
    /// The number of the change's transaction.
    var transactionIdentifier: Int64 { get }
}

/// An update of a model: which of its attributes changed.
///
/// Related documentation: SwiftData, `HistoryUpdate`.
public protocol HistoryUpdate<Model>: Hashable, Sendable {
    /// The model class.
    associatedtype Model: PersistentModel
    /// The identifier of the model that changed.
    var changedPersistentIdentifier: PersistentIdentifier { get }
    /// The change's number in the history.
    var changeIdentifier: Int64 { get }
    /// The number of the change's transaction.
    var transactionIdentifier: Int64 { get }
    /// The persisted properties the update changed.
    var updatedAttributes: [PartialKeyPath<Model>] { get }
}

/// A deletion of a model, with the values its `.preserveValueOnDeletion` attributes had.
///
/// Related documentation: SwiftData, `HistoryDelete`.
public protocol HistoryDelete<Model>: Hashable, Sendable {
    /// The model class.
    associatedtype Model: PersistentModel
    /// The identifier of the model that changed.
    var changedPersistentIdentifier: PersistentIdentifier { get }
    /// The change's number in the history.
    var changeIdentifier: Int64 { get }
    /// The number of the change's transaction.
    var transactionIdentifier: Int64 { get }
    /// The preserved values.
    var tombstone: HistoryTombstone<Model> { get }
}

/// The insert ``DefaultHistoryTransaction`` records.
public struct DefaultHistoryInsert<Model: PersistentModel>: HistoryInsert {
    /// The identifier of the model that changed.
    public let changedPersistentIdentifier: PersistentIdentifier
    /// The change's number in the history.
    public let changeIdentifier: Int64
    /// The number of the change's transaction.
    public let transactionIdentifier: Int64

    init(_ id: PersistentIdentifier, _ change: Int64, _ transaction: Int64) {
        changedPersistentIdentifier = id
        changeIdentifier = change
        transactionIdentifier = transaction
    }
}

/// The update ``DefaultHistoryTransaction`` records.
public struct DefaultHistoryUpdate<Model: PersistentModel>: HistoryUpdate, @unchecked Sendable {
    /// The identifier of the model that changed.
    public let changedPersistentIdentifier: PersistentIdentifier
    /// The change's number in the history.
    public let changeIdentifier: Int64
    /// The number of the change's transaction.
    public let transactionIdentifier: Int64
    /// The persisted properties the update changed.
    public let updatedAttributes: [PartialKeyPath<Model>]

    init(_ id: PersistentIdentifier, _ change: Int64, _ transaction: Int64, _ attributes: [PartialKeyPath<Model>]) {
        changedPersistentIdentifier = id
        changeIdentifier = change
        transactionIdentifier = transaction
        updatedAttributes = attributes
    }
}

/// The deletion ``DefaultHistoryTransaction`` records.
public struct DefaultHistoryDelete<Model: PersistentModel>: HistoryDelete {
    /// The identifier of the model that changed.
    public let changedPersistentIdentifier: PersistentIdentifier
    /// The change's number in the history.
    public let changeIdentifier: Int64
    /// The number of the change's transaction.
    public let transactionIdentifier: Int64
    /// The values the deleted model's `.preserveValueOnDeletion` attributes had.
    public let tombstone: HistoryTombstone<Model>

    init(_ id: PersistentIdentifier, _ change: Int64, _ transaction: Int64, _ tombstone: HistoryTombstone<Model>) {
        changedPersistentIdentifier = id
        changeIdentifier = change
        transactionIdentifier = transaction
        self.tombstone = tombstone
    }

    /// Deletions are the same when they are the same change.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.changeIdentifier == rhs.changeIdentifier }

    /// Hashes the change's number.
    public func hash(into hasher: inout Hasher) { hasher.combine(changeIdentifier) }
}

/// The values a deleted model's `.preserveValueOnDeletion` attributes had.
///
/// Related documentation: SwiftData, `HistoryTombstone`.
public struct HistoryTombstone<Model: PersistentModel>: Sequence, @unchecked Sendable {
    /// The preserved values by property name.
    let values: [String: Any]

    /// The preserved value of the property at `keyPath`; `nil` when it was not preserved.
    public subscript<Value>(keyPath: KeyPath<Model, Value>) -> Value? {
        guard let name = ModelProperties.of(Model.self).name(for: keyPath), let value = values[name] else {
            return nil
        }
        return StoredValue.converted(value, to: Value.self)
    }

    /// Each preserved value with its property's key path.
    public func makeIterator() -> some IteratorProtocol<(keyPath: PartialKeyPath<Model>, value: Any)> {
        let properties = ModelProperties.of(Model.self)
        return values.sorted { $0.key < $1.key }.compactMap { name, value in
            (properties.keyPath(named: name) as? PartialKeyPath<Model>).map { (keyPath: $0, value: value) }
        }.makeIterator()
    }
}

/// Which transactions to fetch or delete: those `predicate` accepts, in `sortBy` order (the
/// history's order by default), at most `fetchLimit` of them.
///
/// Related documentation: SwiftData, `HistoryDescriptor`.
public struct HistoryDescriptor<HistoryTransactionType: HistoryTransaction>: @unchecked Sendable {
    /// The transactions to keep; all when `nil`.
    public var predicate: Predicate<HistoryTransactionType>?
    /// The order of the results; the history's when empty.
    public var sortBy: [SortDescriptor<HistoryTransactionType>]
    /// At most this many transactions; no limit when `nil`.
    public var fetchLimit: Int?

    /// A descriptor of the transactions `predicate` accepts.
    public init(
        predicate: Predicate<HistoryTransactionType>? = nil, sortBy: [SortDescriptor<HistoryTransactionType>] = []
    ) {
        self.predicate = predicate
        self.sortBy = sortBy
    }
}

extension ModelContext {
    /// The transactions of the container's persistent history that `descriptor` describes, oldest
    /// first unless it sorts them. The predicate is evaluated by Foundation on each transaction.
    ///
    /// - Throws: the store's error; an error the predicate throws while evaluated.
    public func fetchHistory<T: HistoryTransaction>(_ descriptor: HistoryDescriptor<T>) throws -> [T] {
        var matching = try transactions(of: try historyTransactions(), matching: descriptor.predicate)
        if !descriptor.sortBy.isEmpty { matching.sort(using: descriptor.sortBy) }
        if let limit = descriptor.fetchLimit { matching = Array(matching.prefix(max(limit, 0))) }
        return matching
    }

    /// Deletes the transactions of the persistent history that `descriptor` describes. History is
    /// deleted from its start, as Core Data deletes it: the transactions described must be the
    /// oldest ones of their stores.
    ///
    /// - Throws: `NSPersistentStoreOperationError` (134070) when a transaction not described is
    ///   older than one that is (nothing is deleted then); the store's error.
    public func deleteHistory<T: HistoryTransaction>(_ descriptor: HistoryDescriptor<T>) throws {
        let all = try historyTransactions()
        let doomed = try transactions(of: all, matching: descriptor.predicate).compactMap {
            $0 as? DefaultHistoryTransaction
        }
        let doomedSet = Set(doomed)
        var last: [String: Int64] = [:]
        for transaction in doomed {
            last[transaction.storeIdentifier] = max(
                last[transaction.storeIdentifier] ?? 0, transaction.transactionIdentifier)
        }
        for transaction in all
        where transaction.transactionIdentifier <= last[transaction.storeIdentifier] ?? 0
            && !doomedSet.contains(transaction)
        {
            throw NSError(
                domain: NSCocoaErrorDomain, code: NSPersistentStoreOperationError,
                userInfo: [
                    NSLocalizedDescriptionKey:
                        "History is deleted from its start: transaction \(transaction.transactionIdentifier) is older than one to delete and is not described."
                ])
        }
        guard !last.isEmpty else { return }
        _ = try managedObjectContext.execute(
            NSPersistentHistoryChangeRequest.deleteHistory(before: NSPersistentHistoryToken(numbers: last)))
    }

    /// The transactions of `all` that are `T`s and that `predicate` accepts (all when `nil`).
    private func transactions<T: HistoryTransaction>(
        of all: [DefaultHistoryTransaction], matching predicate: Predicate<T>?
    ) throws -> [T] {
        let typed = all.compactMap { $0 as? T }
        guard let predicate else { return typed }
        return try typed.filter { try predicate.evaluate($0) }
    }

    /// Every transaction of the container's stores, oldest first.
    private func historyTransactions() throws -> [DefaultHistoryTransaction] {
        let result = try managedObjectContext.execute(
            NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?))
        let transactions = (result as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction] ?? []
        return transactions.map { DefaultHistoryTransaction($0, schema: container.schema) }
    }
}
