/// Function calls (`sum:(…)`, `FUNCTION(…)`, `TERNARY(…)`, `SUBQUERY(…)`, `CAST(…)`) and the
/// `%@`/`%K`/`%d`… format arguments, for ``PredicateParser``.
extension PredicateParser {
    mutating func parseFunctionCall(_ name: String, _ token: PredicateToken) throws -> NSExpression {
        guard let arity = PredicateFunctions.arity[name] else { throw error("unknown function '\(name)'", at: token) }
        try expectSymbol("(", "after the function name")
        let arguments = try nested { parser in try parser.parseList(closing: ")") }
        guard arguments.count == arity else {
            throw error("function '\(name)' takes \(arity) argument(s), found \(arguments.count)", at: token)
        }
        return Self.function(name, arguments)
    }

    /// `FUNCTION(receiver, 'selectorName', arguments…)`
    mutating func parseFunctionKeyword() throws -> NSExpression {
        try expectSymbol("(", "after FUNCTION")
        return try nested { parser in
            let receiver = try parser.parseExpression()
            try parser.expectSymbol(",", "after the FUNCTION receiver")
            let nameToken = parser.current
            let nameExpression = try parser.parseExpression()
            guard case .constant(let value) = nameExpression.node,
                let name = DynamicValue.unwrap(value).flatMap(DynamicValue.string), !name.isEmpty
            else { throw parser.error("FUNCTION needs the selector name as a string", at: nameToken) }
            var arguments: [NSExpression] = []
            while parser.isSymbol(",") {
                parser.advance()
                arguments.append(try parser.parseExpression())
            }
            try parser.expectSymbol(")", "to close FUNCTION")
            return NSExpression(node: .function(name: name, operand: receiver, arguments: arguments))
        }
    }

    /// `FETCH(fetchRequest, context, countOnly)`, as mapping models write a source expression:
    /// `FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Car",
    /// "TRUEPREDICATE"), $manager.sourceContext, NO)`. Evaluated, it runs the request in the
    /// context (its count when the flag is true).
    mutating func parseFetch() throws -> NSExpression {
        try expectSymbol("(", "after FETCH")
        return try nested { parser in
            let request = try parser.parseExpression()
            try parser.expectSymbol(",", "after the FETCH request")
            let context = try parser.parseExpression()
            try parser.expectSymbol(",", "after the FETCH context")
            let countOnly = try parser.parseExpression()
            try parser.expectSymbol(")", "to close FETCH")
            return NSExpression(node: .function(name: "FETCH", operand: nil, arguments: [request, context, countOnly]))
        }
    }

    /// `TERNARY(predicate, trueExpression, falseExpression)`
    mutating func parseTernary() throws -> NSExpression {
        try expectSymbol("(", "after TERNARY")
        return try nested { parser in
            let predicate = try parser.parseOr()
            try parser.expectSymbol(",", "after the TERNARY predicate")
            let whenTrue = try parser.parseExpression()
            try parser.expectSymbol(",", "after the TERNARY true expression")
            let whenFalse = try parser.parseExpression()
            try parser.expectSymbol(")", "to close TERNARY")
            return NSExpression(forConditional: predicate, trueExpression: whenTrue, falseExpression: whenFalse)
        }
    }

    /// `SUBQUERY(collection, $variable, predicate)`
    mutating func parseSubquery() throws -> NSExpression {
        try expectSymbol("(", "after SUBQUERY")
        return try nested { parser in
            let collection = try parser.parseExpression()
            try parser.expectSymbol(",", "after the SUBQUERY collection")
            guard case .variable(let variable) = parser.current.kind else {
                throw parser.error(
                    "SUBQUERY needs an iterator variable such as $x, found \(parser.describe(parser.current))")
            }
            parser.advance()
            try parser.expectSymbol(",", "after the SUBQUERY variable")
            let predicate = try parser.parseOr()
            try parser.expectSymbol(")", "to close SUBQUERY")
            return NSExpression(forSubquery: collection, usingIteratorVariable: variable, predicate: predicate)
        }
    }

    /// `CAST(value, 'NSDate')`
    mutating func parseCast() throws -> NSExpression {
        try expectSymbol("(", "after CAST")
        return try nested { parser in
            let value = try parser.parseExpression()
            try parser.expectSymbol(",", "after the CAST value")
            let typeToken = parser.current
            let type = try parser.parseExpression()
            guard case .constant(let name) = type.node, DynamicValue.unwrap(name).flatMap(DynamicValue.string) != nil
            else { throw parser.error("CAST needs a type name string such as 'NSDate'", at: typeToken) }
            try parser.expectSymbol(")", "to close CAST")
            // A constant cast to a date is folded into a date constant, which is how a date
            // constant prints (`CAST(interval, "NSDate")`), so printing and parsing round-trip.
            if case .constant(let interval) = value.node, case .constant(let name) = type.node,
                let seconds = DynamicValue.unwrap(interval).flatMap(DynamicValue.number),
                (DynamicValue.unwrap(name).flatMap(DynamicValue.string)) == "NSDate"
            {
                return NSExpression(forConstantValue: Date(timeIntervalSinceReferenceDate: seconds.doubleValue))
            }
            return Self.function("castObject:toType:", [value, type])
        }
    }

    // MARK: Format arguments

    mutating func substitute(_ conversion: Character, _ token: PredicateToken) throws -> NSExpression {
        guard argumentIndex < arguments.count else {
            throw error(
                "format specifier '%\(conversion)' has no argument (\(arguments.count) given)", code: .argument,
                at: token)
        }
        let argument = DynamicValue.unwrap(arguments[argumentIndex])
        argumentIndex += 1
        func wrongType(_ expected: String) -> NSPredicateFormatError {
            error(
                "argument \(argumentIndex) for '%\(conversion)' must be \(expected), not \(argument.map { "\(type(of: $0))" } ?? "nil")",
                code: .argument, at: token)
        }
        switch conversion {
        case "@":
            return .given(argument)
        case "K":
            guard let keyPath = argument.flatMap(DynamicValue.string), !keyPath.isEmpty else {
                throw wrongType("a key path string")
            }
            return NSExpression(forKeyPath: keyPath)
        case "d", "i", "o", "u", "x", "X", "c", "C":
            guard let value = argument.flatMap(DynamicValue.number)?.exactInt else { throw wrongType("an integer") }
            return NSExpression(forConstantValue: Int(value))
        case "f", "F", "e", "E", "g", "G":
            guard let value = argument.flatMap(DynamicValue.number) else { throw wrongType("a number") }
            return NSExpression(forConstantValue: value.doubleValue)
        default:
            guard let value = argument.flatMap(DynamicValue.string) else { throw wrongType("a string") }
            return NSExpression(forConstantValue: value)
        }
    }
}
