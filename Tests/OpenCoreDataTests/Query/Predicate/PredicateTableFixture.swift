import Foundation
import Testing

@testable import OpenCoreData

/// One format string of the table: how to build it, what it must evaluate to against
/// ``PredicateTable/person``, and the documented rule it pins.
struct PredicateRow: CustomTestStringConvertible, @unchecked Sendable {
    let format: String
    let arguments: [Any]
    let expected: Bool
    let printed: String?
    let rule: String

    init(_ format: String, _ expected: Bool, args: [Any] = [], printed: String? = nil, _ rule: String) {
        self.format = format
        self.arguments = args
        self.expected = expected
        self.printed = printed
        self.rule = rule
    }

    var testDescription: String { "\(format) → \(expected)  [\(rule)]" }
}

/// The object every row is evaluated against: a dictionary graph, since
/// `evaluate(with:)` accepts any key-value-coding-compliant object, dictionaries included
/// (Predicate Programming Guide, "Using Predicates").
enum PredicateTable {
    nonisolated(unsafe) static let person: [String: Any] = [
        "name": "Ada Lovelace",
        "first": "Ada",
        "age": 36,
        "height": 1.65,
        "score": Decimal(string: "12.5")!,
        "active": true,
        "retired": false,
        "nickname": NSNull(),
        "born": Date(timeIntervalSinceReferenceDate: 100),
        "city": "Zürich",
        "title": "ÉCOLE",
        "wide": "ＡＢＣ",
        "code": "AB-123",
        "email": "ada@example.com",
        "pattern": "A*",
        "tags": ["math", "poetry", "engines"],
        "scores": [90, 85, 77, 100],
        "empty": [Int](),
        "numbers": Set([1, 2, 3]),
        "address": ["street": "Main St", "zip": "12345", "city": "London"],
        "friends": [
            ["name": "Charles", "age": 45, "tags": ["engines"]],
            ["name": "Mary", "age": 30, "tags": [String]()],
            ["name": "Michael", "age": 25, "tags": ["physics", "math"]],
        ],
        "manager": [
            "name": "Charles",
            "manager": ["name": "Boss", "department": ["name": "R&D"]],
            "department": ["name": "Engineering"],
        ],
        "department": [
            "name": "Engineering",
            "employees": [
                ["name": "Ada", "salary": 100],
                ["name": "Bob", "salary": 200],
                ["name": "Cy", "salary": 300],
            ],
        ],
        "ns": NSNumber(value: 36),
        "int64": Int64(36),
        "float": Float(1.5),
        "uint8": UInt8(7),
        "optionalName": Optional<String>.some("Ada") as Any,
        "missingOptional": Optional<String>.none as Any,
    ]
}
