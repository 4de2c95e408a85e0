import Foundation

@testable import OpenCoreData

// The rows of the table-driven predicate suite. "PPG" is Apple's Predicate Programming Guide,
// chapter "Predicate Format String Syntax"; section names follow that chapter. "NSCP" is the
// NSComparisonPredicate class reference, "NSE" the NSExpression class reference, "KVC" the
// Key-Value Coding Programming Guide.

extension PredicateTable {
    static let basicComparisons: [PredicateRow] = [
        PredicateRow("age == 36", true, printed: "age == 36", "PPG Basic Comparisons: == is equal"),
        PredicateRow("age = 36", true, printed: "age == 36", "PPG Basic Comparisons: = and == are the same"),
        PredicateRow("age == 37", false, "PPG Basic Comparisons: ==, unequal values"),
        PredicateRow("age != 37", true, printed: "age != 37", "PPG Basic Comparisons: != is not equal"),
        PredicateRow("age <> 37", true, printed: "age != 37", "PPG Basic Comparisons: <> is the same as !="),
        PredicateRow("age != 36", false, "PPG Basic Comparisons: !=, equal values"),
        PredicateRow("age > 35", true, printed: "age > 35", "PPG Basic Comparisons: >"),
        PredicateRow("age > 36", false, "PPG Basic Comparisons: > is strict"),
        PredicateRow("age >= 36", true, printed: "age >= 36", "PPG Basic Comparisons: >="),
        PredicateRow("age => 36", true, printed: "age >= 36", "PPG Basic Comparisons: => is the same as >="),
        PredicateRow("age >= 37", false, "PPG Basic Comparisons: >= below"),
        PredicateRow("age < 37", true, printed: "age < 37", "PPG Basic Comparisons: <"),
        PredicateRow("age < 36", false, "PPG Basic Comparisons: < is strict"),
        PredicateRow("age <= 36", true, printed: "age <= 36", "PPG Basic Comparisons: <="),
        PredicateRow("age =< 36", true, printed: "age <= 36", "PPG Basic Comparisons: =< is the same as <="),
        PredicateRow("age <= 35", false, "PPG Basic Comparisons: <= above"),
        PredicateRow("36 == age", true, printed: "36 == age", "PPG Basic Comparisons: either side may be the constant"),
        PredicateRow("age BETWEEN {30, 40}", true, printed: "age BETWEEN {30, 40}", "PPG Basic Comparisons: BETWEEN"),
        PredicateRow("age BETWEEN {36, 40}", true, "PPG Basic Comparisons: BETWEEN includes the lower bound"),
        PredicateRow("age BETWEEN {30, 36}", true, "PPG Basic Comparisons: BETWEEN includes the upper bound"),
        PredicateRow("age BETWEEN {37, 40}", false, "PPG Basic Comparisons: BETWEEN below the range"),
        PredicateRow(
            "age between {1, 2}", false, printed: "age BETWEEN {1, 2}", "PPG: reserved words are case-insensitive"),
        PredicateRow("height BETWEEN {1.5, 1.7}", true, "PPG Basic Comparisons: BETWEEN with decimals"),
        PredicateRow(
            "age BETWEEN %@", true, args: [[30, 40]], "PPG Basic Comparisons: BETWEEN takes an array argument"),
        PredicateRow("name BETWEEN {'A', 'B'}", true, "PPG Basic Comparisons: BETWEEN orders strings"),
        PredicateRow("height > 1.6", true, "PPG Basic Comparisons: floating-point values"),
        PredicateRow("height < 1.6", false, "PPG Basic Comparisons: floating-point values"),
        PredicateRow("height == 1.65", true, "PPG Basic Comparisons: floating-point equality"),
        PredicateRow("score == 12.5", true, "NSNumber compare: a Decimal equals the same Double"),
        PredicateRow("score > 12", true, "NSNumber compare: a Decimal against an integer"),
        PredicateRow("score < 12.6", true, "NSNumber compare: a Decimal against a Double"),
        PredicateRow("ns == 36", true, "NSNumber compare: an NSNumber against an Int"),
        PredicateRow("ns == age", true, "NSNumber compare: an NSNumber against a key path Int"),
        PredicateRow("int64 == 36.0", true, "NSNumber compare: Int64 equals an equal Double"),
        PredicateRow("float == 1.5", true, "NSNumber compare: Float equals an equal Double"),
        PredicateRow("uint8 < 8", true, "NSNumber compare: UInt8 against an Int"),
        PredicateRow("age == '36'", false, "PPG Basic Comparisons: a number never equals a string"),
        PredicateRow(
            "name == 'Ada Lovelace'", true, printed: "name == \"Ada Lovelace\"",
            "PPG String Comparisons: string equality"),
        PredicateRow("name == \"Ada Lovelace\"", true, "PPG Literals: double-quoted strings"),
        PredicateRow(
            "name == 'ada lovelace'", false, "PPG String Comparisons: comparisons are case-sensitive by default"),
        PredicateRow("name < 'B'", true, "PPG Basic Comparisons: strings order lexically"),
        PredicateRow("name > 'Ada'", true, "PPG Basic Comparisons: a longer string sorts after its prefix"),
        PredicateRow("name >= 'Ada Lovelace'", true, "PPG Basic Comparisons: >= on equal strings"),
        PredicateRow(
            "born == CAST(100, 'NSDate')", true, printed: "born == CAST(100.000000, \"NSDate\")",
            "PPG: CAST(number, 'NSDate') makes a date"),
        PredicateRow("born > CAST(50, 'NSDate')", true, "PPG Basic Comparisons: dates compare by time"),
        PredicateRow("born < CAST(50, 'NSDate')", false, "PPG Basic Comparisons: dates compare by time"),
        PredicateRow(
            "born == %@", true, args: [Date(timeIntervalSinceReferenceDate: 100)],
            "PPG Format String Summary: %@ for a date"),
        PredicateRow(
            "born BETWEEN %@", true,
            args: [[Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: 200)]],
            "PPG Basic Comparisons: BETWEEN on dates"),
        PredicateRow("born < 1000", false, "PPG: a date never orders against a number"),
        PredicateRow(
            "born < CAST(1e999, 'NSDate')", true, printed: "born < CAST(1e999, \"NSDate\")",
            "PPG: CAST of an out-of-range interval prints re-parsably"),
        PredicateRow("active == YES", true, printed: "active == 1", "PPG Literals: YES is true"),
        PredicateRow("active == TRUE", true, printed: "active == 1", "PPG Literals: TRUE is true"),
        PredicateRow("active == true", true, "PPG: reserved words are case-insensitive"),
        PredicateRow("active == 1", true, "NSNumber: YES equals 1"),
        PredicateRow("retired == NO", true, printed: "retired == 0", "PPG Literals: NO is false"),
        PredicateRow("retired == FALSE", true, "PPG Literals: FALSE is false"),
        PredicateRow("retired == 0", true, "NSNumber: NO equals 0"),
        PredicateRow("active != retired", true, "PPG Basic Comparisons: two key paths"),
    ]

    static let nilComparisons: [PredicateRow] = [
        PredicateRow("nickname == nil", true, printed: "nickname == nil", "PPG Null Values: NSNull equals nil"),
        PredicateRow("nickname == NIL", true, "PPG Literals: NIL is nil"),
        PredicateRow("nickname == NULL", true, printed: "nickname == nil", "PPG Literals: NULL is nil"),
        PredicateRow("nickname = null", true, "PPG: reserved words are case-insensitive"),
        PredicateRow("absent == nil", true, "PPG Null Values: a missing key is nil"),
        PredicateRow("absent != nil", false, "PPG Null Values: a missing key is nil"),
        PredicateRow("name != nil", true, "PPG Null Values: a present value is not nil"),
        PredicateRow("name == nil", false, "PPG Null Values: a present value is not nil"),
        PredicateRow("nil == nickname", true, "PPG Null Values: nil on the left"),
        PredicateRow("absent > 5", false, "PPG Null Values: nil is not ordered against a number"),
        PredicateRow("absent < 5", false, "PPG Null Values: nil is not ordered against a number"),
        PredicateRow("absent BEGINSWITH 'a'", false, "PPG Null Values: string operators on nil are false"),
        PredicateRow("absent CONTAINS 'a'", false, "PPG Null Values: CONTAINS on nil is false"),
        PredicateRow("absent IN {1, 2}", false, "PPG Null Values: nil is in no collection"),
        PredicateRow("missingOptional == nil", true, "Swift: an Optional.none value is nil"),
        PredicateRow("optionalName == 'Ada'", true, "Swift: an Optional.some value is its payload"),
        PredicateRow("name == %@", false, args: [NSNull()], "PPG Null Values: %@ with NSNull is nil"),
        PredicateRow("nickname == %@", true, args: [NSNull()], "PPG Null Values: NSNull matches NSNull"),
    ]

    static let booleanAndCompound: [PredicateRow] = [
        PredicateRow("TRUEPREDICATE", true, printed: "TRUEPREDICATE", "PPG Boolean Value Predicates: TRUEPREDICATE"),
        PredicateRow(
            "FALSEPREDICATE", false, printed: "FALSEPREDICATE", "PPG Boolean Value Predicates: FALSEPREDICATE"),
        PredicateRow("truepredicate", true, "PPG: reserved words are case-insensitive"),
        PredicateRow(
            "age == 36 AND name BEGINSWITH 'A'", true, printed: "age == 36 AND name BEGINSWITH \"A\"",
            "PPG Basic Compound Predicates: AND"),
        PredicateRow(
            "age == 36 && name BEGINSWITH 'B'", false, printed: "age == 36 AND name BEGINSWITH \"B\"",
            "PPG Basic Compound Predicates: && is AND"),
        PredicateRow(
            "age == 1 OR name BEGINSWITH 'A'", true, printed: "age == 1 OR name BEGINSWITH \"A\"",
            "PPG Basic Compound Predicates: OR"),
        PredicateRow(
            "age == 1 || age == 2", false, printed: "age == 1 OR age == 2", "PPG Basic Compound Predicates: || is OR"),
        PredicateRow("NOT age == 1", true, printed: "NOT age == 1", "PPG Basic Compound Predicates: NOT"),
        PredicateRow("!(age == 36)", false, printed: "NOT age == 36", "PPG Basic Compound Predicates: ! is NOT"),
        PredicateRow(
            "NOT NOT age == 36", true, printed: "NOT NOT age == 36", "PPG Basic Compound Predicates: NOT nests"),
        PredicateRow(
            "age == 1 OR age == 36 AND name == 'x'", false, printed: "age == 1 OR (age == 36 AND name == \"x\")",
            "PPG: AND binds tighter than OR"),
        PredicateRow(
            "age == 36 OR age == 1 AND name == 'x'", true, printed: "age == 36 OR (age == 1 AND name == \"x\")",
            "PPG: AND binds tighter than OR"),
        PredicateRow(
            "(age == 1 OR age == 36) AND name == 'x'", false, printed: "(age == 1 OR age == 36) AND name == \"x\"",
            "PPG: parentheses group"),
        PredicateRow(
            "NOT age == 1 AND age == 36", true, printed: "NOT age == 1 AND age == 36", "PPG: NOT binds tighter than AND"
        ),
        PredicateRow(
            "NOT (age == 1 AND age == 36)", true, printed: "NOT (age == 1 AND age == 36)", "PPG: NOT of a group"),
        PredicateRow(
            "age == 36 AND age > 1 AND age < 100", true, printed: "(age == 36 AND age > 1) AND age < 100",
            "PPG: AND is left-associative"),
        PredicateRow(
            "age == 1 OR age == 2 OR age == 36", true, printed: "(age == 1 OR age == 2) OR age == 36",
            "PPG: OR is left-associative"),
        PredicateRow("((age == 36))", true, printed: "age == 36", "PPG: redundant parentheses"),
        PredicateRow("TRUEPREDICATE AND age == 36", true, "PPG Boolean Value Predicates: in a compound"),
        PredicateRow("FALSEPREDICATE OR age == 36", true, "PPG Boolean Value Predicates: in a compound"),
        PredicateRow("age == 36 and name != nil", true, "PPG: reserved words are case-insensitive"),
        PredicateRow("age == 36 aNd NOT retired == YES", true, "PPG: reserved words are case-insensitive"),
        PredicateRow("not age == 1", true, "PPG: reserved words are case-insensitive"),
        PredicateRow("age == 36 or age == 1", true, "PPG: reserved words are case-insensitive"),
    ]

    static let stringComparisons: [PredicateRow] = [
        PredicateRow(
            "name BEGINSWITH 'Ada'", true, printed: "name BEGINSWITH \"Ada\"", "PPG String Comparisons: BEGINSWITH"),
        PredicateRow("name BEGINSWITH 'ada'", false, "PPG String Comparisons: BEGINSWITH is case-sensitive"),
        PredicateRow(
            "name BEGINSWITH[c] 'ada'", true, printed: "name BEGINSWITH[c] \"ada\"",
            "PPG String Comparisons: [c] case-insensitive"),
        PredicateRow(
            "name ENDSWITH 'lace'", true, printed: "name ENDSWITH \"lace\"", "PPG String Comparisons: ENDSWITH"),
        PredicateRow("name ENDSWITH 'LACE'", false, "PPG String Comparisons: ENDSWITH is case-sensitive"),
        PredicateRow("name ENDSWITH[c] 'LACE'", true, "PPG String Comparisons: ENDSWITH[c]"),
        PredicateRow(
            "name CONTAINS 'Love'", true, printed: "name CONTAINS \"Love\"", "PPG String Comparisons: CONTAINS"),
        PredicateRow("name CONTAINS 'love'", false, "PPG String Comparisons: CONTAINS is case-sensitive"),
        PredicateRow("name CONTAINS[c] 'LOVE'", true, "PPG String Comparisons: CONTAINS[c]"),
        PredicateRow("name CONTAINS ''", false, "NSString rangeOfString: never finds the empty string"),
        PredicateRow("name BEGINSWITH ''", false, "NSString anchored search never finds the empty string"),
        PredicateRow("name ENDSWITH[c] ''", false, "NSString anchored search never finds the empty string"),
        PredicateRow("name LIKE ''", false, "PPG String Comparisons: LIKE '' matches only the empty string"),
        PredicateRow("'' LIKE ''", true, "PPG String Comparisons: LIKE '' matches the empty string"),
        PredicateRow("name BEGINSWITH[c] 'ADA L'", true, "PPG String Comparisons: [c] prefix across a space"),
        PredicateRow("city BEGINSWITH[c] 'zü'", true, "PPG String Comparisons: [c] prefix of a non-ASCII string"),
        PredicateRow("city ENDSWITH 'ich'", true, "PPG String Comparisons: ENDSWITH after a non-ASCII character"),
        PredicateRow("name IN[c] {'x', 'ADA LOVELACE'}", true, "PPG String Comparisons: IN[c] a constant aggregate"),
        PredicateRow("age IN {'36', 'x'}", false, "PPG Basic Comparisons: a number is not IN an aggregate of strings"),
        PredicateRow("name LIKE 'Ada*'", true, printed: "name LIKE \"Ada*\"", "PPG String Comparisons: LIKE with *"),
        PredicateRow("name LIKE '*Love*'", true, "PPG String Comparisons: LIKE * matches any run"),
        PredicateRow("name LIKE 'Ada Lovelac?'", true, "PPG String Comparisons: LIKE ? matches one character"),
        PredicateRow("name LIKE 'Ada Lovela?'", false, "PPG String Comparisons: LIKE ? matches exactly one"),
        PredicateRow("name LIKE 'ada*'", false, "PPG String Comparisons: LIKE is case-sensitive"),
        PredicateRow("name LIKE[c] 'ada*'", true, printed: "name LIKE[c] \"ada*\"", "PPG String Comparisons: LIKE[c]"),
        PredicateRow("name LIKE 'Ada'", false, "PPG String Comparisons: LIKE matches the whole string"),
        PredicateRow("name LIKE '*'", true, "PPG String Comparisons: LIKE * matches everything"),
        PredicateRow("code LIKE 'AB-???'", true, "PPG String Comparisons: LIKE several ?"),
        PredicateRow("code LIKE '*-*'", true, "PPG String Comparisons: LIKE several *"),
        PredicateRow("pattern LIKE 'A\\\\*'", true, "PPG String Comparisons: LIKE with an escaped *"),
        PredicateRow("name LIKE 'A\\\\*'", false, "PPG String Comparisons: an escaped * is literal"),
        PredicateRow(
            "name MATCHES 'Ada.*'", true, printed: "name MATCHES \"Ada.*\"",
            "PPG String Comparisons: MATCHES (ICU regex)"),
        PredicateRow("name MATCHES 'Ada'", false, "NSCP: MATCHES must match the whole string"),
        PredicateRow("name MATCHES '.*Love.*'", true, "PPG String Comparisons: MATCHES"),
        PredicateRow("name MATCHES 'ada.*'", false, "PPG String Comparisons: MATCHES is case-sensitive"),
        PredicateRow(
            "name MATCHES[c] 'ada.*'", true, printed: "name MATCHES[c] \"ada.*\"", "PPG String Comparisons: MATCHES[c]"),
        PredicateRow(
            "email MATCHES '[a-z]+@[a-z]+\\\\.com'", true, "PPG String Comparisons: MATCHES with classes and escapes"),
        PredicateRow("code MATCHES '[A-Z]{2}-\\\\d{3}'", true, "PPG String Comparisons: MATCHES with quantifiers"),
        PredicateRow("code MATCHES '[A-Z]{3}-\\\\d{3}'", false, "PPG String Comparisons: MATCHES with quantifiers"),
        PredicateRow("code MATCHES 'AB|CD'", false, "NSCP: MATCHES alternation still spans the whole string"),
        PredicateRow("city == 'Zurich'", false, "PPG String Comparisons: diacritics count by default"),
        PredicateRow(
            "city ==[d] 'Zurich'", true, printed: "city ==[d] \"Zurich\"",
            "PPG String Comparisons: [d] diacritic-insensitive"),
        PredicateRow("city ==[c] 'zürich'", true, "PPG String Comparisons: [c] case-insensitive equality"),
        PredicateRow("city ==[c] 'zurich'", false, "PPG String Comparisons: [c] alone keeps diacritics"),
        PredicateRow("city ==[cd] 'ZURICH'", true, printed: "city ==[cd] \"ZURICH\"", "PPG String Comparisons: [cd]"),
        PredicateRow(
            "city ==[dc] 'ZURICH'", true, printed: "city ==[cd] \"ZURICH\"",
            "PPG String Comparisons: options in any order"),
        PredicateRow("title ==[cd] 'ecole'", true, "PPG String Comparisons: [cd] folds accented capitals"),
        PredicateRow("title BEGINSWITH[cd] 'eco'", true, "PPG String Comparisons: [cd] with BEGINSWITH"),
        PredicateRow("title LIKE[cd] 'e*e'", true, "PPG String Comparisons: [cd] with LIKE"),
        PredicateRow("title MATCHES[cd] 'e.*'", true, "PPG String Comparisons: [cd] with MATCHES"),
        PredicateRow("city CONTAINS[d] 'uri'", true, "PPG String Comparisons: [d] with CONTAINS"),
        PredicateRow("city ENDSWITH[cd] 'RICH'", true, "PPG String Comparisons: [cd] with ENDSWITH"),
        PredicateRow("wide ==[c] 'abc'", true, "Unicode folding: [c] matches full-width letters"),
        PredicateRow("wide == 'ABC'", false, "Unicode folding: widths differ without options"),
        PredicateRow(
            "name ==[n] 'Ada Lovelace'", true, printed: "name ==[n] \"Ada Lovelace\"",
            "NSCP normalized: compares as given"),
        PredicateRow(
            "name ==[cn] 'ada lovelace'", false, printed: "name ==[cn] \"ada lovelace\"",
            "NSCP normalized: supersedes [c]"),
        PredicateRow(
            "name ==[l] 'Ada Lovelace'", true, printed: "name ==[l] \"Ada Lovelace\"",
            "NSCP: locale-sensitive option parses"),
        PredicateRow("name <[c] 'b'", true, "PPG String Comparisons: [c] applies to ordering"),
        PredicateRow("name >[c] 'ADA'", true, "PPG String Comparisons: [c] applies to ordering"),
        PredicateRow("name !=[c] 'ADA LOVELACE'", false, "PPG String Comparisons: [c] applies to !="),
        PredicateRow("'Ada Lovelace' IN name", true, "NSCP in: a string is in a string containing it"),
        PredicateRow("'lovelace' IN[c] name", true, "NSCP in: IN[c] on strings"),
        PredicateRow("name BEGINSWITH %@", true, args: ["Ada"], "PPG Format String Summary: %@ substitutes a string"),
        PredicateRow("name LIKE %@", true, args: ["*lace"], "PPG Format String Summary: %@ in LIKE"),
        PredicateRow("age BEGINSWITH '3'", false, "NSCP: string operators need strings"),
        PredicateRow("name MATCHES %@", true, args: [".*"], "PPG String Comparisons: MATCHES with an argument"),
        PredicateRow("'Ada' BEGINSWITH 'A'", true, "PPG: constants on both sides"),
        PredicateRow("\"naïve\" LIKE[d] \"naive\"", true, "NSCP diacriticInsensitive: Apple's own example"),
        PredicateRow("\"NeXT\" LIKE[c] \"next\"", true, "NSCP caseInsensitive: Apple's own example"),
        PredicateRow(
            "\"WXYZlan\" MATCHES[n] \".lan\"", false,
            "NSCP normalized: Apple's own example (regex spans the whole string)"),
        PredicateRow("\"WXYZlan\" MATCHES[n] \".*lan\"", true, "NSCP normalized: whole-string regex"),
    ]

    static let collections: [PredicateRow] = [
        PredicateRow(
            "age IN {35, 36, 37}", true, printed: "age IN {35, 36, 37}", "PPG Basic Comparisons: IN an aggregate"),
        PredicateRow("age IN {1, 2}", false, "PPG Basic Comparisons: IN an aggregate"),
        PredicateRow("age IN %@", true, args: [[36, 40]], "PPG Format String Summary: IN %@ with an array"),
        PredicateRow("age IN %@", true, args: [Set([36, 40])], "NSCP in: a set on the right"),
        PredicateRow("age IN %@", true, args: [["a": 36]], "NSCP in: a dictionary on the right is searched by value"),
        PredicateRow("age IN %@", false, args: [["36": 1]], "NSCP in: a dictionary's keys do not count"),
        PredicateRow("age IN %@", true, args: [NSArray(array: [36])], "NSCP in: an NSArray on the right"),
        PredicateRow("name IN {'Ada Lovelace', 'Charles'}", true, "PPG Basic Comparisons: IN with strings"),
        PredicateRow("name IN[c] {'ada lovelace'}", true, "PPG String Comparisons: IN[c]"),
        PredicateRow("name IN {}", false, "PPG Basic Comparisons: nothing is IN an empty aggregate"),
        PredicateRow("tags CONTAINS 'math'", true, "NSCP contains: a collection contains an element"),
        PredicateRow("tags CONTAINS 'art'", false, "NSCP contains: a collection without the element"),
        PredicateRow("tags CONTAINS[c] 'MATH'", true, "NSCP contains: options apply to elements"),
        PredicateRow("numbers CONTAINS 2", true, "NSCP contains: a set contains an element"),
        PredicateRow("scores CONTAINS 100", true, "NSCP contains: numbers in an array"),
        PredicateRow("'math' IN tags", true, "PPG Basic Comparisons: IN a key path collection"),
        PredicateRow("2 IN numbers", true, "PPG Basic Comparisons: IN a set"),
        PredicateRow("ANY tags == 'poetry'", true, printed: "ANY tags == \"poetry\"", "PPG Aggregate Operations: ANY"),
        PredicateRow(
            "SOME tags == 'poetry'", true, printed: "ANY tags == \"poetry\"", "PPG Aggregate Operations: SOME is ANY"),
        PredicateRow("ANY tags == 'art'", false, "PPG Aggregate Operations: ANY, no match"),
        PredicateRow("ANY scores > 95", true, "PPG Aggregate Operations: ANY with ordering"),
        PredicateRow("ALL scores > 50", true, printed: "ALL scores > 50", "PPG Aggregate Operations: ALL"),
        PredicateRow("ALL scores > 80", false, "PPG Aggregate Operations: ALL, one fails"),
        PredicateRow(
            "NONE scores > 100", true, printed: "NOT ANY scores > 100", "PPG Aggregate Operations: NONE is NOT ANY"),
        PredicateRow("NONE scores > 90", false, "PPG Aggregate Operations: NONE, one matches"),
        PredicateRow("ANY empty == 1", false, "PPG Aggregate Operations: ANY of nothing is false"),
        PredicateRow("ALL empty == 1", true, "PPG Aggregate Operations: ALL of nothing is true"),
        PredicateRow("NONE empty == 1", true, "PPG Aggregate Operations: NONE of nothing is true"),
        PredicateRow("ANY friends.name == 'Mary'", true, "PPG Aggregate Operations: ANY over a to-many key path"),
        PredicateRow("ANY friends.age < 26", true, "PPG Aggregate Operations: ANY over a to-many key path"),
        PredicateRow("ALL friends.age >= 25", true, "PPG Aggregate Operations: ALL over a to-many key path"),
        PredicateRow("ALL friends.age > 25", false, "PPG Aggregate Operations: ALL over a to-many key path"),
        PredicateRow("ANY friends.name BEGINSWITH[c] 'mi'", true, "PPG Aggregate Operations: ANY with string options"),
        PredicateRow("ANY tags IN {'art', 'math'}", true, "PPG Aggregate Operations: ANY … IN"),
        PredicateRow("ALL tags IN {'math', 'poetry', 'engines', 'x'}", true, "PPG Aggregate Operations: ALL … IN"),
        PredicateRow("ANY numbers BETWEEN {3, 5}", true, "PPG Aggregate Operations: ANY … BETWEEN"),
        PredicateRow("ANY address == 'London'", true, "NSCP: ANY over a dictionary's values"),
        PredicateRow("tags == {'math', 'poetry', 'engines'}", true, "NSArray isEqual: element by element"),
        PredicateRow("tags == {'math', 'poetry'}", false, "NSArray isEqual: counts differ"),
        PredicateRow("ANY {1, 2, 36} == age", true, "PPG Aggregate Operations: ANY over an aggregate"),
        PredicateRow(
            "tags[FIRST] == 'math'", true, printed: "tags[FIRST] == \"math\"", "PPG Aggregate Operations: array[FIRST]"),
        PredicateRow(
            "tags[LAST] == 'engines'", true, printed: "tags[LAST] == \"engines\"",
            "PPG Aggregate Operations: array[LAST]"),
        PredicateRow("tags[SIZE] == 3", true, printed: "tags[SIZE] == 3", "PPG Aggregate Operations: array[SIZE]"),
        PredicateRow(
            "tags[1] == 'poetry'", true, printed: "tags[1] == \"poetry\"", "PPG Aggregate Operations: array[index]"),
        PredicateRow("tags[0] == 'poetry'", false, "PPG Aggregate Operations: indexes start at 0"),
        PredicateRow("tags[9] == nil", true, "PPG Aggregate Operations: an index past the end is nil"),
        PredicateRow("address['zip'] == '12345'", true, "PPG Aggregate Operations: dictionary['key']"),
        PredicateRow("scores[SIZE] > 3", true, "PPG Aggregate Operations: SIZE is the count"),
        PredicateRow("empty[FIRST] == nil", true, "PPG Aggregate Operations: FIRST of nothing is nil"),
        PredicateRow(
            "friends[1].name == 'Mary'", true, printed: "friends[1].name == \"Mary\"", "PPG: a key path after an index"),
        PredicateRow("{1, 2}[LAST] == 2", true, "PPG Aggregate Operations: index an aggregate"),
        PredicateRow("tags UNION {'art'} CONTAINS 'art'", true, "NSE unionSet: UNION"),
        PredicateRow("(tags INTERSECT {'math', 'art'})[SIZE] == 1", true, "NSE intersectSet: INTERSECT"),
        PredicateRow("(tags MINUS {'math'})[SIZE] == 2", true, "NSE minusSet: MINUS"),
        PredicateRow("tags UNION tags CONTAINS 'poetry'", true, "NSE unionSet: a union has each element once"),
        PredicateRow("(tags UNION tags)[SIZE] == 3", true, "NSE unionSet: a union has each element once"),
    ]

    static let keyPaths: [PredicateRow] = [
        PredicateRow(
            "address.city == 'London'", true, printed: "address.city == \"London\"",
            "KVC: a dotted key path walks dictionaries"),
        PredicateRow("address.zip BEGINSWITH '12'", true, "KVC: a dotted key path"),
        PredicateRow("address.country == nil", true, "KVC: a missing key in a path is nil"),
        PredicateRow("nowhere.deeper.still == nil", true, "KVC: nil propagates along a path"),
        PredicateRow("manager.name == 'Charles'", true, "Core Data Programming Guide: to-one key paths"),
        PredicateRow("manager.manager.name == 'Boss'", true, "Core Data Programming Guide: manager.manager key path"),
        PredicateRow(
            "manager.manager.department.name == 'R&D'", true,
            "Core Data Programming Guide: manager.manager.department.name"),
        PredicateRow(
            "department.employees.@sum.salary == 600", true, printed: "department.employees.@sum.salary == 600",
            "KVC Collection Operators: @sum"),
        PredicateRow("department.employees.@avg.salary == 200", true, "KVC Collection Operators: @avg"),
        PredicateRow("department.employees.@min.salary == 100", true, "KVC Collection Operators: @min"),
        PredicateRow("department.employees.@max.salary == 300", true, "KVC Collection Operators: @max"),
        PredicateRow("department.employees.@count == 3", true, "KVC Collection Operators: @count"),
        PredicateRow("department.employees.@max.name == 'Cy'", true, "KVC Collection Operators: @max on strings"),
        PredicateRow("tags.@count == 3", true, printed: "tags.@count == 3", "PPG Aggregate Operations: @count"),
        PredicateRow("tags.@count > 5", false, "PPG Aggregate Operations: @count"),
        PredicateRow("empty.@count == 0", true, "PPG Aggregate Operations: @count of nothing"),
        PredicateRow("scores.@sum == 352", true, "KVC Collection Operators: @sum of values"),
        PredicateRow("scores.@avg == 88", true, "KVC Collection Operators: @avg of values"),
        PredicateRow("scores.@max == 100", true, "KVC Collection Operators: @max of values"),
        PredicateRow("scores.@min == 77", true, "KVC Collection Operators: @min of values"),
        PredicateRow("empty.@sum == 0", true, "KVC Collection Operators: @sum of nothing is 0"),
        PredicateRow("empty.@max == nil", true, "KVC Collection Operators: @max of nothing is nil"),
        PredicateRow(
            "friends.@distinctUnionOfObjects.age.@count == 3", false, "KVC: an operator consumes the rest of the path"),
        PredicateRow("friends.@unionOfObjects.name CONTAINS 'Mary'", true, "KVC Collection Operators: @unionOfObjects"),
        PredicateRow(
            "friends.@distinctUnionOfArrays.tags CONTAINS 'physics'", true,
            "KVC Collection Operators: @distinctUnionOfArrays"),
        PredicateRow("address.@count == 3", true, "KVC: @count of a dictionary"),
        PredicateRow("friends.name CONTAINS 'Charles'", true, "KVC: a key on an array collects each element's value"),
        PredicateRow("friends.age.@sum == 100", true, "KVC: a collected key path with @sum"),
        PredicateRow("SELF.age == 36", true, printed: "age == 36", "PPG: SELF.key is the key"),
        PredicateRow("#first == 'Ada'", true, printed: "#first == \"Ada\"", "PPG: # escapes a reserved word as a key"),
        PredicateRow(
            "address.#city == 'London'", true, printed: "address.city == \"London\"", "PPG: # escape in a path"),
        PredicateRow(
            "%K == 36", true, args: ["age"], printed: "age == 36",
            "PPG Format String Summary: %K substitutes a key path"),
        PredicateRow(
            "%K == %@", true, args: ["address.city", "London"], printed: "address.city == \"London\"",
            "PPG Format String Summary: %K with a dotted path"),
        PredicateRow(
            "%K.city == 'London'", true, args: ["address"], "PPG Format String Summary: %K followed by more keys"),
        PredicateRow("name.length == 12", true, "KVC: NSString's length"),
        PredicateRow("SELF['age'] == 36", true, "PPG: SELF indexed by key"),
        PredicateRow("age == age", true, "PPG: the same key path on both sides"),
        PredicateRow("department.name == manager.department.name", true, "PPG: key paths on both sides"),
        PredicateRow("@count == 29", true, "KVC: @count of the evaluated dictionary"),
    ]

    static let variablesAndArguments: [PredicateRow] = [
        PredicateRow("age == %d", true, args: [36], printed: "age == 36", "PPG Format String Summary: %d"),
        PredicateRow("age == %i", true, args: [36], "PPG Format String Summary: %i"),
        PredicateRow("age == %ld", true, args: [36], "PPG Format String Summary: %ld"),
        PredicateRow("age == %lld", true, args: [Int64(36)], "PPG Format String Summary: %lld"),
        PredicateRow("age == %u", true, args: [UInt(36)], "PPG Format String Summary: %u"),
        PredicateRow("age == %lu", true, args: [UInt(36)], "PPG Format String Summary: %lu"),
        PredicateRow("height > %f", true, args: [1.5], "PPG Format String Summary: %f"),
        PredicateRow("height > %lf", true, args: [1.5], "PPG Format String Summary: %lf"),
        PredicateRow("height < %g", true, args: [2], "PPG Format String Summary: %g takes any number"),
        PredicateRow("name == %s", true, args: ["Ada Lovelace"], "PPG Format String Summary: %s"),
        PredicateRow("age == %@", true, args: [36], "PPG Format String Summary: %@ with a number"),
        PredicateRow("age == %@", true, args: [NSNumber(value: 36)], "PPG Format String Summary: %@ with an NSNumber"),
        PredicateRow("age == %@", true, args: [36.0], "PPG Format String Summary: %@ with a Double"),
        PredicateRow("age > %@ AND age < %@", true, args: [30, 40], "PPG Format String Summary: arguments in order"),
        PredicateRow("%K BETWEEN %@", true, args: ["age", [30, 40]], "PPG Format String Summary: %K and %@ together"),
        PredicateRow("name LIKE '%%'", false, "PPG: %% in a string is a literal percent"),
        PredicateRow("'100%%' ENDSWITH '%'", true, "PPG: %% in a string is a literal percent"),
        PredicateRow("name LIKE '%@'", false, "PPG Format String Summary: a quoted %@ is not substituted"),
        PredicateRow("age == $AGE", true, printed: "age == $AGE", "PPG Variables: $VARIABLE bound at evaluation"),
        PredicateRow(
            "name BEGINSWITH $PREFIX", true, printed: "name BEGINSWITH $PREFIX", "PPG Variables: a string variable"),
        PredicateRow("age IN $LIST", true, "PPG Variables: a collection variable"),
        PredicateRow("$AGE == 36", true, "PPG Variables: a variable on the left"),
        PredicateRow("$missing == nil", true, "PPG Variables: an unbound variable is nil"),
    ]

    static let expressions: [PredicateRow] = [
        PredicateRow("age + 4 == 40", true, printed: "age + 4 == 40", "PPG Expressions: + is add:to:"),
        PredicateRow("age - 6 == 30", true, printed: "age - 6 == 30", "PPG Expressions: - is from:subtract:"),
        PredicateRow("age * 2 == 72", true, printed: "age * 2 == 72", "PPG Expressions: * is multiply:by:"),
        PredicateRow(
            "age / 8 == 4.5", true, printed: "age / 8 == 4.5", "NSE divide:by: returns a floating-point value"),
        PredicateRow("2 ** 3 == 8", true, printed: "2 ** 3 == 8", "PPG Expressions: ** is raise:toPower:"),
        PredicateRow(
            "2 ** 3 ** 2 == 512", true, printed: "2 ** (3 ** 2) == 512", "PPG Expressions: ** is right-associative"),
        PredicateRow("1 + 2 * 3 == 7", true, printed: "1 + (2 * 3) == 7", "PPG Expressions: * binds tighter than +"),
        PredicateRow("(1 + 2) * 3 == 9", true, printed: "(1 + 2) * 3 == 9", "PPG Expressions: parentheses group"),
        PredicateRow("10 - 4 - 3 == 3", true, printed: "(10 - 4) - 3 == 3", "PPG Expressions: - is left-associative"),
        PredicateRow("-age == -36", true, printed: "0 - age == -36", "PPG Expressions: unary minus"),
        PredicateRow("age > -1", true, printed: "age > -1", "PPG Literals: negative numbers"),
        PredicateRow("age - -4 == 40", true, printed: "age - (-4) == 40", "PPG Literals: a negative operand"),
        PredicateRow("(age + 4) > 39", true, "PPG: a parenthesized expression starts a comparison"),
        PredicateRow("(age) == 36", true, printed: "age == 36", "PPG: a parenthesized key path"),
        PredicateRow("height * 100 > 160", true, "PPG Expressions: arithmetic on doubles"),
        PredicateRow("score + 1 == 13.5", true, "PPG Expressions: arithmetic on decimals"),
        PredicateRow(
            "sum:({1, 2, 3}) == 6", true, printed: "sum:({1, 2, 3}) == 6", "NSE init(forFunction:arguments:): sum:"),
        PredicateRow("count:({1, 2, 3}) == 3", true, "NSE functions: count:"),
        PredicateRow("min:({4, 2, 3}) == 2", true, "NSE functions: min:"),
        PredicateRow("max:({4, 2, 3}) == 4", true, "NSE functions: max:"),
        PredicateRow("average:({1, 2, 3}) == 2", true, "NSE functions: average:"),
        PredicateRow("median:({5, 1, 3}) == 3", true, "NSE functions: median:"),
        PredicateRow("median:({4, 1, 3, 2}) == 2.5", true, "NSE functions: median: of an even count"),
        PredicateRow("mode:({1, 2, 2, 3}) == {2}", true, "NSE functions: mode: returns the most frequent values"),
        PredicateRow("stddev:({2, 4, 4, 4, 5, 5, 7, 9}) == 2", true, "NSE functions: stddev:"),
        PredicateRow("sqrt:(16) == 4", true, printed: "sqrt:(16) == 4", "NSE functions: sqrt:"),
        PredicateRow("log:(1000) == 3", true, "NSE functions: log: is base 10"),
        PredicateRow("ln:(1) == 0", true, "NSE functions: ln:"),
        PredicateRow("exp:(0) == 1", true, "NSE functions: exp:"),
        PredicateRow(
            "raise:toPower:(2, 10) == 1024", true, printed: "2 ** 10 == 1024", "NSE functions: raise:toPower:"),
        PredicateRow("add:to:(1, 2) == 3", true, printed: "1 + 2 == 3", "NSE functions: add:to:"),
        PredicateRow("from:subtract:(5, 2) == 3", true, "NSE functions: from:subtract:"),
        PredicateRow("multiply:by:(5, 2) == 10", true, "NSE functions: multiply:by:"),
        PredicateRow("divide:by:(5, 2) == 2.5", true, "NSE functions: divide:by:"),
        PredicateRow("modulus:by:(7, 3) == 1", true, printed: "modulus:by:(7, 3) == 1", "NSE functions: modulus:by:"),
        PredicateRow("floor:(2.7) == 2", true, "NSE functions: floor:"),
        PredicateRow("ceiling:(2.1) == 3", true, "NSE functions: ceiling:"),
        PredicateRow("trunc:(-2.7) == -2", true, "NSE functions: trunc:"),
        PredicateRow("abs:(-5) == 5", true, "NSE functions: abs:"),
        PredicateRow("uppercase:(name) == 'ADA LOVELACE'", true, "NSE functions: uppercase:"),
        PredicateRow("lowercase:('ABC') == 'abc'", true, "NSE functions: lowercase:"),
        PredicateRow("bitwiseAnd:with:(12, 10) == 8", true, "NSE functions: bitwiseAnd:with:"),
        PredicateRow("bitwiseOr:with:(12, 10) == 14", true, "NSE functions: bitwiseOr:with:"),
        PredicateRow("bitwiseXor:with:(12, 10) == 6", true, "NSE functions: bitwiseXor:with:"),
        PredicateRow("leftshift:by:(1, 4) == 16", true, "NSE functions: leftshift:by:"),
        PredicateRow("rightshift:by:(16, 2) == 4", true, "NSE functions: rightshift:by:"),
        PredicateRow("onesComplement:(0) == -1", true, "NSE functions: onesComplement:"),
        PredicateRow("noindex:(age) == 36", true, "NSE functions: noindex:"),
        PredicateRow("random() < 1", true, printed: "random() < 1", "NSE functions: random"),
        PredicateRow("random:(10) < 10", true, "NSE functions: random:"),
        PredicateRow("now() > born", true, printed: "now() > born", "NSE functions: now"),
        PredicateRow("sum:(scores) == 352", true, "NSE functions: sum: of a key path collection"),
        PredicateRow("count:(friends) == 3", true, "NSE functions: count: of a key path collection"),
        PredicateRow(
            "CAST('42', 'NSNumber') == 42", true, printed: "CAST(\"42\", \"NSNumber\") == 42",
            "PPG: CAST(string, 'NSNumber')"),
        PredicateRow(
            "CAST(born, 'NSNumber') == 100", true, "PPG: CAST(date, 'NSNumber') is the reference-date interval"),
        PredicateRow("CAST(age, 'NSString') == '36'", true, "PPG: CAST to NSString"),
        PredicateRow("CAST(%@, 'NSDate') == born", true, args: [100], "PPG: CAST with an argument"),
        PredicateRow(
            "FUNCTION(SELF, 'missing:') == nil", true, printed: "FUNCTION(SELF, \"missing:\") == nil",
            "NSE init(forFunction:selectorName:arguments:): an unknown receiver yields nil"),
        PredicateRow(
            "TERNARY(age > 30, 'old', 'young') == 'old'", true,
            printed: "TERNARY(age > 30, \"old\", \"young\") == \"old\"", "NSE conditional: TERNARY"),
        PredicateRow("TERNARY(age > 40, 'old', 'young') == 'young'", true, "NSE conditional: TERNARY false branch"),
        PredicateRow(
            "SUBQUERY(friends, $f, $f.age > 26).@count == 2", true,
            printed: "SUBQUERY(friends, $f, $f.age > 26).@count == 2", "PPG Subqueries: SUBQUERY with @count"),
        PredicateRow("SUBQUERY(friends, $f, $f.age > 100).@count == 0", true, "PPG Subqueries: an empty result"),
        PredicateRow(
            "SUBQUERY(friends, $f, $f.name BEGINSWITH 'M' AND $f.age < 28).@count == 1", true,
            "PPG Subqueries: a compound subquery predicate"),
        PredicateRow(
            "SUBQUERY(friends, $f, ANY $f.tags == 'math').@count > 0", true, "PPG Subqueries: ANY inside a subquery"),
        PredicateRow(
            "SUBQUERY(friends, $f, SUBQUERY($f.tags, $t, $t == 'engines').@count > 0).@count == 1", true,
            "PPG Subqueries: nested subqueries"),
        PredicateRow(
            "SUBQUERY(friends, $f, $f.age > $MIN).@count == 2", true,
            "PPG Subqueries: outer variables are visible inside"),
        PredicateRow("SUBQUERY(tags, $t, $t CONTAINS 'e')[SIZE] == 2", true, "PPG Subqueries: result indexed"),
        PredicateRow(
            "SUBQUERY(friends, $x, $x.age > 26).name CONTAINS 'Charles'", true, "PPG Subqueries: key path on the result"
        ),
    ]

    static let literals: [PredicateRow] = [
        PredicateRow("0x24 == 36", true, printed: "36 == 36", "PPG Literals: hexadecimal"),
        PredicateRow("0X24 == age", true, "PPG Literals: hexadecimal, upper-case marker"),
        PredicateRow("0o44 == 36", true, "PPG Literals: octal"),
        PredicateRow("0b100100 == 36", true, "PPG Literals: binary"),
        PredicateRow("3.6e1 == age", true, "PPG Literals: exponent"),
        PredicateRow("360e-1 == age", true, "PPG Literals: negative exponent"),
        PredicateRow("1E2 == 100", true, printed: "100 == 100", "PPG Literals: exponent, upper-case E"),
        PredicateRow("1.5e+1 == 15", true, "PPG Literals: explicit positive exponent"),
        PredicateRow("0.5 < 1", true, "PPG Literals: decimal fraction"),
        PredicateRow("9223372036854775807 > 0", true, "PPG Literals: the largest 64-bit integer"),
        PredicateRow("99999999999999999999 > 1", true, "PPG Literals: integers beyond 64 bits become floating-point"),
        PredicateRow("'it\\'s' == \"it's\"", true, "PPG Literals: escaped single quote"),
        PredicateRow("\"say \\\"hi\\\"\" CONTAINS 'hi'", true, "PPG Literals: escaped double quote"),
        PredicateRow("'a\\tb' CONTAINS '\\t'", true, "PPG Literals: \\t escape"),
        PredicateRow("'line\\nbreak' CONTAINS '\\n'", true, "PPG Literals: \\n escape"),
        PredicateRow("'\\u00e9' == 'é'", true, "PPG Literals: \\u escape"),
        PredicateRow("'back\\\\slash' CONTAINS '\\\\'", true, "PPG Literals: escaped backslash"),
        PredicateRow("'' == ''", true, "PPG Literals: empty strings"),
        PredicateRow("'日本語' BEGINSWITH '日'", true, "PPG Literals: non-ASCII strings"),
        PredicateRow("{1, 'a', nil} CONTAINS 'a'", true, "PPG Literals: mixed aggregate"),
        PredicateRow("{} == {}", true, "PPG Literals: empty aggregates"),
        PredicateRow("{{1, 2}, {3}}[LAST][FIRST] == 3", true, "PPG Literals: nested aggregates"),
        PredicateRow("age==36", true, "PPG: whitespace is optional between tokens"),
        PredicateRow("  age   ==   36  ", true, "PPG: extra whitespace is ignored"),
        PredicateRow("age\n==\t36", true, "PPG: newlines and tabs are whitespace"),
        PredicateRow("_private == nil", true, "PPG: a key may start with an underscore"),
        PredicateRow("städte == nil", true, "PPG: keys may contain non-ASCII letters"),
        PredicateRow("key2 == nil", true, "PPG: keys may contain digits"),
    ]

    /// Every reserved word in every case style, escaped with `#` as a key.
    static let reservedWordEscapes: [PredicateRow] = PredicateLexer.reservedWords.sorted()
        .filter { !$0.contains("-") && $0 != "FIRST" }
        .map { word in
            PredicateRow("#\(word.lowercased()) == nil", true, "PPG: # makes reserved word \(word) a key")
        }

    static let all: [PredicateRow] =
        basicComparisons + nilComparisons + booleanAndCompound + stringComparisons + collections + keyPaths
        + variablesAndArguments + expressions + literals + reservedWordEscapes

    nonisolated(unsafe) static let bindings: [String: Any] = ["AGE": 36, "PREFIX": "Ada", "LIST": [1, 36], "MIN": 26]
}
