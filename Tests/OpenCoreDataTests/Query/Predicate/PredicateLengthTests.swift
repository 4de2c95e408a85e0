import Foundation
import Testing

@testable import OpenCoreData

/// Long predicates from users. Apple documents no limit (Predicate Programming Guide, "Predicate
/// Format String Syntax"); its parser builds chains of binary operators as left-nested trees, so a
/// long chain is a deep tree. Here a format may hold at most 10,000 operators and parse to a tree
/// at most 1,000 levels deep (SQLite's own expression limit) — past either it is a typed error, and
/// below them every walk of the tree works, on a thread with a smaller stack too (DEVIATIONS.md).
@Suite("Predicate formats: length limits")
struct PredicateLengthTests {
    private func failure(_ format: String) -> NSPredicateFormatError? {
        do {
            _ = try NSPredicate(validatingFormat: format, argumentArray: nil)
            return nil
        } catch {
            return error as? NSPredicateFormatError
        }
    }

    /// A chain of `n` comparisons joined by `op`.
    private func chain(_ n: Int, _ op: String) -> String {
        (0..<n).map { "a == \($0)" }.joined(separator: " \(op) ")
    }

    static func longFormats() -> [String] {
        let numbers = (0..<100_000).map(String.init)
        let comparisons = numbers.map { "a == \($0)" }
        return [
            comparisons.joined(separator: " AND "),
            comparisons.joined(separator: " OR "),
            "a == " + numbers.joined(separator: " + "),
            "a == " + numbers.joined(separator: " * "),
            "a" + String(repeating: "[0]", count: 100_000) + " == 1",
            "a == {1} " + String(repeating: "UNION {1} ", count: 100_000),
        ]
    }

    @Test(
        "100,000 operators in one format are a typed error, found before the tree is built",
        arguments: longFormats())
    func tooManyOperators(format: String) throws {
        let clock = ContinuousClock()
        let start = clock.now
        let error = try #require(failure(format))
        #expect(error.code == .tooLong)
        #expect(clock.now - start < .seconds(5))
    }

    @Test("a chain of 1,001 operators is too deep a tree; 997 parse, print and evaluate")
    func treeDepthLimit() throws {
        #expect(failure(chain(1_002, "OR"))?.code == .nestingTooDeep)
        #expect(failure("a == " + (0..<1_002).map(String.init).joined(separator: " + "))?.code == .nestingTooDeep)
        let format = chain(998, "OR")
        let predicate = try NSPredicate(validatingFormat: format, argumentArray: nil)
        #expect(predicate.evaluate(with: ["a": 997]))
        #expect(!predicate.evaluate(with: ["a": 998]))
        // Printed as Apple prints a left-nested chain, one parenthesis per operator: past 100
        // terms that is deeper than the parser's nesting limit (DEVIATIONS.md), below it it parses back.
        #expect(predicate.predicateFormat.hasPrefix(String(repeating: "(", count: 996) + "a == 0 OR a == 1)"))
        let short = try NSPredicate(validatingFormat: chain(99, "OR"), argumentArray: nil)
        #expect(try NSPredicate(validatingFormat: short.predicateFormat, argumentArray: nil) == short)
    }

    /// Everything a predicate at the limit goes through — parsing, evaluation, printing, equality,
    /// hashing and release — fits a 2 MB thread stack even in a debug build (a Linux thread's
    /// default is 8 MB; Dispatch's and Swift concurrency's threads use it).
    @Test func aPredicateAtTheLimitFitsASmallThreadStack() throws {
        let format = chain(999, "AND")
        let done = DispatchSemaphore(value: 0)
        let results = Collector<Bool>()
        let thread = Thread {
            if let predicate = try? NSPredicate(validatingFormat: format, argumentArray: nil) {
                results.append(predicate.evaluate(with: ["a": 1]))
                results.append(predicate.predicateFormat.hasSuffix("AND a == 998"))
                results.append(predicate == predicate.copy() as? OpenCoreData.NSPredicate)
                results.append(predicate.hash == predicate.hash)
            }
            done.signal()
        }
        thread.stackSize = 2048 * 1024
        thread.start()
        done.wait()
        #expect(results.values == [false, true, true, true])
    }

    /// The operator cap counts the operators a format holds, not the work of reading it: a
    /// parenthesis may open a predicate or an expression (`(a - b) - c == 1`), and a chain of
    /// subtractions nested 88 parentheses deep is re-read as an expression at every level. Found by
    /// the predicate fuzzer (`Fuzz/seeds/predicate-deep-print`): such a printed form parsed back as
    /// a syntax error once the re-readings had counted more than 10,000 operators.
    @Test func reReadingNestedParenthesesDoesNotCountTowardTheOperatorCap() throws {
        var format = String(repeating: "(", count: 88) + "a"
        for level in 0..<88 {
            // Each level's right operand is nested a little, as the fuzzer's was.
            let depth = level % 8
            format += " - " + String(repeating: "(0 - ", count: depth) + "b" + String(repeating: ")", count: depth)
            format += ")"
        }
        format += " == 72"
        let predicate = try NSPredicate(validatingFormat: format, argumentArray: nil)
        #expect(try NSPredicate(validatingFormat: predicate.predicateFormat, argumentArray: nil) == predicate)
        // a - 88·b with the signs of the nested operands: 0 - (0 - b) is b again.
        let sum = (0..<88).reduce(0) { total, level in total - (level % 8 % 2 == 0 ? 1 : -1) }
        #expect(predicate.evaluate(with: ["a": 72 - sum, "b": 1]))
        #expect(!predicate.evaluate(with: ["a": 71 - sum, "b": 1]))
    }

    /// Apple's key paths have no length limit; a long one parses in time linear in its length.
    @Test func aKeyPathOf100000ComponentsParsesQuickly() throws {
        let keyPath = (0..<100_000).map { "k\($0)" }.joined(separator: ".")
        let clock = ContinuousClock()
        let start = clock.now
        let predicate = try NSPredicate(validatingFormat: "\(keyPath) == 1", argumentArray: nil)
        #expect(clock.now - start < .seconds(5))
        let comparison = try #require(predicate as? OpenCoreData.NSComparisonPredicate)
        #expect(comparison.leftExpression.keyPath == keyPath)
    }

    /// A chain near the limit fetched from an SQLite store gives the objects the same predicate
    /// picks in memory (Core Data Programming Guide: fetch predicates run in the store).
    @Test func aLongChainRunsInSQL() throws {
        let directory = TemporaryDirectory()
        let context = try sqliteStack(directory.file("Chain.sqlite"))
        for salary in 0..<20 { context.employee("e\(salary)", salary: Double(salary)) }
        try context.save()
        let format = (0..<900).map { "salary == \($0 * 3)" }.joined(separator: " OR ")
        let request = NSFetchRequest<NSManagedObject>(entityName: "Employee")
        request.predicate = try NSPredicate(validatingFormat: format, argumentArray: nil)
        let salaries = try context.fetch(request).compactMap { ($0.value(forKey: "salary") as? NSNumber)?.intValue }
        #expect(salaries.sorted() == [0, 3, 6, 9, 12, 15, 18])
    }
}
