extension KeyedArchive {
    /// The format text of an archived `NSExpression`, as Apple's `predicateFormat` writes it, for
    /// the kinds a derived attribute's derivation is made of: key paths, functions (`count:(pages)`,
    /// `now()`, `uppercase:(title)`), constants, variables and `SELF`. `nil` for anything else, or
    /// for an archive nested deeper than any real derivation.
    func expressionFormat(_ reference: Any?, depth: Int = 0) -> String? {
        guard depth < 16, let object = dictionary(reference), let type = object["NSExpressionType"] as? Int else {
            return nil
        }
        switch type {
        case 0:
            guard let value = self.object(object["NSConstantValue"]) else { return "nil" }
            if let text = string(object["NSConstantValue"]) {
                return "\"\(text.replacingOccurrences(of: "\"", with: "\\\""))\""
            }
            if let number = value as? Int { return String(number) }
            if let number = value as? Double { return String(number) }
            return nil
        case 1:
            return "SELF"
        case 2:
            return string(object["NSVariable"]).map { "$" + $0 }
        case 3:
            // A key path: `valueForKey:` applied to its operand, the key an NSKeyPath specifier.
            guard let key = elements(object["NSArguments"]).first.flatMap({ dictionary($0) }),
                let path = string(key["NSKeyPath"])
            else { return nil }
            guard let operand = expressionFormat(object["NSOperand"], depth: depth + 1), operand != "SELF" else {
                return path
            }
            return operand + "." + path
        case 4:
            guard let selector = string(object["NSSelectorName"]) else { return nil }
            var arguments: [String] = []
            for argument in elements(object["NSArguments"]) {
                guard let text = expressionFormat(argument, depth: depth + 1) else { return nil }
                arguments.append(text)
            }
            return selector.hasSuffix(":")
                ? selector + "(" + arguments.joined(separator: ", ") + ")" : selector + "()"
        default:
            return nil
        }
    }
}
