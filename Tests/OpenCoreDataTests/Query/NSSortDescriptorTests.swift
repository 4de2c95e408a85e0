import Testing

@testable import OpenCoreData

/// NSSortDescriptor (class reference) and Apple's placement of nil.
@Suite("Sort descriptors")
struct NSSortDescriptorTests {
    nonisolated(unsafe) static let people: [[String: Any]] = [
        ["name": "bob", "age": 30, "file": "file10"],
        ["name": "Alice", "age": 25, "file": "file2"],
        ["name": "carol", "age": 30, "file": "File1"],
        ["age": 40, "file": "file3"],
    ]

    private func names(_ rows: [[String: Any]]) -> [String] {
        rows.map { $0["name"] as? String ?? "nil" }
    }

    @Test("compare: orders ascending, nil first (NSSortDescriptor, compare:)")
    func ascending() {
        let sorted = Self.people.sorted(using: [NSSortDescriptor(key: "name", ascending: true)])
        #expect(names(sorted) == ["nil", "Alice", "bob", "carol"])
    }

    @Test("descending reverses the order, nil last")
    func descending() {
        let sorted = Self.people.sorted(using: [NSSortDescriptor(key: "name", ascending: false)])
        #expect(names(sorted) == ["carol", "bob", "Alice", "nil"])
    }

    @Test("caseInsensitiveCompare: ignores case")
    func caseInsensitive() {
        let descriptor = NSSortDescriptor(key: "name", ascending: true, selector: Selector("caseInsensitiveCompare:"))
        #expect(names(Self.people.sorted(using: [descriptor])) == ["nil", "Alice", "bob", "carol"])
        let mixed = ["b", "A", "a", "B"].sorted(using: [
            NSSortDescriptor(key: nil, ascending: true, selector: Selector("caseInsensitiveCompare:"))
        ])
        #expect(mixed == ["A", "a", "b", "B"])
    }

    @Test("localizedStandardCompare: orders numbers in strings numerically, as Finder does")
    func localizedStandard() {
        let descriptor = NSSortDescriptor(key: "file", ascending: true, selector: Selector("localizedStandardCompare:"))
        let files = Self.people.sorted(using: [descriptor]).map { $0["file"] as? String ?? "" }
        #expect(files == ["File1", "file2", "file3", "file10"])
    }

    @Test("several descriptors break ties in order, and the sort is stable")
    func multiKey() {
        let sorted = Self.people.sorted(using: [
            NSSortDescriptor(key: "age", ascending: false), NSSortDescriptor(key: "name", ascending: true),
        ])
        #expect(names(sorted) == ["nil", "bob", "carol", "Alice"])
        let stable = Self.people.sorted(using: [NSSortDescriptor(key: "age", ascending: true)])
        #expect(names(stable) == ["Alice", "bob", "carol", "nil"])
    }

    @Test("a comparator descriptor uses the closure")
    func comparator() {
        let byLength = NSSortDescriptor(key: "name", ascending: true) { a, b in
            let x = (a as? String)?.count ?? 0
            let y = (b as? String)?.count ?? 0
            return x < y ? .orderedAscending : (x == y ? .orderedSame : .orderedDescending)
        }
        #expect(names(Self.people.sorted(using: [byLength])) == ["nil", "bob", "Alice", "carol"])
    }

    @Test("reversedSortDescriptor flips ascending and keeps key and selector")
    func reversed() throws {
        let descriptor = NSSortDescriptor(key: "name", ascending: true, selector: Selector("localizedCompare:"))
        let reversed = try #require(descriptor.reversedSortDescriptor as? NSSortDescriptor)
        #expect(reversed.key == "name")
        #expect(!reversed.ascending)
        #expect(reversed.selector == Selector("localizedCompare:"))
    }

    @Test("compare(_:to:) reads key paths and numbers across types")
    func compareKeyPaths() {
        let descriptor = NSSortDescriptor(key: "a.b", ascending: true)
        #expect(descriptor.compare(["a": ["b": 1]], to: ["a": ["b": 2.5]]) == .orderedAscending)
        #expect(descriptor.compare(["a": ["b": 3]], to: ["a": ["b": 3.0]]) == .orderedSame)
    }
}
