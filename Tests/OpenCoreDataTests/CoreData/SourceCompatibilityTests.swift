import CoreData
import Testing

/// Apple-spelled Core Data code compiles with `import CoreData` alone — the product's first
/// promise — including the predicate types in type position and the Swift overlay's spellings
/// (`NSPredicate(format:_:)` with varargs, `NSSortDescriptor(key:ascending:)`).
@Suite("Source compatibility with Apple's spelling")
struct SourceCompatibilityTests {
    struct Request {
        var predicate: NSPredicate?
        var sortDescriptors: [NSSortDescriptor]?
    }

    /// NSManagedObject reference: `var objectID: NSManagedObjectID { get }`. Writable, it let any
    /// caller put an object under another ID than its context's registry has.
    @Test func objectIDIsReadOnly() {
        let keyPath: AnyKeyPath = \NSManagedObject.objectID
        #expect(!(keyPath is ReferenceWritableKeyPath<NSManagedObject, NSManagedObjectID>))
        #expect(keyPath is KeyPath<NSManagedObject, NSManagedObjectID>)
    }

    @Test("predicate and sort-descriptor code written for Apple platforms compiles and runs")
    func appleSpelledCode() {
        var request = Request()
        let name = "Ada"
        let minimumAge = 18
        request.predicate = NSCompoundPredicate(andPredicateWithSubpredicates: [
            NSPredicate(format: "name == %@", name),
            NSPredicate(format: "age >= %d", minimumAge),
        ])
        request.sortDescriptors = [NSSortDescriptor(key: "age", ascending: false)]
        let comparison: NSComparisonPredicate? = NSPredicate(format: "age > 1") as? NSComparisonPredicate
        let expression: NSExpression = NSExpression(forKeyPath: "age")
        let options: NSComparisonPredicate.Options = [.caseInsensitive, .diacriticInsensitive]

        #expect(request.predicate?.predicateFormat == "name == \"Ada\" AND age >= 18")
        #expect(request.predicate?.evaluate(with: ["name": "Ada", "age": 30]) == true)
        #expect(comparison?.predicateOperatorType == .greaterThan)
        #expect(expression.keyPath == "age")
        #expect(options.rawValue == 3)
        #expect(request.sortDescriptors?.first?.ascending == false)
    }
}
