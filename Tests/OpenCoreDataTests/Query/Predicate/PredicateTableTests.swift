import Foundation
import Testing

@testable import OpenCoreData

/// The table-driven suite: every row is parsed, printed, re-parsed and evaluated.
///
/// Rules pinned by every row: `predicateFormat` prints Apple's canonical form, parsing that
/// output gives an equal predicate (`isEqual:`/`hash`), and evaluation gives the documented
/// result (the rule named in each row).
@Suite("Predicate format strings, table-driven")
struct PredicateTableTests {
    @Test("the table covers at least 300 format strings")
    func tableSize() {
        #expect(PredicateTable.all.count >= 300)
        #expect(Set(PredicateTable.all.map { "\($0.format)|\($0.arguments)" }).count >= 300)
    }

    @Test("parse, print, re-parse and evaluate", arguments: PredicateTable.all)
    func row(_ row: PredicateRow) throws {
        let arguments = row.arguments
        let predicate = try NSPredicate(validatingFormat: row.format, argumentArray: arguments)
        let printed = predicate.predicateFormat
        if let expected = row.printed {
            #expect(printed == expected, "canonical form")
        }
        let reparsed = try NSPredicate(validatingFormat: printed)
        let roundTrips = !row.arguments.contains { $0 is [String: Int] }
        if roundTrips {
            #expect(reparsed == predicate, "re-parsing \(printed) gives an equal predicate")
            #expect(reparsed.hash == predicate.hash, "equal predicates hash alike")
            #expect(reparsed.predicateFormat == printed, "printing is stable")
        }
        let result = predicate.evaluate(with: PredicateTable.person, substitutionVariables: PredicateTable.bindings)
        #expect(result == row.expected, "evaluation")
        if roundTrips {
            let again = reparsed.evaluate(with: PredicateTable.person, substitutionVariables: PredicateTable.bindings)
            #expect(again == row.expected, "the re-parsed predicate evaluates alike")
        }
    }
}
