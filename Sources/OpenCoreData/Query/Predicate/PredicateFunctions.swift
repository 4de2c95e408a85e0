/// Apple's predefined expression functions (NSExpression, `init(forFunction:arguments:)`),
/// plus the two the parser produces for `CAST(…)` and `x[index]`.
///
/// Arithmetic keeps integers integral while it can and otherwise works in `Double`; `divide:by:`
/// always yields a `Double`, as Apple's does. A function given arguments it cannot use yields `nil`.
enum PredicateFunctions {
    typealias Implementation = ([Any?]) -> Any?

    /// Argument counts, checked by the parser so a malformed call is a syntax error.
    static let arity: [String: Int] = [
        "sum:": 1, "count:": 1, "min:": 1, "max:": 1, "average:": 1, "median:": 1, "mode:": 1, "stddev:": 1,
        "add:to:": 2, "from:subtract:": 2, "multiply:by:": 2, "divide:by:": 2, "modulus:by:": 2,
        "sqrt:": 1, "log:": 1, "ln:": 1, "raise:toPower:": 2, "exp:": 1, "ceiling:": 1, "abs:": 1,
        "trunc:": 1, "floor:": 1, "random": 0, "random:": 1, "now": 0, "uppercase:": 1, "lowercase:": 1,
        "bitwiseAnd:with:": 2, "bitwiseOr:with:": 2, "bitwiseXor:with:": 2, "leftshift:by:": 2,
        "rightshift:by:": 2, "onesComplement:": 1, "noindex:": 1, "length:": 1,
        "castObject:toType:": 2, "objectFrom:withIndex:": 2,
    ]

    /// A Swift number as the `NSNumber` (or `NSDecimalNumber`) Apple's expressions answer; applied
    /// once, to what `expressionValue(with:context:)` hands out, so evaluating a predicate over many
    /// objects allocates nothing for its arithmetic.
    static func asNSNumber(_ value: Any?) -> Any? {
        guard let value, !DynamicValue.isObject(value) else { return value }
        switch value {
        case let x as Int: return NSNumber(value: x)
        case let x as Double: return NSNumber(value: x)
        case let x as Decimal: return NSDecimalNumber(decimal: x)
        default: return value
        }
    }

    static func call(_ name: String, _ arguments: [Any?]) -> Any? {
        let args = arguments.map { DynamicValue.unwrap($0) }
        switch name {
        case "sum:": return collection(args).map { KeyValueCodingAccess.sum($0) } ?? nil
        case "count:": return collection(args)?.count
        case "min:", "max:":
            return collection(args).map {
                KeyValueCodingAccess.value(of: $0, components: [name == "min:" ? "@min" : "@max"])
            } ?? nil
        case "average:":
            return collection(args).map { KeyValueCodingAccess.value(of: $0, components: ["@avg"]) } ?? nil
        case "median:": return numbers(args).flatMap(median)
        case "mode:": return collection(args).map(mode)
        case "stddev:": return numbers(args).flatMap(standardDeviation)
        case "add:to:": return arithmetic(args, { $0.addingReportingOverflow($1) }, +)
        case "from:subtract:": return arithmetic(args, { $0.subtractingReportingOverflow($1) }, -)
        case "multiply:by:": return arithmetic(args, { $0.multipliedReportingOverflow(by: $1) }, *)
        case "divide:by:":
            guard let (a, b) = pair(args) else { return nil }
            return a.doubleValue / b.doubleValue
        case "modulus:by:":
            guard let (a, b) = pair(args) else { return nil }
            if let x = a.exactInt, let y = b.exactInt {
                guard y != 0 else { return nil }
                let (remainder, overflow) = x.remainderReportingOverflow(dividingBy: y)
                return overflow ? 0 : Int(remainder)
            }
            let y = b.doubleValue
            return y == 0 ? nil : a.doubleValue.truncatingRemainder(dividingBy: y)
        case "raise:toPower:":
            guard let (a, b) = pair(args) else { return nil }
            return pow(a.doubleValue, b.doubleValue)
        case "sqrt:": return unary(args) { $0.squareRoot() }
        case "log:": return unary(args) { log10($0) }
        case "ln:": return unary(args) { log($0) }
        case "exp:": return unary(args) { exp($0) }
        case "ceiling:": return integralUnary(args) { $0.rounded(.up) }
        case "floor:": return integralUnary(args) { $0.rounded(.down) }
        case "trunc:": return integralUnary(args) { $0.rounded(.towardZero) }
        case "abs:":
            guard let first = args.first, let value = first.flatMap(DynamicValue.number) else { return nil }
            if let x = value.exactInt, x != .min { return Int(exactly: abs(x)) }
            return abs(value.doubleValue)
        case "random": return Double.random(in: 0..<1)
        case "random:":
            guard let first = args.first, let upper = first.flatMap(DynamicValue.number)?.exactInt, upper > 0 else {
                return nil
            }
            return Int(Int64.random(in: 0..<upper))
        case "now": return Date()
        case "uppercase:": return (args.first ?? nil).flatMap(DynamicValue.string)?.uppercased()
        case "lowercase:": return (args.first ?? nil).flatMap(DynamicValue.string)?.lowercased()
        case "length:": return (args.first ?? nil).flatMap(DynamicValue.string)?.utf16.count
        case "bitwiseAnd:with:": return bitwise(args, &)
        case "bitwiseOr:with:": return bitwise(args, |)
        case "bitwiseXor:with:": return bitwise(args, ^)
        case "leftshift:by:": return bitwise(args) { $1 >= 0 && $1 < 64 ? $0 << $1 : 0 }
        case "rightshift:by:": return bitwise(args) { $1 >= 0 && $1 < 64 ? $0 >> $1 : ($0 < 0 ? -1 : 0) }
        case "onesComplement:":
            guard let first = args.first, let x = first.flatMap(DynamicValue.number)?.exactInt else { return nil }
            return Int(~x)
        case "noindex:": return args.first ?? nil
        case "castObject:toType:": return cast(args)
        case "objectFrom:withIndex:": return index(args)
        default: return nil
        }
    }

    private static func collection(_ args: [Any?]) -> [Any]? {
        guard args.count == 1, let value = args[0] else { return nil }
        return DynamicValue.elements(value)
    }

    private static func numbers(_ args: [Any?]) -> [Double]? {
        collection(args)?.compactMap { DynamicValue.unwrap($0).flatMap(DynamicValue.number)?.doubleValue }
    }

    private static func median(_ values: [Double]) -> Any? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// `mode:` returns every value that occurs most often, as Apple's does.
    private static func mode(_ values: [Any]) -> Any {
        var counts: [(value: Any, count: Int)] = []
        for value in values.compactMap({ DynamicValue.unwrap($0) }) {
            if let index = counts.firstIndex(where: { DynamicValue.equal($0.value, value) }) {
                counts[index].count += 1
            } else {
                counts.append((value, 1))
            }
        }
        let top = counts.map(\.count).max() ?? 0
        return counts.filter { $0.count == top }.map(\.value)
    }

    private static func standardDeviation(_ values: [Double]) -> Any? {
        guard !values.isEmpty else { return nil }
        let mean = values.reduce(0, +) / Double(values.count)
        let variance = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(values.count)
        return variance.squareRoot()
    }

    private static func pair(_ args: [Any?]) -> (DynamicValue.Number, DynamicValue.Number)? {
        guard args.count == 2, let a = args[0].flatMap(DynamicValue.number),
            let b = args[1].flatMap(DynamicValue.number)
        else { return nil }
        return (a, b)
    }

    private static func arithmetic(
        _ args: [Any?], _ integral: (Int64, Int64) -> (partialValue: Int64, overflow: Bool),
        _ floating: (Double, Double) -> Double
    ) -> Any? {
        guard let (a, b) = pair(args) else { return nil }
        if case .int(let x) = a, case .int(let y) = b {
            let (result, overflow) = integral(x, y)
            if !overflow { return Int(result) }
        }
        return floating(a.doubleValue, b.doubleValue)
    }

    private static func unary(_ args: [Any?], _ body: (Double) -> Double) -> Any? {
        guard args.count == 1, let value = args[0].flatMap(DynamicValue.number) else { return nil }
        return body(value.doubleValue)
    }

    private static func integralUnary(_ args: [Any?], _ body: (Double) -> Double) -> Any? {
        guard args.count == 1, let value = args[0].flatMap(DynamicValue.number) else { return nil }
        if let x = value.exactInt { return Int(x) }
        return body(value.doubleValue)
    }

    private static func bitwise(_ args: [Any?], _ body: (Int64, Int64) -> Int64) -> Any? {
        guard let (a, b) = pair(args), let x = a.exactInt, let y = b.exactInt else { return nil }
        return Int(body(x, y))
    }

    /// `CAST(value, 'Type')`: Apple documents `NSDate` from a reference-date interval and
    /// `NSNumber` from a string or date; `NSString` gives the value's text.
    private static func cast(_ args: [Any?]) -> Any? {
        guard args.count == 2, let typeName = args[1].flatMap(DynamicValue.string) else { return nil }
        guard let value = args[0] else { return nil }
        switch typeName {
        case "NSDate", "Date":
            if let date = DynamicValue.date(value) { return date }
            if let number = DynamicValue.number(value) {
                return Date(timeIntervalSinceReferenceDate: number.doubleValue)
            }
            if let string = DynamicValue.string(value), let interval = Double(string) {
                return Date(timeIntervalSinceReferenceDate: interval)
            }
            return nil
        case "NSNumber", "NSDecimalNumber":
            if let number = DynamicValue.number(value) { return number.boxed }
            if let date = DynamicValue.date(value) { return date.timeIntervalSinceReferenceDate }
            if let string = DynamicValue.string(value) {
                let trimmed = string.trimmingCharacters(in: .whitespaces)
                if let int = Int(trimmed) { return int }
                if typeName == "NSDecimalNumber", let decimal = Decimal(string: trimmed) { return decimal }
                return Double(trimmed)
            }
            return nil
        case "NSString", "String":
            if let string = DynamicValue.string(value) { return string }
            if let number = DynamicValue.number(value) { return PredicateFormatter.numberText(number) }
            return String(describing: value)
        default:
            return nil
        }
    }

    /// `collection[index]`, `[FIRST]`, `[LAST]`, `[SIZE]`; a dictionary is indexed by key.
    private static func index(_ args: [Any?]) -> Any? {
        guard args.count == 2, let container = args[0], let index = args[1] else { return nil }
        if let symbol = index as? IndexSymbol {
            let elements = DynamicValue.elements(container)
            switch symbol {
            case .first: return elements?.first
            case .last: return elements?.last
            case .size:
                if let elements { return elements.count }
                return DynamicValue.dictionaryValues(container)?.count
            }
        }
        if let key = DynamicValue.string(index) {
            let lookup = DynamicValue.dictionaryLookup(container, key: key)
            return lookup.isDictionary ? lookup.value : nil
        }
        guard let elements = DynamicValue.elements(container), let position = DynamicValue.number(index)?.exactInt,
            position >= 0, position < elements.count
        else { return nil }
        return elements[Int(position)]
    }

    enum IndexSymbol: String {
        case first = "FIRST"
        case last = "LAST"
        case size = "SIZE"
    }
}
