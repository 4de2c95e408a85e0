import Foundation
import OpenCoreData
import SwiftData
import Testing

/// A ticket whose code persistent history keeps after it is deleted.
@Model
final class Ticket {
    @Attribute(.preserveValueOnDeletion) var code: String
    var seat: Int

    init(code: String, seat: Int) {
        self.code = code
        self.seat = seat
    }
}

/// SwiftData's persistent history (iOS 18). Rules from Apple's SwiftData documentation and
/// WWDC24 "Track model changes with SwiftData history": `ModelContext.fetchHistory(_:)` answers
/// the transactions a `HistoryDescriptor` describes, oldest first, each with its author, token
/// and changes — an insert, an update with `updatedAttributes`, a delete with a `tombstone` of the
/// `.preserveValueOnDeletion` values; tokens order, so `token > saved` finds what came after;
/// `deleteHistory(_:)` deletes the transactions described.
@Suite("SwiftData: persistent history")
struct SwiftDataHistoryTests {
    @Test func historyRecordsInsertsUpdatesAndDeletesWithTombstones() throws {
        let container = try ModelContainer(
            for: Ticket.self, configurations: ModelConfiguration(url: TemporaryDirectory().file("tickets.store")))
        let context = ModelContext(container)
        context.author = "box office"
        let first = Ticket(code: "A1", seat: 1)
        let second = Ticket(code: "B2", seat: 2)
        context.insert(first)
        context.insert(second)
        try context.save()
        first.seat = 11
        try context.save()
        let deletedID = second.persistentModelID
        context.delete(second)
        try context.save()

        let transactions = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        #expect(transactions.count == 3)
        #expect(transactions.allSatisfy { $0.author == "box office" })
        #expect(transactions.map(\.token) == transactions.map(\.token).sorted())

        let inserted = transactions[0].changes.compactMap { change -> PersistentIdentifier? in
            guard case .insert(let insert as DefaultHistoryInsert<Ticket>) = change else { return nil }
            return insert.changedPersistentIdentifier
        }
        #expect(Set(inserted) == [first.persistentModelID, deletedID])

        guard case .update(let update as DefaultHistoryUpdate<Ticket>)? = transactions[1].changes.first else {
            Issue.record("the second transaction is an update of a ticket")
            return
        }
        #expect(update.changedPersistentIdentifier == first.persistentModelID)
        #expect(update.updatedAttributes == [\Ticket.seat])

        guard case .delete(let deletion as DefaultHistoryDelete<Ticket>)? = transactions[2].changes.first else {
            Issue.record("the third transaction is a deletion of a ticket")
            return
        }
        #expect(deletion.changedPersistentIdentifier == deletedID)
        #expect(deletion.tombstone[\.code] == "B2")
        #expect(deletion.tombstone[\.seat] == nil)
        #expect(transactions[2].changes.first?.changedPersistentIdentifier == deletedID)

        let seen = transactions[0].token
        let later = try context.fetchHistory(
            HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > seen }))
        #expect(later.map(\.transactionIdentifier) == transactions.dropFirst().map(\.transactionIdentifier))
    }

    /// History is deleted from its start; a descriptor that would leave an older transaction
    /// behind a deleted one is refused with 134070 and deletes nothing.
    @Test func deleteHistoryRemovesTheOldestTransactions() throws {
        let container = try ModelContainer(
            for: Ticket.self, configurations: ModelConfiguration(url: TemporaryDirectory().file("tickets.store")))
        let context = ModelContext(container)
        for seat in 1...3 {
            context.insert(Ticket(code: "C\(seat)", seat: seat))
            try context.save()
        }
        let transactions = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        #expect(transactions.count == 3)
        let newest = transactions[2].token
        #expect {
            try context.deleteHistory(
                HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token == newest }))
        } throws: { error in
            (error as NSError).domain == NSCocoaErrorDomain
                && (error as NSError).code == NSPersistentStoreOperationError
        }
        #expect(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).count == 3)

        let second = transactions[1].token
        try context.deleteHistory(
            HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token <= second }))
        let left = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        #expect(left.map(\.transactionIdentifier) == [transactions[2].transactionIdentifier])
    }
}
