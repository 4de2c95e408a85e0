import CoreData
import Foundation
import Logging
import Testing

@testable import OpenCoreData

/// A fault that cannot be loaded. Apple's rule (NSManagedObjectContext,
/// `shouldDeleteInaccessibleFaults`) marks a fault deleted when its *row is gone*; an error that
/// says nothing about the row — the table unreadable, the store busy, an I/O error — must not turn
/// a live object into a deleted one. `existingObject(with:)` is the documented way to fire a fault
/// and be told why it failed.
@Suite("Faults whose store cannot be read", .serialized)
struct FaultErrorTests {
    let directory = TemporaryDirectory()

    /// Saves one employee and returns its object ID with the store's URL.
    private func savedEmployee() throws -> (URL, URL) {
        let url = directory.file("Faults.sqlite")
        let context = try sqliteStack(url)
        let ada = context.employee("Ada", salary: 10)
        try context.save()
        return (url, ada.objectID.uriRepresentation())
    }

    /// The employee as a fault in a new coordinator (nothing of it cached), with its table renamed
    /// away behind the store's back so that loading it fails with an SQLite error.
    private func unreadableFault() throws -> (NSManagedObjectContext, NSManagedObject, URL) {
        let (url, uri) = try savedEmployee()
        let context = try sqliteStack(url)
        let id = try #require(context.persistentStoreCoordinator?.managedObjectID(forURIRepresentation: uri))
        let object = context.object(with: id)
        #expect(object.isFault)
        _ = try sqlite3(url, "ALTER TABLE ZEMPLOYEE RENAME TO ZAWAY", readOnly: false)
        return (context, object, url)
    }

    /// Reading a property of a fault that cannot be loaded answers nil, leaves the object a live
    /// fault (not deleted), and logs the error; once the table is back, the next read loads it.
    @Test func aReadErrorLeavesTheObjectAFaultNotDeleted() throws {
        try CapturedLog.faults.capture { lines in
            let (context, object, url) = try unreadableFault()
            #expect(object.value(forKey: "name") == nil)
            #expect(object.isFault, "the object stays a fault, so a later access tries again")
            #expect(!object.isDeleted)
            #expect(context.deletedObjects.isEmpty)
            let logged = lines.logged(on: pthread_self())
            #expect(logged.contains { $0.contains("could not load the fault") && $0.contains("ZEMPLOYEE") })

            _ = try sqlite3(url, "ALTER TABLE ZAWAY RENAME TO ZEMPLOYEE", readOnly: false)
            #expect(object.value(forKey: "name") as? String == "Ada")
            #expect(!object.isFault)
        }
    }

    /// A relationship fault is a fault too: a to-many whose members cannot be read answers no
    /// members and logs the error, but is not kept as an empty relationship — once the table is
    /// back, the next read answers the members the store holds, and the department's committed
    /// values were not changed to none (a save of the department writes nothing).
    @Test func aToManyThatCannotBeReadIsAskedForAgain() throws {
        let url = directory.file("Departments.sqlite")
        let writer = try sqliteStack(url)
        let research = writer.department("Research")
        for name in ["Ada", "Bob"] { writer.employee(name).setValue(research, forKey: "department") }
        try writer.save()
        let uri = research.objectID.uriRepresentation()
        try CapturedLog.faults.capture { lines in
            let context = try sqliteStack(url)
            let id = try #require(context.persistentStoreCoordinator?.managedObjectID(forURIRepresentation: uri))
            let department = try context.existingObject(with: id)
            #expect(department.hasFault(forRelationshipNamed: "employees"))
            _ = try sqlite3(url, "ALTER TABLE ZEMPLOYEE RENAME TO ZAWAY", readOnly: false)
            #expect((department.value(forKey: "employees") as? Set<NSManagedObject>)?.isEmpty == true)
            #expect(department.hasFault(forRelationshipNamed: "employees"), "still to be read")
            let logged = lines.logged(on: pthread_self())
            #expect(logged.contains { $0.contains("could not load the fault") && $0.contains("ZEMPLOYEE") })

            _ = try sqlite3(url, "ALTER TABLE ZAWAY RENAME TO ZEMPLOYEE", readOnly: false)
            let members = try #require(department.value(forKey: "employees") as? Set<NSManagedObject>)
            #expect(Set(members.compactMap { $0.value(forKey: "name") as? String }) == ["Ada", "Bob"])
            #expect(!department.hasChanges)
        }
    }

    /// `existingObject(with:)` fires the fault and throws the store's error (NSManagedObjectContext:
    /// "If the object cannot be fetched, or does not exist, or cannot be faulted, it returns an error").
    @Test func existingObjectThrowsTheStoreError() throws {
        let (context, object, _) = try unreadableFault()
        #expect(throws: (any Error).self) { try context.existingObject(with: object.objectID) }
        #expect(!object.isDeleted)
    }

    /// A value set while the fault could not be loaded is a change the later load keeps, and saves.
    @Test func aChangeMadeWhileUnreadableSurvivesTheLoad() throws {
        let (context, object, url) = try unreadableFault()
        object.setValue(99.0, forKey: "salary")
        _ = try sqlite3(url, "ALTER TABLE ZAWAY RENAME TO ZEMPLOYEE", readOnly: false)
        #expect(object.value(forKey: "name") as? String == "Ada")
        #expect((object.value(forKey: "salary") as? NSNumber)?.doubleValue == 99)
        try context.save()
        #expect(try sqlite3(url, "SELECT ZNAME, ZSALARY FROM ZEMPLOYEE") == ["Ada|99.0"])
    }

    /// A row that is really gone still follows Apple's rule: the fault becomes a deleted object
    /// whose properties are nil.
    @Test func aRowThatIsGoneStillMakesTheFaultDeleted() throws {
        let (url, uri) = try savedEmployee()
        let context = try sqliteStack(url)
        let id = try #require(context.persistentStoreCoordinator?.managedObjectID(forURIRepresentation: uri))
        let object = context.object(with: id)
        _ = try sqlite3(url, "DELETE FROM ZEMPLOYEE", readOnly: false)
        #expect(object.value(forKey: "name") == nil)
        #expect(object.isDeleted)
    }
}
