import Testing

@testable import OpenCoreData

/// Key-value coding as the Key-Value Coding Programming Guide describes it, over the
/// `KeyValueCoding` protocol and plain Swift values.
@Suite("Key-value coding")
struct KeyValueCodingTests {
    final class Employee: KeyValueCoding {
        let name: String
        let salary: Int
        var manager: Employee?
        var department: Department?

        init(name: String, salary: Int) {
            self.name = name
            self.salary = salary
        }

        func value(forKey key: String) -> Any? {
            switch key {
            case "name": name
            case "salary": salary
            case "manager": manager
            case "department": department
            default: nil
            }
        }
    }

    final class Department: KeyValueCoding {
        let name: String
        var employees: [Employee] = []

        init(name: String) { self.name = name }

        func value(forKey key: String) -> Any? {
            switch key {
            case "name": name
            case "employees": employees
            default: nil
            }
        }
    }

    /// The employee/manager/department graph of the Core Data Programming Guide's key-path
    /// examples, here over plain objects.
    private func graph() -> Employee {
        let engineering = Department(name: "Engineering")
        let boss = Employee(name: "Boss", salary: 300)
        boss.department = engineering
        let manager = Employee(name: "Manager", salary: 200)
        manager.manager = boss
        manager.department = engineering
        let worker = Employee(name: "Worker", salary: 100)
        worker.manager = manager
        worker.department = engineering
        engineering.employees = [boss, manager, worker]
        return worker
    }

    @Test("a dotted key path walks to-one relationships: manager.manager.department.name")
    func toOneKeyPath() {
        #expect(graph().value(forKeyPath: "manager.manager.department.name") as? String == "Engineering")
        #expect(graph().value(forKeyPath: "manager.manager.manager.name") == nil)
    }

    @Test("collection operators: department.employees.@sum.salary and friends")
    func collectionOperators() {
        let worker = graph()
        #expect(worker.value(forKeyPath: "department.employees.@sum.salary") as? Int == 600)
        #expect(worker.value(forKeyPath: "department.employees.@count") as? Int == 3)
        #expect(worker.value(forKeyPath: "department.employees.@max.salary") as? Int == 300)
        #expect(worker.value(forKeyPath: "department.employees.@min.name") as? String == "Boss")
        let average = worker.value(forKeyPath: "department.employees.@avg.salary")
        #expect(DynamicValue.equal(average, 200))
        let names = worker.value(forKeyPath: "department.employees.@distinctUnionOfObjects.name") as? [Any]
        #expect(names?.count == 3)
    }

    @Test("predicates evaluate against KeyValueCoding objects")
    func predicatesOnObjects() {
        let worker = graph()
        #expect(NSPredicate(format: "manager.manager.department.name == 'Engineering'").evaluate(with: worker))
        #expect(NSPredicate(format: "department.employees.@sum.salary > 500").evaluate(with: worker))
        #expect(NSPredicate(format: "ANY department.employees.name == 'Boss'").evaluate(with: worker))
    }

    @Test("plain Swift structs are read by reflection")
    func reflection() {
        struct Point {
            let x: Int
            let label: String
        }
        #expect(NSPredicate(format: "x > 2 AND label == 'p'").evaluate(with: Point(x: 3, label: "p")))
        #expect(KeyValueCodingAccess.value(of: Point(x: 3, label: "p"), forKey: "missing") == nil)
    }

    @Test(
        "predicates evaluate against NSDictionary, NSArray and NSSet values (Predicate Programming Guide, Using Predicates)"
    )
    func foundationCollections() {
        let person = NSDictionary(dictionary: [
            "name": "Ada", "tags": NSArray(array: ["a", "b"]), "ids": NSSet(array: [1, 2]),
        ])
        #expect(NSPredicate(format: "name == 'Ada' AND ANY tags == 'b' AND 2 IN ids").evaluate(with: person))
        #expect(NSPredicate(format: "tags.@count == 2 AND ids.@sum == 3").evaluate(with: person))
        let people = NSArray(array: [NSDictionary(dictionary: ["age": 3]), NSDictionary(dictionary: ["age": 40])])
        #expect(people.filtered(using: NSPredicate(format: "age > 10")).count == 1)
    }

    @Test("a key applied to an array collects every element's value, NSNull for missing ones")
    func arrayKeys() {
        let values = KeyValueCodingAccess.value(of: [["a": 1], ["b": 2]], forKey: "a") as? [Any]
        #expect(values?.count == 2)
        #expect(values?.last is NSNull)
    }

    /// Regression: the fuzzer found `stddev:(64 UNION {3[SIZE], A, …})` trapping with "Duplicate
    /// elements of type 'AnyHashable'": NSNull instances are equal but hash by identity on Linux.
    @Test("distinct values treat nil and NSNull as one value and numbers by value")
    func distinctValues() {
        let values: [Any] = [NSNull(), NSNull(), 1, 1.0, true, "a", "a", NSNull(), 2, Int64(2), UInt8(3)]
        let distinct = KeyValueCodingAccess.distinct(values)
        #expect(distinct.count == 5)  // nil, 1 (also 1.0 and true), "a", 2 (also Int64 2), 3
        #expect(distinct.first is NSNull)
        let union = NSExpression(format: "{1, nil, nil} UNION {a, b, 1.0}").expressionValue(with: [:], context: nil)
        #expect((union as? [Any])?.count == 2)
    }

    /// Regression: the fuzzer found `average:({1, 33**666})` trapping, because an infinite sum was
    /// converted to Decimal.
    @Test("averages and sums of infinite or NaN values do not trap")
    func nonFiniteAggregates() {
        #expect(
            NSExpression(format: "average:({1, 33**666})").expressionValue(with: nil, context: nil) as? Double
                == .infinity)
        let nan = NSExpression(format: "{1.5, %@}.@avg", Double.nan).expressionValue(with: nil, context: nil) as? Double
        #expect(nan?.isNaN == true)
        #expect(NSPredicate(format: "{1, 2e308 * 10}.@sum > 5").evaluate(with: nil))
    }

    @Test("numbers of different storage types compare by value, as NSNumber does")
    func numberSemantics() {
        #expect(DynamicValue.equal(1, 1.0))
        #expect(DynamicValue.equal(true, 1))
        #expect(DynamicValue.equal(Decimal(string: "2.5")!, 2.5))
        #expect(DynamicValue.equal(NSNumber(value: 7), UInt8(7)))
        #expect(DynamicValue.compare(UInt64.max, -1) == .orderedDescending)
        #expect(DynamicValue.compare(Int64.max, Double(Int64.max) * 2) == .orderedAscending)
        #expect(DynamicValue.compare(Double.nan, 1) == nil)
    }
}
