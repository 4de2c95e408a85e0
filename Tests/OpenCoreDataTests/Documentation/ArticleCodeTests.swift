import Foundation
import Testing

/// The DocC articles' and the README's Swift code is compiled: every ```swift block of an article
/// in a `Sources/*/*.docc` catalog, and of `README.md`, appears, line for line, in a Swift file that a build compiles — the
/// article tests beside this file, or the example packages CI builds — so an article cannot show
/// code that no longer compiles or no longer does what its prose says. Lines are compared with
/// their indentation, `//` comment lines and `import` lines set aside (a file's imports are at
/// its top, a block's above its code), so a block may leave out comments its source has.
@Suite("Documentation: the articles' code is compiled")
struct ArticleCodeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The articles of every catalog, by path from the repository's root.
    static func articles() -> [String] {
        let sources = root.appendingPathComponent("Sources")
        let targets = (try? FileManager.default.contentsOfDirectory(atPath: sources.path)) ?? []
        return targets.sorted().flatMap { target -> [String] in
            let folder = sources.appendingPathComponent(target)
            let catalogs = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
                .filter { $0.hasSuffix(".docc") }
            return catalogs.sorted().flatMap { catalog in
                ((try? FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent(catalog).path))
                    ?? [])
                    .filter { $0.hasSuffix(".md") }.sorted().map { "Sources/\(target)/\(catalog)/\($0)" }
            }
        }
    }

    /// The Swift code blocks of a Markdown text.
    static func swiftBlocks(_ text: String) -> [[String]] {
        var blocks: [[String]] = []
        var current: [String]?
        for line in text.components(separatedBy: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if current == nil, trimmed == "```swift" {
                current = []
            } else if current != nil, trimmed == "```" {
                blocks.append(current!)
                current = nil
            } else if current != nil {
                current!.append(line)
            }
        }
        return blocks
    }

    /// The lines that carry code: trimmed, without blank and `//` comment lines, and without a
    /// comment that ends a line (after white space, so `postgres://` stays).
    static func codeLines(_ lines: [String]) -> [String] {
        lines.map { line in
            var code = Substring(line)
            if let comment = line.range(of: #"\s//"#, options: .regularExpression) {
                code = line[..<comment.lowerBound]
            }
            return code.trimmingCharacters(in: .whitespaces)
        }
        .filter { !$0.isEmpty && !$0.hasPrefix("//") && !$0.hasPrefix("import ") }
    }

    /// The Swift files under `folders` (paths from the repository's root), build folders left
    /// out: each file's path from the root and its text.
    static func swiftFiles(under folders: [String]) -> [(path: String, text: String)] {
        var files: [(String, String)] = []
        for folder in folders {
            let base = root.appendingPathComponent(folder)
            guard let walk = FileManager.default.enumerator(atPath: base.path) else { continue }
            for case let path as String in walk {
                if path.hasSuffix(".build") {
                    walk.skipDescendants()
                    continue
                }
                guard path.hasSuffix(".swift"),
                    let text = try? String(contentsOf: base.appendingPathComponent(path), encoding: .utf8)
                else { continue }
                files.append(("\(folder)/\(path)", text))
            }
        }
        return files
    }

    /// The Swift files whose code the articles may show: the article tests and the example packages.
    static let compiledSources: [(path: String, lines: [String])] =
        swiftFiles(under: ["Tests/OpenCoreDataTests/Documentation", "Examples"]).map { file in
            (file.path, codeLines(file.text.components(separatedBy: "\n")))
        }

    @Test("every catalog's root page lists each of its articles")
    func catalogsListTheirArticles() throws {
        let articles = Self.articles()
        #expect(articles.count >= 13)
        for article in articles {
            // Sources/<target>/<module>.docc/<article>.md
            let parts = article.split(separator: "/").map(String.init)
            let catalog = parts.dropLast().joined(separator: "/")
            let module = String(parts[parts.count - 2].dropLast(".docc".count))
            let name = String(parts[parts.count - 1].dropLast(".md".count))
            guard name != module else { continue }
            let rootPage = try String(
                contentsOf: Self.root.appendingPathComponent("\(catalog)/\(module).md"), encoding: .utf8)
            #expect(rootPage.contains("<doc:\(name)>"), "\(article) is not listed in \(module).md's topics")
        }
    }

    @Test(
        "each Swift block of an article, and of the README, is code a build compiles",
        arguments: articles() + ["README.md"])
    func articleCodeIsCompiled(article: String) throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent(article), encoding: .utf8)
        for block in Self.swiftBlocks(text) {
            let wanted = Self.codeLines(block)
            guard !wanted.isEmpty else { continue }
            let found = Self.compiledSources.contains { file in
                file.lines.count >= wanted.count
                    && (0...(file.lines.count - wanted.count)).contains { start in
                        Array(file.lines[start..<(start + wanted.count)]) == wanted
                    }
            }
            #expect(found, "\(article): no compiled file holds the block starting \"\(wanted[0])\"")
        }
    }
}
