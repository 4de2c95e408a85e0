import CoreDataModelGeneratorKit
import Foundation

// The executable the CoreDataModelGenerator build plugin runs:
//
//   CoreDataModelGeneratorTool <module> <output directory> [--model <path>]... [--expect <file>]...
//       -- <source file>...
//
// It writes, into the output directory, the classes and properties Xcode's code generation makes
// for each model's entities (`<Class>+CoreDataClass.swift`, `<Class>+CoreDataProperties.swift`) and
// `<module>+NSManaged.swift` with the accessors of every @NSManaged declaration, the generated
// ones included. `--expect` names the model files the plugin declared, and `--check-plan` checks
// that they are the ones generated. A declaration or model it
// cannot support is printed as `file:line: error: …` and fails the build.
//
//   CoreDataModelGeneratorTool --compile <source> <output>
//
// compiles a model or mapping model source as Xcode does: `.xcdatamodeld` → `.momd`,
// `.xcdatamodel` → `.mom`, `.xcmappingmodel` → `.cdm`.

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(1)
}

/// Writes `text` unless the file already holds it (an unchanged file keeps its date, so nothing
/// that depends on it rebuilds).
func write(_ text: String, to url: URL) {
    if (try? String(contentsOf: url, encoding: .utf8)) == text { return }
    do {
        try text.write(to: url, atomically: true, encoding: .utf8)
    } catch {
        fail("\(url.path): error: cannot write: \(error)")
    }
}

var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--compile" {
    guard arguments.count == 3 else { fail("usage: CoreDataModelGeneratorTool --compile <source> <output>") }
    do {
        let warnings = try ModelCompiler.compile(
            URL(fileURLWithPath: arguments[1]), to: URL(fileURLWithPath: arguments[2]))
        for warning in warnings {
            FileHandle.standardError.write(Data("\(arguments[1]): warning: \(warning)\n".utf8))
        }
    } catch {
        fail("\(arguments[1]): error: cannot compile the model: \((error as NSError).localizedDescription)")
    }
    exit(0)
}
guard arguments.count >= 2 else {
    fail(
        "usage: CoreDataModelGeneratorTool <module> <output directory> [--model <path>]... [--expect <file>]... -- <source>..."
    )
}
let module = arguments.removeFirst()
let outputDirectory = URL(fileURLWithPath: arguments.removeFirst())
var models: [String] = []
var expected: Set<String> = []
var checkPlan = false
var sourcePaths: [String] = []
while !arguments.isEmpty {
    let argument = arguments.removeFirst()
    switch argument {
    case "--model" where !arguments.isEmpty: models.append(arguments.removeFirst())
    case "--expect" where !arguments.isEmpty: expected.insert(arguments.removeFirst())
    case "--check-plan": checkPlan = true
    case "--":
        sourcePaths = arguments
        arguments = []
    default: fail("CoreDataModelGeneratorTool: error: unexpected argument \(argument)")
    }
}

var sources: [(path: String, text: String)] = []
var generated: [String: String] = [:]
for model in models {
    let files: [ModelCodeGenerator.File]
    do {
        files = try ModelCodeGenerator.files(forModelAt: URL(fileURLWithPath: model))
    } catch {
        fail("\(model): error: cannot generate code for the model: \((error as NSError).localizedDescription)")
    }
    for file in files {
        if generated[file.name] != nil {
            fail("\(model): error: two entities generate \(file.name); give their classes different names")
        }
        generated[file.name] = file.text
        sources.append((outputDirectory.appendingPathComponent(file.name).path, file.text))
    }
}
if checkPlan, Set(generated.keys) != expected {
    fail(
        "\(models.joined(separator: ", ")): error: the model's entities and the build plan disagree "
            + "(generated \(generated.keys.sorted()), planned \(expected.sorted())); build again")
}
for path in sourcePaths {
    do {
        sources.append((path, try String(contentsOfFile: path, encoding: .utf8)))
    } catch {
        fail("\(path): error: cannot read: \(error)")
    }
}
switch AccessorGenerator.generate(module: module, sources: sources) {
case .success(let text):
    for (name, text) in generated { write(text, to: outputDirectory.appendingPathComponent(name)) }
    write(text, to: outputDirectory.appendingPathComponent("\(module)+NSManaged.swift"))
case .failure(let errors):
    fail(errors.description)
}
