import ArgumentParser
import CoreData

/// `coredata history STORE`: the persistent history a SQLite or PostgreSQL store records.
struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Print the transactions and changes of a store's persistent history.",
        discussion:
            "Reads the history tables Core Data writes with NSPersistentHistoryTrackingKey (Apple-written ones "
            + "included), without changing the store. Each transaction shows its number (pass it to --after to "
            + "see only later ones), time, author, bundle, process and context name, then one line per change: "
            + "insert, update (with the properties changed) or delete (with its tombstone), and the object.")

    @Argument(help: "The store: a SQLite file or a postgres:// URL.") var store: String
    @Option(help: "A model file to open the store with (default: the model cached in the store).") var model: String?
    @Option(help: "Show only transactions after this transaction number.") var after: Int64?
    @Option(help: "Show only transactions of this author (transactionAuthor).") var author: String?
    @Option(help: "table or json.") var format: OutputFormat = .table

    func run() throws {
        let opened = try OpenedStore.open(store, modelPath: model, options: [NSPersistentHistoryTrackingKey: true])
        guard let identifier = opened.coordinator.persistentStores.first?.identifier else { return }
        let token = after.map { NSPersistentHistoryToken(numbers: [identifier: $0]) }
        let request = NSPersistentHistoryChangeRequest.fetchHistory(after: token)
        let result: NSPersistentStoreResult
        do {
            result = try opened.context.execute(request)
        } catch {
            throw ToolError.data("\(store): \(ToolError.describe(error))")
        }
        var transactions = (result as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction] ?? []
        if let author { transactions = transactions.filter { $0.author == author } }
        switch format {
        case .json:
            let objects = transactions.map(Self.json)
            let data = try JSONSerialization.data(
                withJSONObject: objects, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
        case .table, .csv:
            for transaction in transactions {
                let who = [
                    transaction.author.map { "author \($0)" }, "bundle \(transaction.bundleID)",
                    "process \(transaction.processID)", transaction.contextName.map { "context \($0)" },
                ].compactMap { $0 }.joined(separator: ", ")
                print("#\(transaction.transactionNumber)  \(Values.text(transaction.timestamp))  \(who)")
                for change in transaction.changes ?? [] { print("  " + Self.describe(change)) }
            }
            print("(\(transactions.count) \(transactions.count == 1 ? "transaction" : "transactions"))")
        }
    }

    static func name(_ type: NSPersistentHistoryChangeType) -> String {
        switch type {
        case .insert: "insert"
        case .update: "update"
        case .delete: "delete"
        }
    }

    static func describe(_ change: NSPersistentHistoryChange) -> String {
        var line =
            "\(name(change.changeType).padding(toLength: 6, withPad: " ", startingAt: 0)) "
            + change.changedObjectID.uriRepresentation().absoluteString
        if let properties = change.updatedProperties, !properties.isEmpty {
            line += "  " + properties.map(\.name).sorted().joined(separator: ", ")
        }
        if let tombstone = change.tombstone, !tombstone.isEmpty {
            line +=
                "  tombstone: "
                + tombstone.map { "\($0.key) = \(Values.text($0.value))" }.sorted().joined(separator: ", ")
        }
        return line
    }

    static func json(_ transaction: NSPersistentHistoryTransaction) -> [String: Any] {
        [
            "number": transaction.transactionNumber, "timestamp": Values.json(transaction.timestamp),
            "author": Values.json(transaction.author), "bundleID": transaction.bundleID,
            "processID": transaction.processID, "contextName": Values.json(transaction.contextName),
            "changes": (transaction.changes ?? []).map { change -> [String: Any] in
                var object: [String: Any] = [
                    "type": name(change.changeType), "object": Values.json(change.changedObjectID),
                    "entity": change.changedObjectID.entity.name ?? "",
                ]
                if let properties = change.updatedProperties { object["updated"] = properties.map(\.name).sorted() }
                if let tombstone = change.tombstone {
                    object["tombstone"] = Dictionary(
                        uniqueKeysWithValues: tombstone.compactMap { key, value in
                            (key.base as? String).map { ($0, Values.json(value)) }
                        })
                }
                return object
            },
        ]
    }
}
