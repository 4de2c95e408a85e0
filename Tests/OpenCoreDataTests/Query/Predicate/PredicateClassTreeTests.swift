import Testing

@testable import OpenCoreData

/// Apple's class tree, enums and raw values (NSComparisonPredicate, NSCompoundPredicate and
/// NSExpression class references), and predicates built in code.
@Suite("Predicate class tree")
struct PredicateClassTreeTests {
    @Test("raw values are Apple's, because they are persisted and compared by user code")
    func rawValues() {
        #expect(NSComparisonPredicate.Operator.lessThan.rawValue == 0)
        #expect(NSComparisonPredicate.Operator.equalTo.rawValue == 4)
        #expect(NSComparisonPredicate.Operator.matches.rawValue == 6)
        #expect(NSComparisonPredicate.Operator.in.rawValue == 10)
        #expect(NSComparisonPredicate.Operator.customSelector.rawValue == 11)
        #expect(NSComparisonPredicate.Operator.contains.rawValue == 99)
        #expect(NSComparisonPredicate.Operator.between.rawValue == 100)
        #expect(NSComparisonPredicate.Modifier.all.rawValue == 1)
        #expect(NSComparisonPredicate.Modifier.any.rawValue == 2)
        #expect(NSComparisonPredicate.Options.caseInsensitive.rawValue == 1)
        #expect(NSComparisonPredicate.Options.diacriticInsensitive.rawValue == 2)
        #expect(NSComparisonPredicate.Options.normalized.rawValue == 4)
        #expect(NSCompoundPredicate.LogicalType.not.rawValue == 0)
        #expect(NSCompoundPredicate.LogicalType.or.rawValue == 2)
        #expect(NSExpression.ExpressionType.keyPath.rawValue == 3)
        #expect(NSExpression.ExpressionType.subquery.rawValue == 13)
        #expect(NSExpression.ExpressionType.aggregate.rawValue == 14)
        #expect(NSExpression.ExpressionType.conditional.rawValue == 20)
    }

    @Test("init(format:) returns the subclass the format describes, as Apple's class cluster does")
    func formatReturnsSubclass() throws {
        let comparison = try #require(NSPredicate(format: "ANY tags ==[cd] %@", "x") as? NSComparisonPredicate)
        #expect(comparison.predicateOperatorType == .equalTo)
        #expect(comparison.comparisonPredicateModifier == .any)
        #expect(comparison.options == [.caseInsensitive, .diacriticInsensitive])
        #expect(comparison.leftExpression.expressionType == .keyPath)
        #expect(comparison.leftExpression.keyPath == "tags")
        #expect(comparison.rightExpression.constantValue as? String == "x")

        let compound = try #require(NSPredicate(format: "a == 1 OR b == 2") as? NSCompoundPredicate)
        #expect(compound.compoundPredicateType == .or)
        #expect(compound.subpredicates.count == 2)
        #expect(compound.subpredicates.allSatisfy { $0 is NSComparisonPredicate })
    }

    @Test("NONE parses as NOT ANY (Predicate Programming Guide, Aggregate Operations)")
    func noneIsNotAny() throws {
        let none = try #require(NSPredicate(format: "NONE tags == 'x'") as? NSCompoundPredicate)
        #expect(none.compoundPredicateType == .not)
        let inner = try #require(none.subpredicates.first as? NSComparisonPredicate)
        #expect(inner.comparisonPredicateModifier == .any)
    }

    @Test("a predicate built in code prints like the parsed one and is equal to it")
    func builtInCode() {
        let built = NSComparisonPredicate(
            leftExpression: NSExpression(forKeyPath: "name"),
            rightExpression: NSExpression(forConstantValue: "a"),
            modifier: .direct, type: .beginsWith, options: [.caseInsensitive])
        #expect(built.predicateFormat == "name BEGINSWITH[c] \"a\"")
        #expect(built == NSPredicate(format: "name BEGINSWITH[c] 'a'"))
        #expect(built.evaluate(with: ["name": "Alpha"]))

        let compound = NSCompoundPredicate(andPredicateWithSubpredicates: [built, NSPredicate(format: "age > 3")])
        #expect(compound.predicateFormat == "name BEGINSWITH[c] \"a\" AND age > 3")
        #expect(
            NSCompoundPredicate(notPredicateWithSubpredicate: built).predicateFormat == "NOT name BEGINSWITH[c] \"a\"")
    }

    @Test("an AND of nothing is true and an OR of nothing is false (NSCompoundPredicate init(type:subpredicates:))")
    func emptyCompounds() {
        #expect(NSCompoundPredicate(andPredicateWithSubpredicates: []).evaluate(with: nil))
        #expect(!NSCompoundPredicate(orPredicateWithSubpredicates: []).evaluate(with: nil))
    }

    @Test("init(value:) is TRUEPREDICATE or FALSEPREDICATE")
    func valuePredicates() {
        #expect(NSPredicate(value: true).predicateFormat == "TRUEPREDICATE")
        #expect(NSPredicate(value: false).evaluate(with: 1) == false)
        #expect(NSPredicate(value: true) == NSPredicate(format: "TRUEPREDICATE"))
    }

    @Test("a block predicate receives the object and the substitution variables")
    func blockPredicate() {
        let predicate = NSPredicate { object, bindings in
            (object as? Int) == (bindings?["TARGET"] as? Int)
        }
        #expect(predicate.evaluate(with: 3, substitutionVariables: ["TARGET": 3]))
        #expect(!predicate.evaluate(with: 4, substitutionVariables: ["TARGET": 3]))
    }

    @Test(
        "withSubstitutionVariables replaces variables with constants and leaves the receiver alone (NSPredicate reference)"
    )
    func substitution() {
        let template = NSPredicate(format: "lastName like[c] $LAST_NAME AND age > $AGE")
        let bound = template.withSubstitutionVariables(["LAST_NAME": "Turing", "AGE": 30])
        #expect(bound.predicateFormat == "lastName LIKE[c] \"Turing\" AND age > 30")
        #expect(template.predicateFormat == "lastName LIKE[c] $LAST_NAME AND age > $AGE")
        #expect(bound.evaluate(with: ["lastName": "turing", "age": 41]))
        #expect(bound is NSCompoundPredicate)
    }

    @Test("substitution leaves a subquery's own iterator variable bound by the subquery")
    func substitutionInSubquery() {
        let template = NSPredicate(format: "SUBQUERY(items, $x, $x > $MIN).@count == 1")
        let bound = template.withSubstitutionVariables(["x": 100, "MIN": 2])
        #expect(bound.predicateFormat == "SUBQUERY(items, $x, $x > 2).@count == 1")
        #expect(bound.evaluate(with: ["items": [1, 2, 3]]))
    }

    @Test("equal predicates are equal and hash alike; different ones are not equal")
    func equality() {
        let a = NSPredicate(format: "age == 1 AND name == 'x'")
        let b = NSPredicate(format: "age = 1 && name == \"x\"")
        #expect(a == b)
        #expect(a.hash == b.hash)
        #expect(a != NSPredicate(format: "age == 2 AND name == 'x'"))
        #expect(a != NSPredicate(format: "age == 1 OR name == 'x'"))
        #expect(NSPredicate(format: "name ==[c] 'x'") != NSPredicate(format: "name == 'x'"))
        #expect(Set([a, b]).count == 1)
    }

    @Test("NSExpression(format:) and expressionValue(with:context:) evaluate expressions")
    func expressions() {
        let total = NSExpression(format: "department.employees.@sum.salary")
        let object: [String: Any] = ["department": ["employees": [["salary": 1], ["salary": 2]]]]
        #expect(total.expressionValue(with: object, context: nil) as? Int == 3)
        #expect(NSExpression(format: "%d + %d", 2, 3).expressionValue(with: nil, context: nil) as? Int == 5)
        #expect(
            NSExpression(forFunction: "sqrt:", arguments: [NSExpression(forConstantValue: 9)])
                .expressionValue(with: nil, context: nil) as? Double == 3)
        let context = NSMutableDictionary()
        context["x"] = 7
        #expect(NSExpression(forVariable: "x").expressionValue(with: nil, context: context) as? Int == 7)
    }

    @Test("each expression kind reports Apple's expression type and accessors")
    func expressionAccessors() {
        #expect(NSExpression(format: "SELF").expressionType == .evaluatedObject)
        #expect(NSExpression(format: "$v").variable == "v")
        #expect(NSExpression(format: "sum:({1})").function == "sum:")
        #expect(NSExpression(format: "1 + 2").function == "add:to:")
        #expect(NSExpression(format: "{1, 2}").expressionType == .aggregate)
        let union = NSExpression(format: "a UNION b")
        #expect(union.expressionType == .unionSet)
        #expect(union.left.keyPath == "a")
        #expect(union.right.keyPath == "b")
        let subquery = NSExpression(format: "SUBQUERY(items, $i, $i > 1)")
        #expect(subquery.expressionType == .subquery)
        #expect(subquery.variable == "i")
        #expect(subquery.predicate.predicateFormat == "$i > 1")
        let ternary = NSExpression(format: "TERNARY(a == 1, 'x', 'y')")
        #expect(ternary.expressionType == .conditional)
        #expect(ternary.true.constantValue as? String == "x")
        #expect(ternary.false.constantValue as? String == "y")
        #expect(NSExpression(format: "FUNCTION(SELF, 'name:', 1)").operand.expressionType == .evaluatedObject)
    }

    @Test("FUNCTION calls a receiver that adopts PredicateFunctionReceiver")
    func functionReceiver() {
        struct Point: PredicateFunctionReceiver {
            let x: Double
            func predicateFunction(_ selectorName: String, arguments: [Any?]) -> Any? {
                selectorName == "distanceTo:" ? abs(x - (arguments.first as? Double ?? 0)) : nil
            }
        }
        let predicate = NSPredicate(format: "FUNCTION(SELF, 'distanceTo:', %f) < 2", 5.0)
        #expect(predicate.evaluate(with: Point(x: 4)))
        #expect(!predicate.evaluate(with: Point(x: 10)))
    }

    @Test("a block expression receives the object and evaluated arguments")
    func blockExpression() {
        let expression = NSExpression(
            block: { object, arguments, _ in ((object as? Int) ?? 0) + ((arguments.first as? Int) ?? 0) },
            arguments: [NSExpression(forConstantValue: 10)])
        #expect(expression.expressionValue(with: 5, context: nil) as? Int == 15)
    }
}
