import Foundation
import Testing

@testable import OpenCoreData

/// A relationship the store has not resolved holds a marker until it is read. The marker is
/// found by its exact type (`is` bridged a resolved to-many's array to an `NSArray`
/// first); what the app sees is NSManagedObject's `hasFault(forRelationshipNamed:)` ("whether the
/// relationship for a given key is a fault") and the members once read.
@Suite("Relationship faults: the unresolved marker")
struct RelationshipMarkerTests {
    let directory = TemporaryDirectory()

    @Test("the marker is recognised, in an optional or not, and no other value is taken for it")
    func markerByType() {
        let marker: Any = UnresolvedRelationship.marker
        let optional: Any? = UnresolvedRelationship.marker
        #expect(UnresolvedRelationship.isMarker(marker))
        #expect(UnresolvedRelationship.isMarker(optional))
        let others: [Any?] = [
            nil, [NSManagedObjectID](), Set<NSManagedObject>(), NSNull(), "x", 1, [1, 2], NSObject(),
        ]
        for value in others {
            #expect(!UnresolvedRelationship.isMarker(value), "\(String(describing: value))")
        }
    }

    @Test("a to-many read from an SQLite store is a fault until read, then its members; committed values skip it")
    func toManyFromStore() throws {
        let url = directory.file("Marker.sqlite")
        do {
            let context = try sqliteStack(url)
            let department = context.department("R&D")
            for name in ["Ada", "Grace", "Edsger"] { context.employee(name).setValue(department, forKey: "department") }
            try context.save()
        }
        let context = try sqliteStack(url)
        let department = try #require(
            try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Department")).first)
        #expect(department.hasFault(forRelationshipNamed: "employees"))
        #expect(department.committedValues(forKeys: nil)["employees"] == nil)
        let members = try #require(department.value(forKey: "employees") as? Set<NSManagedObject>)
        #expect(Set(members.compactMap { $0.value(forKey: "name") as? String }) == ["Ada", "Grace", "Edsger"])
        #expect(!department.hasFault(forRelationshipNamed: "employees"))
    }

    @Test("mutableSetValue(forKey:) of a fault is live: counting, enumerating and adding fire the fault first")
    func mutableSetOfFault() throws {
        // Apple: mutableSetValue(forKey:) "returns a mutable set proxy that provides read-write
        // access to the unordered to-many relationship specified by a given key".
        let url = directory.file("FaultSet.sqlite")
        do {
            let context = try sqliteStack(url)
            let department = context.department("R&D")
            for name in ["Ada", "Grace"] { context.employee(name).setValue(department, forKey: "department") }
            try context.save()
        }
        for step in 0..<3 {
            let context = try sqliteStack(url)
            let department = try #require(
                try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Department")).first)
            #expect(department.isFault)
            let employees = department.mutableSetValue(forKey: "employees")
            switch step {
            case 0: #expect(employees.count == 2)
            case 1:
                let names = employees.compactMap { ($0 as? NSManagedObject)?.value(forKey: "name") as? String }
                #expect(Set(names) == ["Ada", "Grace"])
            default:
                employees.add(context.employee("Edsger"))
                #expect(employees.count == 3)
            }
        }
    }
}
