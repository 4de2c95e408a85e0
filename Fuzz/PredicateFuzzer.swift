import OpenCoreData

/// libFuzzer entry point: any bytes, read as a UTF-8 format string, must parse or be rejected
/// with an error — never crash, hang or overflow the stack. A format that parses must print to
/// a format that parses back to an equal predicate, and must evaluate without crashing.
@_cdecl("LLVMFuzzerTestOneInput")
public func predicateFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let format = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let arguments: [Any] = ["name", 7, 2.5, [1, 2, 3], "a*", NSNull()]
    guard let predicate = try? NSPredicate(validatingFormat: format, argumentArray: arguments) else { return 0 }
    let printed = predicate.predicateFormat
    let reparsed: OpenCoreData.NSPredicate
    do {
        reparsed = try NSPredicate(validatingFormat: printed, argumentArray: nil)
    } catch let error as NSPredicateFormatError where error.code == .nestingTooDeep {
        // The printed form adds the parentheses precedence needs, so a predicate nested close to
        // the cap can print deeper than the cap (DEVIATIONS.md).
        return 0
    } catch {
        fatalError("printed form does not parse\n  input:   \(format)\n  printed: \(printed)\n  \(error)")
    }
    if reparsed != predicate {
        fatalError("printed form parses to a different predicate\n  input:   \(format)\n  printed: \(printed)")
    }
    let object: [String: Any] = [
        "name": "Ada", "age": 36, "tags": ["a", "b"], "friends": [["name": "Bo", "age": 3]],
        "address": ["city": "London"], "born": Date(timeIntervalSinceReferenceDate: 0),
    ]
    _ = predicate.evaluate(with: object, substitutionVariables: ["x": 1, "LIST": [1, 2]])
    return 0
}
