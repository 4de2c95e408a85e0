import Testing

@testable import OpenCoreData

/// Bad input is an error, never a crash: the issue's "Bad input" rules, and Apple's raising
/// `NSPredicate(format:)` ("Unable to parse the format string", Predicate Programming Guide,
/// "Creating Predicates") turned into a thrown error for `validatingFormat`.
@Suite("Predicate format errors")
struct PredicateErrorTests {
    private func failure(_ format: String, _ arguments: [Any] = []) -> NSPredicateFormatError? {
        do {
            _ = try NSPredicate(validatingFormat: format, argumentArray: arguments)
            return nil
        } catch let error as NSPredicateFormatError {
            return error
        } catch {
            return nil
        }
    }

    @Test(
        "malformed formats are syntax errors at the offending offset",
        arguments: [
            ("age ==", 6), ("age == 1 AND", 12), ("== 3", 0), ("age >> 3", 5), ("(age == 1", 9),
            ("age == 1)", 8), ("age IN {1, 2", 12), ("age == 1 age == 2", 9), ("", 0), ("name BEGINSWITH[x] 'a'", 16),
            ("age BETWEEN", 11), ("NOT", 3), ("SUBQUERY(a, x, $x == 1).@count > 0", 12), ("a.AND == 1", 2),
        ])
    func syntaxErrors(format: String, offset: Int) throws {
        let error = try #require(failure(format))
        #expect(error.code == .syntax)
        #expect(error.offset == offset)
        #expect(error.format == format)
    }

    @Test(
        "a character sequence that is not a token is an invalid-token error",
        arguments: ["name == 'open", "age == 0x", "age == 12abc", "a ; b", "name == \"\\u12\"", "$ == 1", "# == 1"])
    func invalidTokens(format: String) throws {
        let error = try #require(failure(format))
        #expect(error.code == .invalidToken)
    }

    /// Apple raises NSInvalidArgumentException ("Unable to parse the format string") from
    /// `predicateWithFormat:`; Swift has no exceptions, so the raising initializer traps.
    @Test("NSPredicate(format:) traps on a malformed format, as Apple raises")
    func formatTraps() async {
        await #expect(processExitsWith: .failure) {
            _ = NSPredicate(format: "age >> 3")
        }
    }

    @Test("the description shows the format and a caret under the offset")
    func caret() throws {
        let error = try #require(failure("age >> 3"))
        let lines = error.description.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 3)
        #expect(lines[0].contains("offset 5"))
        #expect(lines[1] == "  age >> 3")
        #expect(lines[2] == "       ^")
    }

    @Test("as an NSError it is NSFormattingError (2048) in NSCocoaErrorDomain with the format and offset")
    func cocoaError() throws {
        let error = try #require(failure("age >> 3")) as NSError
        #expect(error.domain == NSCocoaErrorDomain)
        #expect(error.code == 2048)
        #expect(error.userInfo["NSPredicateFormat"] as? String == "age >> 3")
        #expect(error.userInfo["NSPredicateFormatOffset"] as? Int == 5)
        #expect((error.userInfo[NSDebugDescriptionErrorKey] as? String)?.contains("^") == true)
    }

    @Test("a format specifier without an argument is an argument error")
    func missingArgument() throws {
        let error = try #require(failure("name == %@ AND age == %d", ["Ada"]))
        #expect(error.code == .argument)
        #expect(error.offset == 22)
    }

    @Test(
        "an argument of the wrong type for its specifier is an argument error",
        arguments: [("%K == 1", 0), ("age == %d", 1), ("age == %f", 1), ("name == %s", 0)]
    )
    func wrongArgumentType(format: String, argumentKind: Int) throws {
        let argument: Any = argumentKind == 0 ? 5 : "x"
        let error = try #require(failure(format, [argument]))
        #expect(error.code == .argument)
    }

    @Test("%d with a non-integral number is an argument error, not undefined behaviour")
    func nonIntegralInteger() throws {
        #expect(failure("age == %d", [2.5])?.code == .argument)
    }

    @Test("the throwing initializer takes arguments as an array under either label, or as varargs")
    func throwingSpellings() throws {
        let object: [String: Any] = ["name": "Ada", "age": 36]
        #expect(try NSPredicate(validatingFormat: "age == %d", argumentArray: [36]).evaluate(with: object))
        #expect(try NSPredicate(validatingFormat: "age == %d", arguments: [36]).evaluate(with: object))
        #expect(try NSPredicate(validatingFormat: "%K == %@", "name", "Ada").evaluate(with: object))
    }

    @Test("extra arguments are ignored, as Apple ignores them")
    func extraArguments() throws {
        let predicate = try NSPredicate(validatingFormat: "age == %d", argumentArray: [36, "unused"])
        #expect(predicate.evaluate(with: ["age": 36]))
    }

    @Test(
        "nesting past the cap is a typed error, not a stack overflow",
        arguments: [
            String(repeating: "(", count: 5000) + "a == 1" + String(repeating: ")", count: 5000),
            String(repeating: "NOT ", count: 5000) + "a == 1",
            "a == " + String(repeating: "-", count: 5000) + "1",
            "a == " + String(repeating: "(", count: 5000) + "1" + String(repeating: ")", count: 5000),
            "a == " + String(repeating: "2 ** ", count: 5000) + "1",
            "a == " + String(repeating: "{", count: 5000) + String(repeating: "}", count: 5000),
            "a == " + String(repeating: "sum:(", count: 5000) + "1" + String(repeating: ")", count: 5000),
        ])
    func nestingCap(format: String) throws {
        let error = try #require(failure(format))
        #expect(error.code == .nestingTooDeep)
    }

    @Test("nesting just under the cap parses")
    func nestingUnderCap() throws {
        let depth = PredicateParser.maximumDepth / 3
        let format = String(repeating: "(", count: depth) + "a == 1" + String(repeating: ")", count: depth)
        let predicate = try NSPredicate(validatingFormat: format, argumentArray: nil)
        #expect(predicate.evaluate(with: ["a": 1]))
    }

    /// Regression: the fuzzer found a 117-byte input of nested `(TERNARY((…` that took longer
    /// than 10 seconds, because every `(` was parsed twice (as a predicate, then as an
    /// expression), doubling at each level.
    @Test("nested parentheses that are not predicates parse in linear, not exponential, time")
    func nestedParenthesesBacktracking() throws {
        let unfinished = String(repeating: "((TERNARY(", count: 12) + "sum:(x)"
        #expect(failure(unfinished)?.code == .syntax)
        let valid = String(repeating: "(", count: 30) + "a + 1" + String(repeating: ")", count: 30) + " > 1"
        let predicate = try NSPredicate(validatingFormat: valid, argumentArray: nil)
        #expect(predicate.evaluate(with: ["a": 1]))
    }

    @Test("an invalid constant MATCHES pattern is rejected when parsed")
    func invalidRegularExpression() throws {
        let error = try #require(failure("name MATCHES '(unclosed'"))
        #expect(error.code == .invalidRegularExpression)
        #expect(error.offset == 5)
    }

    /// Regression: the fuzzer's leak report. swift-corelibs-foundation's NSRegularExpression leaks
    /// two bytes per UTF-16 unit of a pattern longer than ~256 units, so each distinct pattern must
    /// be compiled once per process, not once per parse and again per predicate.
    @Test("a MATCHES pattern is compiled once and shared by every predicate that uses it")
    func regexCompiledOnce() throws {
        let pattern = String(repeating: "ab", count: 200)
        let first = try NSPredicate(validatingFormat: "name MATCHES %@", argumentArray: [pattern])
        let second = try NSPredicate(validatingFormat: "name MATCHES %@", argumentArray: [pattern])
        #expect(first.evaluate(with: ["name": pattern]))
        #expect(!second.evaluate(with: ["name": "ab"]))
        let cached = try #require(RegexCache.shared.regex(pattern, caseInsensitive: false))
        #expect(RegexCache.shared.regex(pattern, caseInsensitive: false) === cached)
    }

    @Test("an invalid MATCHES pattern from a key path makes the comparison false")
    func invalidRegularExpressionAtEvaluation() throws {
        let predicate = try NSPredicate(validatingFormat: "name MATCHES pattern", argumentArray: nil)
        #expect(!predicate.evaluate(with: ["name": "a", "pattern": "(unclosed"]))
    }

    @Test(
        "unknown functions, unsupported constructs and a FETCH without its count flag are errors that name them",
        arguments: [
            ("frobnicate:(1) == 1", "frobnicate:"), ("sum:(1, 2) == 1", "sum:"), ("FETCH(a, b) == 1", "FETCH"),
            ("a UTI-CONFORMS-TO 'public.text'", "UTI"), ("CAST(a, b) == 1", "CAST"),
        ])
    func unsupported(format: String, named: String) throws {
        let error = try #require(failure(format))
        #expect(error.message.contains(named))
    }

    @Test("asking for a subclass the format does not describe is an error")
    func unexpectedKind() throws {
        #expect(throws: NSPredicateFormatError.self) {
            _ = try NSCompoundPredicate(validatingFormat: "a == 1", argumentArray: nil)
        }
        let comparison = try NSComparisonPredicate(validatingFormat: "a == 1", argumentArray: nil)
        #expect(comparison.predicateOperatorType == .equalTo)
    }
}
