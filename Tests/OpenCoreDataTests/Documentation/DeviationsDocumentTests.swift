import Foundation
import Testing

/// `DEVIATIONS.md` stays true: every row of its tables and every bullet names the tests that pin
/// what it says (`Tested by` `File/function`, or a whole `File` suite) or says why none does
/// (`Not tested:`), every test it names exists, and no row speaks of issue numbers instead of
/// behaviour.
@Suite("Documentation: DEVIATIONS.md names the tests that pin it")
struct DeviationsDocumentTests {
    static let root = ArticleCodeTests.root

    /// The rows and bullets of the document, each as one string with the line it starts on.
    static func entries() throws -> [(line: Int, text: String)] {
        let lines = try String(contentsOf: root.appendingPathComponent("DEVIATIONS.md"), encoding: .utf8)
            .components(separatedBy: "\n")
        var entries: [(Int, String)] = []
        var index = 0
        while index < lines.count {
            let line = lines[index]
            if line.hasPrefix("|") {
                let isSeparator = line.hasPrefix("|---")
                let isHeader = index + 1 < lines.count && lines[index + 1].hasPrefix("|---")
                if !isSeparator && !isHeader { entries.append((index + 1, line)) }
            } else if line.hasPrefix("* ") {
                var text = line
                while index + 1 < lines.count, lines[index + 1].hasPrefix("  "),
                    !lines[index + 1].trimmingCharacters(in: .whitespaces).isEmpty
                {
                    index += 1
                    text += " " + lines[index].trimmingCharacters(in: .whitespaces)
                }
                entries.append((index + 1, text))
            }
            index += 1
        }
        return entries
    }

    /// The test sources, by file name without `.swift`.
    static let testFiles: [String: String] = Dictionary(
        ArticleCodeTests.swiftFiles(under: ["Tests", "Examples/CompanyModel/Tests"]).map { file in
            (URL(fileURLWithPath: file.path).deletingPathExtension().lastPathComponent, file.text)
        },
        uniquingKeysWith: { first, _ in first })

    /// The `File` or `File/function` references after "Tested by".
    static func references(_ text: String) -> [String] {
        guard let start = text.range(of: "Tested by ") else { return [] }
        var rest = text[start.upperBound...]
        var found: [String] = []
        while rest.hasPrefix("`"), let close = rest.dropFirst().firstIndex(of: "`") {
            found.append(String(rest[rest.index(after: rest.startIndex)..<close]))
            rest = rest[rest.index(after: close)...]
            guard rest.hasPrefix(", ") else { break }
            rest = rest.dropFirst(2)
        }
        return found
    }

    @Test("every row and bullet says which tests pin it, or why none does")
    func everyEntryIsPinnedOrSaysWhy() throws {
        let entries = try Self.entries()
        #expect(entries.count > 100)
        for entry in entries {
            let pinned = !Self.references(entry.text).isEmpty
            let explained = entry.text.contains("Not tested: ")
            #expect(pinned || explained, "DEVIATIONS.md line \(entry.line) names no test and says nothing of why")
        }
    }

    @Test("every test a row names exists: the file, and the @Test function in it")
    func everyNamedTestExists() throws {
        for entry in try Self.entries() {
            for reference in Self.references(entry.text) {
                let parts = reference.split(separator: "/").map(String.init)
                guard let source = Self.testFiles[parts[0]] else {
                    Issue.record("DEVIATIONS.md line \(entry.line): no test file \(parts[0]).swift")
                    continue
                }
                guard parts.count == 2 else { continue }
                guard let function = source.range(of: "func \(parts[1])(") else {
                    Issue.record("DEVIATIONS.md line \(entry.line): \(parts[0]).swift has no func \(parts[1])")
                    continue
                }
                // The nearest @Test before the function is its own: no other function between.
                let before = source[..<function.lowerBound]
                let attribute = before.range(of: "@Test", options: .backwards)
                let isTest = attribute.map { !before[$0.upperBound...].contains("func ") } ?? false
                #expect(isTest, "DEVIATIONS.md line \(entry.line): \(reference) is not a test")
            }
        }
    }

    @Test("rows describe behaviour, not issue numbers or plans")
    func noIssueNumbersOrPlans() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("DEVIATIONS.md"), encoding: .utf8)
        for pattern in [#"[Ii]ssue \d"#, #"(^|\s)#\d+"#, #"until .* lands"#, #"\bfor now\b"#, #"not yet\b"#] {
            #expect(text.range(of: pattern, options: .regularExpression) == nil, "DEVIATIONS.md matches \(pattern)")
        }
    }
}
