/// NSString's scanning conversions (`longLongValue`, `doubleValue`, `boolValue`), which Linux's
/// Foundation lacks for Swift strings: leading whitespace is skipped, the longest numeric prefix
/// is read, and text with no such prefix is 0 (or false).
///
/// Related documentation: NSString, `longLongValue` ("Returns LLONG_MAX or LLONG_MIN on
/// overflow"), `doubleValue`, `boolValue` ("Returns YES on encountering one of "Y", "y", "T",
/// "t", or a digit 1-9 — the method ignores any trailing characters").
enum NumericPrefix {
    private static func trimmed(_ text: String) -> Substring.UTF8View {
        let bytes = text.utf8
        let start = bytes.firstIndex { !($0 == 32 || (9...13).contains($0)) } ?? bytes.endIndex
        return text[start...].utf8
    }

    /// `longLongValue`: an optional sign and decimal digits; saturated on overflow.
    static func integer(_ text: String) -> Int64 {
        var bytes = trimmed(text)[...]
        var negative = false
        if let sign = bytes.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
            negative = sign == UInt8(ascii: "-")
            bytes = bytes.dropFirst()
        }
        var value: Int64 = 0
        for byte in bytes {
            guard (48...57).contains(byte) else { break }
            let digit = Int64(byte - 48)
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) =
                negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
            if overflow1 || overflow2 { return negative ? .min : .max }
            value = next
        }
        return value
    }

    /// `doubleValue`: the longest prefix of the form `[+-]digits[.digits][e[+-]digits]`.
    static func double(_ text: String) -> Double {
        let bytes = Array(trimmed(text))
        var end = 0
        func digits() -> Int {
            let start = end
            while end < bytes.count, (48...57).contains(bytes[end]) { end += 1 }
            return end - start
        }
        if end < bytes.count, bytes[end] == UInt8(ascii: "-") || bytes[end] == UInt8(ascii: "+") { end += 1 }
        var count = digits()
        if end < bytes.count, bytes[end] == UInt8(ascii: ".") {
            end += 1
            count += digits()
        }
        guard count > 0 else { return 0 }
        let mantissaEnd = end
        if end < bytes.count, bytes[end] == UInt8(ascii: "e") || bytes[end] == UInt8(ascii: "E") {
            end += 1
            if end < bytes.count, bytes[end] == UInt8(ascii: "-") || bytes[end] == UInt8(ascii: "+") { end += 1 }
            if digits() == 0 { end = mantissaEnd }
        }
        return Double(String(decoding: bytes[..<end], as: UTF8.self)) ?? 0
    }

    /// `boolValue`: after whitespace, an optional sign and leading zeros, true at "Y", "y", "T",
    /// "t" or a digit 1–9.
    static func bool(_ text: String) -> Bool {
        var bytes = trimmed(text)[...]
        if let sign = bytes.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
        while bytes.first == UInt8(ascii: "0") { bytes = bytes.dropFirst() }
        guard let first = bytes.first else { return false }
        return "YyTt".utf8.contains(first) || (49...57).contains(first)
    }
}
