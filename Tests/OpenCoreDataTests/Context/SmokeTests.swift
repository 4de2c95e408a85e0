import CoreData
import Testing

@Suite struct SmokeTests {
    @Test func insertSaveFetch() throws {
        let context = try CompanyModel.stack()
        let dept = context.department("R&D")
        let ada = context.employee("Ada", salary: 100)
        ada.setValue(dept, forKey: "department")
        let bob = context.employee("Bob", salary: 50)
        bob.setValue(ada, forKey: "manager")
        dept.mutableSetValue(forKey: "employees").add(bob)
        #expect((dept.value(forKey: "employees") as? Set<NSManagedObject>)?.count == 2)
        #expect((ada.value(forKey: "directReports") as? Set<NSManagedObject>)?.count == 1)
        try context.save()
        #expect(!ada.objectID.isTemporaryID)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.predicate = NSPredicate(format: "salary > 60")
        let found = try context.fetch(request)
        #expect(found.count == 1 && found.first === ada)
        #expect(bob.value(forKeyPath: "manager.department.name") as? String == "R&D")
        #expect(dept.value(forKeyPath: "employees.@sum.salary") as? Double == 150)
        context.delete(dept)
        context.processPendingChanges()
        #expect(ada.value(forKey: "department") == nil)
        try context.save()
        print(ada, ada.objectID.uriRepresentation())
    }
}
